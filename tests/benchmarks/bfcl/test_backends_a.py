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


def _tree(spec: dict[str, Any]) -> dict[str, Any]:
    """A scenario's directory contents from {name: text or nested dict}."""
    return {name: {"type": "file", "content": value} if isinstance(value, str)
            else {"type": "directory", "contents": _tree(value)} for name, value in spec.items()}


#: calls outside the released sequences and what BFCL's file system answered (run on its own
#: class): moved and copied folders keep their children's old parent links, cp into a folder
#: already holding the name fails in the node, echo into a folder fails on the missing writer
CORNERS = [
    ("mv(source='a', destination='c')", '{"result": "\'a\' moved to \'c/a\'"}'),
    ("cd(folder='c')", '{"current_working_directory": "c"}'),
    ("cd(folder='a')", '{"current_working_directory": "a"}'),
    ("cd(folder='b')", '{"current_working_directory": "b"}'),
    ("pwd()", '{"current_working_directory": "/r/a/b"}'),
    ("cd(folder='..')", "{}"),
    ("pwd()", '{"current_working_directory": "/r/a"}'),
    ("cd(folder='..')", "{}"),
    ("cd(folder='..')", '{"error": "Current directory is already the root. Cannot go back."}'),
    ("cp(source='h.txt', destination='c')", '{"result": "\'h.txt\' copied to \'c/h.txt\'"}'),
    ("cp(source='h.txt', destination='c')",
     "Error during execution: File 'h.txt' already exists in directory 'c'."),
    ("cp(source='c', destination='d')", '{"result": "\'c\' copied to \'d\'"}'),
    ("du(human_readable=True)", '{"disk_usage": "45.00 B"}'),
    ("find(path='/', name='t')", '{"matches": ["/c/a/b/f.txt", "/c/a/g.txt", "/c/h.txt", '
     '"/h.txt", "/d/a/b/f.txt", "/d/a/g.txt", "/d/h.txt"]}'),
    ("find(path='/c/a')", '{"matches": ["/c/a/b", "/c/a/b/f.txt", "/c/a/g.txt"]}'),
    ("echo(content='q', file_name='c')",
     "Error during execution: 'Directory' object has no attribute '_write'"),
    ("rmdir(dir_name='c')", '{"error": "rmdir: cannot remove \'c\': Directory not empty"}'),
    ("rm(file_name='c')", '{"result": "\'c\' removed"}'),
    ("tail(file_name='h.txt', lines=0)", '{"last_lines": "b\\na"}'),
    ("tail(file_name='h.txt', lines=-1)", '{"last_lines": "a"}'),
    ("mv(source='h.txt', destination='d')",
     '{"error": "mv: cannot move \'h.txt\' to \'d/h.txt\': File exists"}'),
    ("mkdir(dir_name='.hidden')", "None"),
    ("ls()", '{"current_directory_content": ["h.txt", "d"]}'),
    ("ls(a=True)", '{"current_directory_content": ["h.txt", "d", ".hidden"]}'),
    ("cd(folder='.hidden/')", '{"current_working_directory": ".hidden"}'),
    ("cd(folder='a/b')", '{"error": "cd: a/b: Unsupported path. Only one folder level at a '
     'time is supported."}'),
]


def test_the_file_systems_corners_answer_as_bfcls(recorded: Any) -> None:
    tree = _tree({"a": {"b": {"f.txt": "x\ny\nz"}, "g.txt": "one two\nthree"}, "c": {},
                  "h.txt": "b\na"})
    world = World({"id": "multi_turn_base_0", "involved_classes": ["GorillaFileSystem"],
                   "initial_config": {"GorillaFileSystem": {
                       "root": {"r": {"type": "directory", "contents": tree}}}}})
    calls = [call for call, _ in CORNERS]
    assert world.execute(calls) == [answer for _, answer in CORNERS]


def test_an_empty_scenario_is_a_bare_root(recorded: Any) -> None:
    world = World({"id": "multi_turn_base_0", "involved_classes": ["GorillaFileSystem"],
                   "initial_config": {}})
    assert world.execute(["pwd()", "mkdir(dir_name='x')", "cd(folder='x')", "pwd()",
                          "cd(folder='..')", "touch(file_name='t')",
                          "echo(content='hé', file_name='t')", "du()", "find()"]) == [
        '{"current_working_directory": "//"}', "None", '{"current_working_directory": "x"}',
        '{"current_working_directory": "///x"}', "{}", "None", "None",
        '{"disk_usage": "3 bytes"}', '{"matches": ["./x", "./t"]}']
