"""``toolscore leaderboard`` on many runs: walking the run directories vs the results index.

Synthesises ``--runs`` small demo runs with :class:`~toolscore.records.RunStore` (one real
oracle run of ``--epochs`` epochs, copied with a different model per run and some successes
turned into failures, scored again by the benchmark so that every figure is consistent), in
``--boards`` boards (demo with ``seed`` 0, 1, ...: an option that differs makes a board), then:

- writes the results index (one part per run, as a sweep's units do, then the compaction) and
  reports the time per run;
- times ``build_leaderboard`` on the folder walking every run (``use_index=False``) and reading
  the index, side by side (median of ``--repeat``, alternating), and ``toolscore leaderboard
  DIR --format json`` as a subprocess both ways;
- checks that both documents are the same.

Target: ``toolscore leaderboard`` on 1,000 runs in under 2 s with the index.

    .venv/bin/python perf/leaderboard_index.py [--runs 1000] [--boards 5] [--epochs 2]
                                               [--repeat 3] [--keep DIR]

On a shared machine wall times measure the load as much as the code: the load average is
printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src")]

from toolscore.benchmarks.registry import make_benchmark  # noqa: E402
from toolscore.records import RunStore  # noqa: E402
from toolscore.report.leaderboard.build import build_leaderboard  # noqa: E402
from toolscore.report.leaderboard.index import compact, index_run  # noqa: E402
from toolscore.runs.api import evaluate  # noqa: E402

TARGET_S = 2.0


def base_run(folder: Path, epochs: int) -> Path:
    run = folder / "base"
    if not (run / "scores.json").is_file():
        shutil.rmtree(run, ignore_errors=True)
        evaluate("demo", "oracle", out=run, epochs=epochs, embedder="hashing", cache=None,
                 progress=False)
    return run


def worse(record: dict[str, Any], rng: random.Random, p: float) -> dict[str, Any]:
    """The record with its conversation failed at probability ``p`` (one call missed)."""
    if rng.random() >= p or record.get("status") != "ok":
        return record
    s = dict(record["scores"])
    s["matches"] = max(0, int(s.get("matches", 0)) - 1)
    s["success"] = False
    s["final_state_success"] = False
    s["soft_success"] = s["matches"] / max(1, int(s.get("ground_truths", 1)))
    s["precision"] = s["matches"] / max(1, int(s.get("predictions", 1)))
    s["recall"] = s["soft_success"]
    return {**record, "scores": s}


def synthesise(root: Path, base: Path, runs: int, boards: int) -> list[Path]:
    store = RunStore(base)
    config = store.read_config()
    records = list(store.latest().values())
    bench = make_benchmark("demo", None, download=False, embedder="hashing")
    models = max(1, runs // boards)
    out = []
    for i in range(runs):
        model, board = i % models, i // models
        run = root / f"demo-m{model:04d}-s{board}"
        out.append(run)
        if (run / "scores.json").is_file():
            continue
        rng = random.Random(i)
        mine = [worse(r, rng, (model % 20) / 40) for r in records]
        s = RunStore(run)
        s.path.mkdir(parents=True, exist_ok=True)
        s.write_config({**config, "model": f"openai/model-{model:04d}",
                        "options": {**config["options"], "seed": board}})
        (s.path / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in mine),
                                              encoding="utf-8")
        s.write_scores(bench.aggregate(mine))
    return out


def timed(fn: Any) -> tuple[float, float]:
    """(wall, CPU) seconds of ``fn()`` in this process."""
    t, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def command(root: Path, *extra: str) -> tuple[float, float]:
    """(wall, CPU: user + system) seconds of ``toolscore leaderboard ROOT``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"),
                                                        os.environ.get("PYTHONPATH", "")])}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "toolscore.cli", "leaderboard", str(root),
                    "--format", "json", *extra], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--boards", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, default=None, help="Keep the runs in this folder.")
    args = ap.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="toolscore-lb-index-"))
    folder.mkdir(parents=True, exist_ok=True)
    root = folder / "runs"
    t = time.perf_counter()
    runs = synthesise(root, base_run(folder, args.epochs), args.runs, args.boards)
    print(f"{len(runs)} runs of {args.epochs} epochs in {args.boards} boards: "
          f"{time.perf_counter() - t:.1f} s to synthesise ({root})")
    shutil.rmtree(root / ".toolscore-index", ignore_errors=True)
    write = timed(lambda: [index_run(r) for r in runs])[0]
    merge = timed(lambda: compact(root))[0]
    print(f"index: {write:.1f} s to write {len(runs)} parts ({1000 * write / len(runs):.0f} ms "
          f"per run, as each unit pays when it finishes), {merge:.2f} s to compact")
    docs: dict[str, Any] = {}
    times: dict[str, list[tuple[float, float]]] = {"walk": [], "index": []}
    for _ in range(args.repeat):
        for way in ("walk", "index"):
            times[way].append(timed(lambda w=way: docs.__setitem__(w, build_leaderboard(
                [root], use_index=w == "index"))))
    cli: dict[str, list[tuple[float, float]]] = {"walk": [], "index": []}
    for _ in range(args.repeat):
        cli["walk"].append(command(root, "--no-index"))
        cli["index"].append(command(root))
    same = json.dumps(docs["walk"], sort_keys=True, default=str) == json.dumps(
        docs["index"], sort_keys=True, default=str)
    load = os.getloadavg()[0]
    print(f"load average {load:.2f}; median of {args.repeat}; wall (CPU) seconds")

    def med(values: list[tuple[float, float]]) -> str:
        return (f"{statistics.median(v[0] for v in values):6.2f} "
                f"({statistics.median(v[1] for v in values):6.2f})")

    for way in ("walk", "index"):
        print(f"  {way:<6} build_leaderboard {med(times[way])}   "
              f"toolscore leaderboard {med(cli[way])}")
    best = statistics.median(v[0] for v in cli["index"])
    print(f"same document both ways: {same}; target {TARGET_S:g} s for the command with the "
          f"index: {'met' if best < TARGET_S else 'NOT met'} ({best:.2f} s)")
    if args.keep is None:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
