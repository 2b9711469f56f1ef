"""A served ToolTalk conversation, driven by the MCP SDK's own client in-process, answers every
call exactly as toolscore's in-process simulator does: ground-truth calls of easy and hard
conversations, and wrong calls (unknown argument, missing argument, bad date)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from serve.replaying import (
    as_read,
    conversation_ids,
    ground_truth_calls,
    over_mcp,
    visible_arguments,
    wrong_calls,
)

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from toolscore.benchmarks.serve.episodes import Episodes  # noqa: E402
from toolscore.benchmarks.serve.stdio import episode_server  # noqa: E402


def replay(world: Any, conv_id: str, calls: list[tuple[str, dict[str, Any]]],
           mode: str = "legacy") -> list[tuple[tuple[bool, str], tuple[bool, str]]]:
    """(in-process, over MCP) for each call, each side in a fresh world of the conversation."""
    conversation = world.sample(conv_id).data
    env = world.benchmark.environment(conversation)
    tools = world.benchmark.tools
    expected = [over_mcp(env.call(name, args)) for name, args in calls]

    async def drive() -> list[tuple[bool, str]]:
        server, _ = episode_server(Episodes(world), conv_id)
        async with Client(server, mode=mode) as client:
            return [as_read(await client.call_tool(name, visible_arguments(tools[name], args)))
                    for name, args in calls]

    return list(zip(expected, anyio.run(drive), strict=True))


def test_ground_truth_calls_read_as_in_process(world: Any) -> None:
    checked = 0
    for conv_id in conversation_ids(world):
        calls = ground_truth_calls(world.sample(conv_id).data)
        for (name, _), (want, got) in zip(calls, replay(world, conv_id, calls), strict=True):
            assert got == want, (conv_id, name)
            checked += 1
    assert checked >= 20


def test_wrong_calls_get_the_simulators_exact_exception(world: Any) -> None:
    texts = []
    for conv_id in ("AddAlarm-easy", "CreateEvent-easy", "SendEmail-easy"):
        conversation = world.sample(conv_id).data
        for call in wrong_calls(conversation, world.benchmark.tools):
            ((want, got),) = replay(world, conv_id, [call])
            assert got == want, (conv_id, call)
            assert got[0], call  # every one is an error, carried as isError with its text
            texts.append(got[1])
    assert "AddAlarm.call() got an unexpected keyword argument 'bogus_argument'" in texts
    assert any("missing 1 required positional argument" in t for t in texts)
    assert any("Smarch" in t for t in texts)  # a bad date: the parser's own message
    assert len(texts) >= 8


def test_the_direct_in_process_mode_reads_the_same(world: Any) -> None:
    calls = ground_truth_calls(world.sample("CreateEvent-easy").data)
    for want, got in replay(world, "CreateEvent-easy", calls, mode="auto"):
        assert got == want


def test_listed_tools_are_the_protocols_offered_tools(world: Any) -> None:
    from support.data import dataset

    from toolscore.benchmarks.serve.world import ServedWorld

    exact = ServedWorld.create("tooltalk", data=dataset("tooltalk"), embedder="hashing",
                               tools="exact")

    async def listing(w: Any, conv_id: str) -> list[Any]:
        server, _ = episode_server(Episodes(w), conv_id)
        async with Client(server, mode="legacy") as client:
            return list((await client.list_tools()).tools)

    bench = world.benchmark
    conversation = world.sample("ChangePassword-easy").data
    listed = anyio.run(listing, world, "ChangePassword-easy")
    assert [t.name for t in listed] == [t.name for t in bench.offered_tools(conversation)]
    for t in listed:
        tool = bench.tools[t.name]
        assert t.description == bench.shown_spec(tool).description
        assert "session_token" not in t.input_schema.get("properties", {})
        assert t.input_schema == bench.shown_spec(tool).parameters
        assert t.annotations.destructive_hint is tool.action
        assert t.annotations.read_only_hint is (not tool.action)
    assert {t.name for t in listed if t.annotations.read_only_hint} >= {"QueryUser"}
    only = anyio.run(listing, exact, "ChangePassword-easy")
    assert [t.name for t in only] == sorted(conversation.apis_used, key=[
        t.name for t in bench.tools.values()].index)


def test_tracing_spans_only_when_a_tracer_provider_collects_them(
        world: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry import trace

    from toolscore.benchmarks.serve.mcp_tools import build_server

    def layers() -> list[str]:
        server = build_server(world, lambda ctx: None)
        return [type(m).__name__ for m in server.middleware]

    assert "OpenTelemetryMiddleware" not in layers()  # nothing installed: no-op spans skipped
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: trace.NoOpTracerProvider())
    assert "OpenTelemetryMiddleware" in layers()  # a provider installed: the SDK's spans kept
