"""Peak memory of run, score, report and export against the number of records.

Runs ``toolscore run tooltalk -m oracle --split easy`` with enough epochs for N records (28 per
epoch; no model cost, hashing embedder, no cache), then ``score``, ``report`` and ``export`` on
the result, each in its own subprocess, and prints wall time and peak RSS (``ru_maxrss`` of
the child). Target: under 150 MB at 10,000 records for run, score and report.

    TOOLSCORE_DATA=../shared/datasets .venv/bin/python perf/memory.py [--records 10000 1000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The child reports its own peak RSS at exit (RUSAGE_CHILDREN would give the maximum over
# every child so far, hiding a smaller peak).
_WRAPPER = """
import atexit, os, resource, sys
atexit.register(lambda: open(os.environ["PEAK_FILE"], "w").write(
    str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)))
sys.argv = ["toolscore", *sys.argv[1:]]
from toolscore.cli import main
main()
"""


def measure(args: list[str], peak_file: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of one CLI command in a fresh child process."""
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, *args], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True,
                          env={**os.environ, "PEAK_FILE": str(peak_file)})
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)}: exit {proc.returncode}: {proc.stderr.strip()}")
    return wall, int(peak_file.read_text()) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="+", default=[1000, 10000])
    opts = parser.parse_args()
    if not os.environ.get("TOOLSCORE_DATA"):
        raise SystemExit("set TOOLSCORE_DATA to a folder holding tooltalk/")
    print(f"{'records':>8} {'command':<8} {'wall s':>7} {'peak MB':>8}")
    for n in opts.records:
        epochs = max(1, round(n / 28))
        with tempfile.TemporaryDirectory() as tmp:
            run = Path(tmp) / "run"
            steps = {
                "run": ["run", "tooltalk", "-m", "oracle", "--split", "easy", "--epochs",
                        str(epochs), "--embedder", "hashing", "--no-cache", "--out", str(run),
                        "--json"],
                "score": ["score", str(run), "--json"],
                "report": ["report", str(run), "--json"],
                "export": ["export", str(run), "--format", "csv", "-o", str(Path(tmp) / "x.csv")],
            }
            for name, args in steps.items():
                wall, peak = measure(args, Path(tmp) / "peak")
                print(f"{epochs * 28:>8} {name:<8} {wall:7.2f} {peak:8.0f}", flush=True)


if __name__ == "__main__":
    main()
