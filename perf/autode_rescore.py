"""Time to rescore AutoDE's 14 released result files (Table 1), as ``toolscore score autode
--predictions results/`` does: slot scores, supplementary rates and the redundant-question
analysis of every dialogue and trial.

Each measurement runs in a fresh process; the time is that of the scoring call only (after the
imports, shown apart), wall and CPU, and the output must be the same every time.

    .venv/bin/python perf/autode_rescore.py [--data DIR] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def phase(data: Path) -> None:
    """Child process: score ``data/results`` once, print one JSON line of measurements."""
    from toolscore.runs.api import score_files

    imported = time.process_time()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    doc = score_files("autode", data / "results", data=data)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "import_s": imported,
                      "files": len(doc["results"]),
                      "output": json.dumps(doc, sort_keys=True, default=str)}))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = Path(os.environ.get("TOOLSCORE_DATA") or Path(__file__).resolve().parents[2]
                   / "shared" / "datasets") / "autode"
    p.add_argument("--data", type=Path, default=default, help="AutoDE dataset folder")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--phase", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.phase:
        phase(args.data)
        return 0
    if not (args.data / "results").is_dir():
        sys.exit(f"{args.data}: no results/ folder (set TOOLSCORE_DATA or --data)")
    runs = []
    for _ in range(args.repeat):
        done = subprocess.run([sys.executable, __file__, "--phase", "--data", str(args.data)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"scoring failed:\n{done.stderr[-3000:]}")
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"rescoring {runs[0]['files']} AutoDE result files ({args.data / 'results'}), "
          f"{args.repeat} fresh processes")
    print(f"{'':<8}{'wall':>9}{'CPU':>9}{'imports (CPU)':>15}")
    for i, m in enumerate(runs, 1):
        print(f"run {i:<4}{m['wall_s']:>8.2f}s{m['cpu_s']:>8.2f}s{m['import_s']:>14.2f}s")
    same = len({m["output"] for m in runs}) == 1
    print("output identical across runs: " + ("yes" if same else "NO"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
