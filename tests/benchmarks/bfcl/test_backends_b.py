"""toolscore's TradingBot, TravelAPI and VehicleControlAPI against BFCL's own, call by call.

``tests/fixtures/bfcl/backends.json.gz`` holds, for call sequences over every multi-turn entry,
the result text BFCL's executor gave for each call and a digest of each instance's public state
after each turn. Here the calls that go to these three classes are replayed on toolscore's
classes (the call strings parsed with ``ast``: literal arguments and nested calls only) and
their results and states compared. Calls to the entry's other classes are left out: no class
reads another's state, so the three classes' results and states do not depend on them.
"""

from __future__ import annotations

import ast
import gzip
import inspect
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from support.bfcl_backends import MULTI_TURN, digest, load, state_snapshot
from support.data import dataset

from toolscore.benchmarks.bfcl.multiturn.backend import Backend, backend_class

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "bfcl" / "backends.json.gz"
MINE = ("TradingBot", "TravelAPI", "VehicleControlAPI")
#: names BFCL's executor refuses to call
REFUSED = {"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"}


@cache
def _rows() -> list[dict]:
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as f:
        return json.load(f)


@cache
def _entries() -> dict[str, dict]:
    root = dataset("bfcl")
    return {e["id"]: e for category in MULTI_TURN for e, _ in load(root, category)}


class _Foreign(Exception):
    """The call uses a method of none of the classes under test."""


def _evaluate(node: ast.expr, methods: dict[str, Any]) -> Any:
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in methods:
            raise _Foreign
        args = [_evaluate(a, methods) for a in node.args]
        kwargs = {k.arg: _evaluate(k.value, methods) for k in node.keywords}
        return methods[node.func.id](*args, **kwargs)
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            raise _Foreign
    return ast.literal_eval(node)


def _run(call: str, methods: dict[str, Any]) -> str:
    """One call's result text as BFCL's executor gives it (``_Foreign`` for other classes)."""
    node = ast.parse(call, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise _Foreign
    if node.func.id not in methods:
        raise _Foreign
    try:
        if node.func.id in REFUSED:
            raise Exception(f"Function call {node.func.id} is not allowed.")
        value = _evaluate(node, methods)
    except _Foreign:
        raise
    except Exception as e:  # noqa: BLE001 - the executor reports any exception as text
        return f"Error during execution: {e}"
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except Exception:  # noqa: BLE001
            return str(value)
    return str(value)


def _instances(entry: dict, long_context: bool) -> dict[str, Backend]:
    out = {}
    for name in entry["involved_classes"]:
        if name in MINE:
            instance = backend_class(name)()
            instance._load_scenario(json.loads(json.dumps(entry["initial_config"].get(name, {}))),
                                    long_context=long_context)
            out[name] = instance
    return out


def _methods(instances: dict[str, Backend]) -> dict[str, Any]:
    return {name: method for inst in instances.values()
            for name, method in inspect.getmembers(inst, inspect.ismethod)
            if not name.startswith("_")}


def replay(row: dict) -> list[str]:
    """The differences between toolscore's classes and the recorded row (empty: it matches)."""
    entry = _entries()[row["id"]]
    instances = _instances(entry, "long_context" in row["id"])
    methods = _methods(instances)
    problems = []
    for t, turn in enumerate(row["turns"]):
        for c, (call, expected) in enumerate(zip(turn["calls"], turn["results"], strict=True)):
            try:
                got = _run(call, methods)
            except _Foreign:
                continue
            except SyntaxError:
                continue
            if got != expected:
                problems.append(f"turn {t} call {c} {call[:80]}: "
                                f"{got[:300]!r} != {expected[:300]!r}")
        for name, instance in instances.items():
            if digest(state_snapshot(instance)) != turn["state"][name]:
                problems.append(f"turn {t} state of {name} differs")
        if problems:
            break
    if not problems and "final_state" in row:
        for name, instance in instances.items():
            if state_snapshot(instance) != row["final_state"][name]:
                problems.append(f"final state of {name} differs")
    return problems


def _rows_of(cls: str) -> list[dict]:
    return [r for r in _rows() if cls in _entries_classes(r["id"])]


@cache
def _classes_by_id() -> dict[str, tuple[str, ...]]:
    return {r["id"]: tuple(sorted(r["turns"][0]["state"])) for r in _rows() if r["turns"]}


def _entries_classes(entry_id: str) -> tuple[str, ...]:
    return _classes_by_id().get(entry_id, ())


@pytest.mark.parametrize("cls", MINE)
def test_every_recorded_row_matches(cls):
    failures = {}
    for row in _rows_of(cls):
        problems = replay(row)
        if problems:
            failures[f"{row['id']}/{row['variant']}"] = problems[0]
    shown = "\n".join(f"{k}: {v}" for k, v in list(failures.items())[:10])
    assert not failures, f"{len(failures)} rows differ:\n{shown}"
