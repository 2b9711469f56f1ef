"""ToolEval win rate decided as the reference code decides it (the default mode).

A query is played over ``rounds`` rounds (the reference's ``evaluate_times``; with two or more
the reference itself stops on its second round, so its runs use one). Each round goes to one
side, in the reference's order of tests:

1. the pass-rate labels: a passed side beats a failed one, no judge call (the reference reads
   the pass-rate files always, whatever ``--use_pass_rate`` says);
2. a side with no answer loses the round, no judge call;
3. the answers as the reference's evaluator prepares them: ``method`` removed, the final answer
   cut at 1,000 characters, the tools stripped of description and parameters; shown in an
   order drawn by a seeded coin each round (the reference shuffles; its swap-back branch never
   runs, so the position is randomised, not balanced);
4. each shown answer's status, Solved > Unsure > Unsolved: an empty answer or one naming
   ``give_up_and_restart`` is Unsolved without a judge; otherwise the judge rates it (no reason
   asked, the Unsure second look), in the order shown; with ``use_pass_rate`` the statuses are
   the last pass-rate judgement's, the reference side's first whatever the order (the
   reference does not reorder them), and the task status the reference side's;
5. exactly one Solved wins; with none Solved, exactly one Unsure wins; otherwise, unless both
   are Solved or a task status is known, the task's solvability is asked (its verdict is not
   used); two identical answers (final answer and details) are a seeded coin; else the judge
   picks the better (``select_better_answer``).

The query is a win when the candidate took more rounds, a tie when both took as many. A judge
error in any round makes the query an error (the reference run would stop there): it is left
out of the win rate and counted. The coins are seeded by (seed, subset, query, round), so a
run is reproducible and rescoring needs no judge.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from toolscore.benchmarks.tooleval.data import Answer, Sample
from toolscore.benchmarks.tooleval.passrate import answer_status, coin
from toolscore.benchmarks.tooleval.questions import reference_procedure
from toolscore.benchmarks.tooleval.release import ReleaseEvaluator, ask, default_evaluator
from toolscore.benchmarks.tooleval.winrate import (
    CANDIDATE,
    ERROR,
    REFERENCE,
    TIE,
    Comparison,
)
from toolscore.judges.llm import LLMJudge

SIDES = (CANDIDATE, REFERENCE)
FINAL_CUT = 1000  # the reference's cut of a final answer in the preference
Order = Callable[[str, str, int], str]  # (subset, query id, round) -> the side shown first


def other(side: str) -> str:
    return REFERENCE if side == CANDIDATE else CANDIDATE


def prepared(answer: Answer) -> dict[str, Any]:
    """The answer record as the reference's preference shows it."""
    record = dict(answer.as_record())
    record.pop("method", None)
    record["final_answer"] = str(record.get("final_answer", ""))[:FINAL_CUT]
    return record


def prepared_sample(sample: Sample) -> Sample:
    """``sample`` with its answer and tools as the preference prepares them."""
    answer = sample.answer
    assert answer is not None
    record = prepared(answer)
    cut = Answer(answer.method, record["final_answer"], answer.path, answer.total_steps,
                 record)
    tools = [{k: v for k, v in t.items() if k not in ("description", "parameters")}
             if isinstance(t, dict) else t for t in sample.available_tools]
    return Sample(sample.query_id, sample.query, tools, cut, sample.subset)


def _status(status: Any) -> str:
    return status if status in ("Solved", "Unsure", "Unsolved") else "Unsolved"


async def play_round(judge: LLMJudge, samples: dict[str, Sample], round_: int, seed: int,
                     labels: dict[str, Any] | None, use_pass_rate: bool,
                     evaluator: ReleaseEvaluator, c: Comparison,
                     order: Order | None = None) -> dict[str, Any]:
    """One round: who took it and why (``winner`` "error" on a judge error). ``labels`` are
    each side's pass-rate result (``label``, ``last``: the last judgement's statuses)."""
    key = (c.subset, c.query_id, round_)
    if labels is not None and all(labels[s] is not None for s in SIDES):
        passed = {s: labels[s]["label"] for s in SIDES}
        if passed[CANDIDATE] != passed[REFERENCE] and None not in passed.values():
            winner: str | None = CANDIDATE if passed[CANDIDATE] else REFERENCE
            return {"round": round_, "winner": winner, "why": "pass label"}
    missing = [side for side in SIDES if samples[side].answer is None]
    if missing:
        winner = other(missing[0]) if len(missing) == 1 else None
        return {"round": round_, "winner": winner, "why": "missing answer"}
    first = order(c.subset, c.query_id, round_) if order is not None else (
        CANDIDATE if coin(seed, *key, "order") else REFERENCE)
    shown = (first, other(first))
    view = {s: prepared_sample(samples[s]) for s in SIDES}
    asked = reference_procedure(evaluator, reason=False)
    out: dict[str, Any] = {"round": round_, "shown_first": first}
    task: str | None = None
    if use_pass_rate and labels is not None and all(labels[s] for s in SIDES):
        # as the reference: [reference, candidate] statuses, whatever the order shown
        by_position = [_status(labels[REFERENCE]["last"][0]),
                       _status(labels[CANDIDATE]["last"][0])]
        task = labels[REFERENCE]["last"][1] or "Solvable"
    else:
        by_position = []
        for side in shown:
            s = view[side]
            if s.answer is not None and s.answer.gave_up_raw:
                by_position.append("Unsolved")
                continue
            got = await answer_status(judge, s, round_, asked, c.verdicts)
            if got is None:
                return {**out, "winner": ERROR, "why": "judge error"}
            by_position.append(got)
    out["statuses"] = {side: by_position[i] for i, side in enumerate(shown)}
    for tier, why in (("Solved", "solved"), ("Unsure", "unsure")):
        top = [i for i in range(2) if by_position[i] == tier]
        if len(top) == 1:
            return {**out, "winner": shown[top[0]], "why": why}
        if top:
            break
    if task is None and "Solved" not in by_position:
        v = await asked.ask(judge, asked.task, asked.variables(view[REFERENCE]), round_)
        c.verdicts.append(v)
        if not v.ok:
            return {**out, "winner": ERROR, "why": "judge error"}
    a, b = (prepared(samples[s].answer) for s in shown)  # type: ignore[arg-type]
    if a["final_answer"] == b["final_answer"] and \
            str(a["answer_details"]) == str(b["answer_details"]):
        winner = CANDIDATE if coin(seed, *key, "identical") else REFERENCE
        return {**out, "winner": winner, "why": "identical"}
    v = await ask(judge, evaluator["select_better_answer"],
                  {"query": samples[CANDIDATE].query, "answer_0": json.dumps(a),
                   "answer_1": json.dumps(b)}, round_, reason=True,
                  max_tokens=evaluator.max_tokens)
    c.verdicts.append(v)
    if not v.ok or v.label not in ("0", "1"):
        return {**out, "winner": ERROR, "why": "judge error"}
    c.first_shown_picked.append(v.label == "0")
    return {**out, "winner": shown[int(v.label)], "why": "preference"}


async def compare_rounds(judge: LLMJudge, cand: Sample, ref: Sample, *, rounds: int, seed: int,
                         evaluator: ReleaseEvaluator | None = None,
                         labels: dict[str, Any] | None = None,
                         use_pass_rate: bool = False, order: Order | None = None
                         ) -> Comparison:
    """One query over ``rounds`` rounds (never raises for judge failures). ``labels`` are each
    side's pass-rate result (``{"label", "last": (answer status, task status)}``; None for a
    side without an answer; an answered side without one is a pass-rate judge error, where the
    reference would have stopped: the query is an error); ``order`` replaces the coin that
    decides which side is shown first; ``evaluator`` is by default the release's
    (:func:`~.release.default_evaluator`)."""
    c = Comparison(cand.subset or ref.subset, cand.query_id or ref.query_id, ERROR,
                   "judge error", None if labels is None or labels[CANDIDATE] is None
                   else labels[CANDIDATE]["label"],
                   None if labels is None or labels[REFERENCE] is None
                   else labels[REFERENCE]["label"])
    samples = {CANDIDATE: cand, REFERENCE: ref}
    if labels is not None and any(labels[s] is None and samples[s].answer is not None
                                  for s in SIDES):
        c.why = "pass label missing (judge error in pass rate)"  # the reference stopped there
        return c
    evaluator = evaluator or default_evaluator()
    for r in range(rounds):
        played = await play_round(judge, samples, r, seed, labels, use_pass_rate, evaluator,
                                  c, order)
        c.rounds.append(played)
        if played["winner"] == ERROR:
            return c
    taken = {side: sum(1 for r in c.rounds if r["winner"] == side) for side in SIDES}
    c.winner = (CANDIDATE if taken[CANDIDATE] > taken[REFERENCE] else
                REFERENCE if taken[REFERENCE] > taken[CANDIDATE] else TIE)
    c.why = f"rounds {taken[CANDIDATE]}-{taken[REFERENCE]}"
    return c
