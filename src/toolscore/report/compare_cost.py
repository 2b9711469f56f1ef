"""What two compared runs cost, per model role (``toolscore compare``): each run's cost as its
report gives it (every record, cached replies included), and B minus A where both are priced."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

from toolscore.models.prices import Prices, price_table
from toolscore.report.usage import (
    cost,
    format_cost,
    role_models,
    usage_by_model,
    usage_by_role,
)


def run_cost(config: dict[str, Any], records: list[dict[str, Any]], prices: Prices
             ) -> dict[str, Any]:
    """One run's cost document (see :func:`toolscore.report.usage.cost`)."""
    epochs = int(config.get("epochs") or 1)
    models = role_models(config)
    return cost(usage_by_role(records, epochs), models, prices, epochs,
                by_model=usage_by_model(records, models))


def compare_costs(config_a: dict[str, Any], records_a: list[dict[str, Any]],
                  config_b: dict[str, Any], records_b: list[dict[str, Any]],
                  prices: Prices = None) -> dict[str, Any]:
    """``{"a", "b": cost documents, "roles": [{role, a, b, diff, partial}], "total": {...},
    "prices"}``; a side that is unpriced is None (never $0), and so is its difference."""
    table = price_table(prices)
    a = run_cost(config_a, records_a, table)
    b = run_cost(config_b, records_b, table)
    roles = []
    for role in dict.fromkeys([*a["by_role"], *b["by_role"]]):
        ca, cb = a["by_role"].get(role) or {}, b["by_role"].get(role) or {}
        va, vb = ca.get("cost"), cb.get("cost")
        roles.append({"role": role, "model_a": ca.get("model"), "model_b": cb.get("model"),
                      "a": va, "b": vb, "diff": None if va is None or vb is None else vb - va,
                      "partial": bool(ca.get("partial") or cb.get("partial"))})
    ta, tb = a["total"], b["total"]
    return {"a": a, "b": b, "roles": roles,
            "total": {"a": ta, "b": tb, "diff": None if ta is None or tb is None else tb - ta,
                      "partial": not (a["complete"] and b["complete"])},
            "prices": table.describe()}


def cost_comparison_table(cost: dict[str, Any]) -> Table:
    """Cost per model role of A and B, and B - A; "unpriced" where a side has no price."""
    def cell(value: float | None, partial: bool) -> str:
        if value is None:
            return "unpriced"
        return format_cost(value) + (" (partial)" if partial else "")

    table = Table(title="cost per model role (USD, whole runs, cached replies included)",
                  title_justify="left")
    for i, col in enumerate(("role", "model A", "model B", "A", "B", "B - A")):
        table.add_column(col, justify="left" if i < 3 else "right")
    for r in [*cost["roles"], {**cost["total"], "role": "total", "model_a": "", "model_b": ""}]:
        diff = r["diff"]
        table.add_row(escape(str(r["role"])), escape(str(r["model_a"] or "-")),
                      escape(str(r["model_b"] or "-")), cell(r["a"], r["partial"]),
                      cell(r["b"], r["partial"]),
                      "-" if diff is None else ("+" if diff > 0 else "") + f"{diff:.4f}")
    return table


def cost_notes(cost: dict[str, Any]) -> list[str]:
    prices = cost.get("prices") or {}
    lines = [f"prices: {escape(str(prices.get('source')))}"]
    if prices.get("missing"):
        lines.append(f"[yellow]prices:[/yellow] {escape(prices['missing'])}")
    for side in ("a", "b"):
        for u in cost[side]["unpriced"]:
            lines.append(f"[yellow]unpriced:[/yellow] {side.upper()}: {escape(str(u['role']))} "
                         f"model {escape(str(u['model']))} ({u['tokens']} tokens)")
    return lines
