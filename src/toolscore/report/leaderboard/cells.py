"""A leaderboard cell from the results index (:mod:`.index`), the same as one read from its run.

:func:`cell_from_index` returns what :func:`~.build.run_cell` returns for the same run, metric,
split and price table, key for key: the figures as the index keeps them, the cost from the
usage per role and the price table given now (:func:`toolscore.report.usage.cost`, as the run's
report computes it), and for the paired tests the (sample, epoch) records of the split with the
scores the headline metric is defined on, which is all the tests read of a record.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import IntervalMetric
from toolscore.models.prices import Prices
from toolscore.report.leaderboard.index import NO_MODEL, indexed_runs
from toolscore.report.leaderboard.metric import cell, pick_metric, split_key
from toolscore.report.usage import cost


def _records(rows: list[dict[str, Any]], key: str | None) -> list[dict[str, Any]]:
    """The split's finished records with the scores of every headline metric of the run."""
    kept = next((r["split_records"] for r in rows if r.get("split") == key
                 and r.get("split_records")), None)
    if kept is None:
        return []
    facts = json.loads(kept)
    fields = facts["fields"]
    return [{"id": sid, "epoch": epoch, "status": "ok", "scores": dict(zip(fields, values,
                                                                           strict=True))}
            for sid, epoch, *values in facts["records"]]


def cell_from_index(rows: list[dict[str, Any]], run_dir: str, *, metric: str | None,
                    split: str | None, prices: Prices) -> dict[str, Any]:
    """The cell :func:`~.build.run_cell` makes of ``run_dir``, from its index ``rows``."""
    path = Path(run_dir)
    run = json.loads(next(r["run_facts"] for r in rows if r.get("run_facts")))
    benchmark = run["benchmark"]
    specs = [IntervalMetric(**s) for s in run["specs"]]
    spec = pick_metric(specs, metric, benchmark, str(path / "run.json"))
    key = split_key(run["splits"], split)
    found = next((r for r in rows if key is not None and spec is not None
                  and r.get("split") == key and r.get("metric") == spec.label), None)
    row = None if found is None else json.loads(found["row_facts"])
    repeats = run["repeats"].get(key if key is not None else "") or {}
    pass_k = repeats.get("pass_hat_k")
    epochs = int(run["epochs"])
    by_model = {role: {None if m == NO_MODEL else m: u for m, u in parts.items()}
                for role, parts in run["usage_by_model"].items()}
    priced = cost(run["usage_by_role"], run["role_models"], prices, epochs, by_model=by_model)
    return cell(run_dir=str(path), benchmark=benchmark, model=run["model"],
                model_args=run["model_args"], options=run["options"], mode=run["mode"],
                split=key, spec=spec, row=row, epochs=epochs, pass_k=pass_k,
                noise_floor=repeats.get("noise_floor"),
                noise_floor_single=repeats.get("noise_floor_single"), tokens=run["tokens"],
                calls=run["calls"], cost=priced, records=run["records"],
                errors=run["errors"], note=run["note"], columns=run["columns"],
                finished=_records(rows, key) if row is not None else [])


def valid_rows(run_dirs: list[str], seed: int, n_resamples: int,
               on_note: Callable[[str], None] | None) -> dict[str, list[dict[str, Any]]]:
    """The results index's rows of the runs it holds unchanged, by run directory."""
    rows, counts = indexed_runs(run_dirs, seed=seed, n_resamples=n_resamples)
    if on_note is not None and counts["unindexed"] < len(run_dirs):  # said where one exists
        on_note(index_note(counts, len(run_dirs)))
    return rows


def index_note(counts: dict[str, int], total: int) -> str:
    walked = total - counts["indexed"]
    if not walked:
        return f"results index: all {total} runs read from the index"
    why = ", ".join(f"{n} {'in a folder without one' if k == 'unindexed' else k}"
                    for k, n in counts.items() if k != "indexed" and n)
    return (f"results index: {counts['indexed']} of {total} runs read from the index; "
            f"{walked} read from their files ({why})")


def index_cell(rows: list[dict[str, Any]], run_dir: str, metric: str | dict[str, str] | None,
               split: str | None, prices: Prices) -> tuple[dict[str, Any], bool]:
    name = str(rows[0]["benchmark"])
    wanted = metric.get(name) if isinstance(metric, dict) else metric
    return cell_from_index(rows, run_dir, metric=wanted, split=split, prices=prices), \
        scored(rows)


def scored(rows: list[dict[str, Any]]) -> bool:
    """Whether the run had its scores.json when it was indexed (the stamp is still valid)."""
    return json.loads(rows[0]["stamp"])[2] is not None
