"""One run in one process against the same run in N worker processes (``toolscore run
--workers N``), side by side: wall time, CPU time (the command and its workers) and whether the
metrics are identical.

The default case is the embedded local model (llama.cpp, one thread per process: one process
generates one reply at a time), where the harness is not the limit but the model is: N
workers load N copies of the model and use N cores. For a fast remote endpoint see
``perf/throughput.py --workers 1 2``.

    .venv/bin/python perf/workers.py                        # demo, local/smollm2, 1 vs 2
    .venv/bin/python perf/workers.py --workers 1 2 --repeats 3 --benchmark tooltalk \\
        -- --split easy --tools exact --limit 6 --max-calls-per-turn 3

Every run starts from an empty response cache (``--no-cache``), in a fresh command process;
the counts alternate (1, 2, 1, 2, ...) so that a change in the machine's speed touches both.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from throughput import children_cpu


def one(benchmark: str, model: str, workers: int, extra: list[str], out: Path) -> dict:
    cmd = [sys.executable, "-m", "toolscore.cli", "run", benchmark, "--model", model,
           "--no-cache", "--workers", str(workers), "--out", str(out), "--json", *extra]
    cpu0, wall0 = children_cpu(), time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - wall0, children_cpu() - cpu0
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-2000:]}")
    doc = json.loads(done.stdout)
    return {"wall": wall, "cpu": cpu, "metrics": doc["metrics"],
            "samples": doc["summary"]["samples"]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--benchmark", default="demo")
    p.add_argument("--model", default="local/smollm2")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("extra", nargs="*", help="after --: options of the benchmark")
    args = p.parse_args()
    results: dict[int, list[dict]] = {w: [] for w in args.workers}
    with tempfile.TemporaryDirectory(prefix="toolscore-perf-workers-") as tmp:
        for r in range(args.repeats):
            for w in args.workers:
                results[w].append(one(args.benchmark, args.model, w, args.extra,
                                      Path(tmp) / f"w{w}-r{r}"))
                print(f"... {w} worker(s), run {r + 1} done", file=sys.stderr)
    load = os.getloadavg()[0]
    first = args.workers[0]
    base = statistics.median(x["wall"] for x in results[first])
    print(f"{args.benchmark} with {args.model}, no cache, {args.repeats} runs per count "
          f"(alternating), {os.cpu_count()} cores; load average {load:.1f}")
    print(f"{'workers':>7}  {'samples':>7}  {'wall s median (min-max)':>24}  "
          f"{'CPU s median':>12}  {'speed-up':>8}")
    for w in args.workers:
        walls = [x["wall"] for x in results[w]]
        wall = statistics.median(walls)
        print(f"{w:>7}  {results[w][0]['samples']:>7}  "
              f"{wall:>8.2f} ({min(walls):.2f}-{max(walls):.2f})".ljust(36)
              + f"  {statistics.median(x['cpu'] for x in results[w]):>12.2f}  "
              f"{base / wall:>8.2f}")
    metrics = [x["metrics"] for w in args.workers for x in results[w]]
    print("metrics identical across every run: " + ("yes" if all(
        m == metrics[0] for m in metrics) else "NO"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
