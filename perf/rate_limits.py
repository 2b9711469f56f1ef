"""A sweep against an endpoint with requests- and tokens-per-minute limits, without and with a
rate budget in its plan, side by side.

A fake OpenAI server (in its own process) answers like the oracle after ``--latency``
seconds and enforces ``--rpm`` and ``--tpm`` as a provider does: token buckets of one second
of the budget, a 429 for a request past either (see tests/support/testing/rate_server.py). The
plan is ``--units`` demo runs of ``openai/fake`` (one per seed, no response cache) run by the
local pool of ``--workers`` processes, first with ``limits: {openai: CONCURRENCY}`` alone
(the 429s are retried with backoff), then with ``limits: {openai: {concurrency: CONCURRENCY,
rpm: RPM, tpm: TPM}}``. No schedule can let the server accept its requests faster than

    ideal = max(requests / (rpm / 60), tokens / (tpm / 60))

where requests and tokens are those it accepted; printed per case: the span from the first
accepted request to the last (to compare with the ideal), the sweep's wall time, the 429s,
the units not done. ``--ray`` adds the budgeted plan on a local Ray instance (2 CPUs), whose
tasks share the budget through an actor.

    .venv/bin/python perf/rate_limits.py [--units 8] [--rpm 600] [--tpm 200000] [--workers 2]
        [--ray]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import testsupport  # noqa: F401  (tests/support on the path)


def serve(conn: Connection, latency: float, rpm: float, tpm: float) -> None:
    """Child process: a rate-limited server answering like the demo's oracle; on "stats",
    what it accepted and refused since the last ask (then a fresh budget)."""
    from support.testing.oracle_replies import oracle_recording
    from support.testing.rate_server import RateLimitedServer

    rec = oracle_recording("demo", None, embedder="hashing", fallback=None)
    with RateLimitedServer(rec.responder, latency=latency, keep_requests=False, rpm=rpm,
                           tpm=tpm) as srv:
        conn.send({"base_url": srv.base_url, "calls": rec.calls})
        while conn.recv() == "stats":
            conn.send({"accepted": list(srv.accepted), "throttled": srv.throttled,
                       "span": srv.span()})
            srv.accepted.clear()
            srv.throttled = 0
            time.sleep(2)  # the buckets fill again before the next case


def plan(folder: Path, base_url: str, units: int, limit: Any, concurrency: int) -> Path:
    doc = {"out": "runs", "models": [{"model": "openai/fake", "base_url": base_url}],
           "benchmarks": {"demo": {"embedder": "hashing"}},
           "settings": {"seed": list(range(units))}, "cache": "none",
           "limits": {"openai": limit}, "max_concurrency": concurrency, "timeout": 60}
    folder.mkdir(parents=True)
    (folder / "sweep.json").write_text(json.dumps(doc))
    return folder / "sweep.json"


def on_ray(manifest: Any, concurrency: int) -> list[dict[str, Any]]:
    """The plan on a local Ray instance (its start not timed apart: wall includes it)."""
    import ray

    from toolscore.sweeps.ray_executor import run_ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             resources={"provider:openai": concurrency})
    try:
        return run_ray(manifest)
    finally:
        ray.shutdown()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--latency", type=float, default=0.05, help="Seconds per reply.")
    p.add_argument("--rpm", type=float, default=600)
    p.add_argument("--tpm", type=float, default=200_000)
    p.add_argument("--concurrency", type=int, default=16, help="Connections (the limit).")
    p.add_argument("--workers", type=int, default=2, help="Local executor processes.")
    p.add_argument("--units", type=int, default=8)
    p.add_argument("--ray", action="store_true", help="Also the budget on Ray.")
    args = p.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "dummy")
    from toolscore.sweeps.local import run_local
    from toolscore.sweeps.plan import load_plan

    parent, child = mp.get_context("spawn").Pipe()
    server = mp.get_context("spawn").Process(
        target=serve, args=(child, args.latency, args.rpm, args.tpm), daemon=True)
    server.start()
    info = parent.recv()
    budget = {"concurrency": args.concurrency, "rpm": args.rpm, "tpm": args.tpm}
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="toolscore-rate-perf-") as tmp:
            cases = [("no budget", args.concurrency), ("budget", budget)]
            for name, limit in cases + ([("budget, Ray", budget)] if args.ray else []):
                manifest = load_plan(plan(Path(tmp) / name.replace(" ", "-").replace(",", ""),
                                          info["base_url"], args.units, limit, 8))
                wall0 = time.perf_counter()
                results = (on_ray(manifest, args.concurrency) if "Ray" in name
                           else run_local(manifest, workers=args.workers))
                wall = time.perf_counter() - wall0
                parent.send("stats")
                stats = parent.recv()
                accepted = stats["accepted"]
                tokens = sum(cost for _, cost in accepted)
                ideal = max(len(accepted) / (args.rpm / 60), tokens / (args.tpm / 60))
                rows.append({"case": name, "requests": len(accepted), "tokens": tokens,
                             "ideal_s": ideal, "span_s": stats["span"], "wall_s": wall,
                             "429s": stats["throttled"],
                             "not_done": sum(r["state"] != "done" for r in results)})
    finally:
        parent.send("stop")
        server.join(10)
    print(f"{args.units} demo units x {info['calls']} calls, {args.workers} workers, "
          f"{args.rpm:g} rpm, {args.tpm:g} tpm, {args.latency * 1000:g} ms replies")
    print(f"{'case':<11} {'requests':>8} {'tokens':>7} {'ideal s':>8} {'span s':>7} "
          f"{'span/ideal':>10} {'wall s':>7} {'429s':>5} {'not done':>8}")
    for r in rows:
        print(f"{r['case']:<11} {r['requests']:>8} {r['tokens']:>7} {r['ideal_s']:>8.2f} "
              f"{r['span_s']:>7.2f} {r['span_s'] / r['ideal_s']:>10.2f} {r['wall_s']:>7.2f} "
              f"{r['429s']:>5} {r['not_done']:>8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
