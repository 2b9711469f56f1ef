"""toolscore's TradingBot, TravelAPI and VehicleControlAPI against BFCL's own, call by call.

``tests/fixtures/bfcl/backends.json.gz`` holds, for call sequences over every multi-turn entry,
the result text BFCL's executor gave for each call and a digest of each instance's public state
after each turn. Every recorded sequence of an entry involving one of these three classes is
replayed through toolscore's executor (:class:`World`) and its results and states compared.
While another class of the entry has no implementation, the world holds the entry's
implemented classes only and the calls naming a method of a missing class are left out: no
class reads another's state and no two classes share a method name, so the results and states
of the implemented classes do not depend on those calls.
"""

from __future__ import annotations

import ast
import gzip
import importlib
import inspect
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from support.bfcl_backends import MULTI_TURN, digest, load, state_snapshot
from support.data import dataset

from toolscore.benchmarks.bfcl.multiturn.backend import BACKENDS
from toolscore.benchmarks.bfcl.multiturn.execute import World
from toolscore.benchmarks.bfcl.release import constant, local_constant
from toolscore.data import DataError

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "bfcl" / "backends.json.gz"
MINE = ("TradingBot", "TravelAPI", "VehicleControlAPI")


@cache
def _rows() -> list[dict]:
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as f:
        return json.load(f)


@cache
def _entries() -> dict[str, dict]:
    root = dataset("bfcl")
    return {e["id"]: e for category in MULTI_TURN for e, _ in load(root, category)}


@cache
def _implemented(name: str) -> bool:
    try:
        importlib.import_module(BACKENDS[name].partition(":")[0])
    except ImportError:
        return False
    return True


def _world(entry: dict) -> tuple[World, set[str]]:
    """The world of the entry's implemented classes, and the method names it maps."""
    kept = [c for c in entry["involved_classes"] if _implemented(c)]
    world = World({**entry, "involved_classes": kept})
    methods = {name for inst in world.instances.values()
               for name, _ in inspect.getmembers(inst, inspect.ismethod)
               if not name.startswith("_")}
    return world, methods


def _foreign(call: str, methods: set[str], known: set[str]) -> bool:
    """Whether the call names a method of a class the world lacks."""
    try:
        tree = ast.parse(call.lstrip(" \t"), mode="eval")
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
               and n.func.id not in methods and n.func.id in known for n in ast.walk(tree))


@cache
def _all_method_names() -> set[str]:
    names: set[str] = set()
    for row in _rows():
        for turn in row["turns"]:
            for call in turn["calls"]:
                try:
                    tree = ast.parse(call.lstrip(" \t"), mode="eval")
                except SyntaxError:
                    continue
                names |= {n.func.id for n in ast.walk(tree)
                          if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return names


def replay(row: dict) -> list[str]:
    """The differences between toolscore's run of a recorded row and BFCL's (empty: none)."""
    world, methods = _world(_entries()[row["id"]])
    known = _all_method_names()
    problems = []
    for t, turn in enumerate(row["turns"]):
        for c, (call, expected) in enumerate(zip(turn["calls"], turn["results"], strict=True)):
            if _foreign(call, methods, known):
                continue
            (got,) = world.execute([call])
            if got != expected:
                problems.append(f"turn {t} call {c} {call[:80]}: "
                                f"{got[:300]!r} != {expected[:300]!r}")
        for name, instance in world.instances.items():
            if digest(state_snapshot(instance)) != turn["state"][name]:
                problems.append(f"turn {t} state of {name} differs")
        if problems:
            break
    if not problems and "final_state" in row:
        for name, instance in world.instances.items():
            if state_snapshot(instance) != row["final_state"][name]:
                problems.append(f"final state of {name} differs")
    return problems


def _rows_of(cls: str) -> list[dict]:
    return [r for r in _rows() if cls in _entries()[r["id"]]["involved_classes"]]


@pytest.mark.parametrize("cls", MINE)
def test_every_recorded_row_matches(cls: str) -> None:
    rows = _rows_of(cls)
    assert len(rows) == 600  # 150 entries of each of the four categories, three sequences each
    failures = {}
    for row in rows:
        problems = replay(row)
        if problems:
            failures[f"{row['id']}/{row['variant']}"] = problems[0]
    shown = "\n".join(f"{k}: {v}" for k, v in list(failures.items())[:10])
    assert not failures, f"{len(failures)} rows differ:\n{shown}"


def test_literal_tables_are_read_from_inside_the_released_functions() -> None:
    rates = local_constant("travel_booking.py", "compute_exchange_rate", "exchange_rates")
    assert rates[("USD", "EUR")] == 0.8 and len(rates) == 10
    routes = local_constant("travel_booking.py", "get_flight_cost", "base_costs")  # annotated
    assert routes[("SFO", "LAX")] == 200
    airports = local_constant("travel_booking.py", "list_all_airports")  # the returned literal
    assert len(airports) == 23 and airports[:2] == ["RMS", "SBK"]
    with pytest.raises(DataError, match="no literal nothing in get_flight_cost"):
        local_constant("travel_booking.py", "get_flight_cost", "nothing")
    with pytest.raises(DataError, match="no returned literal in book_flight"):
        local_constant("travel_booking.py", "book_flight")


def test_long_context_filler_cards_can_be_shared_as_bfcl_shares_them() -> None:
    # BFCL's instances hold its module-level filler records themselves: a purchase paid with a
    # filler card changes that card in the ground truth's instance too, and the checker sees
    # equal states. Shared on request only (each instance has its own copy by default).
    booking = {"card_id": "c1", "travel_date": "2024-01-01", "travel_from": "SFO",
               "travel_to": "LAX", "travel_class": "economy", "travel_cost": 100.0,
               "transaction_id": "t"}
    config: dict[str, Any] = {"booking_record": {"b1": booking},
                              "credit_card_list": {"c1": {"balance": 500.0}},
                              "access_token": "tok", "token_expires_in": 2}
    entry = {"id": "multi_turn_long_context_0", "involved_classes": ["TravelAPI"],
             "initial_config": {"TravelAPI": config}}
    model: Any = World(entry).instances["TravelAPI"]
    truth: Any = World(entry).instances["TravelAPI"]
    card = next(iter(constant("long_context.py", "CREDIT_CARD_EXTENSION")))
    assert card not in config["credit_card_list"]
    paid = model.purchase_insurance("tok", "x", "b1", 50.0, card)
    assert paid["insurance_status"] is True
    assert state_snapshot(model) != state_snapshot(truth)
    model, truth = World(entry).instances["TravelAPI"], World(entry).instances["TravelAPI"]
    model._share_filler(truth)
    model.purchase_insurance("tok", "x", "b1", 50.0, card)
    assert state_snapshot(model) == state_snapshot(truth)
    assert truth.credit_card_list[card]["balance"] == 4950.0
    # the scenario's own card stays apart
    model.purchase_insurance("tok", "x", "b1", 50.0, "c1")
    assert state_snapshot(model) != state_snapshot(truth)

