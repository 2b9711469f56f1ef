"""Runner throughput against a slow OpenAI-compatible endpoint.

A fake OpenAI server (in a separate process, so this process's CPU time is the harness's alone)
answers like the oracle after ``--latency`` seconds. ToolTalk runs through the real runner, the
real ``openai/`` provider and the real SDK at ``--concurrency`` samples and calls in flight, with
no response cache. With a slow endpoint the wall time should approach the ideal one: each
conversation is a chain of dependent calls, so no schedule beats

    ideal = max(longest chain, ceil(total calls / concurrency)) * latency

Prints wall time, calls, calls/s, ideal time, efficiency (target >= 0.9), harness CPU per call
(target < 2 ms) and peak RSS. The run is repeated (``--repeat``, default 3) and the fastest
repetition reported, since a shared host adds noise; all repetitions are listed.
``--profile FILE`` writes a cProfile (CPU time) of the first repetition.

    .venv/bin/python perf/throughput.py [--latency 0.1] [--concurrency 32] [--split hard]
        [--embedder minilm --cold-cache]
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import os
import resource
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

EFFICIENCY_TARGET = 0.9
CPU_PER_CALL_TARGET_MS = 2.0


def serve(conn: Connection, latency: float, split: str) -> None:
    """Child process: record the oracle, serve its replies until told to stop."""
    from toolscore.testing.openai_server import FakeOpenAIServer
    from toolscore.testing.oracle_replies import oracle_recording

    rec = oracle_recording("tooltalk", split=split, embedder="hashing", fallback=None)
    with FakeOpenAIServer(rec.responder, latency=latency, keep_requests=False) as srv:
        conn.send({"base_url": srv.base_url, "calls": rec.calls, "chain": rec.chain()})
        cpu0 = time.process_time()
        conn.recv()
        conn.send({"requests": srv.requests, "max_in_flight": srv.max_in_flight,
                   "cpu": time.process_time() - cpu0})


def run(base_url: str, concurrency: int, split: str, embedder: str, out: Path,
        profile: str | None, cold_cache: bool = False) -> tuple[dict[str, Any], float, float]:
    """One run through the public API; returns (result, wall seconds, CPU seconds)."""
    from toolscore.runs.api import evaluate

    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile(time.thread_time)  # CPU, not wall: the host is shared
        profiler.enable()
    if cold_cache:  # an empty user cache: the embedder loads and embeds during the run
        os.environ["XDG_CACHE_HOME"] = str(out.parent / f"{out.name}-cache")
    wall0, cpu0 = time.perf_counter(), time.process_time()
    result = evaluate("tooltalk", "openai/fake", base_url=base_url, cache=None,
                      max_concurrency=concurrency, timeout=60, out=out, split=split,
                      embedder=embedder).to_dict()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    if profiler is not None and profile:
        profiler.disable()
        profiler.dump_stats(profile)
    return result, wall, cpu


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--latency", type=float, default=0.1, help="Seconds per reply.")
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--split", default="hard", choices=["easy", "hard", "all"])
    p.add_argument("--embedder", default="hashing", help="Scorer embedder (hashing: cheap).")
    p.add_argument("--repeat", type=int, default=3, help="Runs; the fastest is reported.")
    p.add_argument("--profile", default=None, help="Write a cProfile of the first run here.")
    p.add_argument("--cold-cache", action="store_true",
                   help="Each run with an empty embedding cache (e.g. with --embedder minilm: "
                        "the embedder's load and every embedding happen during the run).")
    args = p.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "dummy")
    cpu_start = time.process_time()
    # One-off import costs are not per-call costs: pay them before the clock starts.
    import openai  # noqa: F401

    import toolscore.benchmarks.tooltalk.benchmark  # noqa: F401
    import toolscore.runs.api  # noqa: F401

    imports_cpu = time.process_time() - cpu_start
    parent, child = mp.get_context("spawn").Pipe()
    server = mp.get_context("spawn").Process(target=serve, daemon=True,
                                             args=(child, args.latency, args.split))
    server.start()
    info = parent.recv()
    runs = []
    try:
        with tempfile.TemporaryDirectory(prefix="toolscore-perf-") as tmp:
            for i in range(max(1, args.repeat)):
                runs.append(run(info["base_url"], args.concurrency, args.split, args.embedder,
                                Path(tmp) / f"run{i}", args.profile if i == 0 else None,
                                args.cold_cache))
    finally:
        parent.send("stop")
        stats = parent.recv()
        server.join(timeout=10)
    result, wall, cpu = min(runs, key=lambda r: r[1])
    summary = result["summary"]
    calls = summary["calls"]
    chain = info["chain"]
    ideal = max(chain, math.ceil(info["calls"] / args.concurrency)) * args.latency
    efficiency = ideal / wall
    cpu_ms = 1000 * cpu / max(calls, 1)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    metrics = result["metrics"].get(args.split, {})
    rows = [
        ("benchmark", f"tooltalk {args.split}: {summary['samples']} conversations, "
                      f"success_rate {metrics.get('success_rate')}, errors "
                      f"{result['metrics'].get('errors')}"),
        ("endpoint", f"fake OpenAI server (separate process), latency {args.latency * 1000:.0f} "
                     f"ms, peak requests in flight {stats['max_in_flight']}, its CPU "
                     f"{1000 * stats['cpu'] / max(stats['requests'], 1):.2f} ms per request"),
        ("concurrency", str(args.concurrency)),
        ("embedder", f"{args.embedder}, " + ("cold (empty) embedding cache in every run"
                                             if args.cold_cache else "user embedding cache")),
        ("model calls", f"{calls} per run (server served {stats['requests']} in "
                        f"{len(runs)} runs; the oracle needs {info['calls']})"),
        ("runs", ", ".join(f"{w:.2f} s / {1000 * c / max(calls, 1):.2f} ms CPU per call"
                           for _, w, c in runs) + " (fastest reported below)"),
        ("wall time", f"{wall:.3f} s ({summary['wall_s']:.3f} s running samples, the rest "
                      f"loading, run.json and aggregation)"),
        ("calls/s", f"{calls / wall:.1f}"),
        ("longest chain", f"{chain} dependent calls"),
        ("ideal wall time", f"{ideal:.3f} s = max({chain}, ceil({info['calls']}/"
                            f"{args.concurrency})) x {args.latency} s"),
        ("efficiency", f"{efficiency:.3f} (target >= {EFFICIENCY_TARGET})"),
        ("harness CPU", f"{cpu:.3f} s in the run, {imports_cpu:.3f} s imports before it"),
        ("CPU per call", f"{cpu_ms:.2f} ms (target < {CPU_PER_CALL_TARGET_MS} ms)"),
        ("peak RSS", f"{peak_mb:.1f} MB"),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    missed = [name for name, ok in (("efficiency", efficiency >= EFFICIENCY_TARGET),
                                    ("CPU per call", cpu_ms < CPU_PER_CALL_TARGET_MS)) if not ok]
    print("targets: " + ("met" if not missed else "MISSED: " + ", ".join(missed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
