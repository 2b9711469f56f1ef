"""The leaderboard: many runs as the table people publish (behind ``toolscore leaderboard``).

A sweep leaves dozens of run directories; a reader wants one table that says which model is
best on which benchmark, by how much, and whether the gap is more than noise. Everything here
is read from the runs through :func:`toolscore.report.overview.overview_of` (the same headline
figures, bootstrap intervals, pass^k, noise floor, tokens and cost as ``toolscore report``)
and :mod:`toolscore.report.compare_headline` (the same paired tests as ``toolscore compare``),
so the leaderboard cannot disagree with the per-run report or with a pairwise comparison.

Runs are grouped into *boards*: one benchmark, one split, one setting of the benchmark's
options (options that differ between runs of the benchmark, such as ``strict``, make separate
boards, because a reference score and a strict score are not the same number). Within a board
the models are ranked by the headline metric (the best first: higher, or lower for a metric of
mistakes) and every model is tested against
the best one on the (sample, epoch) pairs both finished; a model whose difference from the
best is not significant at ``alpha`` is marked as tied with it. Units of a sweep plan that have
not run yet appear as missing cells, so a half-finished sweep shows what it lacks.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolscore.models.prices import Prices, price_table
from toolscore.records import RunStore
from toolscore.report.compare import CONTINUOUS_TESTS
from toolscore.report.compare_headline import compare_headline_metric
from toolscore.report.intervals import split_of
from toolscore.report.leaderboard.metric import LeaderboardError, model_label
from toolscore.report.leaderboard.metric import cell as make_cell
from toolscore.report.leaderboard.metric import pick_metric as _pick_metric
from toolscore.report.leaderboard.metric import split_key as _split_key
from toolscore.report.overview import overview_of
from toolscore.report.view import run_view

ALPHA = 0.05
PLAN_SUFFIXES = (".yaml", ".yml", ".json")
TEST_NOTE = ("paired test of the headline metric on the (sample, epoch) records both runs "
             "finished, as `toolscore compare` does: exact McNemar for a mean of pass/fail "
             "scores, Wilcoxon signed-rank for a mean of numbers, a paired permutation test for "
             "a ratio of sums; each model against the best of its board. With several "
             "epochs McNemar and Wilcoxon count each (sample, epoch) as a pair, so their "
             "p-values are somewhat optimistic")


# -- inputs ----------------------------------------------------------------------------------
def _is_run(path: Path) -> bool:
    return (path / "run.json").is_file()


def find_runs(inputs: list[str | Path], *, use_index: bool = False) -> list[dict[str, Any]]:
    """``[{run_dir, state, unit}]`` of every run the inputs name, in order, once each.

    An input is a run directory, a folder of run directories (its children, and their
    children when a child is not a run itself) or a sweep plan / manifest, whose units are
    listed whether they have run or not (``state`` from :mod:`toolscore.sweeps.status`)."""
    found: dict[str, dict[str, Any]] = {}

    def add(path: Path, state: str | None = None, unit: dict[str, Any] | None = None) -> None:
        found.setdefault(str(path), {"run_dir": str(path), "state": state, "unit": unit})

    for item in inputs:
        path = Path(item)
        if path.is_dir() and _is_run(path):
            add(path)
        elif path.is_dir():
            runs = [c for child in sorted(path.iterdir()) if child.is_dir()
                    for c in ([child] if _is_run(child) else
                              sorted(g for g in child.iterdir() if g.is_dir() and _is_run(g)))]
            if not runs:
                raise LeaderboardError(f"{path}: no run directories in this folder (none of "
                                       "its sub-folders has a run.json)")
            for run in runs:
                add(run)
        elif path.is_file() and path.suffix.lower() in PLAN_SUFFIXES:
            from toolscore.sweeps.plan import load_plan
            from toolscore.sweeps.status import unit_status

            units = load_plan(path).units
            known: dict[str, str] = {}
            if use_index:  # the states of units the results index holds unchanged
                from toolscore.report.leaderboard.index import unit_states

                known = unit_states([(u.run_dir, u.samples) for u in units])
            for unit in units:
                state = known.get(unit.run_dir) or unit_status(unit)["state"]
                add(Path(unit.run_dir), state, unit.to_dict())
        else:
            raise LeaderboardError(f"{path}: not a run directory (no run.json), a folder of "
                                   "runs or a sweep plan (.yaml, .yml or .json)")
    return list(found.values())


# -- one run ---------------------------------------------------------------------------------
def run_cell(run_dir: str | Path, *, metric: str | None = None, split: str | None = None,
             prices: Prices = None, seed: int = 0,
             n_resamples: int = 2000) -> dict[str, Any]:
    """One run as a leaderboard cell: headline metric with its interval, pass^k and noise
    floor (several epochs), tokens, cost, mode. ``_records`` (the finished records of the
    split) and ``_spec`` (the metric's definition) are kept for the paired tests."""
    store = RunStore(run_dir)
    config = store.read_config()
    view = run_view(config)
    records = sorted(store.latest(view.cls.summary_output).values(),
                     key=lambda r: (str(r["id"]), int(r.get("epoch", 0))))
    doc = overview_of(store.path, config, records, store.read_scores(), view, seed=seed,
                      prices=prices, n_resamples=n_resamples)
    benchmark = str(config.get("benchmark"))
    ok = [r for r in records if r.get("status") == "ok"]
    spec = _pick_metric(view.interval_metrics(ok), metric, benchmark,
                        str(store.path / "run.json"))
    splits = doc["intervals"]["splits"]
    key = _split_key(list(splits), split)
    row = next((r for r in splits.get(key, []) if spec is not None and r["label"] == spec.label),
               None) if key is not None else None
    repeats: Any = ((doc.get("repeats") or {}).get("splits") or {}).get(
        key if key is not None else "", None)
    epochs = int(doc["epochs"])
    pass_k = None
    if repeats and repeats.get("epochs", 0) > 1:
        k = str(repeats["epochs"])
        pass_k = {"k": int(k), "value": repeats["pass_hat_k"].get(k),
                  "metric": (doc.get("repeats") or {}).get("metric"),
                  "samples": repeats["samples_at_k"].get(k)}
    counts = doc["counts"].get("all", {"samples": 0, "records": 0, "errors": 0})
    in_split = [r for r in ok if key is not None and (key == "all" or split_of(r) == key)]
    return make_cell(run_dir=str(store.path), benchmark=benchmark, model=config.get("model"),
                     model_args=config.get("model_args") or {},
                     options=config.get("options") or {}, mode=doc["mode"], split=key,
                     spec=spec, row=row, epochs=epochs, pass_k=pass_k,
                     noise_floor=(repeats or {}).get("noise_floor_k_epochs"),
                     noise_floor_single=(repeats or {}).get("noise_floor"),
                     tokens=doc["usage"]["tokens"], calls=doc["usage"]["calls"],
                     cost=doc.get("cost"), records=counts["records"], errors=counts["errors"],
                     note=doc["note"],
                     columns=view.cls.board_columns(store.read_scores() or {}),
                     finished=in_split)


# -- boards ----------------------------------------------------------------------------------
def _variants(entries: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Per benchmark, the options whose value differs between its runs."""
    seen: dict[str, dict[str, set[str]]] = {}
    for e in entries:
        for k, v in (e.get("options") or {}).items():
            seen.setdefault(e["benchmark"], {}).setdefault(k, set()).add(
                json.dumps(v, sort_keys=True, default=str))
    return {b: {k for k, vs in opts.items() if len(vs) > 1} for b, opts in seen.items()}


def _board_name(benchmark: str, variant: dict[str, Any], split: str | None) -> str:
    parts = [f"{k}={json.dumps(v, default=str)}" for k, v in sorted(variant.items())]
    where = f" [{split}]" if split and split != "all" else ""
    return benchmark + where + (f" ({', '.join(parts)})" if parts else "")


def _test(a: dict[str, Any], b: dict[str, Any], *, seed: int, n_resamples: int,
          alpha: float) -> dict[str, Any]:
    """B (the better-ranked run) against A on their shared finished (sample, epoch) pairs."""
    left = {(str(r["id"]), int(r.get("epoch", 0))): r for r in a["_records"]}
    right = {(str(r["id"]), int(r.get("epoch", 0))): r for r in b["_records"]}
    shared = sorted(set(left) & set(right), key=lambda k: (k[1], k[0]))
    groups = [k[0] for k in shared]
    res = compare_headline_metric(
        a["_spec"], [(left[k], right[k]) for k in shared], groups,
        continuous_tests=CONTINUOUS_TESTS, continuous_test="wilcoxon",
        n_resamples=n_resamples, seed=seed, grouped=len(set(groups)) < len(groups))
    p = res["p_value"]
    return {"against": b["run_dir"], "test": res["test"], "p_value": p, "diff": res["diff"],
            "ci_low": res["ci_low"], "ci_high": res["ci_high"], "n": res["n"],
            "significant": None if p is None else p < alpha}


def _rank(cells: list[dict[str, Any]], *, alpha: float, seed: int,
          n_resamples: int) -> None:
    """Order a board's finished cells by value (the best first: the lowest for a metric of
    mistakes), test each against the best and the one above."""
    scored = [c for c in cells if c.get("value") is not None]
    sign = {id(c): 1.0 if getattr(c["_spec"], "higher_is_better", True) else -1.0
            for c in scored}
    scored.sort(key=lambda c: (-sign[id(c)] * float(c["value"]), c["model_label"]))
    for i, cell in enumerate(scored):
        cell["rank"] = i + 1
        if i == 0:
            cell["vs_best"] = cell["vs_above"] = None
            cell["tied_with_best"] = True
            continue
        cell["vs_best"] = _test(cell, scored[0], seed=seed, n_resamples=n_resamples,
                                alpha=alpha)
        cell["vs_above"] = cell["vs_best"] if i == 1 else _test(
            cell, scored[i - 1], seed=seed, n_resamples=n_resamples, alpha=alpha)
        cell["tied_with_best"] = cell["vs_best"]["significant"] is False
    order = {id(c): i for i, c in enumerate(scored)}
    cells.sort(key=lambda c: (order.get(id(c), len(order)), c["model_label"]))


def _pending_cell(found: dict[str, Any]) -> dict[str, Any]:
    unit = found["unit"] or {}
    return {"run_dir": found["run_dir"], "benchmark": unit.get("benchmark"),
            "model": unit.get("model"), "model_args": unit.get("model_args") or {},
            "model_label": model_label(str(unit.get("model")), unit.get("model_args")),
            "options": unit.get("options") or {}, "value": None, "state": found["state"],
            "split": None, "metric": None}


def build_leaderboard(inputs: list[str | Path], *, metric: str | dict[str, str] | None = None,
                      split: str | None = None, prices: Prices = None,
                      alpha: float = ALPHA, seed: int = 0, n_resamples: int = 2000,
                      use_index: bool = True,
                      on_note: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The leaderboard of the runs ``inputs`` name (see :func:`find_runs`), as a JSON-able dict.

    ``metric`` is a headline metric (label or key) for every benchmark, or ``{benchmark:
    metric}``; by default each benchmark's first headline metric. ``split`` selects a split of
    each run ("all" by default). ``boards`` list the cells ranked; ``models`` and ``matrix``
    give the model x board table.

    With ``use_index``, a run that the results index beside it (:mod:`.index`) holds
    unchanged is read from the index, the others from their files: the document is the same
    either way. ``on_note`` is told how many runs came from where."""
    if not 0 < alpha < 1:
        raise LeaderboardError(f"--alpha {alpha}: must be between 0 and 1")
    prices = price_table(prices)  # read once for every run
    cells: list[dict[str, Any]] = []
    listed = find_runs(inputs, use_index=use_index)
    ready = [f["run_dir"] for f in listed if f["state"] != "pending"
             and _is_run(Path(f["run_dir"]))]
    indexed: dict[str, list[dict[str, Any]]] = {}
    if use_index and ready:
        from toolscore.report.leaderboard.cells import index_cell, valid_rows

        indexed = valid_rows(ready, seed, n_resamples, on_note)
    for found in listed:
        if found["state"] == "pending" or not _is_run(Path(found["run_dir"])):
            cells.append(_pending_cell(found))
            continue
        rows = indexed.get(found["run_dir"])
        if rows is not None:
            cell, scored = index_cell(rows, found["run_dir"], metric, split, prices)
        else:
            name = str(RunStore(found["run_dir"]).read_config().get("benchmark"))
            wanted = metric.get(name) if isinstance(metric, dict) else metric
            cell = run_cell(found["run_dir"], metric=wanted, split=split, prices=prices,
                            seed=seed, n_resamples=n_resamples)
            scored = (Path(found["run_dir"]) / "scores.json").is_file()
        cell["state"] = found["state"] or ("done" if scored and not cell["errors"] else
                                           "error" if scored else "partial")
        cells.append(cell)
    if isinstance(metric, dict):
        unknown = sorted(set(metric) - {c["benchmark"] for c in cells})
        if unknown:
            raise LeaderboardError(f"--metric {unknown[0]}=...: no run of benchmark "
                                   f"{unknown[0]!r} among the inputs")
    variants = _variants(cells)
    boards: dict[str, dict[str, Any]] = {}
    for cell in cells:
        variant = {k: cell["options"].get(k) for k in sorted(variants.get(cell["benchmark"],
                                                                           ()))}
        name = _board_name(str(cell["benchmark"]), variant, cell.get("split"))
        board = boards.setdefault(name, {"name": name, "benchmark": cell["benchmark"],
                                         "variant": variant, "split": cell.get("split"),
                                         "metric": None, "cells": []})
        board["metric"] = board["metric"] or cell.get("metric")
        cell["board"] = name
        board["cells"].append(cell)
        for column in cell.get("columns") or {}:
            if column not in board.setdefault("columns", []):
                board["columns"].append(column)
    _attach_pending(boards)
    warnings: list[str] = []
    for board in boards.values():
        _rank(board["cells"], alpha=alpha, seed=seed, n_resamples=n_resamples)
        labels = [c["model_label"] for c in board["cells"]]
        for label in sorted({x for x in labels if labels.count(x) > 1}):
            warnings.append(f"board {board['name']}: model {label!r} has several runs; "
                            "each is ranked on its own")
        modes = {c.get("mode") for c in board["cells"] if c.get("value") is not None}
        if len(modes) > 1:
            warnings.append(f"board {board['name']}: runs scored in different modes "
                            f"({', '.join(sorted(map(str, modes)))})")
    for cell in cells:
        if cell.get("note"):
            warnings.append(f"{cell['run_dir']}: {cell['note']}")
        if cell.get("value") is None and cell["state"] not in ("pending", "partial"):
            warnings.append(f"{cell['run_dir']}: no value of the headline metric for split "
                            f"{split or 'all'!r}")
        cell.pop("_records", None)
        cell.pop("_spec", None)
    ordered = sorted(boards.values(), key=lambda b: b["name"])
    models = sorted({c["model_label"] for c in cells})
    matrix = {m: {b["name"]: next((c["run_dir"] for c in b["cells"] if c["model_label"] == m),
                                  None) for b in ordered} for m in models}
    return {"boards": ordered, "models": models, "matrix": matrix, "warnings": warnings,
            "significance": {"alpha": alpha, "test": TEST_NOTE, "seed": seed,
                             "n_resamples": n_resamples},
            "intervals": "95% bootstrap interval of the benchmark's own definition "
                         "(whole samples resampled when they have several epochs)",
            "split": split or "all", "priced": prices.table is not None or bool(prices.overrides),
            "prices": prices.describe()}


def _attach_pending(boards: dict[str, dict[str, Any]]) -> None:
    """A pending unit has no split yet: move it to the board of its benchmark and options."""
    for name in [n for n, b in boards.items() if all(c.get("state") == "pending"
                                                     for c in b["cells"])]:
        board = boards[name]
        home = next((b for b in boards.values() if b is not board
                     and b["benchmark"] == board["benchmark"]
                     and b["variant"] == board["variant"]), None)
        if home is not None:
            for cell in board["cells"]:
                cell["board"] = home["name"]
            home["cells"].extend(board.pop("cells"))
            del boards[name]
