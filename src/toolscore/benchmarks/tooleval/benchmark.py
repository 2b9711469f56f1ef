"""ToolEval's pass rate as a benchmark: queries with a solution path as samples, the run's model
as the judge, the mode's rule as the aggregate.

The model under test produced its answers already (ToolBench's released answer files, raw
answers, or another toolscore run); what a ToolEval run calls is the judge. So the run's
``--model`` is the judge, each sample is judged ``votes`` times by
:func:`~toolscore.benchmarks.tooleval.passrate.judge_once`, and every verdict (with its raw
text) is stored in the record. Scoring reads only the record (:mod:`.scoring`), so rescoring,
``-T strict=true`` and resuming are free, and the run gets the same report, compare and export
as every other benchmark. Repeated epochs judge again with new vote numbers (new cache
entries and coin flips), which is what the stable rule's spread over runs needs; each
(query, epoch) then counts as one query of the aggregate.

Two modes (see :mod:`.passrate` and :mod:`.questions`): ``reference`` (the default) asks and
aggregates as ToolEval's own code does; ``stable`` is toolscore's procedure (JSON verdicts at a
higher temperature, judge errors dropped vote by vote, the StableToolBench score as the spread
measure). The mode is chosen when judging, since it decides the questions asked; a run
rescored under the other mode's rule says which questions its verdicts answered.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from toolscore.benchmarks.base import Benchmark, Column, IntervalMetric, Sample, option
from toolscore.benchmarks.options import CallApi, call_api_option
from toolscore.benchmarks.tooleval import scoring
from toolscore.benchmarks.tooleval.data import Sample as Answered
from toolscore.benchmarks.tooleval.data import ToolEvalDataError, keep_test_ids, load_answers
from toolscore.benchmarks.tooleval.dataset import SOURCE as TOOLEVAL_DATA
from toolscore.benchmarks.tooleval.from_runs import is_run_dir, load_run_report
from toolscore.benchmarks.tooleval.judge import load_config, sample_judge, sampling
from toolscore.benchmarks.tooleval.passrate import gave_up, judge_once
from toolscore.benchmarks.tooleval.prompts import answer_text
from toolscore.benchmarks.tooleval.questions import TEMPERATURE, prompts_label
from toolscore.benchmarks.tooleval.release import (
    ReleaseEvaluator,
    ReleaseQuestions,
    evaluator_option,
)
from toolscore.judges.registry import ConfiguredJudge

RELEASED = Path("converted") / "gpt-3.5-turbo_CoT"  # the answers the dataset ships
PASS_KINDS = ("tooleval-pass",)


@dataclass
class ToolEvalOptions:
    answers: Path | None = option(
        None, "Answers to judge: a folder of converted answer files (<subset>.json), raw "
        "answers (G*_answer/), or a toolscore run directory (its transcripts become solution "
        "paths). Default: the dataset's converted/gpt-3.5-turbo_CoT.")
    subset: list[str] = option(list, "Only these subsets (repeatable), e.g. G1_tool.")
    per_subset: int | None = option(None, "Only the first N queries of each subset.")
    mode: Literal["reference", "stable"] = option(
        "reference", "reference: as ToolEval's code (function-calling verdicts on the raw final "
        "answer; a query passes when no more votes fail than pass; no answer = not counted; a "
        "judge error = query left out and counted); stable: toolscore's (JSON verdicts, "
        "majority with coin ties, no answer = fail, StableToolBench mean ± std).")
    votes: int = option(4, "Judgements per query (the reference code's default).")
    seed: int = option(0, "Seed of the coin flips (unsure judgements, tied labels).")
    strict: bool = option(False, "A give-up answer fails (the reference lets it pass when the "
                          "judge calls the task unsolvable).")
    temperature: float | None = option(None, "Judge sampling temperature (default: 0.2 in "
                                       "the reference mode, as its code; 0.7 in the stable "
                                       "mode, so votes vary).")
    test_ids: Path | None = option(
        None, "ToolBench test-id files (a folder of <subset>.json, or one file): only queries "
        "both in the answers and in the list are judged, as the reference does.")
    call_api: CallApi = call_api_option("ToolBench's evaluator",
                                        "Reference mode only: the judge's requests.")
    evaluator: Path | None = evaluator_option()
    judge_config: Path | None = option(
        None, "Judge configuration file (kind tooleval-pass): its template, temperature and "
        "votes apply and its name labels every verdict; --model is the judge.")


COLUMNS = [Column("queries", "queries", "count"), Column("errors", "errors", "count"),
           Column("pass_rate", "pass rate"), Column("stable_mean", "stable mean"),
           Column("stable_std", "stable std", "number")]


class ToolEvalBenchmark(ReleaseQuestions, ConfiguredJudge, Benchmark):
    """ToolEval (Qin et al. 2023, ToolBench): pass rate of solution paths by an LLM judge."""

    name = "tooleval"
    description = ("ToolEval (ToolBench): pass rate of solution paths, judged by the run's "
                   "model (reference and stable rules)")
    Options = ToolEvalOptions
    dataset = "tooleval"
    dataset_source = TOOLEVAL_DATA
    roles = {"judge": "model"}  # the run's model judges the solution paths
    columns = COLUMNS

    @classmethod
    def needs_dataset(cls, options: Any) -> bool:
        return options.answers is None

    @classmethod
    def create(cls, data_dir: Path | None, options: Any) -> ToolEvalBenchmark:
        return cls(data_dir, options)

    def __init__(self, data_dir: str | Path | None, options: ToolEvalOptions | None = None,
                 ) -> None:
        self.options = options or ToolEvalOptions()
        if self.options.votes < 1:
            raise ValueError(f"tooleval: option 'votes': must be at least 1, got "
                             f"{self.options.votes}")
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self._judge_config: Any = None
        self._judge_loaded = False
        self._evaluator: ReleaseEvaluator | None = None
        self._samples: list[Sample] | None = None
        self._notes: dict[str, Any] | None = None

    # -- configuration -----------------------------------------------------------------------
    @property
    def source(self) -> Path:
        """The answers judged: the option, or the released answers of the dataset."""
        if self.options.answers is not None:
            return Path(self.options.answers)
        if self.data_dir is None:
            raise ToolEvalDataError("tooleval", None, "answers", "no answers given and no "
                                    "ToolEval dataset found (pass --answers DIR or --data DIR)")
        return self.data_dir / RELEASED

    @property
    def judge_config(self) -> Any:
        if not self._judge_loaded:
            self._judge_config = load_config(self.options.judge_config, PASS_KINDS)
            self._judge_loaded = True
        return self._judge_config

    def default_temperature(self) -> float:
        ev = self.found_evaluator()
        if ev is not None and ev.temperature is not None:
            return float(ev.temperature)
        return TEMPERATURE[self.options.mode]

    def config(self) -> dict[str, Any]:
        cfg, o = self.judge_config, self.options
        out: dict[str, Any] = {
            "data_dir": None if self.data_dir is None else str(self.data_dir),
            "answers": str(self.source), "subset": list(o.subset),
            "per_subset": o.per_subset, "votes": self.votes, "seed": o.seed,
            "strict": o.strict, "mode": self.mode_label(), "temperature": self.temperature,
            **sampling(self.found_evaluator(), o.mode), "call_api": o.call_api,
            "test_ids": None if o.test_ids is None else str(o.test_ids),
            "prompts": prompts_label(o.mode, self.found_evaluator()),
        }
        if cfg is not None:
            out.update(judge_id=cfg.id, judge_config=cfg.identity())
        if self._notes is not None:
            out["source_run"] = self._notes
        return out

    def mode_label(self) -> str:
        return f"{self.options.mode}, strict" if self.options.strict else self.options.mode

    # -- samples -----------------------------------------------------------------------------
    def samples(self) -> list[Sample]:
        if self._samples is None:
            answered = self._load()
            samples = [Sample(f"{s.subset}/{s.query_id}", s, {"split": s.subset})
                       for s in answered]
            seen: set[str] = set()
            for s in samples:
                if s.id in seen:
                    raise ToolEvalDataError(self.source, s.data.query_id, "query_id",
                                            f"appears twice in subset {s.data.subset!r}")
                seen.add(s.id)
            self._samples = samples
        return self._samples

    def _load(self) -> list[Answered]:
        source, subsets, limit = self.source, self.options.subset or None, \
            self.options.per_subset
        if not is_run_dir(source):
            answered = load_answers(source, subsets, limit)
            return answered if self.options.test_ids is None else \
                keep_test_ids(answered, self.options.test_ids)
        answered, self._notes = load_run_report(source)
        if self.options.test_ids is not None:
            answered = keep_test_ids(answered, self.options.test_ids)
        if subsets is not None:
            answered = [s for s in answered if s.subset in subsets]
        if limit is not None:
            taken: dict[str, int] = {}
            kept = []
            for s in answered:
                taken[s.subset] = taken.get(s.subset, 0) + 1
                if taken[s.subset] <= limit:
                    kept.append(s)
            answered = kept
        return answered

    def check(self) -> None:
        """Bad answer files and a bad judge configuration fail here, before any judge call."""
        _ = self.judge_config
        if not self.samples():
            raise ToolEvalDataError(self.source, None, "(answers)", "no queries to judge")
        _ = self.evaluator  # the reference mode's questions: missing files fail here

    # -- protocol ----------------------------------------------------------------------------
    async def run_sample(self, sample: Sample, model: Any, epoch: int) -> dict[str, Any]:
        """``votes`` judgements of one answer; the task is judged for a give-up even when
        scoring strictly, so the record can be scored under either rule."""
        s: Answered = sample.data
        judge = sample_judge(model, self.temperature, self.judge_config,
                             self.options.call_api if self.options.mode == "reference" else None)
        first = epoch * self.votes  # later epochs are new votes, not cache hits
        js = [await judge_once(judge, s, first + v, mode=self.options.mode,  # type: ignore[arg-type]
                               evaluator=self.evaluator)
              for v in range(self.votes)]
        answer = s.answer
        return {
            "subset": s.subset, "query_id": s.query_id,
            "key": [s.subset, s.query_id, *([epoch] if epoch else [])],
            "query": s.query, "answer": None if answer is None else answer_text(answer),
            "finished": bool(answer and answer.finished),
            "gave_up": gave_up(s, self.options.mode),
            "judge": judge.name, "procedure": self.options.mode,
            "judgements": [j.to_dict() for j in js],
        }

    # -- scoring -----------------------------------------------------------------------------
    def score(self, output: dict[str, Any], sample: Sample | None = None) -> dict[str, Any]:
        o = self.options
        return scoring.score_output(output, o.strict, o.seed, o.mode)

    def aggregate(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        metrics = scoring.aggregate(records, strict=self.options.strict, seed=self.options.seed,
                                    votes=self.votes, judge=None, mode=self.options.mode)
        metrics["prompts"] = prompts_label(self.options.mode, self.found_evaluator())
        if self.judge_config is not None:
            metrics["judge_config"] = self.judge_config.identity()
        return metrics

    @classmethod
    def headline_rows(cls, metrics: dict[str, Any]) -> dict[str, dict[str, Any]]:
        if not isinstance(metrics.get("overall"), dict):
            return {}
        rows = {s: scoring.headline(m) for s, m in (metrics.get("subsets") or {}).items()}
        rows["overall"] = scoring.headline(metrics["overall"])
        return rows

    @classmethod
    def primary_metric(cls, records: list[dict[str, Any]]) -> str | None:
        return "passed"

    @classmethod
    def interval_metrics(cls, records: list[dict[str, Any]]) -> list[IntervalMetric]:
        """The pass rate as published (the mean of ``passed`` over the queries it counts) and
        the mean stable score per query."""
        return [IntervalMetric("pass rate", "passed", key="pass_rate"),
                IntervalMetric("stable score", "stable")]

    @classmethod
    def summary_lines(cls, metrics: dict[str, Any]) -> list[str]:
        overall = metrics.get("overall")
        if not isinstance(overall, dict):
            return []
        mode = str(metrics.get("mode") or "reference")
        base = mode.split(",")[0] if mode.split(",")[0] in ("reference", "stable") else \
            "reference"  # runs before the modes were named "reference" or "strict"
        rules = metrics.get("rules") or {}
        lines = [f"{mode} mode (seed {metrics.get('seed')}): "
                 f"{rules.get('pass') or rules.get('reference')}"]
        if rules.get("denominator"):
            lines.append(f"denominator: {rules['denominator']}")
        lines += [f"stable score: {rules.get('stable')}",
                  f"judge: {metrics.get('judge')}, {metrics.get('votes')} votes per query; "
                  f"prompts: {metrics.get('prompts') or prompts_label(base)}"]
        asked = [q for q in metrics.get("questions") or [] if q != base]
        if asked:
            lines.append(f"the verdicts answered the {', '.join(asked)} questions; they are "
                         f"aggregated here by the {base} rule")
        if "strict" in mode:
            lines.append("strict: a give-up answer fails (the reference lets it pass when the "
                         "judge calls the task unsolvable)")
        if base == "reference" and overall.get("errors"):
            lines.append(f"{overall['errors']} queries with a judge error are left out (the "
                         "reference run would have stopped): the rate is the reference's only "
                         "when there are none")
        if overall.get("unanswered"):
            lines.append(f"{overall['unanswered']} queries without an answer: "
                         + ("not counted, as the reference" if base == "reference" else
                            "counted as failures"))
        causes = (overall.get("error_causes") or {})
        if causes:
            lines.append("judge errors: " + ", ".join(f"{k} {v}" for k, v in causes.items()))
        return lines

    def record_view(self, record: dict[str, Any]) -> dict[str, Any]:
        """The query, the answer judged, and every verdict with its reason."""
        output: dict[str, Any] = record["output"] if isinstance(record.get("output"), dict) else {}
        scores = record.get("scores") or {}
        passed = scores.get("passed")
        summary = "" if not scores else "no answer (not counted)" if scores.get(
            "answered") is False and passed is None else "judge error" if passed is None else \
            ("pass" if passed else "fail") + f" ({', '.join(scores.get('votes') or [])})"
        answer = output.get("answer")
        messages = [{"role": "user", "content": output.get("query", "")},
                    {"role": "assistant", "content": "(no answer)" if answer is None else
                     answer if output.get("finished") else f"(no Finish call) {answer}"}]
        for i, j in enumerate(output.get("judgements") or []):
            for v in j.get("verdicts") or []:
                said = v.get("label") or f"error: {v.get('error')}"
                messages.append({"role": "judge", "content": f"judgement {i + 1}, "
                                 f"{v.get('template')}: {said}. {v.get('reason') or ''}".strip()})
            if not j.get("verdicts"):
                messages.append({"role": "judge", "content": f"judgement {i + 1}: "
                                 f"{j.get('outcome')} ({j.get('why')}, no judge call)"})
        return {"summary": summary, "messages": messages}
