"""The two sides of a ToolEval win rate, and a stored comparison read back from its record.

A side is an answer set: answer files, a toolscore run (its transcripts as solution paths), or
a ``tooleval`` run, whose stored judgements and pass labels come with it so nothing is judged
twice. Queries are paired by (subset, query id); a query one side lacks is a side with no
answer, which loses the round (reference) or the query (stable). Reading records back here
keeps ``winrate_benchmark`` about the protocol.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.benchmarks.tooleval import scoring
from toolscore.benchmarks.tooleval.data import Sample as Answered
from toolscore.benchmarks.tooleval.data import keep_test_ids
from toolscore.benchmarks.tooleval.from_runs import is_run_dir
from toolscore.benchmarks.tooleval.passrate import ERROR, QueryResult
from toolscore.benchmarks.tooleval.winrate import Comparison


@dataclass
class Side:
    """One side of a query: its answer (None: no answer for this query) and, when it comes
    from a tooleval run, that run's stored judgements and labels."""

    sample: Answered | None
    stored: dict[str, Any] | None = None


@dataclass
class Pair:
    subset: str
    query_id: str
    candidate: Side
    reference: Side = field(default_factory=lambda: Side(None))


def load_side(path: Path, subset: list[str], test_ids: Path | None = None
              ) -> dict[tuple[str, str], Side]:
    """A side's queries by (subset, query id): a tooleval run's with its stored labels, or
    answers loaded as the ``tooleval`` benchmark loads them. Whole: a limit is taken on the
    pairs (:func:`first_per_subset`), never on one side."""
    from toolscore.benchmarks.registry import make_benchmark
    from toolscore.records import RunStore

    stored: dict[tuple[str, str], dict[str, Any]] = {}
    if is_run_dir(path) and RunStore(path).config().benchmark == "tooleval":
        store = RunStore(path)
        config = store.config()
        bench = make_benchmark("tooleval", config.data, download=False, **config.options)
        for (_, epoch), r in store.latest().items():
            output = r.get("output")
            if epoch == 0 and r.get("status") == "ok" and isinstance(output, dict):
                scores = r.get("scores") or {}
                passed = scores.get("passed")
                stored[(str(output["subset"]), str(output["query_id"]))] = {
                    "judgements": output.get("judgements") or [],
                    "gave_up": bool(output.get("gave_up")),
                    "outcomes": scores.get("votes") or [], "passed": passed,
                    "label": scores.get("label", passed)}
        answered = [s.data for s in bench.samples()]
        if subset:
            answered = [s for s in answered if s.subset in subset]
        if test_ids is not None:
            answered = keep_test_ids(answered, test_ids)
    else:
        from toolscore.benchmarks.tooleval.benchmark import ToolEvalBenchmark, ToolEvalOptions

        plain = ToolEvalBenchmark(None, ToolEvalOptions(answers=path, subset=list(subset),
                                                        test_ids=test_ids))
        answered = [s.data for s in plain.samples()]
    return {(s.subset, s.query_id): Side(s, stored.get((s.subset, s.query_id)))
            for s in answered}


def pairs(candidate: dict[tuple[str, str], Side],
          reference: dict[tuple[str, str], Side]) -> list[Pair]:
    """Every query on either side, the candidate's order first."""
    keys = list(candidate) + [k for k in reference if k not in candidate]
    return [Pair(k[0], k[1], candidate.get(k, Side(None)), reference.get(k, Side(None)))
            for k in keys]


def first_per_subset(compared: list[Pair], limit: int | None) -> list[Pair]:
    """The first ``limit`` pairs of each subset, in order (all of them when None)."""
    if limit is None:
        return compared
    taken: dict[str, int] = {}
    kept = []
    for p in compared:
        taken[p.subset] = taken.get(p.subset, 0) + 1
        if taken[p.subset] <= limit:
            kept.append(p)
    return kept


def placeholder(pair: Pair) -> Answered:
    """The query of a pair with no answer, for the side that has none."""
    other = pair.candidate.sample or pair.reference.sample
    assert other is not None
    return Answered(pair.query_id, other.query, other.available_tools, None, pair.subset)


def comparison(record: dict[str, Any]) -> Comparison:
    """A stored record as the win-rate summary's :class:`Comparison`; a sample the runner
    recorded as an error (infrastructure) is one judge error."""
    output: dict[str, Any] = record["output"] if isinstance(record.get("output"), dict) else {}
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
                      [scoring.verdict_from_dict(v) for v in c.get("verdicts") or []],
                      list(c.get("rounds") or []))


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
                               side.get("passed"), side.get("label")))
    return out
