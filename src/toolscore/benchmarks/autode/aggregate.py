"""AutoDE's published aggregation over trials, with the supplementary views and the paper's
behaviour analyses beside it (each under its own name)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import numpy as np

from toolscore.benchmarks.autode.scoring import CaseScore, TrialScore, aggregate_trials


def _mean(values: list[Any]) -> float | None:
    return float(np.mean(values)) if values else None


def _redundancy(scores: list[dict[str, Any]]) -> dict[str, Any]:
    """Redundant questions (see :func:`.analysis.redundant_questions`); records scored before
    the analysis existed have no counts and are left out."""
    counted = [s for s in scores if "questions" in s]
    asked = sum(s["questions"] for s in counted)
    redundant = sum(s["redundant_questions"] for s in counted)
    return {"questions": asked, "redundant_questions": redundant,
            "redundant_question_rate": redundant / asked if asked else None,
            "dialogues_with_redundant_questions": _mean(
                [s["redundant_questions"] > 0 for s in counted])}



def aggregate_records(records: list[dict[str, Any]], mode: str = "") -> dict[str, Any]:
    """Published: per trial (epoch) the macro mean over its cases, then mean over trials and the
    sample std (ddof=1) of the per-trial values, ×100. Supplementary views and the paper's
    behaviour analyses are reported beside it, under their own names. Errored samples
    (infrastructure) are counted and excluded."""
    ok = [r for r in records if r.get("status") == "ok"]
    by_trial: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in ok:
        by_trial[int(r.get("epoch", 0))].append(r["scores"])
    result: dict[str, Any] = {"mode": mode, "errors": len(records) - len(ok),
                              "n_cases": len({r["id"] for r in ok}), "n_trials": len(by_trial)}
    if not by_trial:
        return result

    def trials(view: str | None) -> list[TrialScore]:
        out = []
        for _, scores in sorted(by_trial.items()):
            cases = [CaseScore(**({k: s[k] for k in ("precision", "recall", "f1")}
                                  if view is None else s[view])) for s in scores]
            n = len(cases)
            out.append(TrialScore(sum(c.precision for c in cases) / n,
                                  sum(c.recall for c in cases) / n,
                                  sum(c.f1 for c in cases) / n, cases))
        return out

    scores = [s for group in by_trial.values() for s in group]
    successful = [s for s in scores if s["called"]]
    result["exact"] = aggregate_trials(trials(None)).to_dict()
    result["trial_sizes"] = [len(by_trial[t]) for t in sorted(by_trial)]
    result["supplementary"] = {
        "normalised": aggregate_trials(trials("normalised")).to_dict(),
        "exact_match_rate": _mean([s["exact_match"] for s in scores]),
        "call_rate": _mean([s["called"] for s in scores]),
        "api_accuracy": _mean([s["api_correct"] for s in scores]),
    }
    result["analyses"] = {
        "refusal_rate": _mean([s["refusal"] for s in scores]),
        "hallucinated_parameter_rate_successful": _mean(
            [s["hallucinated"] for s in successful if s["hallucinated"] is not None]),
        "mean_dialogue_length": _mean([s["dialogue_length"] for s in scores]),
        **_redundancy(scores),
    }
    result["endings"] = dict(Counter(s["ending"] for s in scores).most_common())
    return result


def _pm(exact: dict[str, Any]) -> str:
    std = exact.get("f1_std")
    return (f"P {exact['precision']:.2f} / R {exact['recall']:.2f} / F1 {exact['f1']:.2f}"
            + (f" ±{std:.2f}" if std is not None else ""))


def questions_line(row: dict[str, Any]) -> str:
    """Redundant questions as one line (a run's analyses or one side of a gap)."""
    rate, share = row.get("redundant_question_rate", row.get("redundant_rate")), row.get(
        "dialogues_with_redundant_questions", row.get("dialogues_with_redundant"))
    return (f"{row['redundant_questions']} of {row['questions']} questions"
            + ("" if rate is None else f" ({rate:.2%})")
            + ("" if share is None else f" · in {share:.2%} of dialogues"))
