"""ToolEval win rate: is a candidate's solution path better than a reference model's?

This module holds the *stable* procedure (toolscore's) and the summary both modes share; the
reference code's procedure (rounds, status tiers, shuffled order) is
:mod:`.winrate_reference`.

Stable, per query: if exactly one of the two passed (pass-rate labels), it wins without a
judge call. Otherwise the answers' solved status is judged first (one Solved, the other not:
Solved wins); then the preference prompt is asked in *both* orders (candidate shown first, then
reference shown first), each by a majority of ``votes``. The reference code meant to do this
but its swap never runs; here both orders always run, a disagreement between them is a tie,
and the share of picks that went to whichever answer was shown first is reported as the
position bias. Win rate = (wins + ties / 2) / judged queries; judge errors leave the
denominator, counted. In the reference mode win rate = wins / judged queries, ties reported
beside it (tie rate).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from toolscore.benchmarks.tooleval.data import Sample
from toolscore.benchmarks.tooleval.passrate import error_causes
from toolscore.benchmarks.tooleval.prompts import (
    ANSWER_STATUS,
    PREFERENCE,
    answer_text,
    render_path,
)
from toolscore.judges.llm import LLMJudge, Verdict, majority

CANDIDATE, REFERENCE, TIE, ERROR = "candidate", "reference", "tie", "error"
POINTS = {CANDIDATE: 1.0, TIE: 0.5, REFERENCE: 0.0}


@dataclass
class Comparison:
    subset: str
    query_id: str
    winner: str  # candidate | reference | tie | error
    why: str  # pass label | solved status | preference | orders disagree | judge error
    candidate_passed: bool | None = None
    reference_passed: bool | None = None
    orders: list[str | None] = field(default_factory=list)  # winner per order; None = no majority
    first_shown_picked: list[bool] = field(default_factory=list)  # per readable vote
    verdicts: list[Verdict] = field(default_factory=list)
    rounds: list[dict[str, Any]] = field(default_factory=list)  # reference mode: each round

    def to_dict(self) -> dict[str, Any]:
        out = {"subset": self.subset, "query_id": self.query_id, "winner": self.winner,
               "why": self.why, "candidate_passed": self.candidate_passed,
               "reference_passed": self.reference_passed, "orders": self.orders,
               "verdicts": [v.to_dict() for v in self.verdicts]}
        if self.rounds:
            out["rounds"] = self.rounds
        return out


async def _solved(judge: LLMJudge, sample: Sample, votes: int,
                  out: list[Verdict]) -> bool | None | str:
    """True/False by majority of answer-status verdicts; "error" if any verdict is unreadable."""
    answer = sample.answer
    if answer is None or not answer.finished or answer.gave_up:
        return False
    vs = await judge.votes(ANSWER_STATUS, {"query": sample.query, "answer": answer_text(answer)},
                           votes)
    out.extend(vs)
    if not all(v.ok for v in vs):
        return ERROR
    label = majority([v.label for v in vs])
    return None if label is None else label == "Solved"


def _side(sample: Sample) -> dict[str, str]:
    path = render_path(sample.answer.path) if sample.answer else "(no steps)"
    return {"path": path, "answer": answer_text(sample.answer)}


async def compare(judge: LLMJudge, cand: Sample, ref: Sample, cand_passed: bool | None,
                  ref_passed: bool | None, votes: int = 1) -> Comparison:
    """One query's comparison (never raises for judge failures)."""
    c = Comparison(cand.subset or ref.subset, cand.query_id, ERROR, "judge error",
                   cand_passed, ref_passed)
    if cand_passed is None or ref_passed is None:
        c.why = "pass label missing (judge error in pass rate)"
        return c
    if cand_passed != ref_passed:
        c.winner, c.why = (CANDIDATE if cand_passed else REFERENCE), "pass label"
        return c
    solved_c = await _solved(judge, cand, votes, c.verdicts)
    solved_r = await _solved(judge, ref, votes, c.verdicts)
    if ERROR in (solved_c, solved_r):
        return c
    if solved_c is not None and solved_r is not None and solved_c != solved_r:
        c.winner, c.why = (CANDIDATE if solved_c else REFERENCE), "solved status"
        return c
    sides = {CANDIDATE: _side(cand), REFERENCE: _side(ref)}
    for first, second in ((CANDIDATE, REFERENCE), (REFERENCE, CANDIDATE)):
        variables = {"query": cand.query, "path_a": sides[first]["path"],
                     "answer_a": sides[first]["answer"], "path_b": sides[second]["path"],
                     "answer_b": sides[second]["answer"]}
        vs = await judge.votes(PREFERENCE, variables, votes)
        c.verdicts.extend(vs)
        if not all(v.ok for v in vs):
            return c
        c.first_shown_picked += [v.label == "A" for v in vs]
        label = majority([v.label for v in vs])
        c.orders.append(None if label is None else first if label == "A" else second)
    if c.orders[0] is not None and c.orders[0] == c.orders[1]:
        c.winner, c.why = c.orders[0], "preference"
    else:
        c.winner, c.why = TIE, "orders disagree"
    return c


STABLE_WHY = ("pass label", "solved status", "preference", "orders disagree")
ROUND_WHY = ("missing answer", "identical", "solved", "unsure", "preference")
RULES = {
    "reference": {"ties": "reported apart (tie rate); win rate = wins / queries",
                  "orders": "answers shuffled each round (seeded); position randomised",
                  "rounds": "the side that won more rounds wins the query; equal = tie"},
    "stable": {"ties": "count half", "orders": "both judged; disagreement = tie"},
}


def summarize(comparisons: list[Comparison], mode: str = "stable") -> dict[str, Any]:
    judged = [c for c in comparisons if c.winner != ERROR]
    counts = {k: sum(1 for c in judged if c.winner == k) for k in (CANDIDATE, REFERENCE, TIE)}
    picks = [p for c in judged for p in c.first_shown_picked]
    both = [c for c in judged if len(c.orders) == 2]
    n = len(judged)
    if mode == "reference":
        win_rate = counts[CANDIDATE] / n if n else None
        decided = {w: sum(1 for c in judged for r in c.rounds if r.get("why") == w)
                   for w in ROUND_WHY}
    else:
        win_rate = sum(POINTS[c.winner] for c in judged) / n if n else None
        decided = {w: sum(1 for c in judged if c.why == w) for w in STABLE_WHY}
    return {
        "queries": len(comparisons), "evaluated": n,
        "errors": len(comparisons) - n,
        "wins": counts[CANDIDATE], "losses": counts[REFERENCE], "ties": counts[TIE],
        "win_rate": win_rate, "tie_rate": counts[TIE] / n if n else None,
        "error_causes": error_causes(v for c in comparisons for v in c.verdicts),
        "decided_by": decided,
        "position_bias": {
            "first_shown_pick_rate": sum(picks) / len(picks) if picks else None,
            "preference_votes": len(picks),
            "order_agreement": (sum(1 for c in both if c.orders[0] is not None
                                    and c.orders[0] == c.orders[1]) / len(both))
                               if both else None,
            "compared_in_both_orders": len(both),
        },
    }


def _placeholder(other: Sample) -> Sample:
    return Sample(other.query_id, other.query, other.available_tools, None, other.subset)


async def win_rate(judge: LLMJudge, candidate: list[Sample], reference: list[Sample],
                   cand_passed: dict[tuple[str, str], bool | None],
                   ref_passed: dict[tuple[str, str], bool | None], *, votes: int = 1,
                   max_concurrency: int = 8) -> list[Comparison]:
    """Compare every query present on either side (a missing answer is no answer)."""
    cand = {(s.subset, s.query_id): s for s in candidate}
    ref = {(s.subset, s.query_id): s for s in reference}
    keys = list(cand) + [k for k in ref if k not in cand]
    sem = asyncio.Semaphore(max(1, max_concurrency))

    async def one(key: tuple[str, str]) -> Comparison:
        c_s = cand.get(key) or _placeholder(ref[key])
        r_s = ref.get(key) or _placeholder(c_s)
        async with sem:
            return await compare(judge, c_s, r_s, cand_passed.get(key, False),
                                 ref_passed.get(key, False), votes)

    return list(await asyncio.gather(*(one(k) for k in keys)))


def report(comparisons: list[Comparison], judge: str, votes: int,
           mode: str = "stable") -> dict[str, Any]:
    """The win-rate document: overall and per subset, under ``mode``'s rules."""
    subsets = sorted({c.subset for c in comparisons})
    return {"metric": "tooleval.win_rate", "judge": judge, "votes": votes, "rules": RULES[mode],
            "overall": summarize(comparisons, mode),
            "subsets": {s: summarize([c for c in comparisons if c.subset == s], mode)
                        for s in subsets}}
