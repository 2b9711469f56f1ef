"""Tokens and cost per model role (assistant, user agent, judge) for ``toolscore report``.

Records written since the runner kept a per-role ledger carry ``usage_by_role``; older ones
carry only ``usage`` (the assistant's tokens) and, for AutoDE dialogues, the user agent's tokens
in ``output.user_usage``, which are read as the "user" role. Cost comes from the pinned price
table (:mod:`toolscore.models.prices`) and a user's ``--prices FILE`` over it: a model missing
from both is listed as unpriced, never estimated. Costs cover every token the run used, replies
served from the response cache included, i.e. what the run costs without a cache;
``cached_calls`` says how many those were.
"""

from __future__ import annotations

from typing import Any

from toolscore.models.prices import (
    Price,
    PriceTable,
    load_prices,
    price_table,
    role_models,
)

KEYS = ("input_tokens", "output_tokens", "calls", "cached_calls", "reasoning_tokens")
COST_KEYS = (*KEYS, "cached_input_tokens")
__all__ = ["cost", "cost_lines", "format_cost", "load_prices", "price_of", "reasoning_note",
           "record_roles", "role_models", "usage_by_model", "usage_by_role"]


def price_of(model: str | None, prices: dict[str, dict[str, float]]
             ) -> dict[str, float] | None:
    """A user's price entry for ``model``: its exact ``provider/model`` entry, else the bare
    model name's; None if neither."""
    price = PriceTable(overrides=prices).price_of(model)
    return None if price is None else price.to_dict()


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


def usage_by_model(records: list[dict[str, Any]], models: dict[str, str | None]
                   ) -> dict[str, dict[str | None, dict[str, Any]]]:
    """``{role: {model: usage}}``: each role's tokens split by the model that served them
    (the record's own ``model``/``models`` of the role, else the role's model in run.json)."""
    out: dict[str, dict[str | None, dict[str, Any]]] = {}
    for r in records:
        for role, u in record_roles(r).items():
            parts = u.get("models")
            pairs = (list(parts.items()) if isinstance(parts, dict) and parts
                     else [(u.get("model") or models.get(role), u)])
            for model, used in pairs:
                if not isinstance(used, dict):
                    continue
                totals = out.setdefault(role, {}).setdefault(
                    None if model is None else str(model), dict.fromkeys(COST_KEYS, 0))
                for key in COST_KEYS:
                    totals[key] += int(used.get(key) or 0)
    return out


def reasoning_note(usage: dict[str, Any]) -> str:
    """", R reasoning" for usage with reasoning tokens, "" otherwise (what follows the output
    tokens wherever they are shown)."""
    count = int(usage.get("reasoning_tokens") or 0)
    return f", {count} reasoning" if count else ""


def cost(usage: dict[str, dict[str, Any]], models: dict[str, str | None],
         prices: PriceTable | dict[str, dict[str, float]] | None, epochs: int,
         by_model: dict[str, dict[str | None, dict[str, Any]]] | None = None
         ) -> dict[str, Any]:
    """Cost per role and in total. A model that the prices do not know is listed in
    ``unpriced`` and left out of the totals (``complete`` is False then); a role none of
    whose tokens are priced has ``cost`` None ("unpriced", never $0), one with some of them
    priced is ``partial``. ``prices`` says where the prices come from (and, when the pinned
    table is not here, how to get it)."""
    table = price_table(prices)
    if by_model is None:
        by_model = {role: {models.get(role): u} for role, u in usage.items()}
    by_role: dict[str, Any] = {}
    unpriced: list[dict[str, Any]] = []
    total = 0.0
    any_priced = False
    for role in usage:
        parts = by_model.get(role) or {models.get(role): usage[role]}
        c_in = c_out = 0.0
        priced: list[tuple[str | None, Price]] = []
        missing: list[str | None] = []
        for model, u in parts.items():
            price = table.price_of(model)
            if price is None:
                missing.append(model)
                unpriced.append({"role": role, "model": model,
                                 "tokens": int(u.get("input_tokens") or 0)
                                 + int(u.get("output_tokens") or 0)})
                continue
            priced.append((model, price))
            part_in, part_out = price.split(u)
            c_in, c_out = c_in + part_in, c_out + part_out
        role_model = models.get(role) if len(parts) != 1 else next(iter(parts))
        if not priced:
            by_role[role] = {"model": role_model, "priced": False, "cost": None}
            continue
        any_priced = True
        entry: dict[str, Any] = {"model": role_model, "priced": True, "input_cost": c_in,
                                 "output_cost": c_out, "cost": c_in + c_out,
                                 "cost_per_run": (c_in + c_out) / max(epochs, 1)}
        if len(parts) == 1:
            entry.update(priced[0][1].to_dict())
        if missing:
            entry.update(partial=True, unpriced_models=missing)
        by_role[role] = entry
        total += c_in + c_out
    return {"by_role": by_role, "total": total if any_priced or not usage else None,
            "total_per_run": total / max(epochs, 1) if any_priced or not usage else None,
            "complete": not unpriced, "unpriced": unpriced,
            "includes_cached": True, "prices": table.describe()}


def cost_lines(cost: dict[str, Any], *, markup: bool = False) -> list[str]:
    """What a text report says under its table of roles: the total (or that nothing is
    priced), where the prices come from and their date, how to get the table when it is not
    here, and each model left out."""
    def esc(text: Any) -> str:
        return str(text).replace("[", "\\[") if markup else str(text)

    def tag(word: str) -> str:
        return f"[yellow]{word}:[/yellow]" if markup else f"{word}:"

    prices = cost.get("prices") or {}
    source = f" · prices: {esc(prices['source'])}" if prices.get("source") else ""
    if cost.get("total") is None:
        lines = [f"cost unpriced (no model of this run has a price){source}"]
    else:
        lines = [f"cost total {format_cost(cost['total'])} · per run (epoch) "
                 f"{format_cost(cost['total_per_run'])} (all tokens, cached replies included"
                 + ("" if cost.get("complete", True) else "; partial: unpriced models left out")
                 + f"){source}"]
    if prices.get("missing"):
        lines.append(f"{tag('prices')} {esc(prices['missing'])}")
    for u in cost.get("unpriced") or []:
        lines.append(f"{tag('unpriced')} {esc(u['role'])} model {esc(u['model'])} is not in the "
                     f"price table ({u['tokens']} tokens left out of the total)")
    return lines


def format_cost(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.4f}" if value < 1 else f"{value:.2f}"
