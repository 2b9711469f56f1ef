"""Time and peak memory to rescore a whole ToolTalk run (78 conversations) from its transcripts.

An oracle run is made into a temporary folder, then rescored twice, each time in a fresh process
(so each peak RSS is its own): with a cold embedding cache (an empty ``XDG_CACHE_HOME``: texts
are embedded, the embedder is loaded) and with the cache that first rescoring left (warm).
Rescoring makes no model calls either way; the metrics must come out identical.

    .venv/bin/python perf/rescore.py [--embedder minilm] [--split all]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def phase(run_dir: Path) -> None:
    """Child process: rescore ``run_dir`` once and print one JSON line of measurements."""
    from toolscore.runs.api import score

    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    wall0, cpu0 = time.perf_counter(), time.process_time()
    result = score(run_dir).to_dict()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "toolscore" / "embeddings.sqlite"
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "peak_rss_mb": peak,
                      "rss_before_mb": baseline, "metrics": result["metrics"],
                      "cache_bytes": cache.stat().st_size if cache.exists() else 0}))


def child(args: list[str], cache_home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    done = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done


def measure(run_dir: Path, cache_home: Path) -> dict[str, Any]:
    done = child([__file__, "--phase", str(run_dir)], cache_home)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--embedder", default="minilm", help="minilm (default) | hashing")
    p.add_argument("--split", default="all", choices=["easy", "hard", "all"])
    p.add_argument("--phase", type=Path, default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.phase is not None:
        phase(args.phase)
        return 0
    with tempfile.TemporaryDirectory(prefix="toolscore-rescore-") as tmp:
        root = Path(tmp)
        run_dir = root / "run"
        made = child(["-m", "toolscore.cli", "run", "tooltalk", "--model", "oracle",
                      "--split", args.split, "--embedder", args.embedder, "--out", str(run_dir),
                      "--json"], root / "run-cache")
        run = json.loads(made.stdout)
        samples = (run_dir / "samples.jsonl").read_bytes().count(b"\n")
        size_mb = (run_dir / "samples.jsonl").stat().st_size / 2**20
        cold = measure(run_dir, root / "fresh-cache")
        warm = measure(run_dir, root / "fresh-cache")
    same = cold["metrics"] == warm["metrics"] == run["metrics"]
    print(f"rescoring {samples} ToolTalk conversations ({args.split}) from samples.jsonl "
          f"({size_mb:.1f} MB), embedder {args.embedder}, no model calls")
    print(f"{'':<22}{'wall':>9}{'CPU':>9}{'peak RSS':>11}{'RSS before':>12}{'cache':>10}")
    for label, m in (("cold embedding cache", cold), ("warm embedding cache", warm)):
        print(f"{label:<22}{m['wall_s']:>8.2f}s{m['cpu_s']:>8.2f}s{m['peak_rss_mb']:>8.0f} MB"
              f"{m['rss_before_mb']:>9.0f} MB{m['cache_bytes'] / 1024:>7.0f} KB")
    print("metrics identical to the run's (cold, warm): " + ("yes" if same else "NO"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
