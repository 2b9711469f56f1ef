"""ToolEval's win rate as a benchmark: one sample per query present in either answer set, the
run's model as the judge, :func:`~toolscore.benchmarks.tooleval.winrate.compare` as the
protocol.

A comparison needs each side's pass label first. A side given as a ``tooleval`` run directory
brings its labels (and the verdicts behind them) from that run's records, as that run scored
them: nothing is judged twice. Any other side (answer files, or a ToolTalk/demo/AutoDE run
whose transcripts are the answers) is judged here, query by query, exactly as the ``tooleval``
benchmark judges it (same prompts, votes and cache entries). Every verdict is stored in the
record, so the run resumes, reports and exports like any other; the winner is decided while
running (which judge calls a comparison needs depends on the labels), so rescoring re-reads
it, and ``strict`` and ``seed`` are settings of the run, not of its scoring.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import Benchmark, Column, Sample, option
from toolscore.benchmarks.tooleval import scoring
from toolscore.benchmarks.tooleval.benchmark import ToolEvalBenchmark, ToolEvalOptions
from toolscore.benchmarks.tooleval.data import Sample as Answered
from toolscore.benchmarks.tooleval.data import ToolEvalDataError
from toolscore.benchmarks.tooleval.from_runs import is_run_dir
from toolscore.benchmarks.tooleval.judge import (
    JUDGE_SEED,
    MAX_TOKENS,
    load_config,
    prompts_sha256,
    sample_judge,
)
from toolscore.benchmarks.tooleval.passrate import (
    ERROR,
    QueryResult,
    judge_once,
    reference_pass,
    summarize,
)
from toolscore.benchmarks.tooleval.winrate import POINTS, Comparison, compare, report

WIN_KINDS = ("tooleval-pref", "tooleval-pass")


@dataclass
class Side:
    """One side of a query: its answer (None: no answer for this query) and, when it comes
    from a tooleval run, that run's stored judgements and label."""

    sample: Answered | None
    stored: dict[str, Any] | None = None


@dataclass
class Pair:
    subset: str
    query_id: str
    candidate: Side
    reference: Side = field(default_factory=lambda: Side(None))


@dataclass
class WinRateOptions:
    candidate: Path | None = option(None, "Candidate answers: answer files, a toolscore run, "
                                    "or a tooleval run (its pass labels are reused).")
    reference: Path | None = option(None, "Reference answers (the same forms).")
    subset: list[str] = option(list, "Only these subsets (repeatable), e.g. G1_tool.")
    per_subset: int | None = option(None, "Only the first N queries of each subset.")
    votes: int = option(4, "Pass-rate judgements per query, for sides judged here.")
    pref_votes: int = option(1, "Votes per order for solved status and preference.")
    seed: int = option(0, "Seed of the reference rule's coin flips (pass labels).")
    strict: bool = option(False, "A give-up answer fails (pass labels judged here).")
    temperature: float = option(0.7, "Judge sampling temperature.")
    judge_config: Path | None = option(
        None, "Judge configuration file (kind tooleval-pref or tooleval-pass): its template, "
        "temperature and votes apply; --model is the judge.")


COLUMNS = [Column("queries", "queries", "count"), Column("errors", "errors", "count"),
           Column("wins", "wins", "count"), Column("ties", "ties", "count"),
           Column("losses", "losses", "count"), Column("win_rate", "win rate"),
           Column("first_shown_pick_rate", "first-shown picks")]


def load_side(path: Path, subset: list[str], per_subset: int | None) -> dict[tuple[str, str],
                                                                               Side]:
    """A side's queries by (subset, query id): a tooleval run's with its stored labels, or
    answers loaded as the ``tooleval`` benchmark loads them."""
    from toolscore.records import RunStore

    stored: dict[tuple[str, str], dict[str, Any]] = {}
    if is_run_dir(path) and RunStore(path).config().benchmark == "tooleval":
        from toolscore.benchmarks.registry import make_benchmark

        store = RunStore(path)
        config = store.config()
        bench = make_benchmark("tooleval", config.data, download=False, **config.options)
        for (_, epoch), r in store.latest().items():
            output = r.get("output")
            if epoch == 0 and r.get("status") == "ok" and isinstance(output, dict):
                scores = r.get("scores") or {}
                stored[(str(output["subset"]), str(output["query_id"]))] = {
                    "judgements": output.get("judgements") or [],
                    "gave_up": bool(output.get("gave_up")),
                    "outcomes": scores.get("votes") or [], "passed": scores.get("passed")}
        answered = [s.data for s in bench.samples()]
        if subset:
            answered = [s for s in answered if s.subset in subset]
    else:
        bench = ToolEvalBenchmark(None, ToolEvalOptions(answers=path, subset=list(subset),
                                                        per_subset=per_subset))
        answered = [s.data for s in bench.samples()]
    return {(s.subset, s.query_id): Side(s, stored.get((s.subset, s.query_id)))
            for s in answered}


def _placeholder(pair: Pair) -> Answered:
    other = pair.candidate.sample or pair.reference.sample
    assert other is not None
    return Answered(pair.query_id, other.query, other.available_tools, None, pair.subset)


class ToolEvalWinRateBenchmark(Benchmark):
    """ToolEval's win rate of a candidate's answers against a reference's, by an LLM judge."""

    name = "tooleval-winrate"
    description = ("ToolEval (ToolBench): win rate of one answer set against another, judged "
                   "by the run's model (both orders; ties count half)")
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
        for name in ("votes", "pref_votes"):
            if getattr(options, name) < 1:
                raise ValueError(f"tooleval-winrate: option {name!r}: must be at least 1")
        self.options = options
        self._judge_config: Any = None
        self._judge_loaded = False
        self._samples: list[Sample] | None = None

    @property
    def judge_config(self) -> Any:
        if not self._judge_loaded:
            self._judge_config = load_config(self.options.judge_config, WIN_KINDS)
            self._judge_loaded = True
        return self._judge_config

    @property
    def votes(self) -> int:
        cfg = self.judge_config
        return (cfg.votes if cfg is not None and cfg.votes else None) or self.options.votes

    def mode_label(self) -> str:
        return "both orders" + (", strict" if self.options.strict else "")

    def config(self) -> dict[str, Any]:
        o, cfg = self.options, self.judge_config
        temperature = cfg.temperature if cfg is not None and cfg.temperature is not None \
            else o.temperature
        out: dict[str, Any] = {
            "candidate": str(o.candidate), "reference": str(o.reference),
            "subset": list(o.subset), "per_subset": o.per_subset, "votes": self.votes,
            "pref_votes": o.pref_votes, "seed": o.seed, "strict": o.strict,
            "mode": self.mode_label(), "temperature": temperature, "max_tokens": MAX_TOKENS,
            "judge_seed": JUDGE_SEED,
            "prompts": f"toolscore's own wording (sha256 {prompts_sha256()})"}
        if cfg is not None:
            out.update(judge_id=cfg.id, judge_config=cfg.identity())
        return out

    # -- samples -----------------------------------------------------------------------------
    def samples(self) -> list[Sample]:
        if self._samples is None:
            o = self.options
            assert o.candidate is not None and o.reference is not None
            cand = load_side(Path(o.candidate), o.subset, o.per_subset)
            ref = load_side(Path(o.reference), o.subset, o.per_subset)
            keys = list(cand) + [k for k in ref if k not in cand]
            pairs = [Pair(k[0], k[1], cand.get(k, Side(None)), ref.get(k, Side(None)))
                     for k in keys]
            self._samples = [Sample(f"{p.subset}/{p.query_id}", p, {"split": p.subset})
                             for p in pairs]
        return self._samples

    def check(self) -> None:
        _ = self.judge_config
        if not self.samples():
            raise ToolEvalDataError(str(self.options.candidate), None, "(answers)",
                                    "no queries to compare")

    # -- protocol ----------------------------------------------------------------------------
    async def _label(self, judge: Any, side: Side) -> dict[str, Any]:
        """A side's pass label: stored, or judged now as the tooleval benchmark judges."""
        if side.sample is None:
            return {"source": "missing", "passed": False}
        if side.stored is not None:
            return {"source": "run", **side.stored}
        s = side.sample
        js = [await judge_once(judge, s, v) for v in range(self.votes)]
        gave_up = bool(s.answer and s.answer.finished and s.answer.gave_up)
        stored = [j.to_dict() for j in js]
        outcomes = [scoring.judgement(j, gave_up, self.options.strict).outcome for j in stored]
        return {"source": "judged", "judgements": stored, "gave_up": gave_up,
                "outcomes": outcomes,
                "passed": reference_pass(outcomes, self.options.seed, (s.subset, s.query_id))}

    async def run_sample(self, sample: Sample, model: Any, epoch: int) -> dict[str, Any]:
        pair: Pair = sample.data
        judge = sample_judge(model, self.options.temperature, self.judge_config)
        cand = await self._label(judge, pair.candidate)
        ref = await self._label(judge, pair.reference)
        c = await compare(judge, pair.candidate.sample or _placeholder(pair),  # type: ignore[arg-type]
                          pair.reference.sample or _placeholder(pair), cand["passed"],
                          ref["passed"], self.options.pref_votes)
        query = (pair.candidate.sample or pair.reference.sample).query  # type: ignore[union-attr]
        return {"subset": pair.subset, "query_id": pair.query_id, "query": query,
                "judge": judge.name, "candidate": cand, "reference": ref,
                "comparison": {**c.to_dict(), "first_shown_picked": c.first_shown_picked}}

    # -- scoring -----------------------------------------------------------------------------
    def score(self, output: dict[str, Any], sample: Sample | None = None) -> dict[str, Any]:
        c = output.get("comparison") or {}
        winner = c.get("winner", ERROR)
        return {"winner": winner, "why": c.get("why"), "points": POINTS.get(winner),
                "candidate_passed": c.get("candidate_passed"),
                "reference_passed": c.get("reference_passed")}

    def aggregate(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        records = sorted(records, key=lambda r: (str(r.get("id")), int(r.get("epoch", 0))))
        comparisons = [comparison(r) for r in records]
        judges = sorted({str(r["output"].get("judge")) for r in records
                         if isinstance(r.get("output"), dict) and r["output"].get("judge")})
        doc = report(comparisons, ", ".join(judges) or "", self.options.pref_votes)
        doc["pass_rate"] = {role: summarize(side_results(records, role, self.options.strict),
                                            self.votes)
                            for role in ("candidate", "reference")}
        doc["pass_rate"].update(votes=self.votes, seed=self.options.seed)
        doc.update(mode=self.mode_label(), errors=sum(1 for r in records
                                                      if r.get("status") != "ok"),
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
    def summary_lines(cls, metrics: dict[str, Any]) -> list[str]:
        if not isinstance(metrics.get("overall"), dict):
            return []
        rules = metrics.get("rules") or {}
        passes = metrics.get("pass_rate") or {}
        rate = {k: (passes.get(k) or {}).get("pass_rate") for k in ("candidate", "reference")}
        shown = ", ".join(f"{k} {'-' if v is None else f'{100 * v:.1f}%'}"
                          for k, v in rate.items())
        return [f"rules: ties {rules.get('ties')}; orders {rules.get('orders')}",
                f"pass rate (reference rule): {shown}",
                f"judge: {metrics.get('judge')}; prompts: toolscore's own wording, not "
                "ToolEval's"]

    def record_view(self, record: dict[str, Any]) -> dict[str, Any]:
        output = record.get("output") if isinstance(record.get("output"), dict) else {}
        c = output.get("comparison") or {}
        messages = [{"role": "user", "content": output.get("query", "")}]
        for v in c.get("verdicts") or []:
            said = v.get("label") or f"error: {v.get('error')}"
            messages.append({"role": "judge", "content": f"{v.get('template')}: {said}. "
                             f"{v.get('reason') or ''}".strip()})
        summary = f"{c.get('winner', '')} ({c.get('why', '')})" if c else ""
        return {"summary": summary, "messages": messages}


def comparison(record: dict[str, Any]) -> Comparison:
    """A stored record as the win-rate summary's :class:`Comparison`; a sample the runner
    recorded as an error (infrastructure) is one judge error."""
    output = record.get("output") if isinstance(record.get("output"), dict) else {}
    subset = str(output.get("subset") or (record.get("meta") or {}).get("split") or "")
    qid = str(output.get("query_id") or str(record.get("id", "")).partition("/")[2])
    if record.get("status") != "ok":
        error = str(record.get("error") or "infrastructure")
        failed = scoring.verdict_from_dict({"template": "(infrastructure)", "error": error})
        return Comparison(subset, qid, ERROR, "judge error", verdicts=[failed])
    c = output.get("comparison") or {}
    return Comparison(subset, qid, str(c.get("winner", ERROR)), str(c.get("why", "")),
                      c.get("candidate_passed"), c.get("reference_passed"),
                      list(c.get("orders") or []), list(c.get("first_shown_picked") or []),
                      [scoring.verdict_from_dict(v) for v in c.get("verdicts") or []])


def side_results(records: list[dict[str, Any]], role: str,
                 strict: bool = False) -> list[QueryResult]:
    """The pass-rate results of one side over the queries it answered (or was asked)."""
    out = []
    for r in records:
        output = r.get("output") if isinstance(r.get("output"), dict) else None
        side = (output or {}).get(role) or {}
        if output is None or side.get("source") in (None, "missing"):
            continue
        js = scoring.judgements({"judgements": side.get("judgements"),
                                 "gave_up": side.get("gave_up")}, strict)
        for j, outcome in zip(js, side.get("outcomes") or [], strict=False):
            j.outcome = outcome
        out.append(QueryResult(str(output["subset"]), str(output["query_id"]), js,
                               side.get("passed")))
    return out
