"""toolscore's multi-turn backends, run through its executor, against BFCL's own
(tests/fixtures/bfcl/backends.json.gz): for every recorded call sequence (each multi-turn
entry's ground truth, another entry's ground truth run from its state, a perturbed ground
truth), turn by turn, every call's result text and every instance's public state.

Sequences are grouped by the classes their entry involves; a group whose classes are not all
implemented yet is skipped, naming the missing ones."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from support.bfcl_backends import MULTI_TURN, digest, load, state_snapshot
from support.bfcl_multiturn import classes_of, missing, recorded
from support.data import dataset

from toolscore.benchmarks.bfcl.multiturn.execute import World

GROUPS = sorted({classes_of(row) for row in recorded()})


@functools.cache
def entries() -> dict[str, dict[str, Any]]:
    root = dataset("bfcl")
    return {entry["id"]: entry for category in MULTI_TURN for entry, _ in load(root, category)}


def first_difference(got: Any, wanted: Any, where: str = "") -> str | None:
    """The path of the first place two snapshots differ (None when equal)."""
    if got == wanted:
        return None
    if isinstance(got, dict) and isinstance(wanted, dict):
        for key in sorted(set(got) | set(wanted), key=str):
            if key not in got or key not in wanted:
                return f"{where}/{key} (only in {'the fixture' if key in wanted else 'ours'})"
            found = first_difference(got[key], wanted[key], f"{where}/{key}")
            if found is not None:
                return found
    if isinstance(got, list) and isinstance(wanted, list):
        for i, (a, b) in enumerate(zip(got, wanted, strict=False)):
            found = first_difference(a, b, f"{where}[{i}]")
            if found is not None:
                return found
        return f"{where} (length {len(got)} != {len(wanted)})"
    return f"{where}: {json.dumps(got)[:300]} != {json.dumps(wanted)[:300]}"


def replay(entry: dict[str, Any], row: dict[str, Any]) -> list[str]:
    """Every difference between our run of the row's sequence and BFCL's record of it."""
    where = f"{row['id']} [{row['variant']}]"
    world = World(entry)
    problems: list[str] = []
    states: dict[str, Any] = {}
    for t, turn in enumerate(row["turns"]):
        results = world.execute(turn["calls"])
        for c, (call, got, wanted) in enumerate(zip(turn["calls"], results, turn["results"],
                                                    strict=True)):
            if got != wanted:
                problems.append(f"{where} turn {t} call {c} {call}\n  ours: {got}\n  BFCL: "
                                f"{wanted}")
        states = {name: state_snapshot(instance) for name, instance in world.instances.items()}
        for name, snap in sorted(states.items()):
            if digest(snap) != turn["state"].get(name):
                problems.append(f"{where} turn {t}: {name}'s state differs after "
                                f"{turn['calls']}")
    if problems and "final_state" in row:
        for name, wanted_state in sorted(row["final_state"].items()):
            diff = first_difference(states.get(name), wanted_state, name)
            if diff is not None:
                problems.append(f"{where} final state, first difference: {diff}")
    return problems


@pytest.mark.parametrize("classes", GROUPS, ids="+".join)
def test_backends_reproduce_the_recorded_results_and_states(classes: tuple[str, ...]) -> None:
    absent = missing(classes)
    if absent:
        pytest.skip(f"not implemented yet: {', '.join(absent)}")
    rows = [row for row in recorded() if classes_of(row) == classes]
    problems: list[str] = []
    for row in rows:
        problems += replay(entries()[row["id"]], row)
    assert not problems, f"{len(problems)} differences; first:\n" + "\n".join(problems[:5])


def test_the_fixture_covers_every_multi_turn_entry() -> None:
    rows = recorded()
    assert len(rows) == 2400
    assert sum(len(turn["calls"]) for row in rows for turn in row["turns"]) == 13875
    assert {row["id"] for row in rows} == set(entries())
    assert {row["variant"] for row in rows} == {"ground_truth", "cross", "perturbed"}
