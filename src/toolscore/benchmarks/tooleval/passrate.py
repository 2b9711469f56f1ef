"""ToolEval pass rate: did the solution path solve the query, by a repeated LLM judgement?

Each judgement follows the spec's steps: no ``Finish`` call fails without a judge; an empty or
give-up answer is Unsolved without a judge; otherwise the judge rates the answer (and, when
Unsure, takes a second look at the whole path); an unsolved answer makes the judge rate the
task's solvability; :func:`decide` combines the two. What the judge is asked, and how, is the
mode's :class:`~toolscore.benchmarks.tooleval.questions.Procedure`.

How the judgements of a query become a pass depends on the mode, because the reference's
aggregation is part of the figure it publishes:

- *reference* (ToolEval's code): an unsure judgement is a coin flip (seeded here); a query
  passes when no more votes fail than pass, so a 2-2 tie passes (:func:`printed_pass`); a query
  with no answer is not in the denominator; a judge error would stop the reference run, so a
  query with any judge error is left out and counted (``errors``): the rate is the reference's
  only when ``errors`` is 0. The per-query label the reference writes beside it (majority, a tie
  broken by a coin) is kept as ``label`` (:func:`majority_pass`): it is what the win rate reads.
- *stable* (toolscore's): that label as the pass, judge errors dropped vote by vote, queries
  without an answer counted as failures, and the StableToolBench score (pass 1, unsure 0.5,
  fail 0 per judgement; mean ± std over repetitions) beside it.

``strict`` fixes the reference's known defect that a give-up answer passes whenever the judge
thinks the task is unsolvable.
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
from toolscore.benchmarks.tooleval.questions import Procedure, procedure
from toolscore.benchmarks.tooleval.release import ReleaseEvaluator
from toolscore.judges.llm import LLMJudge, Verdict
from toolscore.types import Usage

PASS, FAIL, UNSURE, ERROR = "pass", "fail", "unsure", "error"
NO_ANSWER = "no answer"
SCORE = {PASS: 1.0, UNSURE: 0.5, FAIL: 0.0}
_TABLE = {
    ("Unsolved", "Solvable"): FAIL, ("Unsolved", "Unsure"): UNSURE,
    ("Unsolved", "Unsolvable"): PASS,
    ("Unsure", "Solvable"): UNSURE, ("Unsure", "Unsure"): UNSURE, ("Unsure", "Unsolvable"): PASS,
}
RULES = {
    "reference": {
        "pass": "unsure = seeded coin flip; a query passes when failed votes <= passed votes "
                "(a tie passes), as the reference prints it",
        "denominator": "queries with an answer; a query with a judge error is left out and "
                       "counted (the reference run would stop)",
        "label": "per-query label: majority of votes, a tie = coin (the reference's CSV)",
        "stable": "pass 1, unsure 0.5, fail 0; mean and population std over repetitions"},
    "stable": {
        "pass": "unsure = seeded coin flip; majority of votes; tie = coin",
        "denominator": "every query (no answer = fail); judge errors leave it",
        "stable": "pass 1, unsure 0.5, fail 0; mean and population std over repetitions"},
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


def gave_up(sample: Sample, mode: str) -> bool:
    """A finished answer that gave up, by ``mode``'s test (the reference's: the raw string)."""
    answer = sample.answer
    if answer is None or not answer.finished:
        return False
    return answer.gave_up_raw if mode == "reference" else answer.gave_up


async def answer_status(judge: LLMJudge, sample: Sample, vote: int, asked_as: Procedure,
                        verdicts: list[Verdict]) -> str | None:
    """The judge's Solved / Unsolved / Unsure for ``sample``'s answer, with the second look
    when the first says Unsure; None on a judge error (the verdicts say which)."""
    asked = ((asked_as.answer, asked_as.variables),
             (asked_as.second_look, asked_as.second_variables))
    label: str | None = None
    for template, variables in asked:
        v = await asked_as.ask(judge, template, variables(sample), vote)
        verdicts.append(v)
        if not v.ok:
            return None
        label = v.label
        if label != "Unsure":
            break
    return label


async def judge_once(judge: LLMJudge, sample: Sample, vote: int = 0, strict: bool = False,
                     mode: str = "reference",
                     evaluator: ReleaseEvaluator | None = None) -> Judgement:
    """One judgement of ``sample``'s answer (``vote`` keeps repeated judgements apart), asked
    the way ``mode`` (reference | stable) asks; the reference mode asks ``evaluator``'s
    questions and tests a give-up on the raw string, as the reference does."""
    asked_as = procedure(mode, evaluator)
    answer = sample.answer
    if answer is None:
        return Judgement(FAIL, why=NO_ANSWER)
    if not answer.finished:
        return Judgement(FAIL, why="no Finish call")
    j = Judgement(ERROR)
    if answer.gave_up_raw if mode == "reference" else answer.gave_up:
        j.answer_status, j.why = "Unsolved", "gave up"
        if strict:
            j.outcome = FAIL
            return j
    else:
        j.answer_status = await answer_status(judge, sample, vote, asked_as, j.verdicts)
        if j.answer_status is None:
            j.why = "judge error"
            return j
    if j.answer_status == "Solved":
        j.outcome = PASS
        return j
    v = await asked_as.ask(judge, asked_as.task, asked_as.variables(sample), vote)
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
    passed: bool | None = None  # the mode's rule; None when the query is a judge error
    label: bool | None = None  # majority, tie = coin (the per-query label the win rate reads)

    @property
    def key(self) -> tuple[str, str]:
        return self.subset, self.query_id

    @property
    def answered(self) -> bool:
        return not any(j.why == NO_ANSWER for j in self.judgements)

    def to_dict(self) -> dict[str, Any]:
        return {"subset": self.subset, "query_id": self.query_id, "passed": self.passed,
                "label": self.label, "outcomes": [j.outcome for j in self.judgements],
                "judgements": [j.to_dict() for j in self.judgements]}


def _votes(outcomes: list[str], seed: int, key: tuple[Any, ...]) -> list[bool]:
    """Each readable judgement as a pass or a fail, an unsure one by its seeded coin."""
    return [o == PASS or (o == UNSURE and coin(seed, *key, i))
            for i, o in enumerate(outcomes) if o != ERROR]


def majority_pass(outcomes: list[str], seed: int, key: tuple[Any, ...],
                  any_error: bool = False) -> bool | None:
    """Majority of the votes, a tie = coin; judge errors skipped (with ``any_error``, one
    judge error makes the query an error, None)."""
    if any_error and ERROR in outcomes:
        return None
    votes = _votes(outcomes, seed, key)
    if not votes:
        return None
    passes = sum(votes)
    if passes * 2 == len(votes):
        return coin(seed, *key, "tie")
    return passes * 2 > len(votes)


def printed_pass(outcomes: list[str], seed: int, key: tuple[Any, ...]) -> bool | None:
    """The reference's printed rule: passes when failed votes <= passed votes (a tie
    passes); None when any judgement is a judge error (the reference run would stop)."""
    if not outcomes or ERROR in outcomes:
        return None
    votes = _votes(outcomes, seed, key)
    return len(votes) - sum(votes) <= sum(votes)


def query_pass(outcomes: list[str], seed: int, key: tuple[Any, ...],
               mode: str) -> tuple[bool | None, bool | None]:
    """(passed under ``mode``'s rule, the per-query label) of one query's outcomes."""
    if mode == "reference":
        return printed_pass(outcomes, seed, key), majority_pass(outcomes, seed, key, True)
    label = majority_pass(outcomes, seed, key)
    return label, label


def _stable(results: list[QueryResult], votes: int) -> dict[str, Any]:
    per_rep: list[float] = []
    for i in range(votes):
        scores = [SCORE[r.judgements[i].outcome] for r in results
                  if i < len(r.judgements) and r.judgements[i].outcome != ERROR]
        if scores:
            per_rep.append(sum(scores) / len(scores))
    return {"mean": statistics.fmean(per_rep) if per_rep else None,
            "std": statistics.pstdev(per_rep) if per_rep else None, "per_repetition": per_rep}


def summarize(results: list[QueryResult], votes: int, mode: str = "stable") -> dict[str, Any]:
    """Pass rate over ``results`` under ``mode``'s denominator, and the stable score."""
    counted = [r for r in results if r.answered] if mode == "reference" else results
    judged = [r for r in counted if r.passed is not None]
    passed = sum(1 for r in judged if r.passed)
    reasons: dict[str, int] = {}
    for r in results:
        for j in r.judgements[:1]:
            reasons[j.why] = reasons.get(j.why, 0) + 1
    return {
        "queries": len(results),
        "unanswered": len(results) - len(counted) if mode == "reference" else
        sum(1 for r in results if not r.answered),
        "evaluated": len(judged),
        "errors": len(counted) - len(judged),
        "passed": passed,
        "pass_rate": passed / len(judged) if judged else None,
        "stable": _stable(counted, votes),
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


def mode_name(mode: str, strict: bool) -> str:
    return f"{mode}, strict" if strict else mode


@dataclass
class PassRateResult:
    results: list[QueryResult]
    votes: int
    seed: int
    strict: bool
    judge: str
    usage: Usage
    mode: str = "reference"

    def passed(self) -> dict[tuple[str, str], bool | None]:
        return {r.key: r.passed for r in self.results}

    def report(self) -> dict[str, Any]:
        subsets = sorted({r.subset for r in self.results})
        return {
            "metric": "tooleval.pass_rate", "judge": self.judge, "votes": self.votes,
            "seed": self.seed, "mode": mode_name(self.mode, self.strict),
            "rules": RULES[self.mode],
            "overall": summarize(self.results, self.votes, self.mode),
            "subsets": {s: summarize([r for r in self.results if r.subset == s], self.votes,
                                     self.mode) for s in subsets},
            "usage": self.usage.to_dict(),
        }


async def pass_rate(judge: LLMJudge, samples: list[Sample], *, votes: int = 4, seed: int = 0,
                    strict: bool = False, max_concurrency: int = 8,
                    mode: str = "reference",
                    evaluator: ReleaseEvaluator | None = None) -> PassRateResult:
    """Judge every sample ``votes`` times the way ``mode`` does and aggregate by its rule."""
    if votes < 1:
        raise ValueError("votes must be at least 1")
    sem = asyncio.Semaphore(max(1, max_concurrency))

    async def one(sample: Sample) -> QueryResult:
        async with sem:
            js = [await judge_once(judge, sample, v, strict, mode, evaluator)
                  for v in range(votes)]
        r = QueryResult(sample.subset, sample.query_id, js)
        r.passed, r.label = query_pass([j.outcome for j in js], seed, r.key, mode)
        return r

    before = Usage(**judge.usage.to_dict())
    results = list(await asyncio.gather(*(one(s) for s in samples)))
    used = Usage(**{k: v - getattr(before, k) for k, v in judge.usage.to_dict().items()})
    return PassRateResult(results, votes, seed, strict, judge.name, used, mode)
