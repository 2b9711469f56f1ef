"""How an AutoDE run reads in a report: intervals on its slot scores, where the misses are
(per API, per way a dialogue ended) and each dialogue with the call it ended in.

The published figure is the per-trial macro mean of per-case precision/recall/F1, averaged over
trials; with every case in every trial that is the mean over records, which is what the
intervals resample (whole user scripts, all their trials together). The supplementary views
and analyses keep the names they have in ``scores.json``. AutoDE publishes no pass/fail
score; the report's pass/fail (for pass@k, flips and the "failed" filter) is ``exact_match``,
the call with every slot right, and is labelled as such.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from toolscore.benchmarks.autode.aggregate import _pm, questions_line
from toolscore.benchmarks.base import Breakdown, Column, IntervalMetric, ReportView

INTERVAL_METRICS = [
    IntervalMetric("precision", "precision"),
    IntervalMetric("recall", "recall"),
    IntervalMetric("F1", "f1"),
    IntervalMetric("exact match (supplementary)", "exact_match"),
    IntervalMetric("call rate (supplementary)", "called"),
    IntervalMetric("API accuracy (supplementary)", "api_correct"),
    IntervalMetric("redundant questions (analysis)", "redundant_questions", "questions"),
]


def _api(record: dict[str, Any]) -> str:
    return str((record.get("meta") or {}).get("api")
               or (record.get("output") or {}).get("api") or "?")


def _mean(values: list[Any]) -> float | None:
    return float(np.mean(values)) if values else None


def breakdowns(records: list[dict[str, Any]]) -> list[Breakdown]:
    """Per API (which APIs the assistant gets wrong) and per ending (how dialogues stop)."""
    by_api: dict[str, list[dict[str, Any]]] = defaultdict(list)
    endings: dict[str, int] = defaultdict(int)
    ok = [r for r in records if r.get("status") == "ok"]
    for r in ok:
        by_api[_api(r)].append(r["scores"] or {})
        endings[str((r.get("scores") or {}).get("ending") or "?")] += 1
    api_rows = [{"api": api, "records": len(s),
                 "f1": _mean([x.get("f1", 0.0) for x in s]),
                 "exact_match": _mean([bool(x.get("exact_match")) for x in s]),
                 "called": _mean([bool(x.get("called")) for x in s]),
                 "api_correct": _mean([bool(x.get("api_correct")) for x in s])}
                for api, s in sorted(by_api.items())]
    api_rows.sort(key=lambda x: (x["f1"] if x["f1"] is not None else 2.0, x["api"]))
    ending_rows = [{"ending": e, "records": n, "share": n / len(ok)}
                   for e, n in sorted(endings.items(), key=lambda kv: -kv[1])]
    return [
        Breakdown("Per API", [Column("api", "API", "number"),
                              Column("records", "records", "count"), Column("f1", "F1"),
                              Column("exact_match", "exact match"),
                              Column("called", "called"),
                              Column("api_correct", "right API")], api_rows,
                  note="mean over the API's (script, trial) records, worst F1 first"),
        Breakdown("Endings", [Column("ending", "ending", "number"),
                              Column("records", "records", "count"), Column("share", "share")],
                  ending_rows, note="how the dialogues stopped"),
    ]


def facets(record: dict[str, Any]) -> dict[str, list[str]]:
    ending = (record.get("scores") or {}).get("ending")
    if record.get("status") != "ok":
        ending = "infrastructure error"
    return {"API": [_api(record)], "ending": [str(ending)] if ending else []}


def record_view(record: dict[str, Any]) -> dict[str, Any]:
    """The dialogue as messages, ending in the call the assistant made (if any)."""
    out = record.get("output") or {}
    scores = record.get("scores") or {}
    messages: list[dict[str, Any]] = [
        {"role": str(t.get("role", "")).lower(), "content": t.get("message")}
        for t in out.get("content") or []]
    if out.get("called_api"):
        messages.append({"role": "assistant", "content": out.get("text"),
                         "tool_calls": [{"function": {"name": out["called_api"],
                                                      "arguments": out.get("arguments")}}]})
    summary = f"F1 {scores['f1']:.2f}" if isinstance(scores.get("f1"), (int, float)) else ""
    ending = scores.get("ending") or (out.get("reason") or "").split(":")[0]
    tone = "ok" if out.get("state") == "success" else "bad"
    section = {"title": "call", "tags": [{"text": ending, "tone": tone}] if ending else [],
               "columns": ["expected API", "called", "scored slots", "reason"],
               "rows": [[out.get("api"), {"text": out.get("called_api") or "(none)",
                                          "tone": "ok" if scores.get("api_correct") else "bad"},
                         {"json": out.get("slots") or {}}, out.get("reason") or ""]]}
    details = {"user script background": out["background"]} if out.get("background") else {}
    if out.get("user"):
        details["user simulator"] = out["user"]
    return {"summary": summary, "messages": messages, "details": details,
            "tags": [str(ending)] if ending else [], "sections": [section]}


class AutoDEView(ReportView):
    """AutoDE's report view: how its records read (the benchmark is its run contract and
    this)."""

    @classmethod
    def primary_metric(cls, records: list[dict[str, Any]]) -> str | None:
        return "exact_match"

    @classmethod
    def interval_metrics(cls, records: list[dict[str, Any]]) -> list[IntervalMetric]:
        return list(INTERVAL_METRICS)

    def breakdowns(self, records: list[dict[str, Any]]) -> list[Breakdown]:
        return breakdowns(records)

    def record_facets(self, record: dict[str, Any]) -> dict[str, list[str]]:
        return facets(record)

    def record_view(self, record: dict[str, Any]) -> dict[str, Any]:
        return record_view(record)

    @classmethod
    def headline_rows(cls, metrics: dict[str, Any]) -> dict[str, dict[str, Any]]:
        if "exact" not in metrics:
            return {}
        return {"published": {"n_cases": metrics.get("n_cases"),
                              "n_trials": metrics.get("n_trials"), **metrics["exact"]},
                "normalised (supplementary)": metrics["supplementary"]["normalised"]}

    @classmethod
    def summary_lines(cls, metrics: dict[str, Any]) -> list[str]:
        if "exact" not in metrics:
            return []
        sup, ana = metrics["supplementary"], metrics["analyses"]
        halluc = ana["hallucinated_parameter_rate_successful"]
        lines = [f"supplementary: normalised {_pm(sup['normalised'])} · exact match "
                 f"{sup['exact_match_rate']:.2%} · call rate {sup['call_rate']:.2%} · API "
                 f"accuracy {sup['api_accuracy']:.2%}",
                 f"analyses: refusal rate {ana['refusal_rate']:.2%} · hallucinated "
                 f"parameters {'-' if halluc is None else f'{halluc:.2%}'} · mean dialogue "
                 f"length {ana['mean_dialogue_length']:.2f} · endings {metrics['endings']}"]
        if ana.get("questions") is not None:
            lines.append("redundant questions (asked for a value already given): "
                         + questions_line(ana))
        return lines
