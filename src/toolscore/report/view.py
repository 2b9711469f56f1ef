"""The benchmark behind a run directory, as a report needs it, so that no report module ever
names a benchmark's keys: the benchmark says which score is pass/fail, how its headline
metrics are computed from per-record scores, where misses are, how a record reads and what
its scoring mode is called.

A report reads stored records, never the benchmark's data, so the benchmark is rebuilt from
``run.json`` with its own ``create`` and the stored options, without looking its dataset up
(a run copied to another machine still reports). A benchmark that is not installed, or cannot
be rebuilt, gets the generic behaviour of :class:`~toolscore.benchmarks.base.Benchmark`, and
the report says so (``note``) instead of failing: a report is how one finds out what went
wrong, so it must not be the thing that breaks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolscore.benchmarks.base import (
    Benchmark,
    Breakdown,
    IntervalMetric,
)
from toolscore.entrypoints import one_line
from toolscore.report.usage import role_models

# How a mode label says that a run sends sampling fields its reference does not send.
DEVIATING = "deviating sampling"


@dataclass
class RunView:
    """One run's benchmark: ``cls`` its class (``Benchmark`` when not installed), ``bench`` an
    instance rebuilt from run.json (a bare ``Benchmark`` when that failed) and ``note`` why
    the view is generic, if it is."""

    config: dict[str, Any]
    cls: type[Benchmark]
    bench: Benchmark
    rebuilt: bool
    note: str | None = None

    @property
    def name(self) -> str:
        return str(self.config.get("benchmark"))

    # -- statistics (class level: right even when the benchmark could not be rebuilt) --------
    def primary_metric(self, records: list[dict[str, Any]]) -> str | None:
        return self.cls.primary_metric(records)

    def interval_metrics(self, records: list[dict[str, Any]]) -> list[IntervalMetric]:
        return list(self.cls.interval_metrics(records))

    # -- reading records (instance level, guarded) -------------------------------------------
    def breakdowns(self, records: list[dict[str, Any]]) -> list[Breakdown]:
        try:
            return list(self.bench.breakdowns(records))
        except Exception as e:  # a third-party hook must not take the whole report down
            self.note = f"{self.name}: breakdowns failed: {type(e).__name__}: {one_line(e)}"
            return []

    def record_view(self, record: dict[str, Any]) -> dict[str, Any]:
        """The benchmark's view of one record; ``{"view_error": ...}`` if its hook raised."""
        try:
            view = self.bench.record_view(record)
            return view if isinstance(view, dict) else {}
        except Exception as e:
            return {"view_error": f"{type(e).__name__}: {one_line(e)}"}

    def record_facets(self, record: dict[str, Any]) -> dict[str, list[str]]:
        try:
            facets = self.bench.record_facets(record) or {}
        except Exception:
            return {}
        return {str(k): [str(v) for v in vs] for k, vs in facets.items()}

    # -- labels ------------------------------------------------------------------------------
    def mode(self) -> str | None:
        """The scoring mode as the benchmark names it (``mode_label``); from run.json when the
        benchmark could not be rebuilt, None when nothing says. A run whose run.json names a
        protocol other than the reference one (``free-running``: an agent running its own
        loop) always carries that name, whatever the benchmark's label says, since its
        figures are not comparable with the reference protocol's."""
        label = self._label()
        protocol = self.protocol()
        deviation = self.sampling_deviation()
        if deviation and label and DEVIATING in label:
            label = label.replace(DEVIATING, deviation)
        elif deviation:
            label = f"{label}, {deviation}" if label else deviation
        if protocol and protocol not in (label or ""):
            return f"{protocol}, {label}" if label else protocol
        return label

    def sampling_deviation(self) -> str | None:
        """A run whose benchmark sends the reference's sampling fields (run.json's
        ``sampling`` says "as the reference..." or "deviates from the reference...") but
        whose model arguments set one sends what the reference does not: the report says
        so, naming them (the benchmark's own label knows only its options)."""
        stored = self.config.get("benchmark_config") or {}
        if not str(stored.get("sampling") or "").startswith(("as the reference",
                                                              "deviates from the reference")):
            return None
        args = self.config.get("model_args") or {}
        sent = [f"{k}={args[k]}" for k in ("temperature", "max_tokens", "seed", "top_p")
                if args.get(k) is not None]
        return f"{DEVIATING} (model arguments {', '.join(sent)})" if sent else None

    def protocol(self) -> str | None:
        """The protocol run.json names (None: the benchmark's reference protocol)."""
        stored = self.config.get("benchmark_config") or {}
        value = stored.get("protocol") or (self.config.get("options") or {}).get("protocol")
        return None if value in (None, "reference") else str(value)

    def _label(self) -> str | None:
        if self.rebuilt:
            try:
                return self.bench.mode_label()
            except Exception:  # noqa: S110 - fall back to what run.json says
                pass
        stored = self.config.get("benchmark_config") or {}
        if stored.get("mode"):
            return str(stored["mode"])
        if isinstance(stored.get("strict"), bool):  # modes: docs/design.md
            return "strict" if stored["strict"] else "reference"
        return None

    def roles(self) -> dict[str, str | None]:
        """Who played which part besides the assistant: the judge and the user (a model, or
        "human"), where the run has them."""
        models = role_models(self.config)
        stored = self.config.get("benchmark_config") or {}
        user = models.get("user") or (str(stored["user"]) if stored.get("user") else None)
        return {"judge": models.get("judge"), "user": user}


def run_view(config: dict[str, Any]) -> RunView:
    """The view of the run whose ``run.json`` is ``config`` (never raises)."""
    from toolscore.benchmarks.registry import benchmark_class, benchmark_from_run

    name = str(config.get("benchmark"))
    try:
        cls = benchmark_class(name)
    except LookupError as e:
        return RunView(config, Benchmark, Benchmark(), False,
                       f"shown generically: {one_line(e)}")
    try:
        return RunView(config, cls, benchmark_from_run(config), True)
    except Exception as e:  # missing data folder, changed options, a broken constructor
        return RunView(config, cls, Benchmark(), False,
                       f"records shown generically: benchmark {name!r} could not be rebuilt "
                       f"from run.json ({type(e).__name__}: {one_line(e)})")
