"""Sweep throughput: a plan of 24 runs against one slow OpenAI-compatible endpoint.

A fake OpenAI server (in its own process) answers like the oracle after ``--latency``
seconds. The plan is 24 demo runs (one per seed, ``--epochs`` each) of ``openai/fake`` with a
provider limit of ``--limit`` connections, run by the local executor (``--workers``
processes) and by Ray (a local instance, 2 CPUs unless ``--ray-cpus``), each into fresh
directories with no response cache. No schedule can beat

    ideal = max(longest chain of dependent calls, ceil(total calls / limit)) * latency

so efficiency = ideal / wall (target >= 0.9 with 4 workers). The harness overhead per unit
(start-up, configuration, writing) is what the sweep costs beyond the ideal, per unit and per
slot: (wall - ideal) * parallel units / units (target for Ray < 1 s). Also printed: peak
requests in flight (must not exceed the limit).

    .venv/bin/python perf/sweep.py [--latency 0.1] [--limit 16] [--workers 4] [--no-ray]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import tempfile
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import testsupport  # noqa: F401  (tests/support on the path)

EFFICIENCY_TARGET = 0.9
RAY_OVERHEAD_TARGET_S = 1.0


def serve(conn: Connection, latency: float) -> None:
    """Child process: record the demo oracle, serve its replies, report peak concurrency."""
    from support.testing.openai_server import FakeOpenAIServer
    from support.testing.oracle_replies import oracle_recording

    rec = oracle_recording("demo", None, embedder="hashing", fallback=None)
    with FakeOpenAIServer(rec.responder, latency=latency, keep_requests=False) as srv:
        samples: list[tuple[float, int]] = []
        stop = threading.Event()

        def sample() -> None:  # requests in flight every 5 ms, on the system-wide clock
            while not stop.wait(0.005):
                samples.append((time.monotonic(), srv.in_flight))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        conn.send({"base_url": srv.base_url, "calls": rec.calls, "chain": rec.chain()})
        while conn.recv() == "stats":
            conn.send({"requests": srv.requests, "max_in_flight": srv.max_in_flight,
                       "samples": list(samples)})
            srv.max_in_flight = srv.requests = 0  # per executor, not cumulative
            samples.clear()
        stop.set()


def timeline(samples: list[tuple[float, int]], start: float, end: float,
             limit: int) -> dict[str, float]:
    """Where the wall time went: before the first request (start-up), after the provider
    was last kept full (tail), and the mean requests in flight in between."""
    busy = [(t, n) for t, n in samples if start <= t <= end]
    active = [t for t, n in busy if n > 0]
    full = [t for t, n in busy if n >= limit]
    if not active:
        return {"startup_s": end - start, "tail_s": 0.0, "mean_in_flight": 0.0}
    middle = [n for t, n in busy if active[0] <= t <= (full[-1] if full else active[-1])]
    return {"startup_s": active[0] - start, "tail_s": end - (full[-1] if full else end),
            "mean_in_flight": sum(middle) / max(1, len(middle))}


def plan(folder: Path, base_url: str, units: int, epochs: int, limit: int) -> Path:
    doc = {"out": "runs", "models": [{"model": "openai/fake", "base_url": base_url}],
           "benchmarks": {"demo": {"embedder": "hashing"}},
           "settings": {"seed": list(range(units))}, "epochs": epochs, "cache": "none",
           "limits": {"openai": limit}, "max_concurrency": limit, "timeout": 60}
    folder.mkdir(parents=True)
    (folder / "sweep.json").write_text(json.dumps(doc))
    return folder / "sweep.json"


def measure(name: str, run: Any, conn: Connection, ideal: float, parallel: int,
            units: int, limit: int) -> dict[str, Any]:
    wall0, start = time.perf_counter(), time.monotonic()
    results = run()
    wall, end = time.perf_counter() - wall0, time.monotonic()
    conn.send("stats")
    stats = conn.recv()
    where = timeline(stats["samples"], start, end, limit)
    states = sorted({r["state"] for r in results})
    return {"executor": name, "wall_s": wall, "efficiency": ideal / wall,
            "overhead_per_unit_s": max(0.0, wall - ideal) * parallel / units,
            "max_in_flight": stats["max_in_flight"], "requests": stats["requests"],
            "states": states, **where,
            "cpu_per_unit_s": sum(r.get("cpu_s", 0.0) for r in results) / max(1, len(results))}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--latency", type=float, default=0.1, help="Seconds per reply.")
    p.add_argument("--limit", type=int, default=16, help="Provider limit (connections).")
    p.add_argument("--workers", type=int, default=4, help="Local executor processes.")
    p.add_argument("--units", type=int, default=24)
    p.add_argument("--epochs", type=int, default=5, help="Epochs per run (6 samples each).")
    p.add_argument("--ray-cpus", type=int, default=2)
    p.add_argument("--no-ray", action="store_true")
    args = p.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "dummy")
    from toolscore.sweeps.local import run_local
    from toolscore.sweeps.plan import load_plan

    parent, child = mp.get_context("spawn").Pipe()
    server = mp.get_context("spawn").Process(target=serve, args=(child, args.latency),
                                             daemon=True)
    server.start()
    info = parent.recv()
    total = info["calls"] * args.epochs * args.units
    ideal = max(info["chain"], math.ceil(total / args.limit)) * args.latency
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="toolscore-sweep-perf-") as tmp:
            local = load_plan(plan(Path(tmp) / "local", info["base_url"], args.units,
                                   args.epochs, args.limit))
            rows.append(measure(f"local ({args.workers} workers)",
                                lambda: run_local(local, workers=args.workers), parent, ideal,
                                args.workers, args.units, args.limit))
            if not args.no_ray:
                import ray

                from toolscore.sweeps.ray_executor import run_ray

                ray.init(num_cpus=args.ray_cpus, include_dashboard=False, log_to_driver=False,
                         resources={"provider:openai": args.limit})
                try:
                    on_ray = load_plan(plan(Path(tmp) / "ray", info["base_url"], args.units,
                                            args.epochs, args.limit))
                    parallel = min(args.limit, int(args.ray_cpus / on_ray.ray["api_cpus"]))
                    rows.append(measure(f"ray ({args.ray_cpus} CPUs)",
                                        lambda: run_ray(on_ray), parent, ideal, parallel,
                                        args.units, args.limit))
                finally:
                    ray.shutdown()
    finally:
        parent.send("stop")
        server.join(timeout=10)
    print(f"plan: {args.units} demo runs x {args.epochs} epochs of openai/fake, "
          f"{total} calls, latency {args.latency * 1000:.0f} ms, provider limit {args.limit}")
    print(f"ideal: {ideal:.2f} s (max(chain {info['chain']}, ceil({total} / {args.limit})) "
          f"x latency)")
    ok = True
    for r in rows:
        target = (r["efficiency"] >= EFFICIENCY_TARGET if r["executor"].startswith("local")
                  else r["overhead_per_unit_s"] < RAY_OVERHEAD_TARGET_S)
        ok &= target and r["states"] == ["done"] and r["max_in_flight"] <= args.limit
        print(f"{r['executor']:<20} wall {r['wall_s']:6.2f} s  efficiency "
              f"{r['efficiency']:.2f}  overhead/unit {r['overhead_per_unit_s']:.2f} s  "
              f"peak in flight {r['max_in_flight']}/{args.limit}  requests {r['requests']}  "
              f"units {','.join(r['states'])}  {'ok' if target else 'MISSED'}")
        print(f"{'':<20} start-up {r['startup_s']:.2f} s to the first request, mean in "
              f"flight {r['mean_in_flight']:.1f}/{args.limit} while the provider is kept "
              f"busy, tail {r['tail_s']:.2f} s below the limit at the end, CPU "
              f"{r['cpu_per_unit_s']:.2f} s per unit")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
