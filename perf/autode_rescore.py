"""Time to rescore AutoDE's 14 released result files (Table 1), as ``toolscore score autode
--predictions results/`` does: slot scores, supplementary rates and the redundant-question
analysis of every dialogue and trial. Target (issue 12 item 4): under 0.5 s CPU.

Each measurement runs in a fresh process, so every per-process cache (regexes, memoised text
analysis) starts cold and nothing is kept on disk between runs. The time is that of the scoring
call only, building the benchmark included (reading the scripts and ``API_list.xlsx``); the
imports (toolscore and the autode benchmark's modules) are shown apart. CPU time is the
figure to read on a shared machine (wall time counts waiting for a core); the verdict uses the
median CPU. The output must be the same in every run.

    .venv/bin/python perf/autode_rescore.py [--data DIR] [--repeat 5] [--profile [N]]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_S = 0.5


def phase(data: Path, profile: int) -> None:
    """Child process: score ``data/results`` once, print one JSON line of measurements (with
    ``profile`` > 0, the top costs of the scoring call under cProfile instead)."""
    from toolscore.benchmarks.registry import benchmark_class
    from toolscore.runs.api import score_files

    benchmark_class("autode")  # the benchmark's own modules are imports too
    imported = time.process_time()
    if profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(score_files, "autode", data / "results", data=data)
        stats = pstats.Stats(profiler, stream=sys.stdout).strip_dirs()
        stats.sort_stats("tottime").print_stats(profile)
        stats.sort_stats("cumulative").print_stats(profile)
        return
    gcs = sum(s["collections"] for s in __import__("gc").get_stats())
    wall0, cpu0 = time.perf_counter(), time.process_time()
    doc = score_files("autode", data / "results", data=data)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    gcs = sum(s["collections"] for s in __import__("gc").get_stats()) - gcs
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "import_s": imported, "gc": gcs,
                      "files": len(doc["results"]),
                      "output": json.dumps(doc, sort_keys=True, default=str)}))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = Path(os.environ.get("TOOLSCORE_DATA") or Path(__file__).resolve().parents[2]
                   / "shared" / "datasets") / "autode"
    p.add_argument("--data", type=Path, default=default, help="AutoDE dataset folder")
    p.add_argument("--repeat", type=int, default=5, help="fresh processes to time")
    p.add_argument("--profile", type=int, nargs="?", const=25, default=0, metavar="N",
                   help="also profile one more fresh process and print its N top costs")
    p.add_argument("--phase", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.phase:
        phase(args.data, args.profile)
        return 0
    if not (args.data / "results").is_dir():
        sys.exit(f"{args.data}: no results/ folder (set TOOLSCORE_DATA or --data)")

    def child(*extra: str) -> str:
        done = subprocess.run([sys.executable, __file__, "--phase", "--data", str(args.data),
                               *extra], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"scoring failed:\n{done.stderr[-3000:]}")
        return done.stdout

    runs = [json.loads(child().strip().splitlines()[-1]) for _ in range(args.repeat)]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"rescoring {runs[0]['files']} AutoDE result files ({args.data / 'results'}), "
          f"{args.repeat} fresh processes (cold caches), load average {load:.1f}")
    print(f"{'':<8}{'wall':>9}{'CPU':>9}{'imports (CPU)':>15}{'GC passes':>11}")
    for i, m in enumerate(runs, 1):
        print(f"run {i:<4}{m['wall_s']:>8.2f}s{m['cpu_s']:>8.2f}s{m['import_s']:>14.2f}s"
              f"{m['gc']:>11}")
    cpu = statistics.median(m["cpu_s"] for m in runs)
    print(f"scoring CPU: median {cpu:.3f} s, min {min(m['cpu_s'] for m in runs):.3f} s; "
          f"imports apart: median {statistics.median(m['import_s'] for m in runs):.3f} s")
    print(f"target < {TARGET_S} s CPU (median): " + ("met" if cpu < TARGET_S else "MISSED"))
    same = len({m["output"] for m in runs}) == 1
    print("output identical across runs: " + ("yes" if same else "NO"))
    if args.profile:
        print(child("--profile", str(args.profile)))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
