"""ToolEval pass rate scored from a stored record alone: no judge, no model.

A run stores every verdict a sample's judgements rest on (labels, raw text, errors), and which
of the judge-free cases applied (no answer, no ``Finish`` call, a give-up). The outcome of each
judgement, the mode's pass (seeded coin flips), the per-query label and the stable score are
derived here from that record, so ``toolscore score RUN`` gives the run's numbers again at no
cost, and ``-T strict=true`` or ``-T seed=N`` shows the same verdicts under another rule. The
questions were asked the way the run's mode asks (``procedure`` in the record; records written
before the modes existed were asked the stable way); rescoring under the other mode's rule
re-aggregates the same verdicts and the report says which questions were asked. The run judges a
give-up's task even when scoring strictly, so one run can be scored both ways; the outcomes are
those of :func:`~toolscore.benchmarks.tooleval.passrate.judge_once`, decision by decision.
"""

from __future__ import annotations

from typing import Any

from toolscore.benchmarks.tooleval.passrate import (
    ERROR,
    FAIL,
    NO_ANSWER,
    PASS,
    RULES,
    SCORE,
    Judgement,
    QueryResult,
    decide,
    mode_name,
    query_pass,
    summarize,
)
from toolscore.judges.llm import Verdict
from toolscore.types import Usage

NO_JUDGE = (NO_ANSWER, "no Finish call")


def verdict_from_dict(doc: dict[str, Any]) -> Verdict:
    return Verdict(str(doc.get("template", "")), doc.get("label"), str(doc.get("reason") or ""),
                   list(doc.get("raw") or []), doc.get("error"),
                   Usage.from_dict(doc.get("usage") or {}), int(doc.get("vote") or 0),
                   doc.get("judge"))


def judgement(stored: dict[str, Any], gave_up: bool, strict: bool) -> Judgement:
    """One stored judgement with its outcome and reason re-derived under ``strict``."""
    verdicts = [verdict_from_dict(v) for v in stored.get("verdicts") or []]
    answer, task = stored.get("answer_status"), stored.get("task_status")
    why = str(stored.get("why") or "judged")
    if why in NO_JUDGE:
        return Judgement(FAIL, why=why)
    if gave_up and strict:  # the reference's known defect, fixed: a give-up fails
        return Judgement(FAIL, "Unsolved", None, "gave up", [])
    if any(not v.ok for v in verdicts) or answer is None:
        return Judgement(ERROR, answer, task, "judge error", verdicts)
    if answer == "Solved":
        return Judgement(PASS, answer, None, why, verdicts)
    if task is None:
        return Judgement(ERROR, answer, task, "judge error", verdicts)
    return Judgement(decide(answer, task), answer, task, why, verdicts)


def judgements(output: dict[str, Any], strict: bool) -> list[Judgement]:
    gave_up = bool(output.get("gave_up"))
    return [judgement(j, gave_up, strict) for j in output.get("judgements") or []]


def coin_key(output: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(output.get("key") or (output.get("subset", ""), output.get("query_id", "")))


def procedure(output: dict[str, Any]) -> str:
    """How the record's questions were asked (records before the modes: the stable way)."""
    return str(output.get("procedure") or "stable")


def score_output(output: dict[str, Any], strict: bool, seed: int,
                 mode: str = "reference") -> dict[str, Any]:
    """Per-sample scores: ``votes``, each judgement's outcome (pass | fail | unsure | error),
    and ``why``, its reason; ``passed`` under ``mode``'s rule (None when not counted: in the
    reference mode a query with no answer or any judge error, in the stable mode one whose
    every judgement is an error), ``label``
    (majority, tie = coin: what the win rate reads), ``answered`` and the ``stable`` score
    (mean of 1 / 0.5 / 0)."""
    js = judgements(output, strict)
    outcomes = [j.outcome for j in js]
    scored = [SCORE[o] for o in outcomes if o != ERROR]
    passed, label = query_pass(outcomes, seed, coin_key(output), mode)
    answered = not any(j.why == NO_ANSWER for j in js)
    if mode == "reference" and not answered:
        passed = None  # not counted: the reference only judges queries in its answer file
    return {"votes": outcomes, "why": [j.why for j in js], "passed": passed, "label": label,
            "answered": answered, "stable": sum(scored) / len(scored) if scored else None}


def query_result(record: dict[str, Any], strict: bool) -> QueryResult:
    """A record as the pass-rate summary's :class:`QueryResult`. A sample the runner recorded
    as an error (the judge's infrastructure failed) counts as one judge error, as it did when
    the commands judged outside a run."""
    meta = record.get("meta") or {}
    output: dict[str, Any] = record["output"] if isinstance(record.get("output"), dict) else {}
    subset = str(output.get("subset") or meta.get("split") or "")
    qid = str(output.get("query_id") or str(record.get("id", "")).partition("/")[2])
    if record.get("status") != "ok":
        failed = Verdict("(infrastructure)", None, error=str(record.get("error") or
                                                          "infrastructure: unknown"))
        if not failed.error.startswith("infrastructure"):  # type: ignore[union-attr]
            failed.error = f"infrastructure: {failed.error}"
        return QueryResult(subset, qid, [Judgement(ERROR, why="judge error",
                                                   verdicts=[failed])], None)
    js = judgements(output, strict)
    scores = record.get("scores") or {}
    for j, outcome in zip(js, scores.get("votes") or [], strict=False):
        j.outcome = outcome  # the record's scores are the truth (rescoring rewrites them)
    return QueryResult(subset, qid, js, scores.get("passed"), scores.get("label"))


def aggregate(records: list[dict[str, Any]], *, strict: bool, seed: int, votes: int,
              judge: str | None, mode: str = "reference") -> dict[str, Any]:
    """Pass rate per subset and overall under ``mode``'s rule: the numbers of
    ``pass_rate(...).report()``, from the records of a run."""
    records = sorted(records, key=lambda r: (str(r.get("id")), int(r.get("epoch", 0))))
    results = [query_result(r, strict) for r in records]
    n = max([votes, *(len(r.judgements) for r in results)])
    subsets = sorted({r.subset for r in results})
    outputs = [r["output"] for r in records if isinstance(r.get("output"), dict)]
    judges = sorted({str(o.get("judge")) for o in outputs if o.get("judge")})
    return {
        "metric": "tooleval.pass_rate", "judge": judge or (", ".join(judges) or None),
        "votes": votes, "seed": seed, "mode": mode_name(mode, strict), "rules": RULES[mode],
        "questions": sorted({procedure(o) for o in outputs}),
        "overall": summarize(results, n, mode),
        "subsets": {s: summarize([r for r in results if r.subset == s], n, mode)
                    for s in subsets},
        "errors": sum(1 for r in records if r.get("status") != "ok"),
        "usage": usage(records),
    }


def usage(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The judge's tokens and calls over the records (cached replies counted as cached);
    latency is left out, so a resumed run's scores.json equals an uninterrupted one's."""
    total = Usage()
    for r in records:
        total.add(Usage.from_dict(r.get("usage") or {}))
    out = total.to_dict()
    out.pop("latency_s", None)
    return out


def headline(summary: dict[str, Any]) -> dict[str, Any]:
    """One row of the headline table (the stable rule's mean and std flattened)."""
    stable = summary.get("stable") or {}
    return {**summary, "stable_mean": stable.get("mean"), "stable_std": stable.get("std")}
