"""The free-running protocol: toolscore plays the user, the agent under test runs its own loop.

Per conversation (sample): the conversation's world is served over MCP on a loopback port of
its own (one episode), the agent (``agent-http:<url>``, :mod:`toolscore.models.agent_http`) is
given the episode's MCP URL and the system prompt, and the user's turns of the conversation are
sent in order, the episode's turn counter advanced before each, so every call the agent makes
is logged against the turn it answers. The agent keeps its own history: no ground truth is
re-injected between turns and the world is never reset, which is why the figures are labelled
"free-running" and are not comparable with the reference protocol's. The call log is scored by
the benchmark's own matcher (per-turn calls against that turn's ground truth) and the world the
agent left is checked against the ground truth's. What is said and checked is the benchmark's
(its :class:`~toolscore.benchmarks.serve.interface.Serving`): nothing here knows a benchmark.

The agent is given its episode's MCP address and nothing else: the server offers no control
API (the episodes are driven in-process), so nothing the agent can reach resets its world or
ends its episode.

Infrastructure failures (the agent endpoint unreachable, 5xx, timeouts, a reply that breaks the
contract) end the attempt: the conversation is played again from a fresh world and a new agent
session, up to ``ATTEMPTS`` times; then the sample is recorded as an error, excluded from the
scores. An attempt thrown away is not forgotten: the record keeps it (``discarded_attempts``:
the error that ended it and every call the agent made in it), and the error of a sample whose
attempts all failed counts the calls of each. The server runs in a thread of its own (uvicorn
there does not take over the process's signal handlers), one per sample in flight.

A benchmark plays a sample this way by calling :func:`play` with itself (ToolTalk's
``--protocol free-running``); this package sits in the benchmark layer, below every benchmark,
and imports none.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from toolscore.benchmarks.serve.episodes import Episode, Episodes
from toolscore.benchmarks.serve.jsonsafe import finite
from toolscore.benchmarks.serve.world import ServedWorld
from toolscore.models.base import InfraError

ATTEMPTS = 3
START_TIMEOUT_S = 30.0


def agent_of(model: Any) -> Any:
    """The agent behind the runner's per-sample model wrapper (its client's provider)."""
    found = model
    for attr in ("client", "model"):
        if hasattr(found, "connect"):
            break
        found = getattr(found, attr, found)
    if not hasattr(found, "connect"):
        name = getattr(model, "name", type(model).__name__)
        raise InfraError(f"the free-running protocol needs an agent (--model agent-http:URL); "
                         f"{name} is a model, run it with the reference protocol",
                         retryable=False)
    return found


async def play(benchmark: Any, sample: Any, model: Any, epoch: int) -> dict[str, Any]:
    """The free-running output of one conversation (the benchmark's stored shape)."""
    from toolscore.benchmarks.serve.mcp_tools import MissingSDK, require_sdk

    try:
        require_sdk()
    except MissingSDK as e:
        raise InfraError(str(e), retryable=False) from None
    agent = agent_of(model)
    world = ServedWorld(benchmark.name, benchmark, data=getattr(benchmark, "data_dir", None))
    episodes = Episodes(world)
    last: InfraError | None = None
    discarded: list[dict[str, Any]] = []
    async with serving(episodes) as base, agent.connect() as connection:
        for attempt in range(1, ATTEMPTS + 1):
            episode = episodes.create(sample.id)
            try:
                output = await _conversation(episode, f"{base}/mcp/{episode.key}", connection)
            except InfraError as e:
                discarded.append({**episode.attempt(f"infrastructure error: {e}"),
                                  "attempt": attempt})
                episode.ended = True
                last = e
                if not e.retryable:
                    break
                continue
            output["discarded_attempts"] = discarded + output["discarded_attempts"]
            output["attempts"] = attempt
            return output
    assert last is not None
    calls = ", ".join(str(len(a["calls"])) for a in discarded)
    raise InfraError(f"{last} (after {len(discarded)} attempt(s) of the conversation; tool "
                     f"calls made in each: {calls})", retryable=False)


async def _conversation(episode: Episode, mcp_url: str, connection: Any) -> dict[str, Any]:
    world = episode.world
    assert world.serving is not None and world.sample is not None
    serving, sample = world.serving, world.sample
    session = await connection.start(mcp_url, episode.world.system_prompt, episode.id)
    replies: dict[int, str | None] = {}
    asked: dict[int, list[str]] = {}
    try:
        for index in serving.assistant_turns(sample):
            if index != episode.turn:
                episode.advance(index)
            asked[index] = serving.user_request(sample, index)
            message = "\n".join(asked[index])
            # a turn with no user text before it is not prompted
            replies[index] = await connection.send(session, message) if message else None
    finally:
        # the conversation is complete; a session the agent fails to drop is its business
        with contextlib.suppress(InfraError):
            await connection.end(session)
    episode.ended = True
    return finite(_with_replies(episode.output(), replies, asked))


def _with_replies(output: dict[str, Any], replies: dict[int, str | None],
                  asked: dict[int, list[str]]) -> dict[str, Any]:
    """What the reports read per turn besides the calls: the user's words and the reply."""
    from toolscore.env.limits import bounded_text

    for turn in output["turns"]:
        n = turn["turn"]
        text = bounded_text(replies.get(n))
        turn["user"] = asked.get(n, [])
        turn["text"] = text
        turn["stop"] = "answer" if n in replies else "not prompted"
        turn["transcript"] = [] if text is None else [{"role": "assistant", "content": text}]
    return output


def _loopback_socket() -> socket.socket:
    """A socket bound to a free loopback port, handed to uvicorn as is: choosing a port and
    binding it later let another process take it in between."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


@asynccontextmanager
async def serving(episodes: Episodes) -> AsyncIterator[str]:
    """The episodes' HTTP app on a free loopback port, in a thread; yields its base URL."""
    import uvicorn

    from toolscore.benchmarks.serve.http import create_app, server_config

    sock = _loopback_socket()
    port = int(sock.getsockname()[1])
    # the tools only: no control token, so no control API for the agent to reach
    server = uvicorn.Server(server_config(create_app(episodes, port=port), port=port,
                                          log_level="error", log_config=None))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                              name=f"toolscore-mcp-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    if not server.started:
        server.should_exit = True
        await asyncio.to_thread(thread.join, 5)
        sock.close()
        raise InfraError("could not start the MCP server on loopback", retryable=True)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.to_thread(thread.join, 10)
        sock.close()
