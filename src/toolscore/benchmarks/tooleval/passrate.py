"""ToolEval pass rate: did the solution path solve the query, by a repeated LLM judgement?

Each judgement follows the spec's steps: no ``Finish`` call fails without a judge; an empty or
give-up answer is Unsolved without a judge; otherwise the judge rates the answer (and, when
Unsure, takes a second look at the whole path); an unsolved answer makes the judge rate the
task's solvability; :func:`decide` combines the two. Two aggregate rules are reported side by
side because they disagree by several points: the *reference* rule (an unsure judgement is a
seeded coin flip, a query passes by majority, a tied majority is also a coin flip) and the
*stable* rule of StableToolBench (pass = 1, unsure = 0.5, fail = 0 per judgement; mean ± std
over repetitions). Queries without an answer stay in the denominator as failures; judge errors
leave it and are counted. ``strict`` fixes the reference's known defect that a give-up answer
passes whenever the judge thinks the task is unsolvable.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from toolscore.benchmarks.tooleval.data import Sample
from toolscore.benchmarks.tooleval.prompts import (
    ANSWER_STATUS,
    ANSWER_STATUS_PATH,
    TASK_SOLVABLE,
    answer_text,
    render_path,
    render_tools,
)
from toolscore.judges.llm import LLMJudge, Verdict
from toolscore.types import Usage

PASS, FAIL, UNSURE, ERROR = "pass", "fail", "unsure", "error"
SCORE = {PASS: 1.0, UNSURE: 0.5, FAIL: 0.0}
_TABLE = {
    ("Unsolved", "Solvable"): FAIL, ("Unsolved", "Unsure"): UNSURE,
    ("Unsolved", "Unsolvable"): PASS,
    ("Unsure", "Solvable"): UNSURE, ("Unsure", "Unsure"): UNSURE, ("Unsure", "Unsolvable"): PASS,
}


def decide(answer_status: str, task_status: str | None) -> str:
    """The decision table: answer status × task status -> pass | fail | unsure."""
    if answer_status == "Solved":
        return PASS
    if task_status is None:
        raise ValueError(f"answer {answer_status!r} needs a task status")
    return _TABLE[(answer_status, task_status)]


@dataclass
class Judgement:
    """One pass/fail judgement of one answer, with the verdicts it rests on."""

    outcome: str  # pass | fail | unsure | error
    answer_status: str | None = None
    task_status: str | None = None
    why: str = "judged"  # no answer | no Finish call | gave up | judged | judge error
    verdicts: list[Verdict] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "answer_status": self.answer_status,
                "task_status": self.task_status, "why": self.why,
                "verdicts": [v.to_dict() for v in self.verdicts]}


def coin(seed: int, *parts: object) -> bool:
    """A seeded, order-independent coin flip (same inputs, same side, on any machine)."""
    digest = hashlib.sha256(repr((seed, *parts)).encode()).digest()
    return random.Random(digest).random() < 0.5


async def judge_once(judge: LLMJudge, sample: Sample, vote: int = 0,
                     strict: bool = False) -> Judgement:
    """One judgement of ``sample``'s answer (``vote`` keeps repeated judgements apart)."""
    answer = sample.answer
    if answer is None:
        return Judgement(FAIL, why="no answer")
    if not answer.finished:
        return Judgement(FAIL, why="no Finish call")
    j = Judgement(ERROR)
    variables = {"query": sample.query, "answer": answer_text(answer),
                 "path": render_path(answer.path), "tools": render_tools(sample.available_tools)}
    if answer.gave_up:
        j.answer_status, j.why = "Unsolved", "gave up"
        if strict:
            j.outcome = FAIL
            return j
    else:
        for template in (ANSWER_STATUS, ANSWER_STATUS_PATH):
            v = await judge.judge(template, variables, vote=vote)
            j.verdicts.append(v)
            if not v.ok:
                j.why = "judge error"
                return j
            j.answer_status = v.label
            if v.label != "Unsure":
                break
    if j.answer_status == "Solved":
        j.outcome = PASS
        return j
    v = await judge.judge(TASK_SOLVABLE, variables, vote=vote)
    j.verdicts.append(v)
    if not v.ok:
        j.why = "judge error"
        return j
    j.task_status = v.label
    j.outcome = decide(j.answer_status or "Unsolved", j.task_status)
    return j


@dataclass
class QueryResult:
    subset: str
    query_id: str
    judgements: list[Judgement]
    passed: bool | None = None  # reference rule; None when every judgement errored

    @property
    def key(self) -> tuple[str, str]:
        return self.subset, self.query_id

    def to_dict(self) -> dict[str, Any]:
        return {"subset": self.subset, "query_id": self.query_id, "passed": self.passed,
                "outcomes": [j.outcome for j in self.judgements],
                "judgements": [j.to_dict() for j in self.judgements]}


def reference_pass(outcomes: list[str], seed: int, key: tuple[str, str]) -> bool | None:
    """The reference rule: unsure -> coin flip per judgement, then majority (tie -> coin)."""
    votes = []
    for i, o in enumerate(outcomes):
        if o == ERROR:
            continue
        votes.append(o == PASS or (o == UNSURE and coin(seed, *key, i)))
    if not votes:
        return None
    passes = sum(votes)
    if passes * 2 == len(votes):
        return coin(seed, *key, "tie")
    return passes * 2 > len(votes)


def summarize(results: list[QueryResult], votes: int) -> dict[str, Any]:
    """Reference and stable pass rates over ``results`` (errors out of both denominators)."""
    judged = [r for r in results if r.passed is not None]
    per_rep: list[float] = []
    for i in range(votes):
        scores = [SCORE[r.judgements[i].outcome] for r in results
                  if i < len(r.judgements) and r.judgements[i].outcome != ERROR]
        if scores:
            per_rep.append(sum(scores) / len(scores))
    reasons: dict[str, int] = {}
    for r in results:
        for j in r.judgements[:1]:
            reasons[j.why] = reasons.get(j.why, 0) + 1
    return {
        "queries": len(results),
        "evaluated": len(judged),
        "errors": len(results) - len(judged),
        "passed": sum(1 for r in judged if r.passed),
        "pass_rate": sum(1 for r in judged if r.passed) / len(judged) if judged else None,
        "stable": {"mean": statistics.fmean(per_rep) if per_rep else None,
                   "std": statistics.pstdev(per_rep) if per_rep else None,
                   "per_repetition": per_rep},
        "first_judgement_why": reasons,
        "error_causes": error_causes(v for r in results for j in r.judgements for v in j.verdicts),
    }


def error_causes(verdicts: Iterable[Verdict]) -> dict[str, int]:
    """Failed verdicts by cause ("infrastructure", "unparseable verdict after 3 attempt(s)")."""
    out: dict[str, int] = {}
    for v in verdicts:
        if v.error:
            cause = v.error.split(":")[0]
            out[cause] = out.get(cause, 0) + 1
    return out


@dataclass
class PassRateResult:
    results: list[QueryResult]
    votes: int
    seed: int
    strict: bool
    judge: str
    usage: Usage

    def passed(self) -> dict[tuple[str, str], bool | None]:
        return {r.key: r.passed for r in self.results}

    def report(self) -> dict[str, Any]:
        subsets = sorted({r.subset for r in self.results})
        return {
            "metric": "tooleval.pass_rate", "judge": self.judge, "votes": self.votes,
            "seed": self.seed, "mode": "strict" if self.strict else "reference",
            "rules": {"reference": "unsure = seeded coin flip; majority of votes; tie = coin",
                      "stable": "pass 1, unsure 0.5, fail 0; mean and population std over "
                                "repetitions"},
            "overall": summarize(self.results, self.votes),
            "subsets": {s: summarize([r for r in self.results if r.subset == s], self.votes)
                        for s in subsets},
            "usage": self.usage.to_dict(),
        }


async def pass_rate(judge: LLMJudge, samples: list[Sample], *, votes: int = 4, seed: int = 0,
                    strict: bool = False, max_concurrency: int = 8) -> PassRateResult:
    """Judge every sample ``votes`` times and aggregate under both rules."""
    if votes < 1:
        raise ValueError("votes must be at least 1")
    sem = asyncio.Semaphore(max(1, max_concurrency))

    async def one(sample: Sample) -> QueryResult:
        async with sem:
            js = [await judge_once(judge, sample, v, strict) for v in range(votes)]
        r = QueryResult(sample.subset, sample.query_id, js)
        r.passed = reference_pass([j.outcome for j in js], seed, r.key)
        return r

    before = Usage(**judge.usage.to_dict())
    results = list(await asyncio.gather(*(one(s) for s in samples)))
    used = Usage(**{k: v - getattr(before, k) for k, v in judge.usage.to_dict().items()})
    return PassRateResult(results, votes, seed, strict, judge.name, used)
