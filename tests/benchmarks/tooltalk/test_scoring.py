"""ToolTalk scoring: matching, bad actions, metrics, aggregation and error types.

Hand-computed cases use tiny tools defined here; the real-data cases need the ToolTalk tools
(``toolscore.benchmarks.tooltalk.plugins.ALL_TOOLS``) and the released data.
"""

from __future__ import annotations

import pytest
from support.data import dataset

from toolscore.benchmarks.tooltalk.scoring import (
    BAD_CALL,
    BAD_PLANNING,
    OVER_TRIGGER,
    CallRef,
    TurnCalls,
    aggregate,
    score_conversation,
    similarity_texts,
)
from toolscore.embed.similarity import Similarity
from toolscore.env.tool import CallRecord, MatchContext, Tool


def _tool(name: str, action: bool, equivalence=None) -> Tool:
    return Tool(name=name, description="", parameters={"type": "object"},
                fn=lambda env, **kw: None, action=action, equivalence=equivalence)


def _loose(pred: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
    """Matches when every predicted argument value is among the truth's (for greediness)."""
    return set((pred.arguments or {}).values()) <= set((truth.arguments or {}).values())


TOOLS = {
    "Act": _tool("Act", action=True),  # exact equivalence
    "Other": _tool("Other", action=True),
    "Look": _tool("Look", action=False),
    "Loose": _tool("Loose", action=True, equivalence=_loose),
}
CTX = MatchContext(similarity=lambda a, b: 1.0 if a == b else 0.0)
STRICT = MatchContext(similarity=CTX.similarity, strict=True)


def call(name: str, exception: str | None = None, response=None, **arguments) -> CallRecord:
    return CallRecord(name, arguments, response, exception)


def score(*turns: TurnCalls, ctx: MatchContext = CTX):
    return score_conversation(list(turns), TOOLS, ctx)


# -- matching ---------------------------------------------------------------------------------
def test_first_fit_over_whole_conversation():
    # Two identical ground truths in turns 1 and 3; the turn-3 prediction takes the turn-1 one
    # (first unmatched in file order), then the next identical prediction takes turn 3's.
    s = score(TurnCalls(1, [call("Act", x=1)], []),
              TurnCalls(3, [call("Act", x=1)], [call("Act", x=1), call("Act", x=1)]))
    assert [o.match for o in s.outcomes] == [CallRef(1, 0), CallRef(3, 0)]
    assert s.truth_matches == {CallRef(1, 0): CallRef(3, 0), CallRef(3, 0): CallRef(3, 1)}
    assert (s.matches, s.precision, s.recall, s.bad_actions, s.success) == (2, 1.0, 1.0, 0, True)


def test_greedy_not_optimal():
    # P1 fits T1 and T2, P2 only T1. Greedy gives P1->T1 and leaves P2 unmatched although a
    # perfect assignment (P1->T2, P2->T1) exists: the reference is greedy, so are we.
    truths = [call("Loose", a=1, b=2), call("Loose", a=1, b=3)]
    s = score(TurnCalls(1, truths, [call("Loose", a=1), call("Loose", b=2)]))
    assert [o.match for o in s.outcomes] == [CallRef(1, 0), None]
    assert (s.matches, s.bad_actions, s.recall, s.precision) == (1, 1, 0.5, 0.5)


def test_one_to_one_duplicate_prediction_is_a_bad_action():
    s = score(TurnCalls(1, [call("Act", x=1)], [call("Act", x=1), call("Act", x=1)]))
    assert (s.predictions, s.matches, s.actions, s.valid_actions, s.bad_actions) == (2, 1, 2, 1, 1)
    assert s.precision == 0.5 and s.recall == 1.0
    assert s.action_precision == 0.5 and s.incorrect_action_rate == 0.5
    assert not s.success and s.soft_success == 0.5
    assert [o.bad_action for o in s.outcomes] == [False, True]


def test_names_must_match_and_unknown_tools_never_match():
    s = score(TurnCalls(1, [call("Act", x=1)], [call("Other", x=1), call("Nope", x=1)]))
    assert s.matches == 0
    # Other is an action that executed fine -> bad; an unknown tool is not an action.
    assert [(o.action, o.bad_action) for o in s.outcomes] == [(True, True), (False, False)]
    assert (s.actions, s.bad_actions) == (1, 1)


def test_failed_action_and_non_action_extra_only_lower_precision():
    s = score(TurnCalls(1, [call("Act", x=1)],
                        [call("Act", exception="boom", x=2), call("Look", q="w"),
                         call("Act", x=1)]))
    assert (s.predictions, s.matches, s.actions, s.valid_actions, s.bad_actions) == (3, 1, 2, 1, 0)
    assert s.precision == pytest.approx(1 / 3)
    assert s.action_precision == 0.5 and s.incorrect_action_rate == 0.0
    assert s.success and s.soft_success == 1.0 and s.errors == {}


def test_exact_rule_compares_response_and_exception():
    s = score(TurnCalls(1, [call("Look", response=[1], q="a")],
                        [call("Look", response=[2], q="a"), call("Look", response=[1], q="a")]))
    assert [o.match for o in s.outcomes] == [None, CallRef(1, 0)]


def test_rule_errors_count_as_no_match():
    def broken(pred, truth, ctx):
        raise TypeError("null date")

    tools = {**TOOLS, "Broken": _tool("Broken", action=True, equivalence=broken)}
    s = score_conversation([TurnCalls(1, [call("Broken", d=1)], [call("Broken", d=None)])],
                           tools, CTX)
    assert s.matches == 0 and s.bad_actions == 1


# -- metric edge cases ------------------------------------------------------------------------
def test_no_predictions():
    s = score(TurnCalls(1, [call("Act", x=1), call("Look", q=1)], []))
    m = s.metrics()
    assert m == {"predictions": 0, "ground_truths": 2, "matches": 0, "actions": 0,
                 "valid_actions": 0, "bad_actions": 0, "precision": 0.0, "recall": 0.0,
                 "action_precision": 1.0, "incorrect_action_rate": 0.0, "success": False,
                 "soft_success": 0.0}


def test_only_non_action_predictions():
    s = score(TurnCalls(1, [call("Look", q=1), call("Act", x=1)], [call("Look", q=1)]))
    assert (s.precision, s.recall, s.action_precision, s.incorrect_action_rate) == (
        1.0, 0.5, 1.0, 0.0)
    assert not s.success and s.soft_success == 0.5


def test_soft_success_with_full_recall_and_bad_actions():
    s = score(TurnCalls(1, [call("Act", x=1)], [call("Act", x=1), call("Other", y=1),
                                                call("Other", y=2), call("Act", x=9)]))
    # 4 actions, 1 matched, 3 bad: recall 1, rate 3/4 -> soft 1/4; not a success.
    assert (s.actions, s.valid_actions, s.bad_actions) == (4, 1, 3)
    assert s.recall == 1.0 and s.incorrect_action_rate == 0.75
    assert s.soft_success == pytest.approx(0.25) and not s.success


def test_turn_without_ground_truth_is_scored():
    s = score(TurnCalls(1, [call("Act", x=1)], [call("Act", x=1)]),
              TurnCalls(3, [], [call("Look", q=1)]))
    assert (s.predictions, s.matches, s.precision, s.success) == (2, 1, 0.5, True)


# -- aggregation ------------------------------------------------------------------------------
def test_aggregate_is_micro_averaged():
    a = score(TurnCalls(1, [call("Act", x=1)], [call("Act", x=1)]))  # 1/1, success
    b = score(TurnCalls(1, [call("Act", x=1), call("Act", x=2), call("Look", q=1)],
                        [call("Act", x=1), call("Other", z=1), call("Look", q=2)]))
    # b: 3 predictions, 1 match, 2 actions (1 valid, 1 bad), recall 1/3
    agg = aggregate([a, b])
    assert agg["conversations"] == 2
    assert (agg["predictions"], agg["ground_truths"], agg["matches"]) == (4, 4, 2)
    assert (agg["actions"], agg["valid_actions"], agg["bad_actions"]) == (3, 2, 1)
    assert agg["precision"] == 0.5  # micro 2/4, whereas the macro mean would be (1 + 1/3)/2
    assert agg["recall"] == 0.5
    assert agg["action_precision"] == pytest.approx(2 / 3)
    assert agg["incorrect_action_rate"] == pytest.approx(1 / 3)
    assert agg["successes"] == 1 and agg["success_rate"] == 0.5
    # soft success is a mean over conversations: (1 + 1/3 * (1 - 1/2)) / 2
    assert agg["soft_success"] == pytest.approx((1 + 1 / 6) / 2)
    assert agg["errors"] == {OVER_TRIGGER: 0, BAD_PLANNING: 1, BAD_CALL: 0}


def test_aggregate_empty():
    agg = aggregate([])
    assert agg["conversations"] == 0 and agg["success_rate"] == 0.0
    assert agg["precision"] == 0.0 and agg["incorrect_action_rate"] == 0.0


# -- error types ------------------------------------------------------------------------------
# Default: as ToolTalk's calculate_error_types.py counts them (spec, corrected 2026-11-23).
# Strict: one per turn that caused the failure, "not called enough times" is bad planning.
def test_over_trigger_counts_each_bad_action_by_default_and_each_turn_when_strict():
    turns = [TurnCalls(1, [], [call("Act", x=1), call("Look", q=9), call("Other", y=2),
                               call("Act", exception="no", x=3)]),
             TurnCalls(3, [call("Look", q=1)], [call("Look", q=1)])]
    s = score(*turns)
    assert s.bad_actions == 2 and not s.success
    assert s.errors == {1: OVER_TRIGGER} and s.error_counts == {1: 2}
    assert s.error_totals() == {OVER_TRIGGER: 2}
    assert aggregate([s])["errors"] == {OVER_TRIGGER: 2, BAD_PLANNING: 0, BAD_CALL: 0}
    strict = score(*turns, ctx=STRICT)
    assert strict.errors == {1: OVER_TRIGGER} and strict.error_totals() == {OVER_TRIGGER: 1}


def test_turn_without_ground_truth_and_without_bad_action_is_not_an_error():
    # Failed calls and non-action extras where nothing was expected: no over-trigger.
    s = score(TurnCalls(1, [], [call("Look", q=1), call("Act", exception="no", x=1)]),
              TurnCalls(3, [call("Act", x=1)], []))
    assert s.errors == {3: BAD_PLANNING}  # B empty, U = {Act}: the name sets differ
    assert score(*[TurnCalls(1, [], [call("Look", q=1)]), TurnCalls(3, [call("Act", x=1)], [])],
                 ctx=STRICT).errors == {3: BAD_PLANNING}


def test_successful_conversation_has_no_error_types():
    s = score(TurnCalls(1, [], [call("Look", q=1), call("Act", exception="no", x=1)]),
              TurnCalls(3, [call("Act", x=1)], [call("Act", x=1), call("Look", q=2)]))
    assert s.success and s.errors == {} and s.error_totals() == {}


def test_unmatched_predictions_without_unmatched_ground_truth_are_bad_planning():
    # Turn 1 is fully matched but also has a failed call and a non-action extra (B non-empty,
    # U empty); turn 3 makes the conversation fail. The reference counts turn 1 as bad
    # planning; strict skips it (it did not cause the failure).
    turns = [TurnCalls(1, [call("Act", x=1)], [call("Act", exception="no", x=0),
                                               call("Act", x=1), call("Look", q=5)]),
             TurnCalls(3, [call("Act", x=3)], [])]
    assert score(*turns).errors == {1: BAD_PLANNING, 3: BAD_PLANNING}
    assert score(*turns, ctx=STRICT).errors == {3: BAD_PLANNING}


def test_fully_matched_turn_is_skipped():
    s = score(TurnCalls(1, [call("Act", x=1)], [call("Act", x=1)]),
              TurnCalls(3, [call("Act", x=3)], [call("Act", x=4)]))
    assert s.errors == {3: BAD_CALL}


def test_bad_planning_different_tools_and_bad_call():
    s = score(TurnCalls(1, [call("Act", x=1)], [call("Other", x=1)]),
              TurnCalls(3, [call("Act", x=1)], [call("Act", x=2)]),
              TurnCalls(5, [call("Act", x=5), call("Look", q=5)],
                        [call("Act", x=6), call("Look", q=6)]))
    assert s.errors == {1: BAD_PLANNING, 3: BAD_CALL, 5: BAD_CALL}
    # A failed call of the right tool is still an unmatched prediction of that tool.
    s = score(TurnCalls(1, [call("Act", x=1)], [call("Act", exception="boom", x=1)]))
    assert s.errors == {1: BAD_CALL}


def test_called_more_often_is_bad_planning_by_default_not_enough_when_strict():
    # Turn 1: two Act needed, one wrong Act predicted (U = {Act: 2}, B = {Act: 1}).
    # Turn 3: one Act needed, two wrong Acts predicted (U = {Act: 1}, B = {Act: 2}).
    turns = [TurnCalls(1, [call("Act", x=1), call("Act", x=2)], [call("Act", x=7)]),
             TurnCalls(3, [call("Act", x=3)], [call("Act", x=8), call("Act", x=9)])]
    assert score(*turns).errors == {1: BAD_CALL, 3: BAD_PLANNING}
    assert score(*turns, ctx=STRICT).errors == {1: BAD_PLANNING, 3: BAD_CALL}
    # One tool with the same counts is enough for a bad call only if no other tool exceeds.
    mixed = TurnCalls(1, [call("Act", x=1), call("Look", q=1)],
                      [call("Act", x=2), call("Look", q=2), call("Look", q=3)])
    assert score(mixed).errors == {1: BAD_PLANNING}
    assert score(mixed, ctx=STRICT).errors == {1: BAD_CALL}


def test_error_totals_aggregate_over_conversations():
    a = score(TurnCalls(1, [], [call("Act", x=1), call("Act", x=2)]),
              TurnCalls(3, [call("Act", x=3)], [call("Act", x=4)]))
    b = score(TurnCalls(1, [call("Act", x=1)], [call("Other", x=1)]))
    ok = score(TurnCalls(1, [call("Act", x=1)], [call("Act", x=1)]))
    assert aggregate([a, b, ok])["errors"] == {OVER_TRIGGER: 2, BAD_PLANNING: 1, BAD_CALL: 1}


def test_stored_scores_keep_error_counts_and_old_records_count_once():
    from toolscore.benchmarks.tooltalk.benchmark import score_turns, stored_score
    from toolscore.benchmarks.tooltalk.report_view import error_lines, error_rows, record_view

    turns = [TurnCalls(1, [], [call("Act", x=1), call("Other", y=1)]),
             TurnCalls(3, [call("Act", x=3)], [call("Act", x=4)])]
    stored = score_turns(turns, TOOLS, CTX)
    assert stored["error_types"] == {"1": OVER_TRIGGER, "3": BAD_CALL}
    assert stored["error_counts"] == {"1": 2, "3": 1}
    totals = aggregate([stored_score(stored)])["errors"]
    assert totals == {OVER_TRIGGER: 2, BAD_PLANNING: 0, BAD_CALL: 1}
    old = {k: v for k, v in stored.items() if k != "error_counts"}  # scored before the change
    assert aggregate([stored_score(old)])["errors"][OVER_TRIGGER] == 1

    record = {"id": "c", "epoch": 0, "status": "ok", "meta": {"split": "hard"},
              "scores": stored, "output": {"turns": []}}
    rows = {r["error_type"]: r for r in error_rows([record])}
    assert (rows[OVER_TRIGGER]["errors"], rows[OVER_TRIGGER]["turns"]) == (2, 1)
    assert record_view(record)["tags"] == ["turn 1: over-trigger ×2", "turn 3: bad call"]
    assert error_lines({"hard": {"errors": totals}, "error_rule": "reference (x)"}) == [
        "error types (hard, failed conversations): over-trigger 2 · bad planning 0 · "
        "bad call 1", "error-type rule: reference (x)"]


# -- similarity prefetch ----------------------------------------------------------------------
def test_similarity_texts_only_from_comparable_calls():
    tools = {**TOOLS, "Mail": _tool("Mail", action=True)}
    tools["Mail"].extra["similarity_fields"] = ("subject",)
    turns = [TurnCalls(1, [call("Mail", subject="Hi", to="bob"), call("Act", x="t")],
                       [call("Mail", subject="Hello", to="bob"), call("Act", x="p", n=3),
                        call("Look", q="never compared"), call("Nope", s="x")])]
    assert similarity_texts(turns, tools) == ["Hi", "t", "Hello", "p"]


# -- real data --------------------------------------------------------------------------------
SPLITS = {"easy": "easy", "hard": "tooltalk"}


def real_tools() -> dict[str, Tool]:
    from toolscore.benchmarks.tooltalk.plugins import ALL_TOOLS

    return ALL_TOOLS


def released(split: str):
    from toolscore.benchmarks.tooltalk.predictions import read_predictions

    return read_predictions(dataset("tooltalk") / SPLITS[split])


def oracle(turns: list[TurnCalls]) -> list[TurnCalls]:
    return [TurnCalls(t.turn, t.ground_truth, [CallRecord(**vars(c)) for c in t.ground_truth])
            for t in turns]


def test_dataset_shape():
    easy, hard = released("easy"), released("hard")
    assert (len(easy), len(hard)) == (28, 50)
    counts = [sum(len(t.ground_truth) for t in f.turns) for f in easy + hard]
    assert sum(counts) == 266 and all(c == 1 for c in counts[:28])


@pytest.mark.parametrize("split", ["easy", "hard"])
@pytest.mark.parametrize("strict", [False, True])
def test_ground_truth_scores_perfectly_against_itself(split, strict):
    tools = real_tools()
    files = released(split)
    sim = Similarity("hashing")
    ctx = MatchContext(similarity=sim, strict=strict)
    scores = []
    for f in files:
        turns = oracle(f.turns)
        sim.prefetch(similarity_texts(turns, tools))
        scores.append(score_conversation(turns, tools, ctx))
    agg = aggregate(scores)
    assert agg["precision"] == 1.0 and agg["recall"] == 1.0
    assert agg["success_rate"] == 1.0 and agg["bad_actions"] == 0
    assert agg["errors"] == {OVER_TRIGGER: 0, BAD_PLANNING: 0, BAD_CALL: 0}


def test_perturbed_predictions_give_hand_expected_metrics():
    tools = real_tools()
    ctx = MatchContext(similarity=Similarity("hashing"))
    checked = 0
    for f in released("hard"):
        turns = oracle(f.turns)
        last = [t for t in turns if t.ground_truth][-1]
        # Drop the first call of the last evaluated turn and add a wrong (successful) action.
        dropped = last.predictions.pop(0)
        last.predictions.append(CallRecord("AddAlarm", {"time": "03:33:00"}, {"alarm_id": "x"}))
        n = sum(len(t.ground_truth) for t in turns)
        gt_actions = sum(tools[c.name].action for t in turns for c in t.ground_truth)
        s = score_conversation(turns, tools, ctx)
        expected_actions = gt_actions - tools[dropped.name].action + 1
        assert (s.predictions, s.ground_truths, s.matches) == (n, n, n - 1)
        assert (s.actions, s.valid_actions, s.bad_actions) == (
            expected_actions, expected_actions - 1, 1)
        assert s.recall == pytest.approx((n - 1) / n) and not s.success
        assert s.incorrect_action_rate == pytest.approx(1 / expected_actions)
        assert s.soft_success == pytest.approx((n - 1) / n * (1 - 1 / expected_actions))
        assert s.errors == {last.turn: BAD_PLANNING if dropped.name != "AddAlarm" else BAD_CALL}
        checked += 1
    assert checked > 0
