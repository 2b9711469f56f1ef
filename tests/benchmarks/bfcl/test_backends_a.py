"""toolscore's file system, posting, message and ticket backends against BFCL's own, call by
call: every recorded sequence of ``tests/fixtures/bfcl/backends.json.gz`` involving one of
them is replayed on toolscore's class, and each call it answers must return BFCL's result
text, each turn must leave BFCL's state (digest of the public attributes).

Calls go to the class BFCL's executor would send them to (the last involved class having a
method of that name); calls answered by another class, or with another class's call nested in
their arguments, are that class's business and skipped here. A sequence keeps one instance
per class across its turns, and sequences run in the recorded order, as the recorder ran them.
"""

from __future__ import annotations

import ast
import gzip
import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import bfcl_backends as bb
from support.data import dataset

from toolscore.benchmarks.bfcl.multiturn.backend import backend_class

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "bfcl" / "backends.json.gz"
MINE = ("TicketAPI", "TwitterAPI", "MessageAPI", "GorillaFileSystem")
#: BFCL's function-doc file of each class (the method names of classes not tested here)
DOCS = {"GorillaFileSystem": "gorilla_file_system", "MathAPI": "math_api",
        "MessageAPI": "message_api", "TwitterAPI": "posting_api", "TicketAPI": "ticket_api",
        "TradingBot": "trading_bot", "TravelAPI": "travel_booking",
        "VehicleControlAPI": "vehicle_control"}
REFUSED = {"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"}


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


def _public(instance: object) -> set[str]:
    return {name for name, _ in inspect.getmembers(instance, inspect.ismethod)
            if not name.startswith("_")}


def _called(node: ast.AST) -> list[str]:
    return [n.func.id for n in ast.walk(node)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]


def _value(node: ast.expr, call: Callable[[ast.Call], Any]) -> Any:
    if isinstance(node, ast.Call):
        return call(node)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_value(x, call) for x in node.elts]
        return {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)](items)
    if isinstance(node, ast.Dict):
        return {_value(k, call): _value(v, call)  # type: ignore[arg-type]
                for k, v in zip(node.keys, node.values, strict=True)}
    return ast.literal_eval(node)


def execute(instance: object, text: str) -> str:
    """One call string run on ``instance`` as BFCL's executor runs it, result as text."""
    name = text.split("(")[0]
    if "." in name:
        name = name.split(".")[1]
    try:
        if name in REFUSED:
            raise Exception(f"Function call {name} is not allowed.")
        node = ast.parse(text, mode="eval").body

        def call(c: ast.Call) -> Any:
            assert isinstance(c.func, ast.Name)
            method = getattr(instance, c.func.id)
            kwargs = {str(k.arg): _value(k.value, call) for k in c.keywords}
            return method(*[_value(a, call) for a in c.args], **kwargs)

        assert isinstance(node, ast.Call)
        result = call(node)
    except Exception as e:  # noqa: BLE001 - the text BFCL's executor reports
        return f"Error during execution: {e}"
    if isinstance(result, str):
        return result
    if type(result) is dict:
        try:
            return json.dumps(result)
        except (TypeError, ValueError):
            return str(result)
    return str(result)


@pytest.mark.parametrize("cls_name", MINE)
def test_every_recorded_sequence_replays(cls_name: str, recorded: Any) -> None:
    rows, entries, methods = recorded
    cls = backend_class(cls_name)
    failures: list[str] = []
    sequences = answered = 0
    for row in rows:
        entry = entries[row["id"]]
        involved = entry["involved_classes"]
        if cls_name not in involved:
            continue
        sequences += 1
        instance = cls()
        instance._load_scenario(json.loads(json.dumps(entry["initial_config"].get(cls_name, {}))),
                                long_context="long_context" in row["id"])
        owner: dict[str, str] = {}
        for other in involved:
            for method in (_public(instance) if other == cls_name else methods[other]):
                owner[method] = other
        where = f"{row['id']} {row['variant']}"
        for t, turn in enumerate(row["turns"]):
            for call, expected in zip(turn["calls"], turn["results"], strict=True):
                try:
                    names = _called(ast.parse(call, mode="eval"))
                except SyntaxError:
                    names = []
                if not names or any(owner.get(n, cls_name) != cls_name for n in names):
                    continue
                answered += 1
                got = execute(instance, call)
                if got != expected:
                    failures.append(f"{where} turn {t}: {call}\n  got      {got[:300]!r}\n"
                                    f"  expected {expected[:300]!r}")
            if bb.digest(bb.state_snapshot(instance)) != turn["state"][cls_name]:
                failures.append(f"{where} turn {t}: state differs")
                if "final_state" in row:
                    failures.append(json.dumps(bb.state_snapshot(instance))[:2000])
                    failures.append(json.dumps(row["final_state"][cls_name])[:2000])
                break
    assert sequences and answered
    assert not failures, f"{len(failures)} mismatches in {sequences} sequences:\n" + \
        "\n".join(failures[:20])
