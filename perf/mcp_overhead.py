"""Per-tool-call overhead of serving a ToolTalk world over MCP, against the in-process call,
and where it goes.

The target is the served world's overhead: under 2 ms per tool call over HTTP on
loopback. What an agent sees end to end is that plus its own client's cost, so both are
printed, each against the in-process call (``Environment.call`` on the same world):

- a plain JSON-RPC client (``http.client``, one keep-alive connection, the 2026-07-28
  per-request envelope: what a lean agent sends) against the served world in its own
  process: the served world's overhead;
- the MCP SDK's own streamable-HTTP client against the served world in its own process (as
  a served world runs beside an agent), and with client and server in one process (one GIL);
- the split of one call, in CPU time per call: on the server toolscore's own code (episode
  lookup, the call, its log entry, the result), the SDK's request handling (the ASGI app
  driven without a socket) and the rest (uvicorn's HTTP parser and the socket calls); on the
  client the plain client and the SDK client.

Every call is the same read-only ``QueryUser`` (a small response), a few hundred times, timed
one by one after a warm-up. Wall times are medians with 10th/90th percentiles; CPU times come
from ``time.process_time`` of each process over the timed calls, so they hold up better than
wall times on a loaded machine.

Usage: PYTHONPATH=src TOOLSCORE_DATA=... python perf/mcp_overhead.py [--calls 300]
       [--mode auto|legacy]   (the SDK client's mode; legacy: initialize handshake + session)

The figures are of the machine it runs on (and of whatever else it runs): quote them as such,
with the load averages it prints.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import socket
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

TARGET_MS = 2.0
NAME, ARGUMENTS = "QueryUser", {"username": "justinkool"}
WARM = 50


def percentiles(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    return (ordered[len(ordered) // 10], statistics.median(ordered),
            ordered[(len(ordered) * 9) // 10])


def no_clock() -> float:
    return 0.0


def timed(call: Callable[[], Any], n: int,
          server: Callable[[], float] = no_clock) -> tuple[list[float], float, float]:
    """``n`` calls after a warm-up: per-call wall times (ms), then CPU per call (ms) of this
    process and of the server (``server``: its CPU clock, in seconds)."""
    for _ in range(WARM):
        call()
    times = []
    server_cpu, cpu = server(), time.process_time()
    for _ in range(n):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    cpu, server_cpu = time.process_time() - cpu, server() - server_cpu
    return times, cpu * 1000 / n, server_cpu * 1000 / n


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_world(conversation: str) -> Any:
    from toolscore.benchmarks.serve.world import ServedWorld

    return ServedWorld.create("tooltalk", conversation=conversation, embedder="hashing")


def start_server(world: Any, port: int) -> tuple[Any, threading.Thread]:
    """The served world's HTTP app (uvicorn, as ``toolscore mcp serve`` configures it) on
    ``port`` in a thread, once it listens."""
    import uvicorn

    from toolscore.benchmarks.serve.episodes import Episodes
    from toolscore.benchmarks.serve.http import create_app, server_config

    server = uvicorn.Server(server_config(create_app(Episodes(world)), port=port))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    return server, thread


def create_episode(port: int) -> str:
    """A new episode over the control API, as an agent's harness makes one; its MCP URL."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/episodes", body=b"{}", headers={"Content-Type": "application/json"})
    return str(json.loads(conn.getresponse().read())["mcp_url"])


def serve(conversation: str, port: int, ready: Any, pipe: Any) -> None:
    """Child process: the served world on ``port``; answers ``pipe`` with its CPU time."""
    _, thread = start_server(make_world(conversation), port)
    ready.set()
    while True:
        pipe.recv()
        pipe.send(time.process_time())


class ServerProcess:
    """The served world in a process of its own (spawned), and its CPU clock."""

    def __init__(self, conversation: str) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        self.port = free_port()
        ready = ctx.Event()
        self.pipe, child = ctx.Pipe()
        self.proc = ctx.Process(target=serve, args=(conversation, self.port, ready, child),
                                daemon=True)
        self.proc.start()
        if not ready.wait(120):
            raise RuntimeError("the served world did not start")

    def cpu(self) -> float:
        self.pipe.send(None)
        return float(self.pipe.recv())

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.join(10)


# -- clients ----------------------------------------------------------------------------------
def modern_version() -> str:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return max(MODERN_PROTOCOL_VERSIONS)


def plain_client(mcp_url: str) -> Callable[[], Any]:
    """One ``tools/call`` per call as a bare JSON-RPC POST on one keep-alive connection."""
    host_port, path = mcp_url.removeprefix("http://").split("/", 1)
    host, port = host_port.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    version = modern_version()
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": version, "Mcp-Method": "tools/call", "Mcp-Name": NAME}
    meta = {"io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {}}
    ids = iter(range(1, 1 << 62))

    def call() -> Any:
        body = json.dumps({"jsonrpc": "2.0", "id": next(ids), "method": "tools/call",
                           "params": {"name": NAME, "arguments": ARGUMENTS, "_meta": meta}})
        conn.request("POST", "/" + path, body=body.encode(), headers=headers)
        reply = conn.getresponse()
        data = json.loads(reply.read())
        if reply.status != 200 or data["result"].get("isError"):
            raise RuntimeError(f"plain client: HTTP {reply.status}: {data}")
        return data

    return call


def sdk_client(mcp_url: str, mode: str, n: int,
               server: Callable[[], float] = no_clock) -> tuple[list[float], float, float]:
    """The MCP SDK's streamable-HTTP client, timed as :func:`timed` times a call."""
    import anyio
    from mcp import Client

    async def drive() -> tuple[list[float], float, float]:
        async with Client(mcp_url, mode=mode) as client:
            for _ in range(WARM):
                await client.call_tool(NAME, ARGUMENTS)
            times = []
            server_cpu, cpu = server(), time.process_time()
            for _ in range(n):
                start = time.perf_counter()
                await client.call_tool(NAME, ARGUMENTS)
                times.append((time.perf_counter() - start) * 1000)
            cpu, server_cpu = time.process_time() - cpu, server() - server_cpu
            return times, cpu * 1000 / n, server_cpu * 1000 / n

    return anyio.run(drive)


# -- the server's split -----------------------------------------------------------------------
def app_cpu(world: Any, n: int) -> float:
    """CPU per call of the served app itself (the SDK's handling + toolscore's), driven as
    ASGI without a socket or an HTTP parser: what the server spends besides uvicorn."""
    from toolscore.benchmarks.serve.episodes import Episodes
    from toolscore.benchmarks.serve.http import create_app

    episodes = Episodes(world)
    app = create_app(episodes)
    path = f"/episodes/{episodes.create().id}/mcp"
    version = modern_version()
    headers = [(b"host", b"127.0.0.1:8765"), (b"content-type", b"application/json"),
               (b"accept", b"application/json, text/event-stream"),
               (b"mcp-protocol-version", version.encode()), (b"mcp-method", b"tools/call"),
               (b"mcp-name", NAME.encode())]
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": NAME, "arguments": ARGUMENTS, "_meta": {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "client": ("127.0.0.1", 1),
             "server": ("127.0.0.1", 8765),
             "headers": [*headers, (b"content-length", str(len(body)).encode())]}

    async def one() -> None:
        delivered = False
        status: list[int] = []

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if delivered:
                await asyncio.Event().wait()  # no disconnect while the call runs
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])

        await app(dict(scope), receive, send)
        if status != [200]:
            raise RuntimeError(f"served app answered {status}")

    async def drive() -> float:
        async with lifespan(app):
            for _ in range(WARM):
                await one()
            cpu = time.process_time()
            for _ in range(n):
                await one()
            return (time.process_time() - cpu) * 1000 / n

    return asyncio.run(drive())


class lifespan:  # noqa: N801 - used as ``async with lifespan(app)``
    """The ASGI lifespan protocol around ``app`` (startup on enter, shutdown on exit)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def __aenter__(self) -> None:
        self.task = asyncio.create_task(self.app({"type": "lifespan", "asgi": {
            "version": "3.0"}, "state": {}}, self.inbox.get, self.outbox.put))
        await self.inbox.put({"type": "lifespan.startup"})
        reply = await self.outbox.get()
        if reply["type"] != "lifespan.startup.complete":
            raise RuntimeError(f"served app did not start: {reply}")

    async def __aexit__(self, *exc: object) -> None:
        await self.inbox.put({"type": "lifespan.shutdown"})
        await self.outbox.get()
        await self.task


def own_cpu(world: Any, n: int) -> float:
    """CPU per call of toolscore's own part: episode lookup, the call and its log entry, the
    MCP result built from it (the SDK calls exactly this in its tool handler)."""
    from toolscore.benchmarks.serve.episodes import Episodes
    from toolscore.benchmarks.serve.mcp_tools import call_result

    episodes = Episodes(world)
    episode_id = episodes.create().id
    return timed(lambda: call_result(episodes.get(episode_id).call(NAME, dict(ARGUMENTS))),
                 n)[1]


# -- report -----------------------------------------------------------------------------------
def verdict(overhead: float) -> str:
    return f"{'under' if overhead < TARGET_MS else 'OVER'} {TARGET_MS:g} ms"


def line(label: str, times: list[float], local: float | None = None, cpu: str = "") -> str:
    """One measured line; with ``local`` (the in-process median) its overhead and verdict."""
    p10, median, p90 = percentiles(times)
    text = f"  {label:<44} {median:7.3f} {p10:7.3f} {p90:7.3f}   {cpu:<18}"
    if local is None:
        return text.rstrip()
    return f"{text}{median - local:8.3f}  {verdict(median - local)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--conversation", default="AddAlarm-easy")
    parser.add_argument("--mode", default="auto", help="the SDK client's mode: auto | legacy")
    args = parser.parse_args()
    n = args.calls
    load = os.getloadavg()[0]

    world = make_world(args.conversation)
    env = world.open().env
    local_times = timed(lambda: env.call(NAME, ARGUMENTS), n)[0]
    local = statistics.median(local_times)

    served = ServerProcess(args.conversation)
    try:
        plain_times, plain_cpu, plain_server = timed(
            plain_client(create_episode(served.port)), n, served.cpu)
        sdk_times, sdk_cpu, sdk_server = sdk_client(create_episode(served.port), args.mode, n,
                                                    served.cpu)
    finally:
        served.stop()

    port = free_port()
    server, thread = start_server(world, port)
    try:
        one_times, one_cpu, _ = sdk_client(create_episode(port), args.mode, n)
    finally:
        server.should_exit = True
        thread.join(10)

    app = app_cpu(world, n)
    own = own_cpu(world, n)

    print(f"{n} calls of {NAME} in {args.conversation}'s world, ms per call "
          f"(load average {load:.2f} at start, {os.getloadavg()[0]:.2f} at end)")
    print(f"  {'':<44} {'median':>7} {'p10':>7} {'p90':>7}   {'CPU client/server':<18}"
          f"{'overhead':>8}  target")
    print(line("in-process (Environment.call)", local_times))
    print(line("plain JSON-RPC client, server process", plain_times, local,
               f"{plain_cpu:.3f}/{plain_server:.3f}"))
    print(line(f"MCP SDK client ({args.mode}), server process", sdk_times, local,
               f"{sdk_cpu:.3f}/{sdk_server:.3f}"))
    print(line(f"MCP SDK client ({args.mode}), one process", one_times, local,
               f"{one_cpu:.3f} (both)"))
    print("  split of one call, CPU ms (server: the plain client's calls)")
    split = [("server", "toolscore's own code (episode, call, log, result)", own),
             ("server", "MCP SDK request handling (ASGI app, no socket)", app - own),
             ("server", "uvicorn (HTTP parser) and sockets", max(plain_server - app, 0.0)),
             ("client", "plain JSON-RPC (http.client)", plain_cpu),
             ("client", f"MCP SDK streamable-HTTP client ({args.mode})", sdk_cpu)]
    for side, part, ms in split:
        print(f"    {side}  {part:<52} {ms:7.3f}")
    plain_verdict = verdict(statistics.median(plain_times) - local)
    print(f"  The served world's overhead is the plain client's line ({plain_verdict}). ",
          end="")
    if sdk_cpu >= TARGET_MS:
        print(f"The SDK client alone spends {sdk_cpu:.3f} ms of CPU per call, over the "
              f"target by itself: that cost is the agent's client, not the served world.")
    else:
        print(f"The SDK client spends {sdk_cpu:.3f} ms of CPU per call of its own.")


if __name__ == "__main__":
    main()
