"""Time and peak memory to rescore ToolTalk's 78 conversations, two ways.

1. A run directory (``toolscore score RUN``): an oracle run is made into a temporary folder, then
   rescored from its transcripts.
2. Prediction files written by ToolTalk's own runner (``toolscore score tooltalk --predictions
   DIR``): the released ``tooltalk-reference/smollm2-exact`` folder, when the dataset is there.

Each is scored twice, each time in a fresh process (so each CPU time and peak RSS is its own):
with a cold embedding cache (an empty ``XDG_CACHE_HOME``: the embedder is loaded and every text
embedded) and with the cache that first scoring left (warm). Scoring makes no model calls; the
metrics must come out identical. CPU and RSS are those of the scoring call, after the imports
of ``toolscore.runs.api`` (shown as "RSS before"); "import" is the whole child's CPU before it.

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


def phase(target: Path, embedder: str) -> None:
    """Child process: score ``target`` (a run directory, or a folder of ToolTalk prediction
    files) once and print one JSON line of measurements."""
    from toolscore.runs.api import score, score_files

    imported = time.process_time()
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    wall0, cpu0 = time.perf_counter(), time.process_time()
    if (target / "run.json").is_file():
        result = score(target).to_dict()
    else:
        result = score_files("tooltalk", target, embedder=embedder)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    folder = Path(os.environ["XDG_CACHE_HOME"]) / "toolscore"
    cache = sum(p.stat().st_size for p in folder.glob("embeddings.sqlite*"))  # with its WAL
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "peak_rss_mb": peak, "import_s": imported,
                      "rss_before_mb": baseline, "metrics": result["metrics"],
                      "cache_bytes": cache}))


def child(args: list[str], cache_home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    done = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done


def measure(target: Path, cache_home: Path, embedder: str) -> dict[str, Any]:
    done = child([__file__, "--phase", str(target), "--embedder", embedder], cache_home)
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(title: str, cold: dict[str, Any], warm: dict[str, Any]) -> None:
    print(title)
    print(f"{'':<22}{'wall':>9}{'CPU':>9}{'peak RSS':>11}{'RSS before':>12}{'import':>9}"
          f"{'cache':>10}")
    for label, m in (("cold embedding cache", cold), ("warm embedding cache", warm)):
        print(f"{label:<22}{m['wall_s']:>8.2f}s{m['cpu_s']:>8.2f}s{m['peak_rss_mb']:>8.0f} MB"
              f"{m['rss_before_mb']:>9.0f} MB{m['import_s']:>8.2f}s"
              f"{m['cache_bytes'] / 1024:>7.0f} KB")


def reference_predictions() -> Path | None:
    root = Path(os.environ.get("TOOLSCORE_DATA") or Path(__file__).resolve().parents[2]
                / "shared" / "datasets")
    folder = root / "tooltalk-reference" / "smollm2-exact"
    return folder if folder.is_dir() else None


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--embedder", default="minilm", help="minilm (default) | minilm-st | hashing")
    p.add_argument("--split", default="all", choices=["easy", "hard", "all"])
    p.add_argument("--phase", type=Path, default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.phase is not None:
        phase(args.phase, args.embedder)
        return 0
    predictions = reference_predictions()
    with tempfile.TemporaryDirectory(prefix="toolscore-rescore-") as tmp:
        root = Path(tmp)
        run_dir = root / "run"
        made = child(["-m", "toolscore.cli", "run", "tooltalk", "--model", "oracle",
                      "--split", args.split, "--embedder", args.embedder, "--out", str(run_dir),
                      "--json"], root / "run-cache")
        run = json.loads(made.stdout)
        samples = (run_dir / "samples.jsonl").read_bytes().count(b"\n")
        size_mb = (run_dir / "samples.jsonl").stat().st_size / 2**20
        cold = measure(run_dir, root / "fresh-cache", args.embedder)
        warm = measure(run_dir, root / "fresh-cache", args.embedder)
        files: tuple[dict[str, Any], dict[str, Any]] | None = None
        if predictions is not None:
            files = (measure(predictions, root / "files-cache", args.embedder),
                     measure(predictions, root / "files-cache", args.embedder))
    same = cold["metrics"] == warm["metrics"] == run["metrics"]
    table(f"rescoring {samples} ToolTalk conversations ({args.split}) from samples.jsonl "
          f"({size_mb:.1f} MB), embedder {args.embedder}, no model calls", cold, warm)
    print("metrics identical to the run's (cold, warm): " + ("yes" if same else "NO"))
    if files is not None:
        print()
        table(f"score tooltalk --predictions {predictions} (78 files)", *files)
        same_files = files[0]["metrics"] == files[1]["metrics"]
        print("metrics identical (cold, warm): " + ("yes" if same_files else "NO"))
        same = same and same_files
    else:
        print("(tooltalk-reference not found under $TOOLSCORE_DATA: --predictions not measured)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
