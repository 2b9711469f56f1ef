"""The AutoDE benchmark for the runner: user scripts as samples, a dialogue protocol per mode,
the published slot scoring per sample, and the published aggregation over trials.

Trials are the runner's epochs: trial t of sample ``uuid`` is the record ``(uuid, t)``, so
``--trials N`` is ``--epochs N``, a killed run resumes trial by trial, and the model cache keeps
trials apart (the epoch is part of every request's cache key).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from toolscore.benchmarks.autode import prompts, protocol
from toolscore.benchmarks.autode.analysis import redundant_questions
from toolscore.benchmarks.autode.apidocs import ApiDoc, check_arguments, load_api_docs
from toolscore.benchmarks.autode.data import UserScript, load_scripts, scripts_path
from toolscore.benchmarks.autode.recorded import REFUSAL_REASONS
from toolscore.benchmarks.autode.report_view import AutoDEReport
from toolscore.benchmarks.autode.scoring import (
    CaseScore,
    TrialScore,
    aggregate_trials,
    exact_match,
    filter_arguments,
    normalised_equal,
    score_case,
)
from toolscore.benchmarks.base import Benchmark, Column, Sample, option
from toolscore.data import DataError
from toolscore.types import GenerateConfig, ToolSpec

Mode = Literal["dynamic", "static", "human"]
MODES = ("dynamic", "static", "human")
# Options that 0.1.0's generic `toolscore run` stored for every benchmark: a run.json of that
# version still loads (they are dropped there, see records.schema), nowhere else accepted.
LEGACY_OPTIONS = frozenset({"split", "tools_mode", "strict", "embedder", "max_calls_per_turn",
                            "user_cache"})


@dataclass
class AutoDEOptions:
    mode: Mode = option("dynamic", "dynamic (an LLM plays the user) | static (whole history, "
                        "forced call) | human (you play the user).")
    user_model: str | None = option(None, "Model playing the user (default: the assistant's).",
                                    runs_code="loads the model provider it names",
                                    runs_code_when="run")
    user_base_url: str | None = option(None, "OpenAI-compatible endpoint of the user model.")
    tools: Literal["all", "gold"] = option("all", "APIs offered: all documents | only the gold "
                                           "one.")
    apis: Path | None = option(None, "API documents (.xlsx, .json, .yaml) instead of the "
                               "released ones.")
    scripts: Path | None = option(None, "User scripts (JSONL, released shape) instead of the "
                                  "released ones.")
    max_turns: int = option(protocol.MAX_TURNS, "Dialogue turns before giving up.")
    enums: bool = option(True, "Show the API documents' enumerations.")
    max_tokens: int | None = option(512, "Token limit of each assistant reply.")
    temperature: float = option(0.0, "Assistant sampling temperature.")
    seed: int = option(0, "Sampling seed.")
    user_temperature: float = option(0.0, "User agent sampling temperature.")
    user_max_tokens: int = option(256, "Token limit of each user-agent reply.")
    human: Any = option(None, "A HumanUser to talk through (Python only).", cli=False)


COLUMNS = [Column("n_cases", "cases", "count"), Column("n_trials", "trials", "count"),
           Column("precision", "precision ×100", "number"),
           Column("recall", "recall ×100", "number"), Column("f1", "F1 ×100", "number"),
           Column("f1_std", "F1 std", "number")]


class AutoDEBenchmark(AutoDEReport, Benchmark):  # report hooks: report_view.py
    name = "autode"
    description = "AutoDE (Mu et al. 2024): 276 user scripts over 66 APIs; dynamic/static/human"
    Options = AutoDEOptions
    dataset = "autode"
    columns = COLUMNS

    @classmethod
    def create(cls, data_dir: Path | None, options: Any) -> AutoDEBenchmark:
        assert data_dir is not None
        return cls(data_dir, **{k: getattr(options, k) for k in AutoDEOptions.__dataclass_fields__})

    @classmethod
    def runs_code(cls, options: dict[str, Any]) -> dict[str, str]:
        """A user model of one of toolscore's own providers loads no foreign code."""
        from toolscore.benchmarks.trust import provider_origin

        return {k: v for k, v in super().runs_code(options).items()
                if k != "user_model" or provider_origin(options.get(k)) is not None}

    def __init__(self, data_dir: str | Path, *, mode: Mode = "dynamic",
                 user_model: str | None = None, user_base_url: str | None = None,
                 user_temperature: float = 0.0,
                 user_max_tokens: int = 256, max_turns: int = protocol.MAX_TURNS,
                 tools: Literal["all", "gold"] = "all", enums: bool = True,
                 max_tokens: int | None = 512, temperature: float = 0.0, seed: int = 0,
                 human: Any = None, apis: str | Path | None = None,
                 scripts: str | Path | None = None, **ignored: Any) -> None:
        unknown = set(ignored) - LEGACY_OPTIONS
        if unknown:
            raise ValueError(f"autode: unknown option(s) {', '.join(sorted(unknown))}")
        if mode not in MODES:
            raise ValueError(f"autode: mode must be one of {', '.join(MODES)}, got {mode!r}")
        if tools not in ("all", "gold"):
            raise ValueError(f"autode: tools must be 'all' or 'gold', got {tools!r}")
        self.data_dir = Path(data_dir)
        self.apis = Path(apis) if apis else None  # user-written API documents
        self.scripts = Path(scripts) if scripts else None  # user-written scripts (JSONL)
        self.mode = mode
        self.user_model = user_model
        self.user_base_url = user_base_url
        self.user_temperature = user_temperature
        self.user_max_tokens = user_max_tokens
        self.max_turns = max_turns
        self.tools_mode = tools
        self.enums = enums
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed
        self.human = human
        self._samples: list[Sample] | None = None
        self._docs: list[ApiDoc] | None = None
        self._user_client: Any = None

    def config(self) -> dict[str, Any]:
        from toolscore.users.llm import PROMPT_VERSION as USER_PROMPT_VERSION

        cfg: dict[str, Any] = {
            "data_dir": str(self.data_dir), "mode": self.mode, "max_turns": self.max_turns,
            "tools": self.tools_mode, "enums": self.enums, "max_tokens": self.max_tokens,
            "temperature": self.temperature, "seed": self.seed,
            "assistant_prompt": prompts.PROMPT_VERSION,
        }
        if self.apis is not None:
            cfg["apis"] = str(self.apis)
        if self.scripts is not None:
            cfg["scripts"] = str(self.scripts)
        if self.mode == "dynamic":
            cfg.update(user_model=self.user_model or "same as assistant",
                       user_prompt=USER_PROMPT_VERSION, user_temperature=self.user_temperature,
                       user_max_tokens=self.user_max_tokens)
        elif self.mode == "human":
            cfg["user"] = "human"
        return cfg

    def mode_label(self) -> str:
        return self.mode

    @classmethod
    def headline_rows(cls, metrics: dict[str, Any]) -> dict[str, dict[str, Any]]:
        if "exact" not in metrics:
            return {}
        return {"published": {"n_cases": metrics.get("n_cases"),
                              "n_trials": metrics.get("n_trials"), **metrics["exact"]},
                "normalised (supplementary)": metrics["supplementary"]["normalised"]}

    def max_concurrency(self) -> int | None:
        return 1 if self.mode == "human" else None

    @classmethod
    def summary_lines(cls, metrics: dict[str, Any]) -> list[str]:
        if "exact" not in metrics:
            return []
        sup, ana = metrics["supplementary"], metrics["analyses"]
        halluc = ana["hallucinated_parameter_rate_successful"]
        lines = [f"supplementary: normalised {_pm(sup['normalised'])} · exact match "
                 f"{sup['exact_match_rate']:.2%} · call rate {sup['call_rate']:.2%} · API "
                 f"accuracy {sup['api_accuracy']:.2%}",
                 f"analyses: refusal rate {ana['refusal_rate']:.2%} · hallucinated "
                 f"parameters {'-' if halluc is None else f'{halluc:.2%}'} · mean dialogue "
                 f"length {ana['mean_dialogue_length']:.2f} · endings {metrics['endings']}"]
        if ana.get("questions") is not None:
            lines.append("redundant questions (asked for a value already given): "
                         + questions_line(ana))
        return lines

    def score_files(self, path: Path, out: Path | None = None) -> dict[str, Any]:
        """A released result file, or every ``*.jsonl`` in a folder (Table 1's runs); with
        ``out``, each file's scores are also written there as ``<file name>.scores.json``."""
        from toolscore.benchmarks.autode.rescore import (
            ResultReader,
            paused_gc,
            score_results,
            write_scores,
        )

        files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
        if not files:
            raise FileNotFoundError(f"{path}: no *.jsonl result files")
        scripts = [s.data for s in self.samples()]
        docs = list(self.docs.values())
        with paused_gc():
            reader = ResultReader(scripts, docs)  # lines, dialogues, case facts: once for all
            results = [score_results(f, scripts, docs, reader=reader).to_dict() for f in files]
            # Dropped while the collector still sleeps: when it wakes, its first pass looks at
            # every container made since it was paused, and the reader's are most of them.
            del reader
        doc: dict[str, Any] = {"benchmark": "autode", "results": results}
        if out is not None:
            doc["out"] = [str(p) for p in write_scores(out, files, results)]
        return doc

    # -- data --------------------------------------------------------------------------------
    def check(self) -> None:
        """Scripts and API documents (the workbook) load before the first model call, so a bad
        file is one line and exit 2, not an error in every sample."""
        self.samples()
        self.docs  # noqa: B018 - loads and validates the API documents

    def samples(self) -> list[Sample]:
        if self._samples is None:
            scripts = load_scripts(self.scripts or self.data_dir)
            if self.scripts is not None or self.apis is not None:
                check_scripts(scripts, self.docs, self.scripts or self.data_dir)
            else:  # the released slots are as released (5 fail the check); their APIs exist
                check_apis(scripts, self.docs, self.data_dir)
            self._samples = [Sample(s.uuid, s, {"api": s.api}) for s in scripts]
        return self._samples

    @property
    def docs(self) -> dict[str, ApiDoc]:
        if self._docs is None:
            self._docs = load_api_docs(self.apis or self.data_dir, enums=self.enums)
        return {d.name: d for d in self._docs}

    def offered_tools(self, script: UserScript) -> list[ToolSpec]:
        docs = self.docs
        if self.tools_mode == "gold":
            return [docs[script.api].spec] if script.api in docs else []
        return [d.spec for d in docs.values()]

    # -- protocol ----------------------------------------------------------------------------
    def user_client(self, model: Any) -> Any:
        """The user agent's model client: the assistant's own unless ``user_model`` is set;
        either way its tokens are counted under the role "user"."""
        if self.user_model is None:
            client = getattr(model, "client", model)
            return client.with_role("user") if hasattr(client, "with_role") else client
        if self._user_client is None:
            from toolscore.models.factory import make_client

            self._user_client = make_client(
                self.user_model, role="user", base_url=self.user_base_url,
                cache=self.settings.cache, timeout=self.settings.timeout,
                max_concurrency=self.settings.max_concurrency)
        return self._user_client

    def make_user(self, model: Any, epoch: int) -> Any:
        if self.mode == "human":
            if self.human is None:
                from toolscore.users import HumanUser

                self.human = HumanUser()
            return self.human
        from toolscore.users import LLMUser

        config = GenerateConfig(temperature=self.user_temperature,
                                max_tokens=self.user_max_tokens, seed=self.seed, epoch=epoch)
        return LLMUser(self.user_client(model), config)

    async def run_sample(self, sample: Sample, model: Any, epoch: int) -> dict[str, Any]:
        script: UserScript = sample.data
        tools = self.offered_tools(script)
        config = GenerateConfig(temperature=self.temperature, max_tokens=self.max_tokens,
                                seed=self.seed, epoch=epoch)
        if self.mode == "static":
            return await protocol.run_static(script, model, tools, config)
        return await protocol.run_dynamic(script, model, tools, config,
                                          self.make_user(model, epoch), mode=self.mode,
                                          max_turns=self.max_turns)

    # -- scoring -----------------------------------------------------------------------------
    def score(self, output: dict[str, Any], sample: Sample) -> dict[str, Any]:
        """The published per-case scores plus labelled supplementary views (0..1)."""
        script: UserScript = sample.data
        slots = output.get("slots") or {}
        exact = score_case(script.slots, slots)
        norm = score_case(script.slots, slots, equal=normalised_equal)
        reason = output.get("reason") or ""
        doc = self.docs.get(script.api)
        called = output.get("state") == "success"
        hallucinated = (any(k not in doc.parameter_names for k in filter_arguments(slots))
                        if doc is not None else None)
        questions, redundant = redundant_questions(output.get("content") or [], script.slots,
                                                   doc)
        return {
            "precision": exact.precision, "recall": exact.recall, "f1": exact.f1,
            "normalised": {"precision": norm.precision, "recall": norm.recall, "f1": norm.f1},
            "exact_match": exact_match(script.slots, slots), "called": called,
            "api_correct": output.get("called_api") == script.api if called else False,
            "refusal": any(r in reason for r in REFUSAL_REASONS),
            "hallucinated": hallucinated, "dialogue_length": len(output.get("content") or []),
            "ending": reason.split(":")[0] if reason else "API call",
            "questions": questions, "redundant_questions": redundant,
        }

    def aggregate(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        return aggregate_records(records, self.mode)


def _pm(exact: dict[str, Any]) -> str:
    std = exact.get("f1_std")
    return (f"P {exact['precision']:.2f} / R {exact['recall']:.2f} / F1 {exact['f1']:.2f}"
            + (f" ±{std:.2f}" if std is not None else ""))


def questions_line(row: dict[str, Any]) -> str:
    """Redundant questions as one line (a run's analyses or one side of a gap)."""
    rate, share = row.get("redundant_question_rate", row.get("redundant_rate")), row.get(
        "dialogues_with_redundant_questions", row.get("dialogues_with_redundant"))
    return (f"{row['redundant_questions']} of {row['questions']} questions"
            + ("" if rate is None else f" ({rate:.2%})")
            + ("" if share is None else f" · in {share:.2%} of dialogues"))


def _mean(values: list[Any]) -> float | None:
    return float(np.mean(values)) if values else None


def _redundancy(scores: list[dict[str, Any]]) -> dict[str, Any]:
    """Redundant questions (see :func:`.analysis.redundant_questions`); records scored before
    the analysis existed have no counts and are left out."""
    counted = [s for s in scores if "questions" in s]
    asked = sum(s["questions"] for s in counted)
    redundant = sum(s["redundant_questions"] for s in counted)
    return {"questions": asked, "redundant_questions": redundant,
            "redundant_question_rate": redundant / asked if asked else None,
            "dialogues_with_redundant_questions": _mean(
                [s["redundant_questions"] > 0 for s in counted])}


def check_apis(scripts: list[UserScript], docs: dict[str, ApiDoc], where: Path) -> None:
    """Every script's gold API is documented: otherwise no assistant could ever call it."""
    for s in scripts:
        if s.api not in docs:
            raise DataError(f"{scripts_path(where)}:{s.line}: field 'api' {s.api!r} is not in "
                            "the API documents")


def check_scripts(scripts: list[UserScript], docs: dict[str, ApiDoc], where: Path) -> None:
    """User scripts must call documented APIs with valid arguments (one-line error)."""
    for s in scripts:
        doc = docs.get(s.api)
        if doc is None:
            raise DataError(f"{where}:{s.line}: field 'api' {s.api!r} is not in the API "
                            "documents")
        problems = check_arguments(doc, s.slots)
        if problems:
            raise DataError(f"{where}:{s.line}: {problems[0][1]} (field 'slots')")


def aggregate_records(records: list[dict[str, Any]], mode: str = "") -> dict[str, Any]:
    """Published: per trial (epoch) the macro mean over its cases, then mean over trials and the
    sample std (ddof=1) of the per-trial values, ×100. Supplementary views and the paper's
    behaviour analyses are reported beside it, under their own names. Errored samples
    (infrastructure) are counted and excluded."""
    ok = [r for r in records if r.get("status") == "ok"]
    by_trial: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in ok:
        by_trial[int(r.get("epoch", 0))].append(r["scores"])
    result: dict[str, Any] = {"mode": mode, "errors": len(records) - len(ok),
                              "n_cases": len({r["id"] for r in ok}), "n_trials": len(by_trial)}
    if not by_trial:
        return result

    def trials(view: str | None) -> list[TrialScore]:
        out = []
        for _, scores in sorted(by_trial.items()):
            cases = [CaseScore(**({k: s[k] for k in ("precision", "recall", "f1")}
                                  if view is None else s[view])) for s in scores]
            n = len(cases)
            out.append(TrialScore(sum(c.precision for c in cases) / n,
                                  sum(c.recall for c in cases) / n,
                                  sum(c.f1 for c in cases) / n, cases))
        return out

    scores = [s for group in by_trial.values() for s in group]
    successful = [s for s in scores if s["called"]]
    result["exact"] = aggregate_trials(trials(None)).to_dict()
    result["trial_sizes"] = [len(by_trial[t]) for t in sorted(by_trial)]
    result["supplementary"] = {
        "normalised": aggregate_trials(trials("normalised")).to_dict(),
        "exact_match_rate": _mean([s["exact_match"] for s in scores]),
        "call_rate": _mean([s["called"] for s in scores]),
        "api_accuracy": _mean([s["api_correct"] for s in scores]),
    }
    result["analyses"] = {
        "refusal_rate": _mean([s["refusal"] for s in scores]),
        "hallucinated_parameter_rate_successful": _mean(
            [s["hallucinated"] for s in successful if s["hallucinated"] is not None]),
        "mean_dialogue_length": _mean([s["dialogue_length"] for s in scores]),
        **_redundancy(scores),
    }
    result["endings"] = dict(Counter(s["ending"] for s in scores).most_common())
    return result
