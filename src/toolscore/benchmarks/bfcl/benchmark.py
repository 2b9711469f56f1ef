"""BFCL v4 (the Berkeley Function Calling Leaderboard), scored as its evaluator scores it.

A sample is one entry of a category. A single-turn entry: the model is sent what BFCL's OpenAI
function-calling handler sends (``prompting``), its reply is kept as BFCL keeps it (the calls
as ``{name: arguments text}``, or the text), decoded as BFCL decodes it (``decode``) and
judged by toolscore's implementation of BFCL's checker
(:func:`toolscore.benchmarks.bfcl.checker.check_entry`). A multi-turn entry is played turn by
turn on BFCL's stateful backends as the same handler plays it (``episode``) and judged by
BFCL's multi-turn checker
(:func:`toolscore.benchmarks.bfcl.multiturn.checker.check_multi_turn`). An agentic question
(memory, web search; named explicitly, web search only with ``-T web_search=true``) is played
the same way, after its memory prerequisites (``agentic_run``), and judged by BFCL's agentic
checker (:func:`toolscore.benchmarks.bfcl.agentic.check_agentic`). The run's figures
are BFCL's: per-category accuracy and the leaderboard summary (``summary``). A run can be
written as BFCL's own result files (export format ``bfcl``), and BFCL's result files scored
(``toolscore score bfcl --predictions DIR``), multi-turn ones included.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from toolscore.benchmarks.base import Benchmark, Breakdown, Column, IntervalMetric, Sample, option
from toolscore.benchmarks.bfcl import (
    agentic_run,
    episode,
    format_sensitivity,
    prompting,
    prompting_mode,
)
from toolscore.benchmarks.bfcl.categories import (
    AGENTIC,
    MULTI_TURN,
    RUNNABLE,
    SUPPORTED,
    is_agentic,
    parse_categories,
)
from toolscore.benchmarks.bfcl.data import class_documents, load_category
from toolscore.benchmarks.bfcl.dataset import SOURCE
from toolscore.benchmarks.bfcl.decode import raw_result, try_decode
from toolscore.benchmarks.bfcl.oracle import multi_turn_steps, oracle_steps
from toolscore.benchmarks.bfcl.release import RELEASE
from toolscore.benchmarks.bfcl.summary import FIGURES, aggregate
from toolscore.benchmarks.bfcl.transcript import multi_turn_view
from toolscore.benchmarks.options import OptionError
from toolscore.data import DataError

Mode = Literal["reference"]
MODE_LABEL = "reference (BFCL's OpenAI function-calling handler and evaluator)"
Protocol = Literal["reference", "free-running"]
FREE_RUNNING = "free-running"
FREE_RUNNING_LABEL = ("free-running (an agent's own loop on BFCL's multi-turn worlds served "
                      "over MCP, judged by BFCL's multi-turn checker; not comparable with "
                      "BFCL's figures)")


@dataclass
class BFCLOptions:
    category: list[str] = option(list, "Categories or groups as BFCL names them (repeatable or "
                                 "comma-separated), e.g. simple_python, live, multi_turn, "
                                 "memory; default: the single-turn and multi-turn "
                                 "categories (memory and web search run only when named).")
    mode: Mode = option("reference", "reference: requests, decoding and scoring as BFCL's "
                        "OpenAI function-calling handler and evaluator do them.")
    protocol: Protocol = option(
        "reference", "reference: toolscore plays each entry as BFCL's handler does | "
        "free-running: an agent (--model agent-http:URL) runs its own loop on the multi-turn "
        "entries' worlds served over MCP (multi-turn categories only; labelled, not "
        "comparable).",
        runs_code="serves the tools over MCP to the agent the run names (--model "
                  "agent-http:URL), which acts on them", runs_code_when="run")
    handler: Literal["fc", "prompting"] = option(
        "fc", "fc: the model calls functions natively (BFCL's function-calling handler); "
        "prompting: the functions are described in BFCL's system prompt and the calls are "
        "decoded from the reply text (BFCL's prompting handler; Python categories, and "
        "format_sensitivity, which runs only in this mode).")
    web_search: bool = option(
        False, "Opt in to the web search categories (web_search_base, web_search_no_snippet): "
        "they reach the internet (SerpAPI search with SERPAPI_API_KEY, page fetches). Off by "
        "default: without it they are refused.")


class BFCLBenchmark(Benchmark):
    """BFCL v4 single-turn categories (AST checking, relevance and irrelevance) and
    multi-turn categories (stateful backends, checked turn by turn)."""

    name = "bfcl"
    description = ("BFCL v4: single-turn function calling (AST and relevance categories) and "
                   "multi-turn conversations on stateful APIs, scored as bfcl-eval 2026.3.23")
    Options = BFCLOptions
    dataset = "bfcl"
    dataset_source = SOURCE
    dataset_extras = (RELEASE,)
    columns = [Column("accuracy", "Accuracy"), Column("correct", "Correct", "count"),
               Column("total", "Entries", "count")]

    @classmethod
    def create(cls, data_dir: Path | None, options: Any) -> BFCLBenchmark:
        return cls(data_dir, options)

    def __init__(self, data_dir: str | Path | None, options: BFCLOptions | None = None) -> None:
        self.options = options or BFCLOptions()
        free = self.options.protocol == FREE_RUNNING
        if self.options.handler == "prompting":
            self.categories = prompting_mode.parse_categories(
                self.options.category or prompting_mode.default_categories())
        else:
            self.categories = parse_categories(self.options.category
                                               or (MULTI_TURN if free else SUPPORTED),
                                               web_search=self.options.web_search)
        if free and set(self.categories) - set(MULTI_TURN):
            raise OptionError("bfcl: the free-running protocol plays multi-turn entries only "
                              f"(categories {', '.join(MULTI_TURN)})")
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self._samples: list[Sample] | None = None
        self._by_id: dict[str, Sample] | None = None
        self._chains = agentic_run.Chains()

    def config(self) -> dict[str, Any]:
        cfg = prompting.generate_config()
        out = {"data_dir": None if self.data_dir is None else str(self.data_dir),
               "categories": list(self.categories), "mode": self.options.mode,
               **({"handler": "prompting"} if self.options.handler == "prompting" else {}),
               "sampling": {"temperature": cfg.temperature, "max_tokens": None,
                            "tool_choice": None, "seed": None}}
        if self.options.protocol == FREE_RUNNING:
            out["protocol"] = FREE_RUNNING
        return out

    def mode_label(self) -> str:
        if self.options.protocol == FREE_RUNNING:
            return FREE_RUNNING_LABEL
        return prompting_mode.MODE_LABEL if self.options.handler == "prompting" else MODE_LABEL

    def serving(self) -> Any:
        """The multi-turn entries' worlds served to an agent (``toolscore mcp serve bfcl``,
        the free-running protocol; see :mod:`toolscore.benchmarks.bfcl.serving`)."""
        from toolscore.benchmarks.bfcl.serving import BFCLServing

        return BFCLServing(self)

    # -- data --------------------------------------------------------------------------------
    def samples(self) -> list[Sample]:
        if self._samples is None:
            if self.data_dir is None:
                raise DataError("bfcl: no data folder")
            out = []
            for category in self.categories:
                if category == prompting_mode.FORMAT_SENSITIVITY:
                    out += format_sensitivity.samples(self.data_dir)
                    continue
                if is_agentic(category):
                    out += agentic_run.samples(self.data_dir, category)
                    continue
                for entry, answer in load_category(self.data_dir, category):
                    out.append(Sample(str(entry["id"]), {"category": category, "entry": entry,
                                                         "answer": answer},
                                      {"split": category}))
            self._samples = out
        return self._samples

    def check(self) -> None:
        """The data, then what the agentic categories need (the web search opt-in and key,
        the memory_vector embedder), each a one-line error before the first model call."""
        super().check()
        agentic_run.check(list(self.categories), self.options.web_search)

    # -- protocol ----------------------------------------------------------------------------
    async def run_sample(self, sample: Sample, model: Any, epoch: int) -> dict[str, Any]:
        from toolscore.models.scripted.oracle import reference

        if self.options.handler == "prompting":
            return await prompting_mode.run_sample(sample, model, epoch)
        category, entry = sample.data["category"], sample.data["entry"]
        if self.options.protocol == FREE_RUNNING:
            from toolscore.benchmarks.serve.freerun import play

            return dict(await play(self, sample, model, epoch))
        if category in MULTI_TURN:
            return await self._play(sample, model, epoch)
        if is_agentic(category):
            if self.data_dir is None:
                raise DataError("bfcl: no data folder")
            return await agentic_run.run_sample(self.data_dir, self._chains, sample, model,
                                                epoch)
        with reference(oracle_steps(category, entry, sample.data["answer"])):
            reply = await model.generate(prompting.messages(entry),
                                         prompting.tools(entry, category),
                                         prompting.generate_config(epoch))
        return {"category": category, "result": raw_result(reply)}

    def documents(self, entry: dict[str, Any]) -> tuple[list[dict[str, Any]],
                                                        dict[int, list[dict[str, Any]]]]:
        """A multi-turn entry's documents (see :func:`prompting.multi_turn_documents`)."""
        if self.data_dir is None:
            raise DataError("bfcl: no data folder")
        data_dir = self.data_dir
        return prompting.multi_turn_documents(entry, lambda c: class_documents(data_dir, c))

    async def _play(self, sample: Sample, model: Any, epoch: int) -> dict[str, Any]:
        category, entry = sample.data["category"], sample.data["entry"]
        documents, held = self.documents(entry)
        played = await episode.play(entry, documents, held, model,
                                    prompting.generate_config(epoch),
                                    multi_turn_steps(entry, sample.data["answer"]))
        return {"category": category, "result": played.result,
                "executions": played.executions, "forced_quit": played.forced_quit}

    def score(self, output: dict[str, Any], sample: Sample) -> dict[str, Any]:
        from toolscore.benchmarks.bfcl.checker import check_entry

        if self.options.handler == "prompting":
            return prompting_mode.score(output, sample)
        category = sample.data["category"]
        if is_agentic(category):
            return agentic_run.score(output, sample)
        if category in MULTI_TURN:
            from toolscore.benchmarks.bfcl.multiturn.checker import check_multi_turn
            from toolscore.benchmarks.bfcl.serving import as_played

            if output.get("protocol") == "free-running":
                output = as_played(output)
            v = check_multi_turn(category, sample.data["entry"], sample.data["answer"],
                                 output.get("result"))
            return {"valid": bool(v.valid), "error_type": v.error_type,
                    "errors": list(v.errors)}
        decoded, error = try_decode(output.get("result"))
        v = check_entry(category, sample.data["entry"], sample.data["answer"], decoded, error)
        return {"valid": bool(v.valid), "error_type": v.error_type, "errors": list(v.errors)}

    def aggregate(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        ok = [r for r in records if r.get("status") == "ok" and r.get("scores")]
        out = aggregate([(str((r.get("meta") or {}).get("split")), bool(r["scores"]["valid"]))
                         for r in ok])
        out["errors"] = len(records) - len(ok)
        sensitivity = [(str(r["id"]), bool(r["scores"]["valid"])) for r in ok
                       if (r.get("meta") or {}).get("split") == prompting_mode.FORMAT_SENSITIVITY]
        if sensitivity:
            out[prompting_mode.FORMAT_SENSITIVITY] = format_sensitivity.summarise(sensitivity)
        return out

    def score_files(self, path: Path, out: Path | None = None) -> dict[str, Any]:
        """BFCL's result files (``BFCL_v4_<category>_result.json``, in ``path`` or below it)
        scored with this benchmark's scorer; the categories are those found."""
        from toolscore.benchmarks.bfcl.results import score_result_files

        return score_result_files(self, path, out)

    # -- report view -------------------------------------------------------------------------
    @classmethod
    def summary_output(cls, output: Any) -> Any:
        """A multi-turn or agentic output without its turns (the figures read the scores
        alone); a single-turn output as it is."""
        if isinstance(output, dict) and "executions" in output:
            return {k: v for k, v in output.items()
                    if k not in ("result", "executions", "prereq", "said")}
        return output

    @classmethod
    def headline_rows(cls, metrics: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """The categories in BFCL's order, then the summary figures in the leaderboard's."""
        order = [*RUNNABLE, prompting_mode.FORMAT_SENSITIVITY, *FIGURES]
        return {k: metrics[k] for k in order if isinstance(metrics.get(k), dict)}

    @classmethod
    def board_columns(cls, metrics: dict[str, Any]) -> dict[str, Any]:
        """BFCL's leaderboard columns as BFCL prints them (its summary figures, then the
        accuracy of each category the run has)."""
        shown = metrics.get("bfcl") or {}
        out: dict[str, Any] = {name.replace("_", "-"): shown[name]
                               for name in FIGURES if name in shown}
        for category in RUNNABLE:
            if category in shown:
                out[category] = shown[category]
        return out

    @classmethod
    def summary_lines(cls, metrics: dict[str, Any]) -> list[str]:
        shown = metrics.get("bfcl") or {}
        if not shown:
            return []
        line = "BFCL summary: " + ", ".join(f"{name.replace('_', '-')} {shown[name]}"
                                            for name in FIGURES if name in shown)
        run = [c for c in MULTI_TURN if c in metrics]
        agentic = [c for c in AGENTIC if c in metrics]
        full_mt, full_agentic = len(run) == len(MULTI_TURN), len(agentic) == len(AGENTIC)
        if full_mt and full_agentic:
            return [*format_sensitivity.summary_lines(metrics), line]
        if full_mt and not agentic:
            note = "agentic is not run: it counts 0 in overall"
        elif run and not agentic:
            note = "agentic and the multi-turn categories not run count 0 in overall"
        elif not run and not agentic:
            note = "multi-turn and agentic are not run: they count 0 in overall"
        elif not run and full_agentic:
            note = "multi-turn is not run: it counts 0 in overall"
        elif full_mt:
            note = "the agentic categories not run count 0 in overall"
        else:
            note = "the multi-turn and agentic categories not run count 0 in overall"
        return [*format_sensitivity.summary_lines(metrics), f"{line} ({note}, as in BFCL)"]

    @classmethod
    def primary_metric(cls, records: list[dict[str, Any]]) -> str | None:
        return "valid"

    @classmethod
    def interval_metrics(cls, records: list[dict[str, Any]]) -> list[IntervalMetric]:
        return [IntervalMetric("accuracy (all entries)", "valid")]

    def breakdowns(self, records: list[dict[str, Any]]) -> list[Breakdown]:
        counts: Counter[tuple[str, str]] = Counter()
        for r in records:
            s = r.get("scores") or {}
            if r.get("status") == "ok" and s and not s.get("valid"):
                counts[(str((r.get("meta") or {}).get("split")), str(s.get("error_type")))] += 1
        rows = [{"category": c, "error_type": e, "entries": n}
                for (c, e), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        return [Breakdown("Misses by BFCL error type",
                          [Column("category", "category", "number"),
                           Column("error_type", "error type", "number"),
                           Column("entries", "entries", "count")], rows)]

    def record_view(self, record: dict[str, Any]) -> dict[str, Any]:
        out = record.get("output") or {}
        s = record.get("scores") or {}
        summary = "valid" if s.get("valid") else f"invalid: {s.get('error_type')}"
        messages: list[dict[str, Any]] = []
        if self._by_id is None:
            self._by_id = {x.id: x for x in self.samples()}
        sample = self._by_id.get(str(record.get("id")))
        if sample is not None and (sample.data["category"] in MULTI_TURN
                                   or is_agentic(sample.data["category"])):
            from toolscore.benchmarks.bfcl.serving import as_played

            entry = sample.data["entry"]
            if out.get("protocol") == "free-running":
                out = as_played(out)
            if isinstance(out.get("said"), list):  # an agentic question: as it was sent
                entry = {**entry, "question": out["said"]}
            turns = multi_turn_view(entry, self.documents(entry)[1], out,
                                    episode.added_functions_prompt)
            if s.get("errors"):
                turns["details"]["errors"] = "\n".join(map(str, s["errors"]))
            return {"summary": summary, **turns}
        if sample is not None and self.options.handler == "prompting":
            messages = [m.to_dict() for m in prompting_mode.sample_messages(sample)]
        elif sample is not None:
            messages = [m.to_dict() for m in prompting.messages(sample.data["entry"])]
        result = out.get("result")
        if isinstance(result, list):
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{i}", "type": "function",
                 "function": {"name": next(iter(c), ""), "arguments": next(iter(c.values()), "")}}
                for i, c in enumerate(result) if isinstance(c, dict)]})
        else:
            messages.append({"role": "assistant", "content": result})
        view: dict[str, Any] = {"summary": summary, "messages": messages}
        if s.get("errors"):
            view["details"] = {"errors": "\n".join(map(str, s["errors"]))}
        return view
