"""Recorded result files read for rescoring: each line reduced, in one walk, to the few facts
that the scores, rates and analyses of :mod:`.rescore` use.

Why not :func:`.data.load_results`: rescoring Table 1's 14 files (14,000 lines, 16 MB) spent
most of its time building per-record objects that were read once and dropped. Here a line is
decoded, checked (the same checks, :func:`.data.record_fields` and :func:`.data.check_record`)
and reduced to a :class:`LineFacts` at once. A line's facts depend on its text only (given the
scripts and API documents), and a third of the released lines repeat an earlier line verbatim
(a static run's trials, and the same histories in every static run), so a
:class:`ResultReader` decodes and reduces each distinct line once per scoring call.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from toolscore.benchmarks.autode.analysis import DialogueStats
from toolscore.benchmarks.autode.apidocs import ApiDoc
from toolscore.benchmarks.autode.data import UserScript, check_record, record_fields
from toolscore.benchmarks.autode.scoring import (
    CaseScore,
    case_score,
    filter_arguments,
    normalise_value,
    slot_counts,
)
from toolscore.data import DataError, jsonl_object, read_raw, read_text

REFUSAL_REASONS = ("Round limit reached", "Context length exceeded")


class LineFacts(NamedTuple):
    """What rescoring reads of one record, scored against its gold case (``exact`` is None
    when the uuid is not a gold case: an error once the whole file has been checked)."""

    uuid: str
    exact: CaseScore | None  # the published slot scores
    normalised: CaseScore | None  # supplementary: normal forms compared
    exact_match: bool  # supplementary: filtered prediction == gold slots
    called: bool  # the trial ended in an API call (``state``; legacy: slots survive)
    success: bool  # ``state`` is "success"
    refused: bool  # the round or context limit was hit
    hallucinated: bool | None  # a scored key is not a parameter of the gold API (None: no docs)
    length: int  # messages in the dialogue
    questions: tuple[int, int] | None  # (questions, redundant ones); None: no analysis


class _Forms(dict):  # type: ignore[type-arg]
    """:func:`normalise_value` by value, computed on first use (filtered values are strings
    and booleans: True and "True" are different keys)."""

    def __missing__(self, value: str | bool) -> str:
        form = self[value] = normalise_value(value)
        return form


def _lines(path: Path) -> list[bytes]:
    """The lines of a JSONL file as bytes (a UTF-8 BOM dropped, as :func:`read_text` does).
    Decoding only the distinct lines is less work, and an ASCII line decodes to a compact
    string even where another line holds an emoji (which makes a whole file's text four bytes
    a character)."""
    raw = read_raw(path)
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        read_text(path)  # raises the one-line error
    return (raw[3:] if raw.startswith(codecs.BOM_UTF8) else raw).split(b"\n")


class ResultReader:
    """Reads result files against one set of scripts (and API documents: without them no
    hallucinated-parameter or redundant-question facts). It lives for one scoring call and
    remembers every distinct line it reduced, so the files of that call share the work."""

    def __init__(self, scripts: Sequence[UserScript], api_docs: Sequence[ApiDoc] | None = None,
                 questions: DialogueStats | None = None) -> None:
        self.gold = {s.uuid: s for s in scripts}
        self.params = ({d.name: d.parameter_names for d in api_docs}
                       if api_docs is not None else None)
        if api_docs is not None and questions is None:
            questions = DialogueStats(scripts, api_docs)
        self.questions = questions
        self.forms = _Forms()
        self.gold_forms: dict[str, dict[str, str]] = {}
        self.seen: dict[bytes, LineFacts] = {}

    def read(self, path: Path) -> list[LineFacts]:
        """The facts of each record of ``path`` in file order. The first bad field (in file
        order) is a one-line error; then the first uuid that is not a gold case."""
        seen, reduce = self.seen, self._reduce
        records: list[LineFacts] = []
        stranger: tuple[int, str] | None = None
        try:
            for number, line in enumerate(_lines(path), start=1):
                facts = seen.get(line)
                if facts is None:
                    text = line.decode("utf-8")
                    if not text.strip():
                        continue
                    facts = seen[line] = reduce(jsonl_object(text, path, number), path,
                                                number)
                if facts.exact is None and stranger is None:
                    stranger = (number, facts.uuid)
                records.append(facts)
        except (DataError, UnicodeDecodeError):
            read_text(path)  # bytes that are not UTF-8 anywhere are the error to report first
            raise
        if not records:
            raise DataError(f"{path}: no records")
        if stranger is not None:
            raise DataError(f"{path}:{stranger[0]}: field 'uuid' {stranger[1]!r} is not a "
                            "gold case")
        return records

    def _reduce(self, obj: dict[str, object], path: Path, number: int) -> LineFacts:
        fields = record_fields(obj)
        if fields is None:
            check_record(obj, f"{path}:{number}")
            raise AssertionError("check_record passed a record that record_fields refused")
        uuid, _, _, flat, slots, state, reason, _ = fields
        kept = filter_arguments(slots)
        called = state == "success" if state is not None else bool(kept)
        refused = reason is not None and any(x in reason for x in REFUSAL_REASONS)
        script = self.gold.get(uuid)
        if script is None:
            return LineFacts(uuid, None, None, False, called, state == "success", refused,
                             None, len(flat) // 2, None)
        gold_forms = self.gold_forms.get(uuid)
        if gold_forms is None:
            gold_forms = self.gold_forms[uuid] = {k: normalise_value(v)
                                                  for k, v in script.slots.items()}
        gold = script.slots
        correct, normalised = slot_counts(gold, gold_forms, kept, self.forms.__getitem__)
        hallucinated = (None if self.params is None else
                        not kept.keys() <= self.params.get(script.api, frozenset()))
        questions = None if self.questions is None else self.questions.count(uuid, flat)
        # Every kept slot right and as many as the gold: the same keys and values.
        exact_match = correct == len(kept) == len(gold)
        return LineFacts(uuid, case_score(correct, len(kept), len(gold)),
                         case_score(normalised, len(kept), len(gold)), exact_match, called,
                         state == "success", refused, hallucinated, len(flat) // 2, questions)
