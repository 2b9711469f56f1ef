"""The final-state check: the oracle leaves every released conversation's world exactly as the
ground truth does (easy and hard), a wrong action is caught with a diff naming the database and
the row, the diff stays bounded, and no call-level figure moves."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from support.data import dataset

from toolscore.benchmarks.registry import make_benchmark
from toolscore.benchmarks.tooltalk import final_state
from toolscore.models.scripted.oracle import OracleModel
from toolscore.types import GenerateConfig, Message, Reply, ToolCall, ToolSpec


@pytest.fixture(scope="module")
def bench() -> Any:
    return make_benchmark("tooltalk", dataset("tooltalk"), embedder="hashing")


def run(bench: Any, sample: Any, model: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    output = asyncio.run(bench.run_sample(sample, model, 0))
    return output, bench.score(json.loads(json.dumps(output)), sample)


def test_the_oracle_passes_on_every_released_conversation(bench: Any) -> None:
    samples = bench.samples()
    assert {s.meta["split"] for s in samples} == {"easy", "hard"} and len(samples) == 78
    failed = []
    for sample in samples:
        output, scores = run(bench, sample, OracleModel())
        assert output["final_state"] == {"rule": final_state.EACH_TURN}
        if scores["final_state_success"] is not True or not scores["success"]:
            failed.append(sample.id)
    assert failed == []


class WrongAlarm:
    """A model that sets the alarm of AddAlarm-easy one hour late, then answers."""

    name = "test/wrong-alarm"

    def cache_identity(self) -> dict[str, object]:
        return {}

    async def generate(self, messages: list[Message], tools: list[ToolSpec],
                       config: GenerateConfig) -> Reply:
        if messages[-1].role == "tool":
            return Reply(Message(role="assistant", content="Done."))
        return Reply(Message(role="assistant", tool_calls=[
            ToolCall("c1", "AddAlarm", json.dumps({"time": "07:30:00"}))]))


def test_a_wrong_action_is_caught_with_its_diff(bench: Any) -> None:
    sample = next(s for s in bench.samples() if s.id == "AddAlarm-easy")
    truth = sample.data.turns[1].apis[0].arguments["time"]
    assert truth != "07:30:00"
    output, scores = run(bench, sample, WrongAlarm())
    assert scores["success"] is False and scores["bad_actions"] == 1
    assert scores["final_state_success"] is False
    turn = output["turns"][0]
    assert turn["state_hash"] != turn["expected_state_hash"]
    entries = turn["state_diff"]["entries"]
    assert {e["database"] for e in entries} == {"Alarm"}
    assert all(e["path"].startswith(sample.data.user["username"] + "/") for e in entries)
    # the id comes from the tool's seeded generator, the same for both: one row, its time
    (entry,) = entries
    assert entry["change"] == "changed" and entry["path"].endswith("/time")
    assert (entry["expected"], entry["found"]) == (truth, "07:30:00")


def test_a_diff_is_bounded() -> None:
    want = {"databases": {"Big": {str(i): {"v": i} for i in range(100)}}, "session": None}
    got = {"databases": {"Big": {str(i): {"v": i + 1} for i in range(100)}},
           "session": {"token": "x" * 5000}}
    diff = final_state.state_diff(got, want)
    assert len(diff["entries"]) == final_state.MAX_DIFFS
    assert diff["more"] == 101 - final_state.MAX_DIFFS  # 100 rows and the session
    same = final_state.state_diff(want, want)
    assert same == {"entries": [], "more": 0}
    long = final_state.state_diff({"databases": {}, "session": {"t": "y" * 5000}},
                                  {"databases": {}, "session": None})
    assert len(long["entries"][0]["found"]) < 300


def test_stored_outputs_without_the_check_score_as_before(bench: Any) -> None:
    sample = next(s for s in bench.samples() if s.id == "AddAlarm-easy")
    output, scores = run(bench, sample, OracleModel())
    old = {k: v for k, v in output.items() if k != "final_state"}
    old_scores = bench.score(old, sample)
    assert "final_state_success" not in old_scores
    assert {k: v for k, v in scores.items() if k != "final_state_success"} == old_scores
    records = [{"id": sample.id, "status": "ok", "meta": sample.meta, "scores": old_scores}]
    metrics = bench.aggregate(records)
    assert "final_state_success_rate" not in metrics["easy"] and "protocol" not in metrics
    assert "protocol" not in bench.config() and bench.mode_label() == "reference"
