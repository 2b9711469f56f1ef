"""What a sweep will cost before it runs: units, records, model calls, tokens and money.

Printed by ``toolscore sweep plan``. Each figure says where it comes from, and what is not
known is said, not guessed:

* records: every unit's samples x epochs (after its limit), known exactly;
* model calls: measured on finished runs of the same benchmark and model (calls per record,
  every role: the model under test, a simulated user, a judge), else the benchmark's own count
  when the model does as its reference does (``Benchmark.expected_calls``: ToolTalk and demo
  count a call per assistant turn and per API call), else measured on finished runs of the
  benchmark with other models, else unknown;
* tokens: measured only (input and output per record and role, on finished runs of the same
  benchmark and model, else of the benchmark), else unknown: a prompt's length depends on the
  model's tokenizer and its replies;
* cost: tokens x a price table per model and role, for the units whose tokens are known and
  whose models are priced; "unpriced" without a table.

Finished runs are found through the results index beside the sweep's runs (written as units
finish), so an estimate of a resubmitted or extended plan is read in milliseconds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from toolscore.sweeps.manifest import Manifest, Unit

Rates = dict[str, dict[str, Any]]  # role -> {model, calls, input_tokens, output_tokens} per record
PriceOf = Callable[[str | None], "dict[str, float] | None"]


def measured_rates(runs: list[dict[str, Any]]
                   ) -> tuple[dict[tuple[str, str], Rates], dict[str, Rates]]:
    """Per (benchmark, model) and per benchmark, usage per record by role, from finished runs
    given as ``{benchmark, model, records, usage_by_role, role_models}``."""
    sums: dict[Any, dict[str, dict[str, Any]]] = defaultdict(dict)
    counts: dict[Any, int] = defaultdict(int)
    for run in runs:
        n = int(run.get("records") or 0)
        if n <= 0:
            continue
        for key in ((run["benchmark"], run["model"]), run["benchmark"]):
            counts[key] += n
            for role, use in (run.get("usage_by_role") or {}).items():
                row = sums[key].setdefault(role, {"model": (run.get("role_models") or {}).get(
                    role), "calls": 0.0, "input_tokens": 0.0, "output_tokens": 0.0})
                for k in ("calls", "input_tokens", "output_tokens"):
                    row[k] += float(use.get(k) or 0)
    rates = {key: {role: {**row, **{k: row[k] / counts[key] for k in
                                    ("calls", "input_tokens", "output_tokens")}}
                   for role, row in roles.items()} for key, roles in sums.items()}
    return ({k: v for k, v in rates.items() if isinstance(k, tuple)},
            {k: v for k, v in rates.items() if isinstance(k, str)})


def _unit_rates(unit: Unit, by_model: dict[tuple[str, str], Rates],
                by_bench: dict[str, Rates]) -> tuple[Rates | None, str]:
    if (unit.benchmark, unit.model) in by_model:
        return by_model[unit.benchmark, unit.model], "measured"
    if unit.benchmark in by_bench:
        mine = {role: {**row, "model": unit.model if role == "assistant" else row["model"]}
                for role, row in by_bench[unit.benchmark].items()}
        return mine, "measured on other models"
    return None, "unknown"


def estimate(manifest: Manifest, runs: list[dict[str, Any]] | None = None,
             price_of: PriceOf | None = None) -> dict[str, Any]:
    """The sweep's estimate (see the module); ``runs`` are finished runs to measure usage on,
    ``price_of`` gives a model's price (per million input and output tokens) or None."""
    by_model, by_bench = measured_rates(runs or [])
    calls = 0.0
    tokens = {"input": 0.0, "output": 0.0}
    cost = 0.0
    sources: dict[str, dict[str, int]] = {"calls": defaultdict(int), "tokens": defaultdict(int)}
    unpriced: set[str] = set()
    priced_units = 0
    for unit in manifest.units:
        rates, how = _unit_rates(unit, by_model, by_bench)
        if how == "measured" and rates is not None:
            calls += unit.samples * sum(r["calls"] for r in rates.values())
            sources["calls"]["measured"] += 1
        elif unit.expected_calls is not None:
            calls += unit.expected_calls
            sources["calls"]["the benchmark's reference"] += 1
        elif rates is not None:
            calls += unit.samples * sum(r["calls"] for r in rates.values())
            sources["calls"][how] += 1
        else:
            sources["calls"]["unknown"] += 1
        sources["tokens"][how] += 1
        if rates is None:
            continue
        unit_cost, complete = 0.0, True
        for row in rates.values():
            tokens["input"] += unit.samples * row["input_tokens"]
            tokens["output"] += unit.samples * row["output_tokens"]
            price = price_of(row["model"]) if price_of is not None else None
            if price is None:
                complete = False
                unpriced.add(str(row["model"]))
                continue
            unit_cost += unit.samples * (row["input_tokens"] * price["input_per_mtok"]
                                         + row["output_tokens"] * price["output_per_mtok"]) / 1e6
        if complete:
            priced_units += 1
            cost += unit_cost
    known_tokens = len(manifest.units) - sources["tokens"].get("unknown", 0)
    return {
        "units": len(manifest.units), "records": sum(u.samples for u in manifest.units),
        "calls": {"value": round(calls) if sources["calls"].get("unknown", 0) < len(
            manifest.units) else None, "sources": dict(sources["calls"])},
        "tokens": {"input": round(tokens["input"]) if known_tokens else None,
                   "output": round(tokens["output"]) if known_tokens else None,
                   "sources": dict(sources["tokens"])},
        "cost": None if price_of is None else {
            "value": cost if priced_units else None, "units_priced": priced_units,
            "unpriced_models": sorted(unpriced)},
        "keys": sorted({u.api_key_env for u in manifest.units if u.api_key_env}),
    }


def estimate_lines(doc: dict[str, Any], key_set: Callable[[str], bool]) -> list[str]:
    """The estimate as ``sweep plan`` prints it."""
    units = doc["units"]

    def parts(sources: dict[str, int]) -> str:
        return "; ".join(f"{n:,} of {units:,} units {how}" for how, n in sources.items())

    calls, tokens, cost = doc["calls"], doc["tokens"], doc["cost"]
    lines = [f"estimate: {units:,} units, {doc['records']:,} records (sample x epoch)",
             f"  model calls: {_count(calls['value'])} ({parts(calls['sources'])})",
             f"  tokens: {_count(tokens['input'])} in, {_count(tokens['output'])} out "
             f"({parts(tokens['sources'])})"]
    if cost is None:
        lines.append("  cost: unpriced (no price table: toolscore data prices, or --prices "
                     "FILE)")
    elif cost["value"] is None:
        lines.append("  cost: unknown (no unit has both measured tokens and priced models)")
    else:
        rest = units - cost["units_priced"]
        lines.append(f"  cost: {cost['value']:,.2f} for {cost['units_priced']:,} units"
                     + (f"; {rest:,} units unpriced or without measured tokens" if rest else "")
                     + (f" (no price: {', '.join(cost['unpriced_models'])})"
                        if cost["unpriced_models"] else ""))
    missing = [k for k in doc["keys"] if not key_set(k)]
    if missing:
        lines.append(f"  keys: {', '.join(missing)} not set here (needed where the units run)")
    return lines


def _count(value: float | None) -> str:
    if value is None:
        return "unknown"
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"~{value / size:.1f}{unit}"
    return f"~{value:,.0f}"
