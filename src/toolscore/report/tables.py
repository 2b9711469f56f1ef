"""Terminal tables of a run's metrics (rich)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

# (metric key, column title, is a rate shown as %)
TOOLTALK_COLUMNS = [
    ("conversations", "convs", False),
    ("success_rate", "success", True),
    ("precision", "precision", True),
    ("recall", "recall", True),
    ("action_precision", "action prec.", True),
    ("incorrect_action_rate", "incorrect actions", True),
    ("soft_success", "soft success", True),
]


def _fmt(value: Any, pct: bool) -> str:
    if value is None:
        return "-"
    if pct and isinstance(value, (int, float)):
        return f"{100 * value:.1f}%"
    return str(value)


def metrics_table(title: str, metrics: dict[str, Any]) -> Table:
    """One row per split (every dict-valued entry of ``metrics``)."""
    table = Table(title=title, title_justify="left")
    table.add_column("split")
    splits = {k: v for k, v in metrics.items() if isinstance(v, dict)}
    for _, name, _ in TOOLTALK_COLUMNS:
        table.add_column(name, justify="right")
    for split, m in splits.items():
        table.add_row(split, *(_fmt(m.get(key), pct) for key, _, pct in TOOLTALK_COLUMNS))
    return table


def print_run_summary(console: Console, config: dict[str, Any], metrics: dict[str, Any],
                      summary: dict[str, Any] | None = None) -> None:
    bench = config.get("benchmark_config", {})
    title = (f"{config.get('benchmark')} · model {config.get('model')} · embedder "
             f"{bench.get('embedder_id') or bench.get('embedder')} · "
             f"{'strict' if bench.get('strict') else 'reference'} mode"
             f" · tools {bench.get('tools')}")
    console.print(metrics_table(title, metrics))
    errors = metrics.get("errors", 0)
    line = f"errors (excluded from scores): {errors}"
    if summary:
        line += (f" · model calls {summary.get('calls', 0)}"
                 f" (cached {summary.get('cached_calls', 0)})"
                 f" · tokens {summary.get('tokens', 0)} · wall {summary.get('wall_s', 0):.1f}s")
    console.print(line)
