"""Per-tool-call overhead of serving a ToolTalk world over MCP, against the in-process call.

Runs ``toolscore mcp serve``'s HTTP app (uvicorn on 127.0.0.1, in a thread of this process, or
with ``--server-process`` in a process of its own, as a served world runs beside an agent)
and drives one episode with the MCP SDK's own streamable-HTTP client: the same read-only call
(``QueryUser``, a small response; ``GetAlarms``-style calls cost the same) a few hundred times,
timed one by one, after a warm-up. The in-process figure is ``Environment.call`` on the same
world. Prints median, 10th/90th percentiles and the overhead (MCP median - in-process median);
the target is under 2 ms over HTTP on loopback.

Usage: PYTHONPATH=src TOOLSCORE_DATA=... python perf/mcp_overhead.py [--calls 300]

The figures are of the machine it runs on (and of whatever else it runs): quote them as such.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import threading
import time


def percentiles(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    return (ordered[len(ordered) // 10], statistics.median(ordered),
            ordered[(len(ordered) * 9) // 10])


def _create_episode(port: int) -> str:
    """A new episode over the HTTP API, as an agent's harness makes one; its MCP URL."""
    import json
    import urllib.request

    request = urllib.request.Request(f"http://127.0.0.1:{port}/episodes", method="POST",
                                     data=b"{}", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as resp:  # noqa: S310 - loopback only
        return str(json.loads(resp.read())["mcp_url"])


def start_server(world: object, port: int) -> tuple[object, threading.Thread]:
    """The served world's HTTP app (uvicorn) on ``port`` in a thread, once it listens."""
    import uvicorn

    from toolscore.serve.episodes import Episodes
    from toolscore.serve.http import create_app

    server = uvicorn.Server(uvicorn.Config(create_app(Episodes(world)), host="127.0.0.1",
                                           port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    return server, thread


def serve(conversation: str, port: int, ready: object) -> None:
    """Child process: the served world on ``port``; ``ready`` set once it listens."""
    from toolscore.serve.world import ServedWorld

    world = ServedWorld.create("tooltalk", conversation=conversation, embedder="hashing")
    _, thread = start_server(world, port)
    ready.set()  # type: ignore[attr-defined]
    thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--conversation", default="AddAlarm-easy")
    parser.add_argument("--mode", default="auto", help="MCP client mode: auto | legacy")
    parser.add_argument("--server-process", action="store_true",
                        help="Serve from another process (client and server then do not share "
                             "one interpreter lock).")
    args = parser.parse_args()

    import anyio
    from mcp import Client

    from toolscore.serve.world import ServedWorld

    world = ServedWorld.create("tooltalk", conversation=args.conversation, embedder="hashing")
    name, arguments = "QueryUser", {"username": "justinkool"}

    env = world.open().env
    for _ in range(50):
        env.call(name, arguments)
    local = []
    for _ in range(args.calls):
        start = time.perf_counter()
        env.call(name, arguments)
        local.append((time.perf_counter() - start) * 1000)

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    if args.server_process:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        ready = ctx.Event()
        proc = ctx.Process(target=serve, args=(args.conversation, port, ready), daemon=True)
        proc.start()
        ready.wait(60)
        url = _create_episode(port)
        stop = proc.terminate
    else:
        server, thread = start_server(world, port)
        url = _create_episode(port)

        def stop() -> None:
            server.should_exit = True  # type: ignore[attr-defined]
            thread.join(10)

    async def drive() -> list[float]:
        timings = []
        async with Client(url, mode=args.mode) as client:
            for _ in range(50):
                await client.call_tool(name, arguments)
            for _ in range(args.calls):
                start = time.perf_counter()
                await client.call_tool(name, arguments)
                timings.append((time.perf_counter() - start) * 1000)
        return timings

    remote = anyio.run(drive)
    stop()

    lp, lm, lq = percentiles(local)
    rp, rm, rq = percentiles(remote)
    print(f"{args.calls} calls of {name} in {args.conversation}'s world (ms per call)")
    print(f"  in-process      median {lm:7.3f}   p10 {lp:7.3f}   p90 {lq:7.3f}")
    print(f"  MCP over HTTP   median {rm:7.3f}   p10 {rp:7.3f}   p90 {rq:7.3f}")
    verdict = "under" if rm - lm < 2.0 else "OVER"
    where = ("server in its own process" if args.server_process
             else "client and server share this process and its GIL")
    print(f"  overhead        median {rm - lm:7.3f}   ({verdict} the 2 ms target; {where})")


if __name__ == "__main__":
    main()
