"""Per-tool-call overhead of serving a ToolTalk world over MCP, against the in-process call.

Runs ``toolscore mcp serve``'s HTTP app (uvicorn on 127.0.0.1, in a thread of this process)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--conversation", default="AddAlarm-easy")
    parser.add_argument("--mode", default="auto", help="MCP client mode: auto | legacy")
    args = parser.parse_args()

    import anyio
    import uvicorn
    from mcp import Client

    from toolscore.serve.episodes import Episodes
    from toolscore.serve.http import create_app
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

    episodes = Episodes(world)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(episodes), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    episode = episodes.create()
    url = f"http://127.0.0.1:{port}/episodes/{episode.id}/mcp"

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
    server.should_exit = True
    thread.join(10)

    lp, lm, lq = percentiles(local)
    rp, rm, rq = percentiles(remote)
    print(f"{args.calls} calls of {name} in {args.conversation}'s world (ms per call)")
    print(f"  in-process      median {lm:7.3f}   p10 {lp:7.3f}   p90 {lq:7.3f}")
    print(f"  MCP over HTTP   median {rm:7.3f}   p10 {rp:7.3f}   p90 {rq:7.3f}")
    verdict = "under" if rm - lm < 2.0 else "OVER"
    print(f"  overhead        median {rm - lm:7.3f}   ({verdict} the 2 ms target; client and "
          "server share this process and its GIL)")


if __name__ == "__main__":
    main()
