"""Runner throughput against a slow OpenAI-compatible endpoint, swept over concurrency and latency.

A fake OpenAI server (its own process, so the harness's CPU time is the harness's alone) answers
like the oracle after ``latency`` seconds. ToolTalk runs through the real runner and the real
``openai/`` provider with no response cache, ``--epochs`` times over (so that hundreds of samples
can be in flight: the hard split has only 50 conversations; by default just enough epochs that
every one of ``concurrency`` workers has a sample). Each conversation is a chain of dependent
calls, so no schedule beats

    ideal = max(longest chain, ceil(total calls / concurrency)) * latency

and efficiency = ideal / measured wall (target >= 0.9 at 128 in flight with 100 ms and 512 with
1 s). Harness CPU per call = the harness's CPU time / calls (target < 0.5 ms): its process's,
plus its worker processes' with ``--workers N`` (``toolscore run --workers``).

Each (concurrency, latency) cell runs in a fresh process, ``--repeats`` times: the first
repetition is reported on its own as *cold* (new process, empty per-process caches: the HTTP
session, TLS context, rendered tool schemas, database snapshots; module imports are paid before
the clock), the others as *warm*: median and min-max. On a shared host every figure is a loaded
figure; compare cells of one run, side by side, rather than runs on different days.

    .venv/bin/python perf/throughput.py                  # one quick cell: 32 in flight, 100 ms
    .venv/bin/python perf/throughput.py --concurrency 32 128 512 --latency 0.1 1.0 --repeats 3
    .venv/bin/python perf/throughput.py --concurrency 128 --http-client aiohttp   # compare
    .venv/bin/python perf/throughput.py --concurrency 128 --workers 1 2   # side by side
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import os
import resource
import statistics
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import testsupport  # noqa: F401  (tests/support on the path)

EFFICIENCY_TARGET = 0.9
CPU_PER_CALL_TARGET_MS = 0.5
TARGET_CELLS = {(128, 0.1), (512, 1.0)}  # the cells with an efficiency target


def serve(conn: Connection, latency: float, split: str) -> None:
    """Server process: record the oracle, serve its replies; report counters when asked."""
    from support.testing.openai_server import FakeOpenAIServer
    from support.testing.oracle_replies import oracle_recording

    rec = oracle_recording("tooltalk", split=split, embedder="hashing", fallback=None)
    with FakeOpenAIServer(rec.responder, latency=latency, keep_requests=False) as srv:
        conn.send({"base_url": srv.base_url, "calls": rec.calls, "chain": rec.chain()})
        while conn.recv() == "stats":
            conn.send({"requests": srv.requests, "max_in_flight": srv.max_in_flight,
                       "cpu": time.process_time()})
        srv.max_in_flight = 0


def harness(conn: Connection, base_url: str, concurrency: int, epochs: int, repeats: int,
            split: str, embedder: str, profile: str | None, cold_cache: bool = False,
            http_client: str = "", workers: int = 1) -> None:
    """Harness process: ``repeats`` runs through the public API, each timed on its own.
    ``cold_cache``: an empty user cache, so the first run loads the embedder and embeds (the
    out-of-the-box first run); the later ones find the embeddings cached."""
    os.environ.setdefault("OPENAI_API_KEY", "dummy")
    if http_client:  # "aiohttp": the general client instead of the plain-HTTP one
        os.environ["TOOLSCORE_HTTP_CLIENT"] = http_client
    import toolscore.benchmarks.tooltalk.benchmark  # noqa: F401  (one-off imports: not timed)
    import toolscore.models.openai.provider  # noqa: F401
    from toolscore.runs.api import evaluate

    with tempfile.TemporaryDirectory(prefix="toolscore-perf-") as tmp:
        if cold_cache:
            os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        for i in range(repeats + (1 if profile else 0)):
            conn.send("before")
            conn.recv()
            profiler = None
            if i == repeats:  # one more repetition, profiled: its overhead is in no figure
                import cProfile

                profiler = cProfile.Profile(time.process_time)
                profiler.enable()
            wall0, cpu0, kids0 = time.perf_counter(), time.process_time(), children_cpu()
            result = evaluate("tooltalk", "openai/fake", base_url=base_url, cache=None,
                              max_concurrency=concurrency, timeout=60, epochs=epochs,
                              out=Path(tmp) / f"run{i}", split=split, embedder=embedder,
                              progress=False, workers=workers).to_dict()
            wall = time.perf_counter() - wall0
            cpu = time.process_time() - cpu0 + children_cpu() - kids0  # workers: joined
            if profiler is not None and profile:
                profiler.disable()
                profiler.dump_stats(profile)
            metrics = result["metrics"]
            conn.send({"profiled": profiler is not None, "wall": wall, "cpu": cpu,
                       "calls": result["summary"]["calls"],
                       "samples": result["summary"]["samples"], "errors": metrics.get("errors"),
                       "success": (metrics.get(split) or {}).get("success_rate")})
    conn.send(None)


def children_cpu() -> float:
    """CPU seconds of this process's finished children (the run's worker processes)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_cell(server: Connection, info: dict[str, Any], latency: float, concurrency: int,
             args: argparse.Namespace, conversations: int, workers: int) -> dict[str, Any]:
    epochs = args.epochs or max(1, math.ceil(concurrency / conversations))
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    profile = (f"{args.profile}.c{concurrency}.l{latency}" if args.profile else None)
    proc = ctx.Process(target=harness, daemon=False,
                       args=(child, info["base_url"], concurrency, epochs, max(1, args.repeats),
                             args.split, args.embedder, profile, args.cold_cache,
                             args.http_client, workers))
    proc.start()
    child.close()  # a harness that dies is then an EOFError here, not a wait for ever
    reps = []
    while parent.recv() == "before":
        server.send("stats")
        before = server.recv()
        parent.send("go")
        rep = parent.recv()
        server.send("stats")
        after = server.recv()
        rep["requests"] = after["requests"] - before["requests"]
        rep["server_cpu"] = after["cpu"] - before["cpu"]
        rep["in_flight"] = after["max_in_flight"]
        calls = info["calls"] * epochs
        rep["ideal"] = max(info["chain"], math.ceil(calls / concurrency)) * latency
        rep["efficiency"] = rep["ideal"] / rep["wall"]
        rep["cpu_ms"] = 1000 * rep["cpu"] / max(rep["calls"], 1)
        if not rep["profiled"]:
            reps.append(rep)
    proc.join(timeout=30)
    return {"concurrency": concurrency, "latency": latency, "epochs": epochs, "reps": reps,
            "workers": workers}


def spread(values: list[float], fmt: str) -> str:
    if not values:
        return "-"
    return (f"{statistics.median(values):{fmt}} "
            f"({min(values):{fmt}}-{max(values):{fmt}})")


def print_cells(cells: list[dict[str, Any]], info: dict[str, Any]) -> None:
    rows = [("in flight", "latency", "workers", "epochs", "calls", "ideal s", "cold eff",
             "cold ms/call",
             "warm eff median (min-max)", "warm ms/call median (min-max)", "warm wall s",
             "failed att.", "errors")]
    for c in cells:
        cold, warm = c["reps"][0], c["reps"][1:]
        failed = sum(r["requests"] - r["calls"] for r in c["reps"])
        rows.append((str(c["concurrency"]), f"{c['latency'] * 1000:.0f} ms", str(c["workers"]),
                     str(c["epochs"]),
                     str(cold["calls"]), f"{cold['ideal']:.2f}", f"{cold['efficiency']:.2f}",
                     f"{cold['cpu_ms']:.2f}",
                     spread([r["efficiency"] for r in warm], ".2f"),
                     spread([r["cpu_ms"] for r in warm], ".2f"),
                     spread([r["wall"] for r in warm], ".2f"),
                     str(failed), str(sum(int(r["errors"] or 0) for r in c["reps"]))))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)))
    print(f"longest chain {info['chain']} dependent calls; the oracle needs {info['calls']} "
          "calls per epoch; efficiency = ideal / wall; ms/call = harness CPU (with its "
          "workers) / calls")
    server_ms = [1000 * r["server_cpu"] / max(r["requests"], 1) for c in cells for r in c["reps"]]
    peak = max((r["in_flight"] for c in cells for r in c["reps"]), default=0)
    print(f"fake server (own process): {spread(server_ms, '.2f')} ms CPU per request, peak "
          f"{peak} requests in flight; success_rate "
          f"{sorted({r['success'] for c in cells for r in c['reps']}, key=str)}")


def verdict(cells: list[dict[str, Any]]) -> list[str]:
    missed = []
    for c in cells:
        warm = c["reps"][1:] or c["reps"]
        cpu = statistics.median(r["cpu_ms"] for r in warm)
        eff = statistics.median(r["efficiency"] for r in warm)
        label = f"{c['concurrency']}/{c['latency'] * 1000:.0f} ms/{c['workers']} workers"
        if cpu >= CPU_PER_CALL_TARGET_MS:
            missed.append(f"CPU per call at {label} ({cpu:.2f} ms)")
        if (c["concurrency"], c["latency"]) in TARGET_CELLS and eff < EFFICIENCY_TARGET:
            missed.append(f"efficiency at {label} ({eff:.2f})")
    return missed


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--concurrency", type=int, nargs="+", default=[32])
    p.add_argument("--latency", type=float, nargs="+", default=[0.1], help="Seconds per reply.")
    p.add_argument("--epochs", type=int, default=None,
                   help="Epochs per run (default: enough that every worker has a sample).")
    p.add_argument("--repeats", "--repeat", type=int, default=3,
                   help="Runs per cell; the first is reported as cold, the rest as warm.")
    p.add_argument("--split", default="hard", choices=["easy", "hard", "all"])
    p.add_argument("--embedder", default="hashing", help="Scorer embedder (hashing: cheap).")
    p.add_argument("--cold-cache", action="store_true",
                   help="Start from an empty user cache (with --embedder minilm: the first run "
                        "loads the embedder and embeds, as a first run out of the box does).")
    p.add_argument("--http-client", default="", choices=["", "aiohttp"],
                   help="aiohttp: send through aiohttp instead of toolscore's plain-HTTP "
                        "client (sets $TOOLSCORE_HTTP_CLIENT in the harness), to compare them.")
    p.add_argument("--workers", type=int, nargs="+", default=[1],
                   help="Worker processes per run (toolscore run --workers); several values "
                        "are measured side by side, cell by cell.")
    p.add_argument("--profile", default=None,
                   help="Write a cProfile (CPU) of one extra, unreported warm run of each "
                        "cell to PREFIX.cN.lS.")
    args = p.parse_args()
    conversations = {"easy": 28, "hard": 50, "all": 78}[args.split]
    ctx = mp.get_context("spawn")
    cells = []
    info: dict[str, Any] = {}
    started = time.perf_counter()
    for latency in args.latency:
        parent, child = ctx.Pipe()
        server = ctx.Process(target=serve, daemon=True, args=(child, latency, args.split))
        server.start()
        info = parent.recv()
        try:
            for concurrency in args.concurrency:
                for workers in args.workers:
                    cells.append(run_cell(parent, info, latency, concurrency, args,
                                          conversations, workers))
                    print(f"... {concurrency} in flight, {latency * 1000:.0f} ms, {workers} "
                          f"worker(s) done ({time.perf_counter() - started:.0f} s)",
                          file=sys.stderr)
        finally:
            parent.send("stop")
            server.join(timeout=10)
    client = args.http_client or "plain-HTTP client"
    print(f"tooltalk {args.split}, openai/ provider ({client}) against the fake server, no cache, "
          f"{args.repeats} runs per cell (the first cold); {os.cpu_count()} cores, shared "
          "host: loaded figures")
    print_cells(cells, info)
    missed = verdict(cells)
    print("targets: " + ("met" if not missed else "MISSED: " + "; ".join(missed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
