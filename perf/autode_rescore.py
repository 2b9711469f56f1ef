"""Time to rescore AutoDE's 14 released result files (Table 1), as ``toolscore score autode
--predictions results/`` does: slot scores, supplementary rates and the redundant-question
analysis of every dialogue and trial. Target: under 0.5 s CPU.

Each measurement runs in a fresh process, so every per-process cache (regexes, memoised text
analysis) starts cold and nothing is kept on disk between runs. The time is that of the scoring
call only, building the benchmark included (reading the scripts and ``API_list.xlsx``); the
imports (toolscore and the autode benchmark's modules) are shown apart. CPU time is the
figure to read on a shared machine (wall time counts waiting for a core); the verdict uses the
median CPU. The output must be the same in every run.

    .venv/bin/python perf/autode_rescore.py [--data DIR] [--repeat 5] [--profile [N]]
                                            [--against SRC]

``--against SRC`` times another checkout's sources (its ``src`` folder) in the same sitting,
alternating the two process by process: on a shared machine whose speed drifts within the
hour, only such side-by-side figures (and their ratio) compare two versions.
``--against-openpyxl`` compares, the same way, this tree with this tree reading
``API_list.xlsx`` through openpyxl instead of toolscore's own sheet reader.
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
from typing import Any

TARGET_S = 0.5
OPENPYXL = Path("openpyxl")  # --against-openpyxl: this tree, the workbook read by openpyxl


def phase(data: Path, profile: int, openpyxl: bool = False) -> None:
    """Child process: score ``data/results`` once, print one JSON line of measurements (with
    ``profile`` > 0, the top costs of the scoring call under cProfile instead; with
    ``openpyxl``, the workbook read by openpyxl: the own reader answers None, its fallback)."""
    if openpyxl:  # every module that calls the reader, as it names it
        from toolscore.benchmarks.autode import apidocs, benchmark

        apidocs.read_sheet = benchmark.read_sheet = lambda path, sheet: None
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
    p.add_argument("--against", type=Path, default=None, metavar="SRC",
                   help="another checkout's src folder, timed alternately with this one")
    p.add_argument("--against-openpyxl", action="store_true",
                   help="time this tree against itself reading API_list.xlsx with openpyxl")
    p.add_argument("--phase", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--openpyxl", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.phase:
        phase(args.data, args.profile, args.openpyxl)
        return 0
    if not (args.data / "results").is_dir():
        sys.exit(f"{args.data}: no results/ folder (set TOOLSCORE_DATA or --data)")

    def child(*extra: str, src: Path | None = None) -> str:
        env = None if src is None else {**os.environ, "PYTHONPATH": str(src)}
        done = subprocess.run([sys.executable, __file__, "--phase", "--data", str(args.data),
                               *extra], capture_output=True, text=True, env=env)
        if done.returncode != 0:
            sys.exit(f"scoring failed:\n{done.stderr[-3000:]}")
        return done.stdout

    def measure(src: Path | None = None) -> dict[str, object]:
        extra = ("--openpyxl",) if src == OPENPYXL else ()
        last = child(*extra, src=None if src == OPENPYXL else src).strip().splitlines()[-1]
        return json.loads(last)  # type: ignore[no-any-return]

    if args.against_openpyxl:
        args.against = OPENPYXL
    if args.against is not None:
        return compare(args, measure)
    runs = [measure() for _ in range(args.repeat)]
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


def compare(args: argparse.Namespace, measure: Any) -> int:
    """This tree and ``args.against``, process by process in turn: medians and their ratio."""
    pairs = [(measure(), measure(args.against)) for _ in range(args.repeat)]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    ours = statistics.median(m["cpu_s"] for m, _ in pairs)
    theirs = statistics.median(m["cpu_s"] for _, m in pairs)
    print(f"{args.repeat} pairs of fresh processes, alternating; load average {load:.1f}")
    for i, (m, o) in enumerate(pairs, 1):
        print(f"pair {i:<3} this {m['cpu_s']:.3f} s   against {o['cpu_s']:.3f} s CPU")
    print(f"scoring CPU median: this {ours:.3f} s, against ({args.against}) {theirs:.3f} s; "
          f"ratio {ours / theirs:.2f}")
    same = len({m["output"] for pair in pairs for m in pair}) == 1
    print("output identical across both: " + ("yes" if same else "NO"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
