"""Terminal tables of a run's metrics. The columns are the benchmark's own
(``Benchmark.columns`` and ``headline_rows``), so no benchmark's keys are named here."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from toolscore.benchmarks.base import Column


def fmt(value: Any, kind: str = "number") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if kind == "rate" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{100 * value:.1f}%"
    if kind == "count" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def headline(benchmark: str | None, metrics: dict[str, Any]
             ) -> tuple[list[Column], dict[str, dict[str, Any]]]:
    """(columns, rows) of a benchmark's headline table; a benchmark that is not installed
    gets every numeric metric of every group."""
    from toolscore.benchmarks.registry import benchmark_class

    try:
        cls = benchmark_class(str(benchmark))
        rows = cls.headline_rows(metrics)
        columns = list(cls.columns)
    except LookupError:
        rows, columns = {}, []
    if not columns:
        rows = rows or {k: v for k, v in metrics.items() if isinstance(v, dict)}
        keys = dict.fromkeys(k for v in rows.values() for k, x in v.items()
                             if isinstance(x, (int, float)) and not isinstance(x, bool))
        columns = [Column(k, k, "number") for k in keys]
    return columns, rows


def summary_lines(benchmark: str | None, metrics: dict[str, Any]) -> list[str]:
    from toolscore.benchmarks.registry import benchmark_class

    try:
        return benchmark_class(str(benchmark)).summary_lines(metrics)
    except LookupError:
        return []


def metrics_table(title: str, benchmark: str | None, metrics: dict[str, Any],
                  width: int = 80) -> Group:
    """The title, then one row per group (split) of ``scores.json`` and one column per
    benchmark column, or the transpose when only that fits in ``width`` (the terminal).
    Figures are never cut: a column is never narrower than its widest figure; only headers
    and group names may wrap."""
    columns, rows = headline(benchmark, metrics)
    cells = {str(g): [fmt(m.get(c.key), c.kind) for c in columns] for g, m in rows.items()}
    titles = [c.title for c in columns]
    by_metric = [max([len(v[i]) for v in cells.values()] or [1]) for i in range(len(columns))]
    by_group = {g: max([len(x) for x in v] or [1]) for g, v in cells.items()}

    def natural(labels: list[str], heads: list[str], figures: list[int]) -> int:
        return (max([5, *map(len, labels)]) + 4
                + sum(max(len(h), f) + 3 for h, f in zip(heads, figures, strict=True)))

    normal = natural(list(cells), titles, by_metric)
    transposed = natural(titles, list(cells), list(by_group.values()))
    flip = normal > width and (transposed <= width or
                               sum(f + 3 for f in by_group.values()) < sum(by_metric) + 3 * len(
                                   by_metric))
    table = Table(title_justify="left")
    if not flip or not rows:
        table.add_column("group", overflow="fold")
        for c, figure in zip(columns, by_metric, strict=True):
            table.add_column(c.title, justify="right", overflow="fold", min_width=figure)
        for group, values in cells.items():
            table.add_row(escape(group), *values)
    else:
        table.add_column("metric", overflow="fold")
        for group, figure in by_group.items():
            table.add_column(escape(group), justify="right", overflow="fold", min_width=figure)
        for i, c in enumerate(columns):
            table.add_row(escape(c.title), *(values[i] for values in cells.values()))
    return Group(Text(title), table)


def run_title(config: dict[str, Any]) -> str:
    """Who and what produced the numbers: benchmark, model, mode, embedder, judge, user."""
    from toolscore.report.view import run_view

    view = run_view(config)
    bench = config.get("benchmark_config") or {}
    parts = [str(config.get("benchmark")), f"model {config.get('model')}"]
    mode = view.mode()
    if mode:
        parts.append(f"{mode} mode")
    if bench.get("embedder_id") or bench.get("embedder"):
        parts.append(f"embedder {bench.get('embedder_id') or bench.get('embedder')}")
    parts += [f"{role} {who}" for role, who in view.roles().items() if who]
    return " · ".join(parts)


def print_run_summary(console: Console, config: dict[str, Any], metrics: dict[str, Any],
                      summary: dict[str, Any] | None = None) -> None:
    console.print(metrics_table(run_title(config), config.get("benchmark"), metrics,
                                console.width))
    for line in summary_lines(config.get("benchmark"), metrics):
        console.print(line, highlight=False, markup=False)
    errors = metrics.get("errors", 0)
    line = f"errors (excluded from scores): {errors}"
    if summary:
        line += (f" · model calls {summary.get('calls', 0)}"
                 f" (cached {summary.get('cached_calls', 0)})"
                 f" · tokens {summary.get('tokens', 0)} · wall {summary.get('wall_s', 0):.1f}s")
    console.print(line, highlight=False)
