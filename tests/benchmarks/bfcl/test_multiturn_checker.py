"""Every multi-turn verdict recorded from bfcl-eval's own evaluator
(tests/fixtures/bfcl/verdicts_multi_turn.json.gz: for each multi_turn_base entry, its ground
truth as a function-calling model would send it, in one step or one call per step, and
perturbations: a dropped call, a wrong argument, a turn without calls, a missing turn) is the
verdict ``check_multi_turn`` gives: validity, error type and message, verbatim.

Entries are grouped by the classes they involve; a group whose classes are not all
implemented yet is skipped, naming the missing ones."""

from __future__ import annotations

import functools
import json
from collections import Counter
from typing import Any

import pytest
from support.bfcl_multiturn import classes_by_id, missing
from support.data import dataset

from toolscore.benchmarks.bfcl.checker.verdict import VALID
from toolscore.benchmarks.bfcl.multiturn.checker import (
    check_irrelevance,
    check_multi_turn,
    decode_turns,
    missing_results,
)
from toolscore.benchmarks.bfcl.multiturn.execute import World

bv = pytest.importorskip("support.bfcl_variants", reason="the BFCL reference fixtures' reader")

CATEGORY = "multi_turn_base"
GROUPS = sorted({classes for id_, classes in classes_by_id().items()
                 if id_.rsplit("_", 1)[0] == CATEGORY})


@functools.cache
def verdicts() -> dict[str, Any]:
    return bv.load_verdicts("verdicts_multi_turn")


@pytest.mark.parametrize("classes", GROUPS, ids="+".join)
def test_every_recorded_verdict_is_reproduced(classes: tuple[str, ...]) -> None:
    absent = missing(classes)
    if absent:
        pytest.skip(f"not implemented yet: {', '.join(absent)}")
    root = dataset("bfcl")
    table = verdicts()[CATEGORY]
    rows: Counter[str] = Counter()
    differences = []
    for entry, answer in bv.load_category(root, CATEGORY):
        if classes_by_id()[entry["id"]] != classes:
            continue
        for variant, raw in bv.multi_turn_variants(root, entry, answer).items():
            verdict = check_multi_turn(CATEGORY, entry, answer, json.loads(json.dumps(raw)))
            got = {"valid": verdict.valid, "error_type": verdict.error_type,
                   "errors": list(verdict.errors)}
            wanted = table[entry["id"]][variant]
            rows[variant] += 1
            if got != wanted:
                differences.append(f"{entry['id']} [{variant}]\n  ours: {got}\n  BFCL: {wanted}")
    assert rows
    assert not differences, f"{len(differences)} differences; first:\n" + "\n".join(
        differences[:5])


def test_the_fixture_covers_every_entry_and_variant() -> None:
    table = verdicts()[CATEGORY]
    assert set(table) == {id_ for id_ in classes_by_id() if id_.rsplit("_", 1)[0] == CATEGORY}
    assert sum(len(v) for v in table.values()) == 1200


# ---- rules on a stateless backend (MathAPI) ---------------------------------------------

ENTRY = {"id": "multi_turn_base_999", "initial_config": {}, "involved_classes": ["MathAPI"]}
ANSWER = {"ground_truth": [["add(a=1, b=2)"], [], ["mean(numbers=[1, 3])"]]}


def step(name: str, **arguments: Any) -> list[dict[str, str]]:
    return [{name: json.dumps(arguments)}]


def judge(result: Any) -> Any:
    return check_multi_turn(CATEGORY, ENTRY, ANSWER, result)


def test_the_ground_truth_passes_with_text_and_undecodable_steps_around_it() -> None:
    assert judge([[step("add", a=1, b=2), "done"], ["nothing to do"],
                  [[{"mean": "not json"}], step("mean", numbers=[1, 3])]]) == VALID


def test_a_result_may_come_from_an_earlier_turn_and_an_empty_turn_is_not_judged() -> None:
    # the mean is already computed in the first turn; the second turn calls freely
    assert judge([[step("add", a=1, b=2), step("mean", numbers=[1, 3])],
                  [step("add", a=5, b=5)], [step("sum_values", numbers=[1])]]) == VALID


def test_each_produced_result_counts_once() -> None:
    assert missing_results(["x", "x"], ["x"]) == ["x"]
    assert missing_results(["x", "y"], ["y", "z", "x"]) == []


def test_the_verdicts_for_bad_results() -> None:
    assert judge("oops").error_type == "multi_turn:inference_error"
    short = judge([[step("add", a=1, b=2)]])
    assert short.error_type == "multi_turn:force_terminated"
    assert short.errors == ("Model was force-terminated during inference phase. The length of "
                            "the model result turns (1) does not match the length of the "
                            "ground truth turns (3).",)
    empty = judge([[step("add", a=1, b=2)], [], ["only text"]])
    assert empty.errors == ("Model response list is empty for turn 2",)
    wrong = judge([[step("add", a=1, b=3)], [], [step("mean", numbers=[1, 3])]])
    assert wrong.error_type == "multi_turn:execution_response_mismatch"
    assert wrong.errors == ("Model response execution results so far does not contain all the "
                            "ground truth response execution results for turn 0.",)


def test_decoding_skips_text_failures_and_empty_steps() -> None:
    assert decode_turns([["text", [], [{"f": "{"}], [{"f": "[1]"}], step("add", a=1, b=2)]]) \
        == [[["add(a=1,b=2)"]]]


def test_the_irrelevance_rule() -> None:
    assert check_irrelevance([[["add(a=1,b=2)"]], [], []], ANSWER["ground_truth"]) == VALID
    verdict = check_irrelevance([[], [["add(a=1,b=2)"]], []], ANSWER["ground_truth"])
    assert verdict.error_type == "multi_turn:irrelevance_error:decoder_success"
    assert verdict.errors == ("Model outputs valid function calls when it should not for "
                              "turn 1.",)


def test_worlds_are_independent() -> None:
    world = World(ENTRY)
    assert world.execute(["add(a=1, b=2)", "kill()", "nope(x=1)"]) == [
        '{"result": 3}', "Error during execution: Function call kill is not allowed.",
        "Error during execution: name 'nope' is not defined"]
