"""toolscore's file system, posting, message and ticket backends against BFCL's own, call by
call: every recorded sequence of ``tests/fixtures/bfcl/backends.json.gz`` involving one of
them is replayed through toolscore's executor (:class:`World`), and each call one of them
answers must return BFCL's result text, each turn must leave BFCL's state (digest of the
public attributes).

An entry's other classes may not be implemented in this tree: the world then holds only the
ones that are, and a call BFCL's executor would send to a missing class (the last involved
class having a method of that name), or with such a call nested in its arguments, is skipped.
Sequences run in the recorded order, as the recorder ran them.
"""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from support import bfcl_backends as bb
from support.data import dataset

from toolscore.benchmarks.bfcl.multiturn.backend import backend_class
from toolscore.benchmarks.bfcl.multiturn.execute import World

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "bfcl" / "backends.json.gz"
MINE = ("TicketAPI", "TwitterAPI", "MessageAPI", "GorillaFileSystem")
#: BFCL's function-doc file of each class (the method names of classes not tested here)
DOCS = {"GorillaFileSystem": "gorilla_file_system", "MathAPI": "math_api",
        "MessageAPI": "message_api", "TwitterAPI": "posting_api", "TicketAPI": "ticket_api",
        "TradingBot": "trading_bot", "TravelAPI": "travel_booking",
        "VehicleControlAPI": "vehicle_control"}


@pytest.fixture(scope="module")
def recorded() -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]], dict[str, set[str]]]:
    from toolscore.benchmarks.bfcl.release import release_dir
    from toolscore.data import DataError

    root = dataset("bfcl")
    try:  # resolved before the per-test cache folder hides the user's cache
        release_dir()
    except DataError as e:
        pytest.skip(str(e))
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as f:
        rows = json.load(f)
    entries = {e["id"]: e for category in bb.MULTI_TURN for e in bb.read_lines(
        root / f"BFCL_v4_{category}.json")}
    methods = {cls: {d["name"] for d in bb.read_lines(root / "multi_turn_func_doc" / f"{doc}.json")}
               for cls, doc in DOCS.items()}
    return rows, entries, methods


def _available(name: str) -> bool:
    try:
        backend_class(name)
    except ImportError:
        return False
    return True


def _called(node: ast.AST) -> list[str]:
    return [n.func.id for n in ast.walk(node)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]


def _answered_here(call: str, owner: dict[str, str], present: set[str]) -> bool:
    """Whether the call reaches only classes of this world (BFCL's routing: ``owner``)."""
    try:
        names = _called(ast.parse(call.strip(), mode="eval"))
    except SyntaxError:
        return True
    return all(owner.get(n, "") in present or n not in owner for n in names)


@pytest.mark.parametrize("cls_name", MINE)
def test_every_recorded_sequence_replays(cls_name: str, recorded: Any) -> None:
    rows, entries, methods = recorded
    failures: list[str] = []
    sequences = answered = 0
    for row in rows:
        entry = entries[row["id"]]
        involved = entry["involved_classes"]
        if cls_name not in involved:
            continue
        sequences += 1
        present = {c for c in involved if _available(c)}
        world = World({**entry, "involved_classes": [c for c in involved if c in present]})
        owner = {method: other for other in involved for method in methods[other]}
        where = f"{row['id']} {row['variant']}"
        for t, turn in enumerate(row["turns"]):
            for call, expected in zip(turn["calls"], turn["results"], strict=True):
                if not _answered_here(call, owner, present):
                    continue
                answered += owner.get(call.split("(")[0].strip()) == cls_name
                (got,) = world.execute([call])
                if got != expected:
                    failures.append(f"{where} turn {t}: {call}\n  got      {got[:300]!r}\n"
                                    f"  expected {expected[:300]!r}")
            snap = bb.state_snapshot(world.instances[cls_name])
            if bb.digest(snap) != turn["state"][cls_name]:
                failures.append(f"{where} turn {t}: state differs")
                if "final_state" in row:
                    failures.append(json.dumps(snap)[:2000])
                    failures.append(json.dumps(row["final_state"][cls_name])[:2000])
                break
    assert sequences and answered
    assert not failures, f"{len(failures)} mismatches in {sequences} sequences:\n" + \
        "\n".join(failures[:20])
