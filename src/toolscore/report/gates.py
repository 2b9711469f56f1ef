"""Pass/fail gates for continuous integration: a floor on a run's headline metric
(``--fail-under METRIC=VALUE``) and a significant drop between two runs
(``compare --fail-on-regression``).

A floor reads the metric the way the report shows it: the benchmark's headline metrics
(``Benchmark.interval_metrics``), named by the label the report prints ("success",
"final-state success"), the ``scores.json`` key ("success_rate") or the headline table's column
title ("final state"), in any case, with ``_``, ``-`` and spaces alike. The value is the
published figure (``scores.json``'s ``overall`` group, or the split's with ``METRIC@SPLIT``)
when there is one, else the benchmark's definition applied to the finished records, as
``toolscore report`` computes it. A metric of mistakes (``higher_is_better`` False) cannot take
a floor: a floor on it would pass the worse run.

A regression gate reads the comparison ``toolscore compare`` already computes: B (the new run)
worse than A (the base) on the metric, with the paired test's p below ``alpha``.

Each gate gives one :class:`GateResult` with one line saying why; nothing here prints or exits.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from toolscore.benchmarks.base import IntervalMetric
from toolscore.records import RunStore
from toolscore.report.intervals import compute, split_of
from toolscore.report.view import RunView, run_view

# scores.json groups that hold a run's overall figures
OVERALL_GROUPS = ("overall", "all")


@dataclass(frozen=True)
class Floor:
    """``--fail-under METRIC[@SPLIT]=VALUE`` as typed: ``value`` a number (a percentage is
    read as a fraction, ``50%`` is 0.5)."""

    spec: str
    metric: str
    split: str | None
    value: float
    percent: bool


@dataclass(frozen=True)
class GateResult:
    """One gate's outcome: ``status`` "pass", "fail", or "error" (nothing to judge: no
    finished sample has the metric); ``line`` says which metric, its value and the bound."""

    gate: Literal["fail-under", "fail-on-regression"]
    name: str
    status: Literal["pass", "fail", "error"]
    line: str
    value: float | None = None
    bound: float | None = None
    p_value: float | None = None

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _norm(name: str) -> str:
    return " ".join(re.split(r"[\s_\-]+", name.strip().lower())).strip()


def parse_floor(spec: str) -> Floor:
    """One ``METRIC[@SPLIT]=VALUE``; a one-line ValueError for a bad shape or VALUE."""
    name, eq, text = spec.rpartition("=")
    metric, at, split = name.partition("@")
    if not eq or not metric.strip() or (at and not split.strip()):
        raise ValueError(f"--fail-under {spec!r}: expected METRIC=VALUE or "
                         "METRIC@SPLIT=VALUE, e.g. success=0.5 or success@hard=50%")
    raw = text.strip()
    percent = raw.endswith("%")
    try:
        value = float(raw[:-1] if percent else raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ValueError(f"--fail-under {spec!r}: VALUE {raw!r} is not a number (a fraction "
                         "such as 0.5, or a percentage such as 50%)")
    return Floor(spec, metric.strip(), split.strip() or None,
                 value / 100 if percent else value, percent)


def parse_floors(specs: Sequence[str]) -> list[Floor]:
    return [parse_floor(s) for s in specs]


@dataclass
class RunRecords:
    """A run directory read once for gates and JUnit: run.json, its benchmark, the latest
    record of each (sample, epoch) (the benchmark's summary of each output) and scores.json."""

    path: Path
    config: dict[str, Any]
    view: RunView
    records: list[dict[str, Any]]
    metrics: dict[str, Any] | None

    @property
    def ok(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("status") == "ok"]


def read_run(path: str | Path) -> RunRecords:
    store = RunStore(path)
    config = store.read_config()
    view = run_view(config)
    records = list(store.latest(view.cls.summary_output).values())
    return RunRecords(store.path, config, view, records, store.read_scores())


def metric_names(run: RunRecords) -> dict[str, IntervalMetric]:
    """Every name a headline metric answers to (normalised), first metric first."""
    from toolscore.report.tables import headline

    specs = run.view.interval_metrics(run.ok)
    columns, _ = headline(run.config.get("benchmark"), run.metrics or {})
    names: dict[str, IntervalMetric] = {}
    for m in specs:
        aliases = [m.label, *([m.key] if m.key else []),
                   *([m.numerator] if m.denominator is None else []),
                   *(c.title for c in columns if m.key is not None and c.key == m.key)]
        for alias in aliases:
            names.setdefault(_norm(alias), m)
    return names


def _shown(value: float, bound: float) -> tuple[str, str]:
    """Both numbers with enough decimals to show the bound exactly and tell them apart."""
    digits = 2
    while digits < 6 and float(f"{bound:.{digits}f}") != bound:
        digits += 1
    while digits < 8 and f"{value:.{digits}f}" == f"{bound:.{digits}f}" and value != bound:
        digits += 1
    return f"{value:.{digits}f}", f"{bound:.{digits}f}"


def _published(run: RunRecords, m: IntervalMetric, split: str | None) -> float | None:
    if m.key is None or not run.metrics:
        return None
    for group in ([split] if split is not None else OVERALL_GROUPS):
        row = run.metrics.get(group)
        value = row.get(m.key) if isinstance(row, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) \
                and math.isfinite(value):
            return float(value)
    return None


def check_floors(run: RunRecords, floors: Sequence[Floor]) -> list[GateResult]:
    """Each floor against the run; a one-line ValueError naming the metrics (or splits) there
    are when a floor names none of them, or a rate's bound is not between 0 and 1."""
    if not floors:
        return []
    names = metric_names(run)
    floored = list(dict.fromkeys(m.label for m in names.values() if m.higher_is_better))
    splits = sorted({split_of(r) for r in run.ok})
    out = []
    for f in floors:
        m = names.get(_norm(f.metric))
        if m is None:
            raise ValueError(f"--fail-under {f.spec!r}: no headline metric {f.metric!r} in "
                             f"this run (its metrics: {', '.join(floored) or 'none'})")
        if not m.higher_is_better:
            raise ValueError(f"--fail-under {f.spec!r}: {m.label} counts mistakes (lower is "
                             "better), so a floor on it would pass the worse run (metrics "
                             f"that take a floor: {', '.join(floored) or 'none'})")
        if m.kind == "rate" and not 0.0 <= f.value <= 1.0:
            raise ValueError(f"--fail-under {f.spec!r}: {m.label} is a rate: VALUE is a "
                             "fraction between 0 and 1, or a percentage (e.g. 0.5 or 50%)")
        if f.split is not None and f.split not in splits:
            raise ValueError(f"--fail-under {f.spec!r}: no split {f.split!r} in this run "
                             f"(its splits: {', '.join(splits) or 'none'})")
        records = [r for r in run.ok if f.split is None or split_of(r) == f.split]
        value = _published(run, m, f.split)
        if value is None:
            computed = compute(records, m)
            value = computed if computed is not None and math.isfinite(computed) else None
        name = m.label + (f"@{f.split}" if f.split else "")
        if value is None:
            out.append(GateResult("fail-under", name, "error",
                                  f"fail-under: {name} has no value (no finished sample has "
                                  f"it), floor {_shown(f.value, f.value)[1]}", None, f.value))
            continue
        shown, bound = _shown(value, f.value)
        failed = value < f.value
        out.append(GateResult("fail-under", name, "fail" if failed else "pass",
                              f"fail-under: {name} {shown} {'<' if failed else '>='} {bound}",
                              value, f.value))
    return out


def _targets(result: dict[str, Any], metrics: Sequence[str] | None) -> list[dict[str, Any]]:
    """The comparison rows a regression gate reads: the named ones (``--metric``), else the
    primary (pass/fail) metric's headline row (its per-sample row when the benchmark has no
    headline row for it), else the benchmark's first headline metric."""
    headline, per_sample = result.get("headline") or [], result.get("per_sample") or []
    if metrics:
        covered = {h.get(k) for h in headline for k in ("numerator", "metric", "key")}
        return headline + [r for r in per_sample if r["metric"] not in covered]
    primary = result.get("primary_metric")
    for h in headline:
        if primary is not None and h.get("numerator") == primary and h.get("kind") == "mean":
            return [h]
    for r in per_sample:
        if r["metric"] == primary:
            return [r]
    return headline[:1]


def _p(value: float) -> str:
    return "<0.001" if value < 0.001 else f"{value:.3g}"


def check_regression(result: dict[str, Any], alpha: float,
                     metrics: Sequence[str] | None = None) -> list[GateResult]:
    """B worse than A with the paired test's p below ``alpha``, per metric the gate reads
    (see :func:`_targets`); a metric with no shared finished pair is an "error" result."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"--alpha {alpha}: must be between 0 and 1 (e.g. 0.05)")
    rows = _targets(result, metrics)
    if not rows:
        return [GateResult("fail-on-regression", str(result.get("primary_metric") or "metric"),
                           "error", "fail-on-regression: nothing to compare (the runs share "
                           "no finished sample with a score)")]
    out = []
    for row in rows:
        name = str(row["metric"])
        a = row.get("value_a", row.get("mean_a"))
        b = row.get("value_b", row.get("mean_b"))
        diff, p = row.get("diff"), row.get("p_value")
        if diff is None or a is None or b is None:
            out.append(GateResult("fail-on-regression", name, "error",
                                  f"fail-on-regression: {name}: no shared finished (sample, "
                                  "epoch) with this metric: nothing to compare"))
            continue
        worse = diff > 0 if row.get("higher_is_better") is False else diff < 0
        significant = p is not None and math.isfinite(p) and p < alpha
        failed = worse and significant
        test = row.get("test") or "test"
        verdict = ("significantly worse" if failed else "worse, not significant" if worse
                   else "not worse")
        p_text = "p -" if p is None else f"p {_p(p)}"
        out.append(GateResult(
            "fail-on-regression", name, "fail" if failed else "pass",
            f"fail-on-regression: {name} {a:.4g} -> {b:.4g} (diff {diff:+.4g}), {test} "
            f"{p_text} {'<' if significant else '>='} {alpha:g}: {verdict}", b, alpha, p))
    return out
