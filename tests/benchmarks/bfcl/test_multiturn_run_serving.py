"""BFCL's multi-turn worlds served to an agent (the free-running protocol): an episode's calls
answered as the reference mode's world answers them, the user's words per turn, the stored
turns, the final state against the ground truth's, and the tools over MCP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.data import dataset

from toolscore.benchmarks.bfcl import episode as bfcl_episode
from toolscore.benchmarks.bfcl.oracle import multi_turn_steps
from toolscore.benchmarks.bfcl.serving import result_text
from toolscore.benchmarks.options import OptionError
from toolscore.benchmarks.serve.episodes import Episodes
from toolscore.benchmarks.serve.world import ServedWorld


def _world(conversation: str | None = None) -> ServedWorld:
    return ServedWorld.create("bfcl", conversation=conversation, data=dataset("bfcl"),
                              category=["multi_turn"])


def _ground_truth_calls(world: ServedWorld, sample_id: str) -> list[list[tuple[str, Any]]]:
    sample = world.sample(sample_id)
    steps = multi_turn_steps(sample.data["entry"], sample.data["answer"])
    return [[(c["name"], json.loads(c["arguments"])) for s in turn for c in s.get("tool_calls", [])]
            for turn in steps]


@pytest.mark.parametrize("sample_id", ["multi_turn_miss_func_0", "multi_turn_long_context_3",
                                       "multi_turn_base_150"])
def test_an_agent_playing_the_ground_truth_leaves_the_expected_world(sample_id: str,
                                                                    tmp_path: Path) -> None:
    world = _world()
    serving = world.serving
    assert serving is not None
    sample = world.sample(sample_id)
    episodes = Episodes(world, tmp_path / "run")
    ep = episodes.create(sample_id)
    assert ep.world.system_prompt == ""
    entry = sample.data["entry"]
    names = {t.name for t in ep.world.tools}
    # every document, a miss_func entry's held-out ones too
    assert {d["name"] for d in sum(world.benchmark.documents(entry)[1].values(), [])} <= names
    turns = _ground_truth_calls(world, sample_id)
    for index, calls in enumerate(turns):
        if index:
            ep.advance(index)
        said = serving.user_request(sample, index)
        if index in world.benchmark.documents(entry)[1]:
            assert said == [bfcl_episode.added_functions_prompt()]
        else:
            assert said == [m["content"] for m in entry["question"][index]]
        for name, arguments in calls:
            record = ep.call(name, arguments)
            assert isinstance(record.response, (str, dict)) and record.exception is None
    record = episodes.end(ep.id)
    # scored by BFCL's multi-turn checker, the calls of a turn as one step
    assert record.scores == {"valid": True, "error_type": None, "errors": []}
    output = record.output
    assert output["protocol"] == "free-running"
    view = world.benchmark.record_view(record.to_dict())
    assert view["summary"] == "valid"
    assert [m["content"] for m in view["messages"] if m["role"] == "user"] == [
        said for t in range(len(turns)) for said in serving.user_request(sample, t)]
    assert output["final_state"]["match"] is True, output["final_state"]
    assert [len(t["predictions"]) for t in output["turns"]] == [len(c) for c in turns]
    first = output["turns"][0]
    assert first["ground_truth"] == [{"call": c} for c in sample.data["answer"]["ground_truth"][0]]
    assert set(first["predictions"][0]) == {"name", "arguments", "result", "exception"}
    # each stored result is the text the reference mode's world gives for the same call
    from toolscore.benchmarks.bfcl.multiturn.execute import World

    reference = World(entry)
    for stored, calls in zip(output["turns"], sample.data["answer"]["ground_truth"],
                             strict=True):
        assert [p["result"] for p in stored["predictions"]] == reference.execute(list(calls))


def test_a_wrong_call_is_answered_as_bfcl_and_the_final_state_differs() -> None:
    from toolscore.benchmarks.bfcl.multiturn.execute import World

    world = _world()
    episodes = Episodes(world)
    ep = episodes.create("multi_turn_base_0")
    before = ep.world.env.state_hash()
    # the reference mode's world, run on call strings, says the same
    expected = World(world.sample("multi_turn_base_0").data["entry"]).execute(
        ["cd(folder='nowhere')", "mkdir(dir_name='made')", "cd(folder=7, extra=1)"])
    assert expected[0].startswith('{"error": "cd: ') and expected[1] == "None"
    assert expected[2].startswith("Error during execution: ")
    assert [result_text(ep.call("cd", {"folder": "nowhere"}).response),
            ep.call("mkdir", {"dir_name": "made"}).response,
            ep.call("cd", {"folder": 7, "extra": 1}).response] == expected
    assert ep.world.env.state_hash() != before
    ep.world.env.reset()
    assert ep.world.env.state_hash() == before
    ep.call("mkdir", {"dir_name": "made"})
    record = episodes.end(ep.id)
    final = record.output["final_state"]
    assert final["match"] is False and final["differs"] in ("GorillaFileSystem", "TwitterAPI")
    assert record.scores["valid"] is False


def test_single_turn_entries_have_no_world() -> None:
    world = ServedWorld.create("bfcl", data=dataset("bfcl"), category=["simple_python"])
    with pytest.raises(OptionError, match="single-turn"):
        world.open("simple_python_0")


def test_the_tools_over_mcp() -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client

    from toolscore.benchmarks.serve.freerun import serving

    world = _world()
    episodes = Episodes(world)
    ep = episodes.create("multi_turn_base_0")

    async def drive() -> tuple[list[str], Any]:
        async with serving(episodes) as base, Client(f"{base}/mcp/{ep.key}") as client:
            listed = await client.list_tools()
            answer = await client.call_tool("cd", {"folder": "document"})
            return [t.name for t in listed.tools], answer

    names, answer = anyio.run(drive)
    assert names == [t.name for t in ep.world.tools]
    assert "cd" in names and "post_tweet" in names
    # a result BFCL writes as a JSON object reads as BFCL's very text
    assert answer.content[0].text == '{"current_working_directory": "document"}'
    assert [c.tool for c in ep.calls] == ["cd"]


def test_the_free_running_protocol_run_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    pytest.importorskip("aiohttp")
    from serve.scripted_agent import ScriptedAgent, Step

    from toolscore.runs.api import evaluate

    world = _world()
    turns = _ground_truth_calls(world, "multi_turn_base_1")
    unasked = ("mkdir", {"dir_name": "unasked"})
    outcomes = []
    # the agent answers every entry with multi_turn_base_1's ground truth (the second run
    # also makes an unasked call in the second turn); only that entry's records are read
    for extra in ([], [unasked]):
        def script(session: int, message: int, extra: Any = extra) -> Step:
            return Step(calls=turns[message - 1] + (extra if message == 2 else []))

        agent = ScriptedAgent(script)
        with agent.running() as model:
            done = evaluate("bfcl", model, data=dataset("bfcl"), category=["multi_turn_base"],
                            protocol="free-running", limit=2,
                            out=tmp_path / f"run{len(outcomes)}", cache=None, max_concurrency=1)
        outcomes.append({r["id"]: r for r in done.records})
    right, wrong_run = outcomes[0]["multi_turn_base_1"], outcomes[1]["multi_turn_base_1"]
    assert right["status"] == "ok" and right["scores"]["valid"] is True
    assert right["output"]["final_state"]["match"] is True
    assert wrong_run["scores"] == {"valid": False,
                                   "error_type": "multi_turn:instance_state_mismatch",
                                   "errors": ["Model instance for GorillaFileSystem does not "
                                              "match the state with ground truth instance."]}
    config = json.loads((tmp_path / "run0" / "run.json").read_text())
    assert config["benchmark_config"]["protocol"] == "free-running"
    with pytest.raises(OptionError, match="multi-turn entries only"):
        evaluate("bfcl", "oracle", data=dataset("bfcl"), category=["simple_python"],
                 protocol="free-running", out=tmp_path / "refused", cache=None)
