"""Property: the ToolTalk scorer scores any stored turn output without raising. A prediction
of any shape (a name that is not a string, arguments that are not an object, a record that is
not even a dict) is the model's mistake: it is counted as a prediction that matches nothing."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from properties.strategies import FUZZ, json_values, texts

from toolscore.benchmarks.registry import make_benchmark
from toolscore.benchmarks.tooltalk.benchmark import score_turns
from toolscore.benchmarks.tooltalk.plugins import ALL_TOOLS
from toolscore.benchmarks.tooltalk.scoring import TurnCalls
from toolscore.env.tool import CallRecord, MatchContext

# A whole conversation is a large example to draw: fewer of them keep each test to seconds.
SCORED = settings(FUZZ, max_examples=100)
DEMO = make_benchmark("demo", embedder="hashing")
TOOLS = {"demo": DEMO.tools, "tooltalk": ALL_TOOLS}


def _call(names: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({
        "request": st.fixed_dictionaries({
            "api_name": st.sampled_from(names),
            "parameters": st.dictionaries(texts, json_values, max_size=3)}),
        "response": json_values, "exception": st.none() | texts})


def _prediction(names: list[str]) -> st.SearchStrategy[Any]:
    shaped = st.fixed_dictionaries({}, optional={
        "request": json_values | st.fixed_dictionaries({}, optional={
            "api_name": st.sampled_from(names) | json_values,
            "parameters": json_values}),
        "response": json_values, "exception": json_values, "raw_arguments": json_values})
    return _call(names) | shaped | json_values


def _turns(names: list[str]) -> st.SearchStrategy[list[dict[str, Any]]]:
    turn = st.fixed_dictionaries({
        "ground_truth": st.lists(_call(names), max_size=3),
        "predictions": st.lists(_prediction(names), max_size=3),
        "text": st.none() | texts})
    return st.lists(turn, min_size=1, max_size=2).map(
        lambda ts: [{"turn": 2 * i + 1, **t} for i, t in enumerate(ts)])


@pytest.mark.parametrize("world", sorted(TOOLS))
def test_any_stored_output_is_scored(world: str) -> None:
    tools = TOOLS[world]
    ctx = MatchContext(DEMO.similarity, strict=False)

    @SCORED
    @given(turns=_turns(sorted(tools)), strict=st.booleans())
    def run(turns: list[dict[str, Any]], strict: bool) -> None:
        ctx.strict = strict
        calls = [TurnCalls(t["turn"], [CallRecord.from_dict(c) for c in t["ground_truth"]],
                           [CallRecord.from_dict(c) for c in t["predictions"]], t["text"])
                 for t in turns]
        scores = score_turns(calls, tools, ctx)
        assert scores["predictions"] == sum(len(t["predictions"]) for t in turns)
        assert scores["ground_truths"] == sum(len(t["ground_truth"]) for t in turns)
        assert 0 <= scores["matches"] <= min(scores["predictions"], scores["ground_truths"])

    run()


HALF_EMOJI = {"request": {"api_name": "CreateNote", "parameters": {"title": "\ud83d",
                                                                    "text": "caf\ud83d"}},
              "response": None, "exception": None}


@SCORED
@given(turns=_turns(sorted(DEMO.tools)))
@example(turns=[{"turn": 1, "ground_truth": [HALF_EMOJI], "predictions": [HALF_EMOJI],
                 "text": None}])  # read back from a file: json turns "\ud83d" into a lone half
def test_the_benchmark_scores_what_it_stored(turns: list[dict[str, Any]]) -> None:
    scores = DEMO.score({"turns": turns})
    assert scores["predictions"] == sum(len(t["predictions"]) for t in turns)
