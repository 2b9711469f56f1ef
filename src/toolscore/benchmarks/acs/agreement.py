"""ACS's metrics over a run's records: how well the judge under test agrees with the humans.

Accuracy alone hides what the ACS paper reports (judges skewed towards "satisfied"), so the
document holds every metric of :func:`~toolscore.stats.classification.classification_report`
(coverage, accuracy, accuracy counting abstentions as wrong, balanced accuracy, accuracy on
each human label, predicted-satisfied rate, Cohen's kappa), overall and per group (domain or
constraint kind), each with a bootstrap interval that resamples whole requests: the 3-6
constraints of one request are judged against one shared response, so they are not independent.

Records whose infrastructure failed are counted and left out; an abstention (no readable
verdict, or tied votes) stays in and lowers coverage and ``accuracy_all``. The document is the
one ``toolscore judge-agreement --json`` prints, so a run's ``scores.json`` and that command
agree to the byte.
"""

from __future__ import annotations

import math
from typing import Any

from toolscore.benchmarks.base import Column
from toolscore.stats.classification import classification_report

GROUPS = ("domain", "kind", "none")
COLUMNS = [
    Column("n", "n", "count"),
    Column("coverage", "cov"),
    Column("accuracy", "acc"),
    Column("accuracy_all", "acc_all"),
    Column("balanced_accuracy", "bal_acc"),
    Column("accuracy_pos", "acc_sat"),
    Column("accuracy_neg", "acc_unsat"),
    Column("predicted_pos_rate", "pred_sat"),
    Column("kappa", "kappa", "number"),
]
CAVEAT = ("acs-verify's rules were written while reading acs_dev.csv, so its agreement on those "
          "rows is optimistic; the requests held out of that file are the fair test")


def finite(value: Any) -> Any:
    """nan and inf (an undefined statistic) as None, so scores.json is valid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def summarise(records: list[dict[str, Any]], *, judge: str, group: str, shots: int, votes: int,
              resamples: int, seed: int, judge_config: dict[str, Any] | None = None
              ) -> dict[str, Any]:
    """The agreement document over ``records`` (in dataset order: the bootstrap resamples
    requests in their order of appearance, so the order is part of the result)."""
    if group not in GROUPS:
        raise ValueError(f"group: expected one of {', '.join(GROUPS)}, got {group!r}")
    scored = [r for r in records if r.get("status") == "ok"]
    meta = [r.get("meta") or {} for r in scored]
    rep = classification_report(
        [r["scores"]["human"] for r in scored], [r["scores"]["label"] for r in scored],
        groups=None if group == "none" else [str(m.get(group, "")) for m in meta],
        clusters=[m.get("request", r["id"]) for m, r in zip(meta, scored, strict=True)],
        n_resamples=resamples, seed=seed)
    n = len(scored)
    doc: dict[str, Any] = {
        "judge": judge, "shots": shots, "votes": votes, "group": group, "rows": len(records),
        "requests": len({(r.get("meta") or {}).get("request", r["id"]) for r in records}),
        "errors": len(records) - n,
        "abstentions": sum(r["scores"]["label"] is None for r in scored),
        "baseline_always_satisfied": sum(r["scores"]["human"] for r in scored) / n if n else None,
        "report": rep.to_dict(),
    }
    if judge_config is not None:
        doc["judge_config"] = judge_config
    return finite(doc)


def _flat(group: dict[str, Any]) -> dict[str, Any]:
    return {"n": group["n"], **{k: m["value"] for k, m in group["metrics"].items()}}


def headline_rows(metrics: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """"overall" and one row per group, with the point values."""
    rep = metrics.get("report")
    if not isinstance(rep, dict):
        return {}
    rows = {"overall": _flat(rep["overall"])}
    rows.update({str(k): _flat(g) for k, g in rep["groups"].items()})
    return rows


def judge_kind(metrics: dict[str, Any]) -> str:
    return str((metrics.get("judge_config") or {}).get("kind", metrics.get("judge")))


def how(metrics: dict[str, Any]) -> str:
    """"deterministic" for acs-verify, else how many examples each prompt showed."""
    return metrics.get("how") or ("deterministic" if judge_kind(metrics) == "acs-verify"
                                  else f"{metrics.get('shots', 0)}-shot")


def _interval(m: dict[str, Any], kappa: bool = False) -> str:
    if m.get("value") is None:
        return "-"
    v, lo, hi = m["value"], m.get("low"), m.get("high")
    point = f"{v:.3f}" if kappa else f"{v:.1%}"
    if lo is None or hi is None:
        return point
    return point + (f" [{lo:.2f}, {hi:.2f}]" if kappa else f" [{lo:.0%}, {hi:.0%}]")


def summary_lines(metrics: dict[str, Any]) -> list[str]:
    """Who judged, what was left out, the intervals and the baseline; the caveat for
    acs-verify on the rows its rules were written from."""
    rep = metrics.get("report")
    if not isinstance(rep, dict):
        return []
    boot, overall = rep["bootstrap"], rep["overall"]["metrics"]
    lines = [f"judge {metrics['judge']} ({how(metrics)}) on {metrics['rows']} rows from "
             f"{metrics['requests']} requests; {metrics['abstentions']} abstained, "
             f"{metrics['errors']} infrastructure errors (left out)",
             f"accuracy {_interval(overall['accuracy'])} · kappa "
             f"{_interval(overall['kappa'], kappa=True)} ({boot['confidence']:.0%} bootstrap, "
             f"{boot['n_resamples']} resamples of whole requests, seed {boot['seed']}); "
             "accuracy_all counts abstentions as wrong"]
    if metrics.get("baseline_always_satisfied") is not None:
        lines.append(f"baseline: always 'satisfied' {metrics['baseline_always_satisfied']:.1%}")
    if metrics.get("extracted_by_llm") is not None:
        lines.append(f"{metrics['extracted_by_llm']} rows decided from the LLM's extraction "
                     "(the parser could not read their response); the rest by acs-verify")
    if judge_kind(metrics) == "acs-verify" or metrics.get("extracted_by_llm") is not None:
        lines.append("caveat: " + CAVEAT)
    return lines
