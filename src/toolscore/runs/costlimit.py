"""``--cost-limit USD``: a run that stops once its model calls have cost that much.

What counts: the calls this command makes (the run's earlier sessions are paid already; a reply
served from the response cache costs nothing now), priced per model by the pinned price table
and a user's ``--prices`` file over it (:mod:`toolscore.models.prices`), every role alike:
the assistant, a simulated user, a judge. Every model a role is known to use must be priced
before anything runs; otherwise the limit could not be kept, and that is a one-line error. A
call of a model found unpriced only during the run stops it the same way as the limit.

How it stops: once the spend reaches the limit, no further sample starts; the samples in
flight finish and are stored (their calls were paid for), so the spend can pass the limit by
what those cost. The run then ends as a stopped run does: one line saying what was kept and
the command that resumes it (``toolscore run NAME --resume DIR``, with or without a new
limit), exit 3. With ``--workers N`` each worker process keeps to a share of the limit
(limit / N).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.models.prices import PriceTable, judge_config_model, price_table, role_models
from toolscore.types import Usage


def parse_cost_limit(value: Any) -> float | None:
    """``--cost-limit`` as a positive number of US dollars (one line if not)."""
    if value is None:
        return None
    try:
        limit = float(str(value).strip().lstrip("$"))
    except ValueError:
        limit = float("nan")
    if not limit > 0 or limit == float("inf"):
        raise ValueError(f"--cost-limit {value}: expected an amount in US dollars above 0, "
                         "e.g. 5 or 0.50")
    return limit


def format_usd(value: float) -> str:
    return f"${value:.2f}" if value >= 1 else f"${value:.4f}".rstrip("0").rstrip(".")


@dataclass
class CostGuard:
    """The spend of this command's calls against ``limit`` (see the module)."""

    limit: float
    table: PriceTable
    spent: float = 0.0
    unmetered: str | None = None  # a model called during the run that has no price
    calls: int = field(default=0)
    parts: int = 1  # worker processes sharing the limit, each keeping to limit / parts

    @property
    def reached(self) -> bool:
        return self.unmetered is not None or self.spent >= self.limit / self.parts

    def __call__(self, role: str, model: str | None, usage: Usage) -> None:
        if usage.cached_calls:  # served from the response cache: nothing paid now
            return
        price = self.table.price_of(model)
        if price is None:
            if self.unmetered is None:
                self.unmetered = f"{role} model {model or '(unnamed)'}"
            return
        self.calls += 1
        self.spent += price.cost(usage.to_dict())

    def reason(self) -> str:
        if self.unmetered is not None:
            return (f"cost limit {format_usd(self.limit)} cannot be kept: the {self.unmetered} "
                    f"is not in the price table ({self.table.source}); spent "
                    f"{format_usd(self.spent)} so far")
        share = ("" if self.parts == 1 else f"{self.parts} workers each keeping to "
                 f"{format_usd(self.limit / self.parts)}, one ")
        return (f"cost limit {format_usd(self.limit)} reached ({share}spent "
                f"{format_usd(self.spent)} on {self.calls} model calls; prices: "
                f"{self.table.source})")


def cost_guard(limit: float | None, prices: str | Path | None, models: dict[str, str | None],
               ) -> CostGuard | None:
    """The guard of a run with a cost limit, after checking that every model it names is
    priced (a one-line ValueError naming the first that is not, and how to price it). The
    pinned table is downloaded here on first need."""
    if limit is None:
        return None
    table = price_table(prices, download=True)
    for role, model in models.items():
        if model is not None and table.price_of(model) is None:
            how = table.missing or f"prices: {table.source}"
            raise ValueError(f"--cost-limit: the {role} model {model} has no price, so the "
                             f"limit cannot be kept ({how}; a --prices FILE can give it one)")
    return CostGuard(limit=limit, table=table)


def run_models(model: str, benchmark_config: dict[str, Any]) -> dict[str, str | None]:
    """The models a run names, per role: the assistant, the user's and a judge's model when
    the benchmark states one (a judge named by its kind or configuration is checked when it
    calls its model). None for a run without a model."""
    from toolscore.runs.identity import NO_MODEL

    models = role_models({"model": model, "benchmark_config": benchmark_config})
    if not (benchmark_config.get("judge_model") or judge_config_model(benchmark_config)):
        models.pop("judge", None)
    return {r: m for r, m in models.items() if m is not None and m != NO_MODEL}
