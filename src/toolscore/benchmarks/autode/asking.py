"""How an assistant turn asks, and whether a text says a value: the text tests behind the
redundant-question analysis (:func:`.analysis.redundant_questions`).

Each test is defined by a regular expression (:data:`ASKING`, :data:`SENTENCE`, :data:`WORD`,
a whole-phrase pattern per value) and computed, where that gives the same answer, by plain
string methods: rescoring Table 1 runs them on 27,000 turns, and a regex tried at every
position of every turn was most of the rescoring's time. Tests pin each shortcut to its
definition.
"""

from __future__ import annotations

import re
from functools import lru_cache

ASKING = re.compile(r"\?|\b(?:please\s+(?:tell|provide|give|specify|share|enter|confirm)|"
                     r"let me know|i need to know)\b", re.IGNORECASE)

SENTENCE = re.compile(r"(?<=[.?!])\s+|\n+")
# The same boundaries found from the punctuation mark instead of after it, the mark captured
# to be put back: a match must start at one of four characters, which the regex engine skips
# to, where the look-behind is tried at every position (twice as slow on Table 1's turns).
_BOUNDARY = re.compile(r"(?=[.?!\n])(?:([.?!])\s+|\n+)")

WORD = re.compile(r"[a-z][a-z0-9]+")


@lru_cache(maxsize=8192)
def _phrase(value: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(value)}(?!\w)", re.IGNORECASE)


def phrase_of(value: str) -> tuple[str, bool, str]:
    """A stripped value (2+ characters) ready for :func:`said`: lower-cased, whether it is
    ASCII, and as given (its regular expression is compiled only if a search needs it)."""
    return value.lower(), value.isascii(), value


_ASCII_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def sentences(text: str) -> list[str]:
    """``SENTENCE.split(text)``: the text cut after a ".", "?" or "!" followed by whitespace
    (the whitespace dropped) and at runs of newlines."""
    parts = _BOUNDARY.split(text)  # sentence, mark (None at newlines), sentence, ...
    out = parts[:1]
    for mark, sentence in zip(parts[1::2], parts[2::2], strict=True):
        if mark is not None:  # the mark ends the sentence before the boundary
            out[-1] += mark
        out.append(sentence)
    return out


def said(value: tuple[str, bool, str], text: str, lowered: str) -> bool:
    """Whether ``text`` (``lowered``: the same lower-cased) contains the value as a whole
    phrase, ignoring case (:func:`_phrase`). For ASCII text and value that is: an occurrence
    in the lower-cased text with no ASCII word character on either side (``\\w`` on ASCII
    text), found without a regular expression."""
    low, ascii_value, raw = value
    if not (ascii_value and text.isascii()):
        return _phrase(raw).search(text) is not None
    size, start = len(low), lowered.find(low)
    while start >= 0:
        end = start + size
        if ((start == 0 or lowered[start - 1] not in _ASCII_WORD)
                and (end == len(lowered) or lowered[end] not in _ASCII_WORD)):
            return True
        start = lowered.find(low, start + 1)
    return False



_ASKING_WORDS = ("please", "let me know", "i need to know")
# A request phrase of ASKING, matched case-sensitively at a given start in lower-cased text.
_REQUEST_AT = re.compile(r"(?:please\s+(?:tell|provide|give|specify|share|enter|confirm)|"
                         r"let me know|i need to know)\b")


def asks(text: str) -> bool:
    """:data:`ASKING` matches ``text``, searched only when plain tests cannot tell: any "?"
    matches; in ASCII text (where ignoring case is matching the lower-cased text) a request
    phrase can only start where its first words are, after a non-word character: the phrase
    is matched there, not tried at every position."""
    if "?" in text:
        return True
    if not text.isascii():
        return ASKING.search(text) is not None
    lowered = text.lower()
    for first in _ASKING_WORDS:
        start = lowered.find(first)
        while start >= 0:
            if ((start == 0 or lowered[start - 1] not in _ASCII_WORD)
                    and _REQUEST_AT.match(lowered, start)):
                return True
            start = lowered.find(first, start + 1)
    return False


def asking_sentences(text: str) -> list[str]:
    """The sentences of an assistant turn that ask the user something: a "?" or a request
    phrase ("please provide", "let me know", "I need to know")."""
    return [s for s, _ in asked(text)]


@lru_cache(maxsize=65536)
def asking_turn(text: str) -> str | None:
    """``text`` lower-cased if it asks something (see :func:`asking_sentences`), else None;
    memoised: Table 1's files hold 18,000 assistant turns but 11,000 distinct texts."""
    return text.lower() if asks(text) else None


@lru_cache(maxsize=65536)
def asked(text: str) -> tuple[tuple[str, str], ...]:
    """(sentence, lower-cased) of each asking sentence of ``text``, memoised."""
    if not asks(text):  # a sentence that asks is a match in the whole text too
        return ()
    # An ASCII text without any request phrase's first word has none in a sentence either:
    # then only its sentences with a "?" ask, told without calling asks on each.
    requests = not text.isascii() or any(w in text.lower() for w in _ASKING_WORDS)
    return tuple((sentence, sentence.lower()) for sentence in sentences(text)
                 if "?" in sentence or requests and asks(sentence))


_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def has_word(lowered: str, word: str) -> bool:
    """Whether ``word`` (a keyword: a letter, then letters or digits) is one of the words of
    ``lowered`` (``WORD.findall(lowered)``), without listing them: the regex takes one word
    per run of letters and digits, from its first letter to the run's end, so ``word`` is one
    where an occurrence ends the run and only digits come before it in the run."""
    size, start = len(word), lowered.find(word)
    while start >= 0:
        end = start + size
        if end == len(lowered) or lowered[end] not in _ALNUM:
            before = start - 1
            while before >= 0 and "0" <= lowered[before] <= "9":
                before -= 1
            if before < 0 or lowered[before] not in _ALNUM:
                return True
        start = lowered.find(word, start + 1)
    return False
