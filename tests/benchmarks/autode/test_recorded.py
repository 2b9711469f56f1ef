"""Rescoring's one-walk reader (:mod:`toolscore.benchmarks.autode.recorded`) reports what
loading the file whole reports: the same one-line error, for the same fault first, on files with
one fault or several; and every distinct line is decoded and reduced once per scoring call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolscore.benchmarks.autode.data import UserScript, load_results
from toolscore.benchmarks.autode.recorded import ResultReader
from toolscore.benchmarks.autode.rescore import score_results
from toolscore.data import DataError

SCRIPT = UserScript("u1", "Ann", "Busy.", "Quiet.", (), "SetVolume",
                    {"deviceType": "mobile phone"})
GOOD: dict[str, Any] = {"uuid": "u1", "content": [{"role": "User", "message": "Mute it"}],
                        "background": "b", "api": "SetVolume",
                        "slots": {"deviceType": "mobile phone"}, "state": "success",
                        "reason": "", "trial_uuid": "t"}


def line(**changes: Any) -> bytes:
    record = {**GOOD, **changes}
    return json.dumps({k: v for k, v in record.items() if v is not ...}).encode()


STRANGER = line(uuid="u9")
# Each file: its lines (bytes, joined with newlines).
FILES: dict[str, list[bytes]] = {
    "state": [line(), line(state="maybe")],
    "uuid-missing": [line(uuid=...)],
    "content-string": [line(content="x")],
    "role": [line(content=[{"role": "Bot", "message": "x"}])],
    "message-int": [line(content=[{"role": "User", "message": 5}])],
    "slots-list": [line(slots=[])],
    "reason-int": [line(reason=5)],
    "not-json": [line(), b"{oops"],
    "not-object": [b"[1, 2]"],
    "extra-data": [line() + b" x"],
    "blank-only": [b"", b"  "],
    "stranger": [line(), STRANGER],
    "stranger-then-field": [STRANGER, line(api=5)],
    "field-then-not-utf8": [line(api=5), line(), b'{"uuid": "\xff"}'],
    "stranger-then-not-utf8": [STRANGER, b'{"uuid": "\xff"}'],
    "duplicate-then-field": [line(), line(), line(slots=None)],
    "utf16": [b"\xff\xfe{"],
}


def old_error(path: Path) -> str:
    """The error of loading the file whole, then checking each uuid (rescoring before the
    reader)."""
    try:
        records = load_results(path).records
    except DataError as e:
        return str(e)
    for record in records:
        if record.uuid != SCRIPT.uuid:
            return f"{path}:{record.line}: field 'uuid' {record.uuid!r} is not a gold case"
    raise AssertionError(f"{path}: no error")


@pytest.mark.parametrize("name", sorted(FILES))
def test_reader_reports_what_loading_reports(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(b"\n".join(FILES[name]) + b"\n")
    with pytest.raises(DataError) as caught:
        ResultReader([SCRIPT]).read(path)
    assert str(caught.value) == old_error(path)


def test_reader_reduces_each_distinct_line_once(tmp_path: Path) -> None:
    other = line(slots={"deviceType": "Mobile Phone"}, state="failure",
                 reason="Round limit reached")
    a = tmp_path / "a.jsonl"
    b = tmp_path / "b.jsonl"
    a.write_bytes(b"\n".join([line(), other, line()]) + b"\n")
    b.write_bytes(b"\xef\xbb\xbf" + b"\n".join([line(), other]))  # a BOM, no final newline
    reader = ResultReader([SCRIPT])
    first, second = reader.read(a), reader.read(b)
    assert len(reader.seen) == 2 and first[:2] == second and first[0] is first[2]
    assert (first[0].exact.f1, first[1].exact.f1, first[1].normalised.f1) == (1.0, 0.0, 1.0)
    assert (first[1].called, first[1].refused, first[1].exact_match) == (False, True, False)
    metrics = score_results(b, [SCRIPT], reader=reader)
    assert (metrics.n_trials, metrics.exact.f1, metrics.normalised.f1) == (2, 0.5, 1.0)
    assert (metrics.refusal_rate, metrics.call_rate, metrics.exact_match_rate) == (0.5, 0.5, 0.5)
