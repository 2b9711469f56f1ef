"""Analyses between two runs of one assistant (e.g. static vs dynamic) and of dialogue quality.

The static-vs-dynamic *gap* is the paper's central observation: an assistant that scores well
when handed the whole history scores worse when it has to elicit the details itself. We report
it per case (F1 of run A minus run B, each case averaged over its run's trials) and overall
(mean over the cases both runs have, x100, with a paired bootstrap CI over cases).

*Redundant questions* (see :func:`redundant_questions`) count assistant turns that ask for a
value the user already gave, a failure a slot score cannot see when the assistant finally makes
the right call anyway.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

import numpy as np

from toolscore.benchmarks.autode.apidocs import ApiDoc
from toolscore.benchmarks.autode.asking import WORD, asked, asking_turn, has_word, phrase_of, said
from toolscore.benchmarks.autode.data import UserScript, load_results
from toolscore.benchmarks.autode.scoring import score_case
from toolscore.stats import bootstrap_ci

# Description text from here on lists example values ("including phone, watch"), not the topic.
_EXAMPLES = re.compile(r"\(|\b(?:including|such as|like|e\.g|for example|can be|supports)\b",
                       re.IGNORECASE)
_STOPWORD_TEXT = (
    "the and for with that this from into your you are can will such like etc user users "
    "which what when where who how its their they them there type value values name names "
    "info information including includes include slot required optional default e.g. "
    "about other some more than only also each should would could")
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


_CAMEL = re.compile(r"([a-z0-9])([A-Z])")


def _words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def _content(words: list[str]) -> frozenset[str]:
    return frozenset(w for w in words if len(w) >= 3 and w not in _STOPWORDS)


@lru_cache(maxsize=4096)
def _name_words(name: str) -> frozenset[str]:
    return _content(_words(_CAMEL.sub(r"\1 \2", name).replace("_", " ")))


def slot_keywords(name: str, properties: Mapping[str, Any]) -> frozenset[str]:
    """Words that show a question is about parameter ``name`` of an API with ``properties``
    (name -> JSON schema): the parts of its name (camelCase / snake_case split) that no other
    parameter's name has, and the content words of its description that appear nowhere in the
    other parameters' names and descriptions (>= 3 letters, no stopwords). Shared words
    ("device" in ``deviceType`` and in the description of ``roomType``) would tie a question to
    the wrong parameter."""
    return _slot_keywords(name, _descriptions(properties))


def _descriptions(properties: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """What :func:`slot_keywords` reads of an API's parameters, hashable (to memoise it)."""
    return tuple((k, str(v.get("description", "")) if isinstance(v, Mapping) else "")
                 for k, v in properties.items())


@lru_cache(maxsize=4096)
def _slot_keywords(name: str, described: tuple[tuple[str, str], ...]) -> frozenset[str]:
    """:func:`slot_keywords`, memoised: every dialogue and trial of a case asks it the same
    questions about the same API (43,000 calls for Table 1's 14 files, 200 distinct)."""
    others_names: set[str] = set()
    others_all: set[str] = set()
    for other, text in described:
        if other != name:
            others_names |= _name_words(other)
            others_all |= _name_words(other) | _content(_words(text))
    description = _EXAMPLES.split(dict(described).get(name, ""))[0]
    return (_name_words(name) - others_names) | (_content(_words(description)) - others_all
                                                 - _name_words(name) - others_names)



@dataclass(frozen=True)
class CaseFacts:
    """What :func:`redundant_questions` needs of a case besides the dialogue: each gold slot's
    keywords and, for a string value of 2+ characters, the value ready to be looked for. The
    same for every dialogue and trial of a case, so :func:`question_stats` builds it once per
    case instead of once per dialogue."""

    keywords: dict[str, frozenset[str]]
    values: dict[str, tuple[str, bool, str]]


def case_facts(slots: Mapping[str, Any], doc: ApiDoc | None) -> CaseFacts:
    """The :class:`CaseFacts` of gold ``slots`` and their API's ``doc`` (None: only slot names
    are keywords)."""
    properties = doc.spec.parameters.get("properties", {}) if doc is not None else {
        k: {} for k in slots}
    described = _descriptions(properties)
    keywords = {k: _slot_keywords(k, described if k in properties else (*described, (k, "")))
                for k in slots}
    values = {k: phrase_of(v.strip()) for k, v in slots.items()
              if isinstance(v, str) and len(v.strip()) >= 2}
    return CaseFacts(keywords, values)


def _asks_again(text: str, given: Sequence[str], facts: CaseFacts) -> bool:
    """Whether an asking sentence of assistant turn ``text`` mentions a keyword of a ``given``
    slot without containing its value (see :func:`redundant_questions`)."""
    keywords, values = facts.keywords, facts.values
    for sentence, lowered in asked(text):
        for k in given:
            for word in keywords[k]:
                if has_word(lowered, word):
                    if not said(values[k], sentence, lowered):
                        return True
                    break  # the slot's value is in the sentence: a confirmation
    return False


def redundant_questions(content: Sequence[Mapping[str, str]], slots: Mapping[str, Any],
                        doc: ApiDoc | None, facts: CaseFacts | None = None) -> tuple[int, int]:
    """(question turns, redundant question turns) of one dialogue.

    ``content`` uses the released shape (``{"role": "User"|"Assistant", "message"}``); ``slots``
    are the gold values; ``doc`` the gold API's document (None: only slot names are keywords).

    Heuristic: an assistant turn is a *question* if one of its sentences asks something (see
    :func:`.asking.asking_sentences`). It is *redundant* if, for some gold slot whose value (a
    string of 2+ characters) already appeared as a whole phrase, ignoring case, in an earlier
    user turn, an asking sentence mentions one of the slot's distinctive keywords
    (:func:`slot_keywords`) and does not itself contain the value (repeating the value back is
    a confirmation, not a request).

    Limits: a value the user paraphrased ("next Monday" for gold "2023-10-16") is not seen as
    given, so asking again is missed; a value that is a common word ("yes", "TV") can appear by
    chance and make a fair question look redundant; keywords are bag-of-words, so "which app
    plays the media?" counts as asking for a given ``appName`` even when it means something
    else, while a parameter with no distinctive word (``mediaName`` beside ``mediaType``) is
    never detected; booleans are never checked (users say them in too many ways); a
    confirmation that paraphrases the value counts as a request; and the gold API's parameters
    are assumed, so questions about another API's parameters are not judged. Use the rate to
    compare runs over the same scripts, not as an absolute count.
    """
    if facts is None:
        facts = case_facts(slots, doc)
    return count_questions(facts, [(t.get("role"), t.get("message") or "") for t in content])


def count_questions(facts: CaseFacts, turns: Sequence[tuple[str | None, str]]
                    ) -> tuple[int, int]:
    """:func:`redundant_questions` of a dialogue given as (role, message) pairs."""
    keywords = facts.keywords
    questions = redundant = 0
    given: list[str] = []  # slots whose value a user turn has mentioned, in slot order
    words: list[str] = []  # their keywords
    pending = list(facts.values.items())  # the slots whose value no user turn has mentioned
    for role, text in turns:
        if role == "User":
            if pending:
                # An ASCII value absent from an ASCII turn's lower-cased text is not said:
                # that plain test spares most calls of said.
                lowered, ascii_text = text.lower(), text.isascii()
                now = [(k, v) for k, v in pending
                       if (v[0] in lowered or not (ascii_text and v[1]))
                       and said(v, text, lowered)]
                if now:
                    for k, _ in now:
                        given.append(k)
                        words += keywords[k]
                    pending = [item for item in pending if item not in now]
            continue
        whole = asking_turn(text)
        if whole is None:
            continue
        questions += 1
        # A keyword among a sentence's words is one of the whole lower-cased turn's words:
        # most turns that cannot be redundant are told apart without splitting sentences.
        for word in words:
            if has_word(whole, word):
                redundant += _asks_again(text, given, facts)
                break
    return questions, redundant


# -- two runs ----------------------------------------------------------------------------------
@dataclass
class RunDialogues:
    """One run reduced to what the analyses need: per-case F1 and the dialogues."""

    label: str
    f1: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    dialogues: list[tuple[str, list[dict[str, str]]]] = field(default_factory=list)
    source: str = ""

    def case_f1(self) -> dict[str, float]:
        return {k: float(np.mean(v)) for k, v in self.f1.items()}


def load_run_dialogues(path: Path, scripts: Sequence[UserScript]) -> RunDialogues:
    """A toolscore run directory, or a released/exported result file scored against
    ``scripts`` (a record whose uuid is not a script is an error; all trials are kept)."""
    path = Path(path)
    if path.is_dir():
        config_path = path / "run.json"
        if not config_path.is_file():
            raise ValueError(f"{path}: neither a result file nor a run directory (no run.json)")
        config = json.loads(config_path.read_text())
        if config.get("benchmark") != "autode":
            raise ValueError(f"{path}: a {config.get('benchmark')!r} run, not an autode run")
        from toolscore.records import RunStore

        mode = config.get("benchmark_config", {}).get("mode", "")
        run = RunDialogues(f"{config.get('model')} ({mode})", source=str(path))
        for r in RunStore(path).latest().values():
            if r.get("status") == "ok":
                run.f1[str(r["id"])].append(float(r["scores"]["f1"]))
                run.dialogues.append((str(r["id"]), list(r["output"].get("content") or [])))
    else:
        gold = {s.uuid: s for s in scripts}
        run = RunDialogues(path.stem, source=str(path))
        for record in load_results(path).records:
            if record.uuid not in gold:
                raise ValueError(f"{path}:{record.line}: uuid {record.uuid!r} is not a script")
            run.f1[record.uuid].append(score_case(gold[record.uuid].slots, record.slots).f1)
            run.dialogues.append((record.uuid, [{"role": t.role, "message": t.message}
                                                for t in record.content]))
    if not run.f1:
        raise ValueError(f"{path}: no scored samples")
    return run


def question_stats(run: RunDialogues, scripts: Sequence[UserScript],
                   docs: Sequence[ApiDoc]) -> dict[str, Any]:
    """Redundant questions of one run: totals, rate per question, share of dialogues.

    A static run's dialogues are the recorded histories (the assistant only makes the final
    call), so its counts describe the dataset's histories rather than the assistant."""
    return DialogueStats(scripts, docs)(
        (uuid, [(t.get("role"), t.get("message") or "") for t in content])
        for uuid, content in run.dialogues)


class DialogueStats:
    """Redundant questions of many dialogues over one set of scripts and API documents: each
    case's :class:`CaseFacts` are built once, and a dialogue met again reuses its counts (a
    static run repeats the recorded history in every trial, and every static run the same
    histories: Table 1's 13,800 dialogues are 5,500 distinct ones). Counts are a function of
    the case and the dialogue's text only, so the object serves every result file of one
    scoring call; it lives no longer than that call."""

    def __init__(self, scripts: Sequence[UserScript], docs: Sequence[ApiDoc]) -> None:
        self.gold = {s.uuid: s for s in scripts}
        self.by_name = {d.name: d for d in docs}
        self.facts: dict[str, CaseFacts] = {}
        self.counted: dict[tuple[str, tuple[str | None, ...]], tuple[int, int]] = {}

    def case(self, uuid: str) -> CaseFacts | None:
        """The facts of case ``uuid`` (None: not a script)."""
        facts = self.facts.get(uuid)
        if facts is None:
            script = self.gold.get(uuid)
            if script is None:
                return None
            facts = self.facts[uuid] = case_facts(script.slots, self.by_name.get(script.api))
        return facts

    def __call__(self, dialogues: Iterable[tuple[str, Sequence[tuple[str | None, str]]]]
                 ) -> dict[str, Any]:
        """:func:`question_stats` of (uuid, [(role, message)]) dialogues."""
        n = questions = redundant = with_redundant = 0
        for uuid, turns in dialogues:
            n += 1
            q, r = self.count(uuid, tuple(x for turn in turns for x in turn))
            questions += q
            redundant += r
            with_redundant += r > 0
        return self.summary(n, questions, redundant, with_redundant)

    def count(self, uuid: str, flat: tuple[str | None, ...]) -> tuple[int, int]:
        """(questions, redundant questions) of one dialogue of case ``uuid`` given flat as
        (role, message, role, message, ...); (0, 0) for a uuid that is not a script."""
        key = (uuid, flat)
        counts = self.counted.get(key)
        if counts is None:
            facts = self.case(uuid)
            # (role, message) pairs again: only a role may be None
            turns = cast("tuple[tuple[str | None, str], ...]",
                         tuple(zip(flat[::2], flat[1::2], strict=True)))
            counts = self.counted[key] = (0, 0) if facts is None else count_questions(
                facts, turns)
        return counts

    @staticmethod
    def summary(n: int, questions: int, redundant: int, with_redundant: int) -> dict[str, Any]:
        """The totals of ``n`` dialogues, of which ``with_redundant`` have a redundant one."""
        return {"dialogues": n, "questions": questions, "redundant_questions": redundant,
                "redundant_rate": redundant / questions if questions else None,
                "dialogues_with_redundant": with_redundant / n if n else None}


def gap(a: RunDialogues, b: RunDialogues, scripts: Sequence[UserScript],
        docs: Sequence[ApiDoc], *, n_resamples: int = 2000, confidence: float = 0.95,
        seed: int = 0) -> dict[str, Any]:
    """F1 of run A minus run B per shared case and overall (x100, paired bootstrap CI over
    cases), and each run's redundant questions."""
    fa, fb = a.case_f1(), b.case_f1()
    cases = [s.uuid for s in scripts if s.uuid in fa and s.uuid in fb]
    cases += sorted(set(fa) & set(fb) - set(cases))
    if not cases:
        raise ValueError(f"{a.label} and {b.label} share no cases")
    x = np.array([fa[c] for c in cases])
    y = np.array([fb[c] for c in cases])
    diff = 100 * (x - y)
    low, high = bootstrap_ci(diff, lambda d: float(np.mean(d)), n_resamples=n_resamples,
                             confidence=confidence, seed=seed) if len(cases) > 1 else (None,
                                                                                     None)
    api = {s.uuid: s.api for s in scripts}
    per_case = [{"uuid": c, "api": api.get(c), "f1_a": 100 * fa[c], "f1_b": 100 * fb[c],
                 "gap": float(d)} for c, d in zip(cases, diff, strict=True)]
    return {
        "a": {"label": a.label, "source": a.source, "f1": 100 * float(x.mean()),
              **question_stats(a, scripts, docs)},
        "b": {"label": b.label, "source": b.source, "f1": 100 * float(y.mean()),
              **question_stats(b, scripts, docs)},
        "n_cases": len(cases), "gap": float(diff.mean()), "gap_ci": [low, high],
        "confidence": confidence, "n_resamples": n_resamples, "seed": seed,
        "a_better": int((diff > 0).sum()), "b_better": int((diff < 0).sum()),
        "ties": int((diff == 0).sum()), "cases": per_case,
    }
