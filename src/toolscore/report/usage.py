"""Tokens and cost per model role (assistant, user agent, judge) for ``toolscore report``.

Records written since the runner kept a per-role ledger carry ``usage_by_role``; older ones
carry only ``usage`` (the assistant's tokens) and, for AutoDE dialogues, the user agent's tokens
in ``output.user_usage``, which are read as the "user" role. Cost comes only from a price table
the user supplies (``--prices FILE``): a model missing from it is listed as unpriced, never
estimated. Costs cover every token the run used, replies served from the response cache
included, i.e. what the run costs without a cache; ``cached_calls`` says how many those were.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from toolscore.data import read_structured

KEYS = ("input_tokens", "output_tokens", "calls", "cached_calls", "reasoning_tokens")
PRICE_KEYS = ("input_per_mtok", "output_per_mtok")


def record_roles(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The record's usage per role, for new and old records alike."""
    split = record.get("usage_by_role")
    if isinstance(split, dict):
        return {str(role): u for role, u in split.items() if isinstance(u, dict)}
    roles = {"assistant": record.get("usage") or {}}
    user = (record.get("output") or {}).get("user_usage") if isinstance(
        record.get("output"), dict) else None
    if isinstance(user, dict):
        roles["user"] = user
    return roles


def usage_by_role(records: list[dict[str, Any]], epochs: int) -> dict[str, dict[str, Any]]:
    """``{role: {input_tokens, output_tokens, calls, cached_calls, reasoning_tokens, tokens,
    tokens_per_run}}`` (``reasoning_tokens``: the part of the output tokens a reasoning model
    spent reasoning, where its endpoint says it)."""
    out: dict[str, dict[str, Any]] = {}
    for r in records:
        for role, u in record_roles(r).items():
            totals = out.setdefault(role, dict.fromkeys(KEYS, 0))
            for key in KEYS:
                totals[key] += int(u.get(key) or 0)
    for totals in out.values():
        totals["tokens"] = totals["input_tokens"] + totals["output_tokens"]
        totals["tokens_per_run"] = totals["tokens"] / max(epochs, 1)
    order = {"assistant": 0, "user": 1, "judge": 2}
    return dict(sorted(out.items(), key=lambda kv: (order.get(kv[0], 3), kv[0])))


def reasoning_note(usage: dict[str, Any]) -> str:
    """", R reasoning" for usage with reasoning tokens, "" otherwise (what follows the output
    tokens wherever they are shown)."""
    count = int(usage.get("reasoning_tokens") or 0)
    return f", {count} reasoning" if count else ""


def role_models(config: dict[str, Any]) -> dict[str, str | None]:
    """Which model played each role, from ``run.json``."""
    bench = config.get("benchmark_config") or {}
    assistant = config.get("model")
    user = bench.get("user_model")
    if user == "same as assistant":
        user = assistant
    judge = bench.get("judge_model") or bench.get("judge_id") or bench.get("judge") \
        or config.get("judge")
    return {"assistant": assistant, "user": user,
            "judge": judge if isinstance(judge, str) else None}


def load_prices(path: str | Path) -> dict[str, dict[str, float]]:
    """A price table: ``{"provider/model" or "model": {"input_per_mtok", "output_per_mtok"}}``
    in USD (or any one currency) per million tokens, from JSON or YAML."""
    p = Path(path)
    table = read_structured(p)
    if not isinstance(table, dict):
        raise ValueError(f"{p}: expected a mapping of model name to prices")
    out: dict[str, dict[str, float]] = {}
    for model, entry in table.items():
        if not isinstance(entry, dict):
            raise ValueError(f"{p}: {model!r}: expected {{input_per_mtok, output_per_mtok}}")
        prices = {}
        for key in PRICE_KEYS:
            value = entry.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or value < 0:
                raise ValueError(f"{p}: {model!r}: {key} must be a number >= 0, got {value!r}")
            prices[key] = float(value)
        out[str(model)] = prices
    return out


def price_of(model: str | None, prices: dict[str, dict[str, float]]
             ) -> dict[str, float] | None:
    """The exact ``provider/model`` entry, else the bare model name's; None if neither."""
    if not model:
        return None
    if model in prices:
        return prices[model]
    bare = model.split("/", 1)[1] if "/" in model else None
    return prices.get(bare) if bare else None


def cost(usage: dict[str, dict[str, Any]], models: dict[str, str | None],
         prices: dict[str, dict[str, float]], epochs: int) -> dict[str, Any]:
    """Cost per role and in total; roles whose model has no price are listed in ``unpriced``
    and left out of the total (``complete`` is False then)."""
    by_role: dict[str, Any] = {}
    unpriced: list[dict[str, Any]] = []
    total = 0.0
    for role, u in usage.items():
        model = models.get(role)
        price = price_of(model, prices)
        if price is None:
            by_role[role] = {"model": model, "priced": False, "cost": None}
            unpriced.append({"role": role, "model": model, "tokens": u["tokens"]})
            continue
        c_in = u["input_tokens"] * price["input_per_mtok"] / 1e6
        c_out = u["output_tokens"] * price["output_per_mtok"] / 1e6
        by_role[role] = {"model": model, "priced": True, "input_cost": c_in,
                         "output_cost": c_out, "cost": c_in + c_out,
                         "cost_per_run": (c_in + c_out) / max(epochs, 1), **price}
        total += c_in + c_out
    return {"by_role": by_role, "total": total, "total_per_run": total / max(epochs, 1),
            "complete": not unpriced, "unpriced": unpriced,
            "includes_cached": True}


def format_cost(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.4f}" if value < 1 else f"{value:.2f}"
