"""Reading BFCL's released files: one JSON object a line (despite the ``.json`` suffix), the
questions in ``BFCL_v4_<category>.json`` and their possible answers, aligned by position, in
``possible_answer/BFCL_v4_<category>.json``; the function documents of the multi-turn
backends in ``multi_turn_func_doc/``, a file per class."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from toolscore.benchmarks.bfcl.categories import is_relevance
from toolscore.data import DataError, read_text

PREFIX = "BFCL_v4"
#: the file of ``multi_turn_func_doc/`` holding each backend class's function documents
FUNC_DOC_FILES = {
    "GorillaFileSystem": "gorilla_file_system.json", "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json", "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json", "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json", "VehicleControlAPI": "vehicle_control.json",
    "MemoryAPI_kv": "memory_kv.json", "MemoryAPI_vector": "memory_vector.json",
    "MemoryAPI_rec_sum": "memory_rec_sum.json", "WebSearchAPI": "web_search.json",
}


def read_lines(path: Path, *, entries: bool = True) -> list[dict[str, Any]]:
    """The JSON objects of a BFCL file, one a line (blank lines skipped); ``entries``: each
    must have an id."""
    out = []
    for n, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as e:
            raise DataError(f"{path}: line {n}: not JSON ({e})") from None
        if not isinstance(value, dict) or (entries and "id" not in value):
            raise DataError(f"{path}: line {n}: not an entry (an object with an id)")
        out.append(value)
    return out


def question_file(data_dir: Path, category: str) -> Path:
    return data_dir / f"{PREFIX}_{category}.json"


def answer_file(data_dir: Path, category: str) -> Path:
    return data_dir / "possible_answer" / f"{PREFIX}_{category}.json"


def load_category(data_dir: Path, category: str
                  ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """(question entry, possible-answer entry or None) for each entry of ``category``, in
    the file's order. BFCL pairs a question with the answer at the same position (some
    answer ids are written differently), so they are paired by position here too."""
    entries = read_lines(question_file(data_dir, category))
    if is_relevance(category):
        return [(e, None) for e in entries]
    answers = read_lines(answer_file(data_dir, category))
    if len(answers) != len(entries):
        raise DataError(f"bfcl: {category}: {len(entries)} questions but {len(answers)} "
                        "possible answers")
    return list(zip(entries, answers, strict=True))


@functools.lru_cache(maxsize=16)
def _documents(path: Path) -> tuple[str, ...]:
    return tuple(json.dumps(d) for d in read_lines(path, entries=False))


def class_documents(data_dir: Path, class_name: str) -> list[dict[str, Any]]:
    """The function documents of one backend class, as released (a fresh copy each call)."""
    if class_name not in FUNC_DOC_FILES:
        raise DataError(f"bfcl: no function documents for class {class_name!r}")
    path = data_dir / "multi_turn_func_doc" / FUNC_DOC_FILES[class_name]
    return [json.loads(d) for d in _documents(path)]
