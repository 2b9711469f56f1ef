"""Wall time of the demo with the embedded model: cold (every reply computed), then warm
(every reply from the response cache), with the model calls and the demo's scores.

Runs what a newcomer runs, as a subprocess (start-up and model load included)::

    toolscore run demo --model local/smollm2 --embedder hashing --cache FILE

first with an empty response cache FILE (cold: the same work as ``--no-cache``), then again with
the filled one (warm). CPU time of the child and the load average are printed too: on a shared
machine wall time is mostly a measure of the load, CPU time much less so.

    .venv/bin/python perf/demo.py [--src DIR] [--repeat N] [--no-warm]

``--src`` runs another source tree (e.g. a checkout of an earlier version) for side-by-side
comparisons on the same machine state.
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

HEADLINE = ("success_rate", "recall", "precision", "action_precision", "incorrect_action_rate")


def run_demo(src: Path, out: Path, cache: Path, env: dict[str, str]) -> dict[str, object]:
    """One ``toolscore run demo`` -> its JSON document plus wall and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "toolscore.cli", "run", "demo", "--model", "local/smollm2",
         "--embedder", "hashing", "--cache", str(cache), "--out", str(out), "--json"],
        env={**env, "PYTHONPATH": str(src)}, capture_output=True, text=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"toolscore run demo failed ({done.returncode}):\n{done.stderr[-3000:]}")
    doc = json.loads(done.stdout)
    doc["wall"] = wall
    doc["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    doc["load"] = (load, os.getloadavg()[0])
    return doc


def show(label: str, doc: dict) -> None:
    summary, metrics = doc["summary"], doc["metrics"]
    print(f"{label}: wall {doc['wall']:.1f} s, CPU {doc['cpu']:.1f} s, load average "
          f"{doc['load'][0]:.1f} -> {doc['load'][1]:.1f}; model calls {summary['calls']} "
          f"computed + {summary['cached_calls']} from cache; tokens in "
          f"{summary['input_tokens']}, out {summary['output_tokens']}")
    for split in ("easy", "hard"):
        m = metrics.get(split) or {}
        figures = ", ".join(f"{k} {100 * m[k]:.1f}%" for k in HEADLINE
                            if isinstance(m.get(k), (int, float)))
        print(f"  {split} ({m.get('conversations', 0)} conversations): {figures}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[1] / "src",
                    help="source tree to run (default: this checkout's src/)")
    ap.add_argument("--repeat", type=int, default=1, help="cold runs (each with a new cache)")
    ap.add_argument("--no-warm", action="store_true", help="skip the warm run")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="toolscore-perf-demo-") as tmp:
        root = Path(tmp)
        # private caches: the user's ~/.cache/toolscore is neither read nor written
        env = {**os.environ, "XDG_CACHE_HOME": str(root / "xdg")}
        for i in range(args.repeat):
            cache = root / f"cache{i}.sqlite"
            cold = run_demo(args.src, root / f"cold{i}", cache, env)
            show(f"cold #{i + 1}", cold)
        if not args.no_warm:
            warm = run_demo(args.src, root / "warm", cache, env)
            show("warm", warm)
            if warm["metrics"] != cold["metrics"]:
                print("  warning: the warm run's scores differ from the cold run's")


if __name__ == "__main__":
    main()
