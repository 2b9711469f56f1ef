"""ToolEval win rate decided as the reference code decides it (the default mode).

A query is played over ``rounds`` rounds (the reference's ``evaluate_times``, default 2). Each
round goes to one side:

1. a side with no answer loses the round, no judge call;
2. two identical answers (the whole answer records equal): a seeded coin, no judge call;
3. each side's status, Solved > Unsure > Unsolved: an empty or give-up answer is Unsolved
   without a judge; otherwise the judge rates it as in the pass rate (with the Unsure second
   look), or, with ``use_pass_rate``, the side's pass-rate label gives Solved or Unsolved;
   exactly one Solved wins; with none Solved, exactly one Unsure wins;
4. otherwise the judge says which answer is better, the two shown in an order drawn by a
   seeded coin each round (the reference shuffles; its swap-back branch never runs, so the
   position is randomised, not balanced).

The query is a win when the candidate took more rounds, a tie when both took as many. A judge
error in any round makes the query an error (the reference run would stop there): it is left
out of the win rate and counted. The coins are seeded by (seed, subset, query, round), so a
run is reproducible and rescoring needs no judge.
"""

from __future__ import annotations

from typing import Any

from toolscore.benchmarks.tooleval.data import Sample
from toolscore.benchmarks.tooleval.passrate import answer_status, coin
from toolscore.benchmarks.tooleval.questions import PREFER, answer_json
from toolscore.benchmarks.tooleval.questions import REFERENCE as ASKED
from toolscore.benchmarks.tooleval.winrate import (
    CANDIDATE,
    ERROR,
    REFERENCE,
    TIE,
    Comparison,
)
from toolscore.judges.llm import LLMJudge, Verdict

SIDES = (CANDIDATE, REFERENCE)


def other(side: str) -> str:
    return REFERENCE if side == CANDIDATE else CANDIDATE


async def status(judge: LLMJudge, sample: Sample, round_: int, label: bool | None,
                 verdicts: list[Verdict]) -> str | None:
    """A side's Solved / Unsure / Unsolved this round (None: a judge error). ``label`` is the
    side's pass-rate label when the statuses come from the pass rate."""
    if label is not None:
        return "Solved" if label else "Unsolved"
    answer = sample.answer
    if answer is None or answer.gave_up:
        return "Unsolved"
    return await answer_status(judge, sample, round_, ASKED, verdicts)


def by_tier(statuses: dict[str, str | None]) -> tuple[str, str] | None:
    """(winner, why) when exactly one side is Solved, or none is and exactly one is Unsure."""
    for tier, why in (("Solved", "solved"), ("Unsure", "unsure")):
        top = [side for side in SIDES if statuses[side] == tier]
        if len(top) == 1:
            return top[0], why
        if top:
            return None  # both in the top tier: the judge compares them
    return None


async def play_round(judge: LLMJudge, samples: dict[str, Sample], round_: int, seed: int,
                     labels: dict[str, bool | None] | None, c: Comparison) -> dict[str, Any]:
    """One round: who took it and why (``winner`` "error" on a judge error)."""
    key = (c.subset, c.query_id, round_)
    answers = {side: samples[side].answer for side in SIDES}
    missing = [side for side in SIDES if answers[side] is None]
    if missing:
        winner = other(missing[0]) if len(missing) == 1 else None
        return {"round": round_, "winner": winner, "why": "missing answer"}
    if answers[CANDIDATE].as_record() == answers[REFERENCE].as_record():  # type: ignore[union-attr]
        winner = CANDIDATE if coin(seed, *key, "identical") else REFERENCE
        return {"round": round_, "winner": winner, "why": "identical"}
    statuses: dict[str, str | None] = {}
    for side in SIDES:
        label = None if labels is None else labels[side]
        statuses[side] = await status(judge, samples[side], round_, label, c.verdicts)
        if statuses[side] is None:
            return {"round": round_, "winner": ERROR, "why": "judge error",
                    "statuses": statuses}
    decided = by_tier(statuses)
    if decided is not None:
        return {"round": round_, "winner": decided[0], "why": decided[1],
                "statuses": statuses}
    first = CANDIDATE if coin(seed, *key, "order") else REFERENCE
    shown = (first, other(first))
    v = await judge.judge(PREFER, {"query": samples[CANDIDATE].query,
                                   "answer_a": answer_json(answers[shown[0]]),
                                   "answer_b": answer_json(answers[shown[1]])}, vote=round_)
    c.verdicts.append(v)
    out = {"round": round_, "statuses": statuses, "shown_first": first}
    if not v.ok:
        return {**out, "winner": ERROR, "why": "judge error"}
    c.first_shown_picked.append(v.label == "A")
    return {**out, "winner": shown[0] if v.label == "A" else shown[1], "why": "preference"}


async def compare_rounds(judge: LLMJudge, cand: Sample, ref: Sample, *, rounds: int, seed: int,
                         labels: dict[str, bool | None] | None = None) -> Comparison:
    """One query over ``rounds`` rounds (never raises for judge failures). ``labels`` (pass
    labels by side) replace the judged statuses (the reference's ``use_pass_rate``)."""
    c = Comparison(cand.subset or ref.subset, cand.query_id or ref.query_id, ERROR,
                   "judge error", None if labels is None else labels[CANDIDATE],
                   None if labels is None else labels[REFERENCE])
    if labels is not None and None in labels.values():
        c.why = "pass label missing (judge error in pass rate)"
        return c
    samples = {CANDIDATE: cand, REFERENCE: ref}
    for r in range(rounds):
        played = await play_round(judge, samples, r, seed, labels, c)
        c.rounds.append(played)
        if played["winner"] == ERROR:
            return c
    taken = {side: sum(1 for r in c.rounds if r["winner"] == side) for side in SIDES}
    c.winner = (CANDIDATE if taken[CANDIDATE] > taken[REFERENCE] else
                REFERENCE if taken[REFERENCE] > taken[CANDIDATE] else TIE)
    c.why = f"rounds {taken[CANDIDATE]}-{taken[REFERENCE]}"
    return c
