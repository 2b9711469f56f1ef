"""The AutoDE benchmark for the runner: user scripts as samples, a dialogue protocol per mode,
the published slot scoring per sample, and the published aggregation over trials.

Trials are the runner's epochs: trial t of sample ``uuid`` is the record ``(uuid, t)``, so
``--trials N`` is ``--epochs N``, a killed run resumes trial by trial, and the model cache keeps
trials apart (the epoch is part of every request's cache key).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from toolscore.benchmarks.autode import prompts, protocol, reference_protocol
from toolscore.benchmarks.autode.aggregate import aggregate_records, questions_line
from toolscore.benchmarks.autode.analysis import redundant_questions
from toolscore.benchmarks.autode.apidocs import (
    API_FILE,
    API_SHEET,
    DOC_SUFFIXES,
    ApiDoc,
    _openpyxl_rows,
    load_api_docs,
)
from toolscore.benchmarks.autode.checks import check_apis, check_scripts
from toolscore.benchmarks.autode.data import UserScript, load_scripts
from toolscore.benchmarks.autode.dataset import SOURCE as AUTODE_DATA
from toolscore.benchmarks.autode.recorded import REFUSAL_REASONS
from toolscore.benchmarks.autode.reference_user import ReferenceHuman, ReferenceUser
from toolscore.benchmarks.autode.release import (
    ASSISTANT_PROMPT_FILE,
    READER_FILE,
    USER_PROMPT_FILE,
    Release,
    load_release,
    reference_documents,
)
from toolscore.benchmarks.autode.release import COMMIT as RELEASE_COMMIT
from toolscore.benchmarks.autode.report_view import AutoDEView
from toolscore.benchmarks.autode.scoring import (
    exact_match,
    filter_arguments,
    normalised_equal,
    score_case,
)
from toolscore.benchmarks.autode.workbook import read_sheet
from toolscore.benchmarks.base import Benchmark, Column, Sample, option
from toolscore.benchmarks.options import CallApi, OptionError, call_api_option
from toolscore.types import GenerateConfig, ToolSpec

Mode = Literal["dynamic", "static", "human"]
MODES = ("dynamic", "static", "human")
# Options that 0.1.0's generic `toolscore run` stored for every benchmark: a run.json of that
# version still loads (they are dropped there, see records.schema), nowhere else accepted.
LEGACY_OPTIONS = frozenset({"split", "tools_mode", "embedder", "max_calls_per_turn",
                            "user_cache"})
__all__ = ["AutoDEBenchmark", "AutoDEOptions", "aggregate_records", "questions_line"]


@dataclass
class AutoDEOptions:
    mode: Mode = option("dynamic", "dynamic (an LLM plays the user) | static (whole history, "
                        "forced call) | human (you play the user).")
    user_model: str | None = option(None, "Model playing the user (default: the assistant's).",
                                    runs_code="loads the model provider it names",
                                    runs_code_when="run")
    user_base_url: str | None = option(None, "OpenAI-compatible endpoint of the user model.")
    strict: bool = option(False, "toolscore's own protocol instead of the reference runner's: "
                          "its own prompts for the assistant and the user agent, documents as "
                          "the workbook flags them, tool_choice required in static mode, "
                          "temperature 0 and max_tokens, no user turn after the last "
                          "assistant turn.")
    call_api: CallApi = call_api_option("AutoDE's runner")
    tools: Literal["gold", "all"] = option("gold", "APIs offered: only the gold one (as the "
                                           "reference) | all documents (labelled).")
    apis: Path | None = option(None, "API documents (.xlsx, .json, .yaml) instead of the "
                               "released ones.")
    scripts: Path | None = option(None, "User scripts (JSONL, released shape) instead of the "
                                  "released ones.")
    max_turns: int = option(protocol.MAX_TURNS, "Dialogue turns before giving up.")
    enums: bool = option(True, "Show the API documents' enumerations.")
    max_tokens: int | None = option(None, "Token limit of each assistant reply (default: not "
                                    "sent, as the reference; --strict: 512).")
    temperature: float | None = option(None, "Assistant sampling temperature (default: not "
                                       "sent, as the reference; --strict: 0).")
    seed: int | None = option(None, "Sampling seed (default: not sent; --strict: 0).")
    user_temperature: float | None = option(None, "User agent sampling temperature (default: "
                                            "not sent; --strict: 0).")
    user_max_tokens: int | None = option(None, "Token limit of each user-agent reply "
                                         "(default: not sent; --strict: 256).")
    human: Any = option(None, "A HumanUser to talk through (Python only).", cli=False)


# toolscore's own sampling, used by --strict where an option is left unset
SAMPLING_FIELDS = ("temperature", "max_tokens", "seed", "user_temperature", "user_max_tokens")
STRICT_SAMPLING = {"temperature": 0.0, "max_tokens": 512, "seed": 0, "user_temperature": 0.0,
                   "user_max_tokens": 256}

COLUMNS = [Column("n_cases", "cases", "count"), Column("n_trials", "trials", "count"),
           Column("precision", "precision ×100", "number"),
           Column("recall", "recall ×100", "number"), Column("f1", "F1 ×100", "number"),
           Column("f1_std", "F1 std", "number")]


class AutoDEBenchmark(AutoDEView, Benchmark):  # its report view: report_view.py
    name = "autode"
    description = "AutoDE (Mu et al. 2024): 276 user scripts over 66 APIs; dynamic/static/human"
    Options = AutoDEOptions
    dataset = "autode"
    dataset_source = AUTODE_DATA
    roles = {"assistant": "model", "user": "user_model"}
    columns = COLUMNS

    @classmethod
    def create(cls, data_dir: Path | None, options: Any) -> AutoDEBenchmark:
        assert data_dir is not None
        return cls(data_dir, options)

    @classmethod
    def create_stored(cls, data_dir: Path | None, options: Any, stored: Any) -> Benchmark:
        """A run made before the reference runner's protocol existed (its run.json names no
        ``protocol``) ran toolscore's own: it is rebuilt, reported and resumed as --strict."""
        if "protocol" not in (stored.config.get("benchmark_config") or {"protocol": None}):
            options = replace(options, strict=True)
        return super().create_stored(data_dir, options, stored)

    @classmethod
    def runs_code(cls, options: dict[str, Any]) -> dict[str, str]:
        """A user model of one of toolscore's own providers loads no foreign code."""
        from toolscore.benchmarks.trust import provider_origin

        return {k: v for k, v in super().runs_code(options).items()
                if k != "user_model" or provider_origin(options.get(k)) is not None}

    def __init__(self, data_dir: str | Path, options: AutoDEOptions | None = None,
                 **given: Any) -> None:
        """``options`` (an :class:`AutoDEOptions`); ``given`` replace some of them by name."""
        declared = set(AutoDEOptions.__dataclass_fields__)
        unknown = set(given) - declared - LEGACY_OPTIONS
        if unknown:
            raise ValueError(f"autode: unknown option(s) {', '.join(sorted(unknown))}")
        base = AutoDEOptions() if options is None else options
        o = replace(base, **{k: v for k, v in given.items() if k in declared})
        if o.mode not in MODES:
            raise ValueError(f"autode: mode must be one of {', '.join(MODES)}, got {o.mode!r}")
        if o.tools not in ("all", "gold"):
            raise ValueError(f"autode: tools must be 'gold' or 'all', got {o.tools!r}")
        if o.call_api not in ("auto", "functions", "tools"):
            raise ValueError(f"autode: call_api must be auto, functions or tools, got "
                             f"{o.call_api!r}")
        self.options: AutoDEOptions = o
        self.data_dir = Path(data_dir)
        self._samples: list[Sample] | None = None
        self._docs: list[ApiDoc] | None = None
        self._offered: dict[str, ToolSpec] | None = None
        self._release: Release | None = None
        self._user_client: Any = None

    # -- values derived from the options -----------------------------------------------------
    @property
    def apis(self) -> Path | None:
        """User-written API documents."""
        return Path(self.options.apis) if self.options.apis else None

    @property
    def scripts(self) -> Path | None:
        """User-written scripts (JSONL)."""
        return Path(self.options.scripts) if self.options.scripts else None

    @property
    def sampling_set(self) -> dict[str, Any]:
        """The sampling fields asked for (None: not sent)."""
        return {k: getattr(self.options, k) for k in SAMPLING_FIELDS
                if getattr(self.options, k) is not None}

    def _sampling(self, key: str) -> Any:
        """A sampling field as sent: as asked, else --strict's own value, else None."""
        value = getattr(self.options, key)
        if value is None and self.options.strict:
            return STRICT_SAMPLING.get(key)
        return value

    # as sent (--strict fills toolscore's own values in)
    temperature = property(lambda self: self._sampling("temperature"))
    max_tokens = property(lambda self: self._sampling("max_tokens"))
    seed = property(lambda self: self._sampling("seed"))
    user_temperature = property(lambda self: self._sampling("user_temperature"))
    user_max_tokens = property(lambda self: self._sampling("user_max_tokens"))

    @property
    def release(self) -> Release:
        """The reference's wording (default mode), read from the data folder."""
        if self._release is None:
            self._release = load_release(self.data_dir)
        return self._release

    def _source(self, relative: str) -> str:
        """Where the reference's file was read (or, when scoring a run whose data folder lacks
        it, where it would be read: only a run needs the wording)."""
        try:
            return self.release.source_label(relative)
        except OptionError:
            return f"hlmu/AutoDE@{RELEASE_COMMIT} {relative} (not in the data folder)"

    def config(self) -> dict[str, Any]:
        from toolscore.users.llm import PROMPT_VERSION as USER_PROMPT_VERSION

        o = self.options
        cfg: dict[str, Any] = {
            "data_dir": str(self.data_dir), "mode": o.mode, "max_turns": o.max_turns,
            "protocol": "strict" if o.strict else "reference",
            **({} if o.strict or o.call_api == "auto" else {"call_api": o.call_api}),
            "tools": o.tools, "enums": o.enums, "max_tokens": self.max_tokens,
            "temperature": self.temperature, "seed": self.seed,
        }
        if self.options.strict:
            cfg.update(assistant_prompt=f"{prompts.PROMPT_VERSION} (toolscore's own words)",
                       api_documents="toolscore's reading of the workbook")
        else:
            cfg.update(assistant_prompt=self._source(ASSISTANT_PROMPT_FILE),
                       api_documents=f"the reference reader's, with {self._source(READER_FILE)}")
        if self.apis is not None:
            cfg["apis"] = str(self.apis)
        if self.scripts is not None:
            cfg["scripts"] = str(self.scripts)
        if self.options.mode != "static":
            user_prompt = (f"{USER_PROMPT_VERSION} (toolscore's own words)" if self.options.strict
                           else self._source(USER_PROMPT_FILE))
            cfg.update(user_model=self.options.user_model or "same as assistant",
                       user_prompt=user_prompt, user_temperature=self.user_temperature,
                       user_max_tokens=self.user_max_tokens)
        if self.options.mode == "human":
            cfg["user"] = ("human" if self.options.strict
                           else "human, offered the user agent's reply")
        return cfg

    def mode_label(self) -> str:
        """The report's label: which protocol and prompts, and any variation of the default."""
        if self.options.strict:
            label = f"{self.options.mode}, strict (toolscore's own prompts)"
        else:
            label = (f"{self.options.mode}, reference (prompts: hlmu/AutoDE@{RELEASE_COMMIT} "
                     f"{ASSISTANT_PROMPT_FILE}"
                     + ("" if self.options.mode == "static" else f", {USER_PROMPT_FILE}") + ")")
            if self.sampling_set:
                label += ", deviating sampling (" + ", ".join(
                    f"{k}={v}" for k, v in self.sampling_set.items()) + ")"
        if self.options.tools == "all":
            label += ", all APIs offered"
        if not self.options.enums:
            label += ", no enums"
        return label

    def max_concurrency(self) -> int | None:
        return 1 if self.options.mode == "human" else None

    def score_files(self, path: Path, out: Path | None = None) -> dict[str, Any]:
        """A released result file, or every ``*.jsonl`` in a folder (Table 1's runs); with
        ``out``, each file's scores are also written there as ``<file name>.scores.json``."""
        from toolscore.benchmarks.autode.rescore import score_result_files

        return score_result_files(path, [s.data for s in self.samples()],
                                  list(self.docs.values()), out)

    # -- data --------------------------------------------------------------------------------
    def check(self) -> None:
        """Scripts and API documents (the workbook) load before the first model call, so a bad
        file is one line and exit 2, not an error in every sample."""
        self.samples()
        self.docs  # noqa: B018 - loads and validates the API documents
        if not self.options.strict:  # the reference's wording and documents
            self.release  # noqa: B018
            self.offered_docs  # noqa: B018

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
            self._docs = load_api_docs(self.apis or self.data_dir, enums=self.options.enums)
        return {d.name: d for d in self._docs}

    @property
    def offered_docs(self) -> dict[str, ToolSpec]:
        """What the assistant is shown of each API: in the default mode the reference reader's
        documents of the workbook; with --strict (or documents in JSON/YAML) toolscore's."""
        if self._offered is None:
            path = self.apis or self.data_dir / API_FILE
            if self.options.strict or path.suffix.lower() in DOC_SUFFIXES:
                self._offered = {n: d.spec for n, d in self.docs.items()}
            else:
                rows = read_sheet(path, API_SHEET)
                if rows is None:  # outside the small reader's subset: as openpyxl reads it
                    rows = _openpyxl_rows(path)
                docs = reference_documents(rows, self.release, f"{path}:{API_SHEET}",
                                           enums=self.options.enums)
                self._offered = {d["name"]: ToolSpec(d["name"], d["description"],
                                                     d["parameters"]) for d in docs}
        return self._offered

    def offered_tools(self, script: UserScript) -> list[ToolSpec]:
        docs = self.offered_docs
        if self.options.tools == "gold":
            return [docs[script.api]] if script.api in docs else []
        return list(docs.values())

    # -- protocol ----------------------------------------------------------------------------
    def user_client(self, model: Any) -> Any:
        """The user agent's model client: the assistant's own unless ``user_model`` is set;
        either way its tokens are counted under the role "user"."""
        if self.options.user_model is None:
            client = model.client
            return client.with_role("user") if hasattr(client, "with_role") else client
        if self._user_client is None:
            from toolscore.models.factory import make_client

            self._user_client = make_client(
                self.options.user_model, role="user", base_url=self.options.user_base_url,
                cache=self.settings.cache, timeout=self.settings.timeout,
                max_concurrency=self.settings.max_concurrency)
        return self._user_client

    def make_user(self, model: Any, epoch: int) -> Any:
        config = GenerateConfig(temperature=self.user_temperature,
                                max_tokens=self.user_max_tokens, seed=self.seed, epoch=epoch,
                                tool_choice=None if not self.options.strict else "auto")
        if self.options.mode == "human" and self.options.human is None:
            from toolscore.users import HumanUser

            self.options.human = HumanUser()
        if self.options.strict:
            if self.options.mode == "human":
                return self.options.human
            from toolscore.users import LLMUser

            return LLMUser(self.user_client(model), config)
        agent = ReferenceUser(self.user_client(model), self.release, config)
        return ReferenceHuman(agent, self.options.human) if self.options.mode == "human" else agent

    async def run_sample(self, sample: Sample, model: Any, epoch: int) -> dict[str, Any]:
        script: UserScript = sample.data
        tools = self.offered_tools(script)
        config = GenerateConfig(temperature=self.temperature, max_tokens=self.max_tokens,
                                seed=self.seed, epoch=epoch,
                                call_api=None if self.options.strict else self.options.call_api)
        if self.options.strict:
            if self.options.mode == "static":
                return await protocol.run_static(script, model, tools, config)
            return await protocol.run_dynamic(script, model, tools, config,
                                              self.make_user(model, epoch), mode=self.options.mode,
                                              max_turns=self.options.max_turns)
        if self.options.mode == "static":
            return await reference_protocol.run_static(script, model, tools, config,
                                                       self.release)
        return await reference_protocol.run_dynamic(script, model, tools, config,
                                                    self.make_user(model, epoch), self.release,
                                                    mode=self.options.mode,
                                                    max_turns=self.options.max_turns)

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
            "ending": (reason.split(":")[0] if reason else "API call" if called
                       else "gave up"),
            "questions": questions, "redundant_questions": redundant,
        }

    def aggregate(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        return aggregate_records(records, self.options.mode)
