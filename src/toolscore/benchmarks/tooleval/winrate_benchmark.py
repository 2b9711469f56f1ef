"""ToolEval's win rate as a benchmark: one sample per query present in either answer set, the
run's model as the judge.

Two modes. ``reference`` (the default) decides as ToolEval's code does
(:mod:`.winrate_reference`: ``rounds`` rounds per query, status tiers with the Unsure second
look, a shuffled order, identical answers and missing answers decided without a judge, win
rate = wins / queries with ties apart); with ``use_pass_rate`` the statuses come from each
side's pass-rate labels, as the reference's ``--use_pass_rate``. ``stable`` is toolscore's
procedure (:func:`~toolscore.benchmarks.tooleval.winrate.compare`: the pass-label shortcut,
both orders judged, position bias, ties as half).

Pass labels come from a ``tooleval`` run directory given as a side (its records, as that run
scored them: nothing is judged twice), or are judged here exactly as the ``tooleval``
benchmark judges, in the same mode. Every verdict is stored in the record, so the run resumes,
reports and exports like any other; the winner is decided while running (which judge calls a
comparison needs depends on what came before), so rescoring re-reads it, and ``mode``,
``strict`` and ``seed`` are settings of the run, not of its scoring.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from toolscore.benchmarks.base import Benchmark, Column, IntervalMetric, Sample, option
from toolscore.benchmarks.options import CallApi, call_api_option
from toolscore.benchmarks.tooleval import scoring
from toolscore.benchmarks.tooleval.data import ToolEvalDataError
from toolscore.benchmarks.tooleval.judge import load_config, sample_judge, sampling
from toolscore.benchmarks.tooleval.passrate import (
    ERROR,
    gave_up,
    judge_once,
    query_pass,
    summarize,
)
from toolscore.benchmarks.tooleval.questions import TEMPERATURE, prompts_label
from toolscore.benchmarks.tooleval.release import (
    ReleaseEvaluator,
    ReleaseQuestions,
    evaluator_option,
)
from toolscore.benchmarks.tooleval.sides import (
    Pair,
    Side,
    comparison,
    first_per_subset,
    load_side,
    pairs,
    placeholder,
    side_results,
)
from toolscore.benchmarks.tooleval.winrate import POINTS, compare, report
from toolscore.benchmarks.tooleval.winrate_reference import compare_rounds
from toolscore.judges.registry import ConfiguredJudge

WIN_KINDS = ("tooleval-pref", "tooleval-pass")


def last_status(side: dict[str, Any]) -> dict[str, Any] | None:
    """A side's pass label and its last judgement's (answer, task) status, which is what the
    reference's pass-rate file keeps for ``--use_pass_rate``; None when there is no label."""
    if side.get("label") is None or side.get("source") == "missing":
        return None
    js = side.get("judgements") or [{}]
    return {"label": side["label"], "last": (js[-1].get("answer_status") or "Unsolved",
                                             js[-1].get("task_status") or "Solvable")}


@dataclass
class WinRateOptions:
    candidate: Path | None = option(None, "Candidate answers: answer files, a toolscore run, "
                                    "or a tooleval run (its pass labels are reused).")
    reference: Path | None = option(None, "Reference answers (the same forms).")
    mode: Literal["reference", "stable"] = option(
        "reference", "reference: as ToolEval's code (rounds; Solved > Unsure > Unsolved; "
        "shuffled order; win rate = wins / queries, ties apart); stable: toolscore's (pass "
        "labels, both orders, position bias, ties count half).")
    rounds: int = option(2, "Reference mode: rounds per query (the reference's "
                         "evaluate_times; its default).")
    use_pass_rate: bool = option(False, "Reference mode: statuses from each side's pass-rate "
                                 "labels instead of the judge (the reference's --use_pass_rate).")
    subset: list[str] = option(list, "Only these subsets (repeatable), e.g. G1_tool.")
    per_subset: int | None = option(None, "Only the first N queries of each subset.")
    test_ids: Path | None = option(None, "ToolBench test-id files (a folder of <subset>.json): "
                                   "only these queries.")
    votes: int = option(4, "Pass-rate judgements per query, for sides judged here.")
    pref_votes: int = option(1, "Stable mode: votes per order for solved status and "
                             "preference.")
    seed: int = option(0, "Seed of the coin flips (pass labels, identical answers, order).")
    strict: bool = option(False, "A give-up answer fails (pass labels judged here).")
    temperature: float | None = option(None, "Judge sampling temperature (default: 0.2 in "
                                       "the reference mode, 0.7 in the stable mode).")
    call_api: CallApi = call_api_option("ToolBench's evaluator",
                                        "Reference mode only: the judge's requests.")
    evaluator: Path | None = evaluator_option()
    judge_config: Path | None = option(
        None, "Judge configuration file (kind tooleval-pref or tooleval-pass): its template, "
        "temperature and votes apply; --model is the judge.")


COLUMNS = [Column("queries", "queries", "count"), Column("errors", "errors", "count"),
           Column("wins", "wins", "count"), Column("ties", "ties", "count"),
           Column("losses", "losses", "count"), Column("win_rate", "win rate"),
           Column("tie_rate", "tie rate"), Column("first_shown_pick_rate", "first-shown picks")]


class ToolEvalWinRateBenchmark(ReleaseQuestions, ConfiguredJudge, Benchmark):
    """ToolEval's win rate of a candidate's answers against a reference's, by an LLM judge."""

    name = "tooleval-winrate"
    description = ("ToolEval (ToolBench): win rate of one answer set against another, judged "
                   "by the run's model (reference: rounds, ties apart; stable: both orders, "
                   "ties count half)")
    Options = WinRateOptions
    dataset = None
    columns = COLUMNS

    @classmethod
    def create(cls, data_dir: Path | None, options: Any) -> ToolEvalWinRateBenchmark:
        return cls(options)

    def __init__(self, options: WinRateOptions) -> None:
        if options.candidate is None or options.reference is None:
            raise ValueError("tooleval-winrate: options 'candidate' and 'reference' are both "
                             "needed (answer folders or run directories)")
        for name in ("votes", "pref_votes", "rounds"):
            if getattr(options, name) < 1:
                raise ValueError(f"tooleval-winrate: option {name!r}: must be at least 1")
        self.options = options
        self._judge_config: Any = None
        self._judge_loaded = False
        self._evaluator: ReleaseEvaluator | None = None
        self._samples: list[Sample] | None = None

    @property
    def judge_config(self) -> Any:
        if not self._judge_loaded:
            self._judge_config = load_config(self.options.judge_config, WIN_KINDS)
            self._judge_loaded = True
        return self._judge_config

    def default_temperature(self) -> float:
        ev = self.found_evaluator()
        if ev is not None and ev.temperature is not None:
            return float(ev.temperature)
        return TEMPERATURE[self.options.mode]

    def mode_label(self) -> str:
        o = self.options
        label = (f"reference, {o.rounds} rounds" + (", pass-rate statuses" if o.use_pass_rate
                                                     else "")
                 if self.options.mode == "reference" else "stable, both orders")
        return label + (", strict" if o.strict else "")

    def config(self) -> dict[str, Any]:
        o, cfg = self.options, self.judge_config
        out: dict[str, Any] = {
            "candidate": str(o.candidate), "reference": str(o.reference),
            "subset": list(o.subset), "per_subset": o.per_subset, "votes": self.votes,
            "pref_votes": o.pref_votes, "rounds": o.rounds, "use_pass_rate": o.use_pass_rate,
            "seed": o.seed, "strict": o.strict, "mode": self.mode_label(),
            "temperature": self.temperature, **sampling(self.found_evaluator(), self.options.mode),
            "call_api": o.call_api,
            "test_ids": None if o.test_ids is None else str(o.test_ids),
            "prompts": prompts_label(self.options.mode, self.found_evaluator())}
        if cfg is not None:
            out.update(judge_id=cfg.id, judge_config=cfg.identity())
        return out

    # -- samples -----------------------------------------------------------------------------
    def samples(self) -> list[Sample]:
        if self._samples is None:
            o = self.options
            assert o.candidate is not None and o.reference is not None
            # Each side whole, then the limit on the pairs: a side limited on its own would
            # drop queries the other side keeps (answers in another order, a run's records)
            # and turn them into missing answers.
            cand = load_side(Path(o.candidate), o.subset, o.test_ids)
            ref = load_side(Path(o.reference), o.subset, o.test_ids)
            self._samples = [Sample(f"{p.subset}/{p.query_id}", p, {"split": p.subset})
                             for p in first_per_subset(pairs(cand, ref), o.per_subset)]
        return self._samples

    def check(self) -> None:
        _ = self.judge_config
        if not self.samples():
            raise ToolEvalDataError(str(self.options.candidate), None, "(answers)",
                                    "no queries to compare")
        _ = self.evaluator  # the reference mode's questions: missing files fail here

    # -- protocol ----------------------------------------------------------------------------
    def _needs_labels(self) -> bool:
        return True  # stable: the shortcut; reference: its pass-label shortcut, always

    async def _label(self, judge: Any, side: Side) -> dict[str, Any]:
        """A side's pass label: stored, or judged now as the tooleval benchmark judges."""
        if side.sample is None:
            return {"source": "missing", "passed": False, "label": False}
        if side.stored is not None:
            return {"source": "run", **side.stored}
        if not self._needs_labels():
            return {"source": "not needed"}
        s = side.sample
        js = [await judge_once(judge, s, v, mode=self.options.mode, evaluator=self.evaluator)
              for v in range(self.votes)]
        stored = [j.to_dict() for j in js]
        gave = gave_up(s, self.options.mode)
        outcomes = [scoring.judgement(j, gave, self.options.strict).outcome for j in stored]
        passed, label = query_pass(outcomes, self.options.seed, (s.subset, s.query_id),
                                   self.options.mode)
        return {"source": "judged", "judgements": stored, "gave_up": gave,
                "outcomes": outcomes, "passed": passed, "label": label}

    async def run_sample(self, sample: Sample, model: Any, epoch: int) -> dict[str, Any]:
        pair: Pair = sample.data
        judge = sample_judge(model, self.temperature, self.judge_config,
                             self.options.call_api if self.options.mode == "reference" else None)
        cand = await self._label(judge, pair.candidate)
        ref = await self._label(judge, pair.reference)
        c_sample = pair.candidate.sample or placeholder(pair)
        r_sample = pair.reference.sample or placeholder(pair)
        if self.options.mode == "reference":
            c = await compare_rounds(judge, c_sample, r_sample,  # type: ignore[arg-type]
                                     rounds=self.options.rounds, seed=self.options.seed,
                                     evaluator=self.evaluator,  # type: ignore[arg-type]
                                     labels={"candidate": last_status(cand),
                                             "reference": last_status(ref)},
                                     use_pass_rate=self.options.use_pass_rate)
        else:
            c = await compare(judge, c_sample, r_sample,  # type: ignore[arg-type]
                              cand.get("label"), ref.get("label"), self.options.pref_votes)
        query = c_sample.query
        return {"subset": pair.subset, "query_id": pair.query_id, "query": query,
                "judge": judge.name, "procedure": self.options.mode, "candidate": cand,
                "reference": ref,
                "comparison": {**c.to_dict(), "first_shown_picked": c.first_shown_picked}}

    # -- scoring -----------------------------------------------------------------------------
    def score(self, output: dict[str, Any], sample: Sample | None = None) -> dict[str, Any]:
        c = output.get("comparison") or {}
        winner = c.get("winner", ERROR)
        return {"winner": winner, "why": c.get("why"), "points": POINTS.get(winner),
                "win": None if winner == ERROR else float(winner == "candidate"),
                "candidate_passed": c.get("candidate_passed"),
                "reference_passed": c.get("reference_passed")}

    def aggregate(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        records = sorted(records, key=lambda r: (str(r.get("id")), int(r.get("epoch", 0))))
        comparisons = [comparison(r) for r in records]
        judges = sorted({str(r["output"].get("judge")) for r in records
                         if isinstance(r.get("output"), dict) and r["output"].get("judge")})
        votes = self.options.rounds if self.options.mode == "reference" else self.options.pref_votes
        doc = report(comparisons, ", ".join(judges) or "", votes, self.options.mode)
        doc["pass_rate"] = {role: summarize(side_results(records, role, self.options.strict),
                                            self.votes, self.options.mode)
                            for role in ("candidate", "reference")}
        doc["pass_rate"].update(votes=self.votes, seed=self.options.seed)
        doc.update(mode=self.mode_label(),
                   prompts=prompts_label(self.options.mode, self.found_evaluator()),
                   errors=sum(1 for r in records if r.get("status") != "ok"),
                   usage=scoring.usage(records))
        if self.judge_config is not None:
            doc["judge_config"] = self.judge_config.identity()
        return doc

    @classmethod
    def headline_rows(cls, metrics: dict[str, Any]) -> dict[str, dict[str, Any]]:
        if not isinstance(metrics.get("overall"), dict):
            return {}
        groups = {**(metrics.get("subsets") or {}), "overall": metrics["overall"]}
        return {k: {**m, "first_shown_pick_rate": (m.get("position_bias") or {}).get(
            "first_shown_pick_rate")} for k, m in groups.items()}

    @classmethod
    def primary_metric(cls, records: list[dict[str, Any]]) -> str | None:
        return None  # a comparison has no pass/fail of its own

    @classmethod
    def interval_metrics(cls, records: list[dict[str, Any]]) -> list[IntervalMetric]:
        """The win rate as the run's mode publishes it: the mean of ``win`` (reference: ties
        count nothing) or of ``points`` (stable: ties count half) over judged queries."""
        stable = any((r.get("output") or {}).get("procedure") == "stable" or (
            isinstance(r.get("output"), dict) and "procedure" not in r["output"])
            for r in records if r.get("status") == "ok")
        return [IntervalMetric("win rate", "points" if stable else "win", key="win_rate")]

    @classmethod
    def summary_lines(cls, metrics: dict[str, Any]) -> list[str]:
        overall = metrics.get("overall")
        if not isinstance(overall, dict):
            return []
        rules = metrics.get("rules") or {}
        passes = metrics.get("pass_rate") or {}
        rate = {k: (passes.get(k) or {}).get("pass_rate") for k in ("candidate", "reference")}
        shown = ", ".join(f"{k} {'-' if v is None else f'{100 * v:.1f}%'}"
                          for k, v in rate.items())
        lines = [f"mode: {metrics.get('mode')}; ties {rules.get('ties')}; orders "
                 f"{rules.get('orders')}"]
        if rules.get("rounds"):
            lines.append(f"rounds: {rules['rounds']}")
        lines += [f"pass rate of the labels judged or reused: {shown}",
                  f"judge: {metrics.get('judge')}; prompts: "
                  f"{metrics.get('prompts') or prompts_label('stable')}"]
        mode = str(metrics.get("mode", ""))
        if mode.startswith("reference") and not mode.startswith("reference, 1 round"):
            lines.append("the reference's eval_preference.py stops at its second round (no "
                         "'round_1' entry): with one round it runs; these rounds go on")
        if "pass-rate statuses" in mode:
            lines.append("statuses from the pass rate as the reference reads them: each side's "
                         "last judgement, the reference side's first whatever order the answers "
                         "are shown in (not reordered on a shuffle)")
        if mode.startswith("reference") and (overall.get("decided_by") or {}).get(
                "missing answer"):
            lines.append("a query missing from one side: the reference would stop writing its "
                         "results there (it reads both sides' answers for every query)")
        if str(metrics.get("mode", "")).startswith("reference") and overall.get("errors"):
            lines.append(f"{overall['errors']} queries with a judge error are left out (the "
                         "reference run would have stopped)")
        return lines

    def record_view(self, record: dict[str, Any]) -> dict[str, Any]:
        output: dict[str, Any] = record["output"] if isinstance(record.get("output"), dict) else {}
        c = output.get("comparison") or {}
        messages = [{"role": "user", "content": output.get("query", "")}]
        for r in c.get("rounds") or []:
            messages.append({"role": "judge", "content": f"round {r.get('round', 0) + 1}: "
                             f"{r.get('winner')} ({r.get('why')})"})
        for v in c.get("verdicts") or []:
            said = v.get("label") or f"error: {v.get('error')}"
            messages.append({"role": "judge", "content": f"{v.get('template')}: {said}. "
                             f"{v.get('reason') or ''}".strip()})
        summary = f"{c.get('winner', '')} ({c.get('why', '')})" if c else ""
        return {"summary": summary, "messages": messages}
