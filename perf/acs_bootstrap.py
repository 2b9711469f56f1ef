"""The ACS agreement bootstrap: one resample at a time (as ``bootstrap_ci`` does it) beside the
block computation ``classification_report`` uses, on the same rows, with the same seed.

The rows are acs_dev.csv judged by acs-verify, plus the same rows with a noisy judge (a
third of the verdicts flipped or abstained, so every cell of the table is filled) and that
noisy set repeated ``--scale`` times under new request ids (a larger labelled set). For each,
the agreement document's report (per domain, whole requests resampled) is computed both ways:
the seconds of each, the speed-up, and whether every interval is the same to the last digit.

    .venv/bin/python perf/acs_bootstrap.py [--data DIR_OR_CSV] [--resamples 2000] [--seed 0]
                                          [--scale 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from toolscore.benchmarks.acs.data import DataError, load_rows
from toolscore.benchmarks.acs.verify import verify
from toolscore.stats.agreement import bootstrap_ci
from toolscore.stats.classification import (
    METRICS,
    _arrays,
    _metrics_arrays,
    _units,
    classification_report,
)

Rows = tuple[list[bool], list[bool | None], list[str], list[Hashable]]


def loop_report(gold: list[bool], pred: list[bool | None], groups: list[str],
                clusters: list[Hashable], resamples: int, seed: int
                ) -> dict[str, dict[str, tuple[float, float]]]:
    """Every interval, overall and per group, from ``bootstrap_ci`` one resample at a time
    (each resample's metrics computed once and shared by the eight metrics)."""
    g, p = _arrays(gold, pred)

    def intervals(idx: np.ndarray) -> dict[str, tuple[float, float]]:
        units = _units(idx.size, [clusters[i] for i in idx])
        memo: dict[bytes, dict[str, float]] = {}
        sg, sp = g[idx], p[idx]

        def stat(name: str) -> Callable[[np.ndarray], float]:
            def f(picked: np.ndarray) -> float:
                key = picked.tobytes()
                if key not in memo:
                    rows = np.concatenate([units[u] for u in picked])
                    memo[key] = _metrics_arrays(sg[rows], sp[rows])
                return memo[key][name]
            return f

        ids = np.arange(len(units))
        return {m: bootstrap_ci(ids, stat(m), n_resamples=resamples, seed=seed) for m in METRICS}

    out = {"overall": intervals(np.arange(g.size))}
    for key in sorted(set(groups)):
        out[key] = intervals(np.array([i for i, k in enumerate(groups) if k == key]))
    return out


def block_report(gold: list[bool], pred: list[bool | None], groups: list[str],
                 clusters: list[Hashable], resamples: int, seed: int
                 ) -> dict[str, dict[str, tuple[float, float]]]:
    rep = classification_report(gold, pred, groups=groups, clusters=clusters,
                                n_resamples=resamples, seed=seed)
    out = {"overall": {m: (e.low, e.high) for m, e in rep.overall.metrics.items()}}
    for key, group in rep.groups.items():
        out[key] = {m: (e.low, e.high) for m, e in group.metrics.items()}
    return out


def best_of(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def datasets(data: str | None, scale: int) -> list[tuple[str, Rows]]:
    rows = load_rows(data)
    gold = [r.label for r in rows]
    verdicts = [verify(r.request, r.response, r.constraint, r.domain).label for r in rows]
    groups = [r.domain for r in rows]
    clusters: list[Hashable] = [r.request_key for r in rows]
    rng = random.Random(0)
    noisy: list[bool | None] = []
    for v in verdicts:
        roll = rng.random()
        noisy.append(None if roll < 0.1 else (not v if roll < 0.33 else v))
    big = (gold * scale, noisy * scale, groups * scale,
           [(k, c) for k in range(scale) for c in clusters])
    return [("acs_dev, acs-verify", (gold, verdicts, groups, clusters)),
            ("acs_dev, noisy judge", (gold, noisy, groups, clusters)),
            (f"acs_dev x{scale}, noisy judge", big)]  # type: ignore[list-item]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None, help="ACS dataset folder or csv (default: the "
                    "installed dataset)")
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3, help="best of this many timings")
    args = ap.parse_args(argv)
    try:
        sets = datasets(args.data, args.scale)
    except DataError as exc:
        print(f"acs_bootstrap: {exc}", file=sys.stderr)
        return 2
    print(f"{args.resamples} resamples of whole requests, seed {args.seed}, per domain; "
          f"best of {args.repeat}")
    print(f"{'rows':<28} {'n':>6} {'loop s':>8} {'blocks s':>9} {'speed-up':>9}  identical")
    same_everywhere = True
    for name, (gold, pred, groups, clusters) in sets:
        loop_s, slow = best_of(lambda: loop_report(gold, pred, groups, clusters,  # noqa: B023
                                                   args.resamples, args.seed), args.repeat)
        block_s, fast = best_of(lambda: block_report(gold, pred, groups, clusters,  # noqa: B023
                                                     args.resamples, args.seed), args.repeat)
        same = json.dumps(slow, sort_keys=True) == json.dumps(fast, sort_keys=True)
        same_everywhere &= same
        print(f"{name:<28} {len(gold):>6} {loop_s:>8.3f} {block_s:>9.3f} "
              f"{loop_s / block_s:>8.1f}x  {'yes' if same else 'NO'}")
    return 0 if same_everywhere else 1


if __name__ == "__main__":
    sys.exit(main())
