"""The ToolTalk benchmark: conversations + simulation protocol + call-matching scorer.

The same class runs any tool set stored in ToolTalk's format (the built-in ``demo`` uses it with
its own plugins), so the protocol and the scorer exist once.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from toolscore.benchmarks.base import Benchmark, Column, OptionError, Sample
from toolscore.benchmarks.tooltalk import final_state, loaded, protocol
from toolscore.benchmarks.tooltalk.data import (
    make_environment,
    require_databases,
)
from toolscore.benchmarks.tooltalk.dataset import SOURCE as TOOLTALK_DATA
from toolscore.benchmarks.tooltalk.options import (  # noqa: F401 - importable from here
    FREE_RUNNING,
    NOT_COMPARABLE,
    Protocol,
    Split,
    ToolsMode,
    ToolSources,
    ToolTalkOptions,
)
from toolscore.benchmarks.tooltalk.reference_mode import (  # noqa: F401 - importable here
    REFERENCE_SAMPLING,
    ReferenceRequests,
)
from toolscore.benchmarks.tooltalk.report_view import ToolTalkView
from toolscore.benchmarks.tooltalk.scoring import (
    ConversationScore,
    TurnCalls,
    aggregate,
    error_rule,
    score_conversation,
    similarity_texts,
)
from toolscore.env.plugin import Plugin
from toolscore.env.tool import CallRecord, MatchContext, Tool
from toolscore.types import ToolSpec

COLUMNS = [
    Column("conversations", "convs", "count"),
    Column("success_rate", "success"),
    Column("final_state_success_rate", "final state"),
    Column("precision", "precision"),
    Column("recall", "recall"),
    Column("action_precision", "action prec."),
    Column("incorrect_action_rate", "bad actions"),
    Column("soft_success", "soft success"),
]


class ToolTalkBenchmark(ToolSources, ReferenceRequests, ToolTalkView, Benchmark):
    # the run contract here; its report view: report_view.py; what the default mode sends:
    # reference_mode.py; where its tools come from: options.py
    """ToolTalk (Farn & Shin 2023): 28 easy + 50 hard conversations over 7 plugins."""

    name = "tooltalk"
    description = "ToolTalk (Farn & Shin 2023): 28 easy + 50 hard conversations, 7 plugins"
    Options = ToolTalkOptions
    dataset: ClassVar[str | None] = "tooltalk"
    dataset_source = TOOLTALK_DATA
    columns = COLUMNS

    @classmethod
    def locate_data(cls, data: str | Path | None, options: Any, download: bool) -> Path | None:
        """With ``plugins``, the conversations are the user's own (``--data``, ToolTalk's
        layout: databases/, easy/ and/or tooltalk/); otherwise ToolTalk's released data."""
        if not options.plugins and not options.mcp_server:
            return super().locate_data(data, options, download)
        flag = "--mcp-server" if options.mcp_server else "--plugins"
        if data is None:
            raise OptionError(f"benchmark {cls.name!r}: {flag} needs --data DIR (the "
                              "conversations over those tools, in ToolTalk's format)")
        if options.mcp_server:  # the server holds its own state: no databases/ needed
            return Path(data)
        if not (Path(data) / "databases").is_dir():
            raise OptionError(f"--data {data}: no databases/ folder (ToolTalk's layout)")
        return Path(data)

    @classmethod
    def build(cls, data_dir: Path | None, options: Any,
              sources: dict[str, Any]) -> ToolTalkBenchmark:
        data = data_dir or cls.own_data
        assert data is not None
        return cls(data, options, **sources)

    def __init__(self, data_dir: str | Path, options: ToolTalkOptions | None = None, *,
                 plugins: list[Plugin] | None = None, name: str | None = None,
                 remote: Any = None, **given: Any) -> None:
        """``options`` (this class's ``Options``); ``given`` replace some of them by name
        (e.g. ``strict=True``). ``plugins``/``remote``: the tools, else the benchmark's own."""
        base = self.Options() if options is None else options
        self.options: ToolTalkOptions = replace(base, **given) if given else base
        own = type(self).own_plugins
        self.own_tools = plugins is None and remote is None and own is None
        if plugins is None:
            from toolscore.benchmarks.tooltalk.plugins import PLUGINS

            plugins = own if own is not None else PLUGINS
        self.name = name or type(self).name
        self.data_dir = Path(data_dir)
        self.plugins = plugins
        self.tools: dict[str, Tool] = {t.name: t for p in plugins for t in p.tools}
        self.remote = remote  # toolscore.env.mcp_remote.RemoteTools: tools of an MCP server
        self._samples: list[Sample] | None = None
        self._databases: dict[str, Any] | None = None
        self._similarity: Any = None
        self._conversations: list[Any] | None = None
        self._truth_hashes: final_state.TruthHashes | None = None
        self._shown_specs: dict[str, tuple[Tool, ToolSpec]] = {}
        self._release: Any = None
        self._release_docs: Any = None
        self._release_specs: dict[str, ToolSpec] = {}

    def config(self) -> dict[str, Any]:
        from toolscore.embed.similarity import get_embedder

        o = self.options
        return {"data_dir": str(self.data_dir), "split": o.split, "tools": o.tools,
                "strict": o.strict, "embedder": o.embedder,
                "embedder_id": get_embedder(o.embedder).name,
                "plugins": [p.name for p in self.plugins], "max_tokens": o.max_tokens,
                "seed": o.seed, "sampling": self.sampling_label(),
                "prompt_source": self.prompt_source(),
                "documents_source": self.documents_source(), "env_seed": 489,
                "max_calls_per_turn": self.max_calls, "turn_protocol": self.turn_label(),
                **({"call_api": o.call_api} if o.call_api != "auto" else {}),
                **({"mcp_server": self.remote.describe()} if self.remote else {}),
                # only when not the default, so a reference run's run.json is unchanged
                **({"protocol": o.protocol} if o.protocol != "reference" else {}),
                **({"simulator": "strict"} if o.strict else {})}

    # -- samples -----------------------------------------------------------------------------
    def check(self) -> None:
        """Conversations and databases load before the first model call: a broken file is
        one line and exit 2, not an error (or a wrong score) in every sample."""
        self.samples()
        self.release_prompt()  # the reference's wording is there: one line now if not
        self.release_documents()
        if self.remote is None:
            require_databases(self.data_dir, self.databases, self.plugins)
        if self.options.protocol == FREE_RUNNING:
            free_running_protocol()  # not installed: one line now, not an error per sample

    def samples(self) -> list[Sample]:
        if self._samples is None:
            convs = loaded.conversations(self.data_dir, self.options.split)
            self._samples = [Sample(c.name, c, {"split": c.split}) for c in convs]
            self._conversations = convs
        return self._samples

    def expected_calls(self, sample: Sample) -> int | None:
        """One call per assistant turn of the conversation, one more per API call in it."""
        return sum(len(t.apis) + 1 for t in sample.data.turns if t.role == "assistant")

    @property
    def databases(self) -> dict[str, Any]:
        if self._databases is None:
            self._databases = ({} if self.remote and not (self.data_dir / "databases").is_dir()
                               else loaded.databases(self.data_dir))
        return self._databases

    @property
    def truth_hashes(self) -> final_state.TruthHashes:
        """The ground truth's states, shared with every benchmark of this process that runs
        the same parsed conversations, databases and plugins (:mod:`.loaded`)."""
        if self._truth_hashes is None:
            self.samples()
            convs = self._conversations
            self._truth_hashes = (final_state.TruthHashes() if convs is None
                                  else loaded.truth(convs, self.databases, self.plugins,
                                                    strict=self.options.strict))
        return self._truth_hashes

    def environment(self, conversation: Any) -> Any:
        """The simulated world of one conversation, as the protocol runs it; also what
        ``toolscore mcp serve`` serves, so both are one world."""
        if self.remote is not None:
            return self.remote.environment(conversation.now)
        env = make_environment(conversation, self.databases, self.plugins)
        env.strict = self.options.strict  # the checked simulator, or the reference's as it behaves
        return env

    def max_concurrency(self) -> int | None:
        """An MCP server reached by URL has one state for every sample: one at a time."""
        return self.remote.max_concurrency() if self.remote is not None else None

    def serving(self) -> Any:
        """The world served to an agent (``toolscore mcp serve``, the free-running protocol)."""
        from toolscore.benchmarks.tooltalk.serving import ToolTalkServing

        return ToolTalkServing(self)

    def offered_tools(self, conversation: Any) -> list[Tool]:
        if self.options.tools == "exact":
            names = set(conversation.apis_used)
            return [t for t in self.tools.values() if t.name in names]
        if self.options.tools == "suite":
            suites = set(conversation.suites_used)
            return [t for p in self.plugins if p.name in suites for t in p.tools]
        return list(self.tools.values())

    def sample_cost(self, sample: Sample) -> int:
        """The oracle's model calls (ground-truth calls plus a reply per turn), a proxy for any
        model's: the runner starts the longest conversations first."""
        turns = sample.data.turns
        return sum(len(turns[i].apis) + 1 for i in protocol.assistant_turns(turns))

    def shown_spec(self, tool: Tool) -> ToolSpec:
        """The documentation the model sees. The reference shows a few tools with known defects
        (CreateEvent's enum sits on ``name`` instead of ``event_type``); the default reproduces
        them, ``strict`` shows the corrected schema."""
        shown = self._shown_specs.get(tool.name)
        if shown is None or shown[0] is not tool:  # one ToolSpec per tool, shared by samples
            documented = tool.extra.get("reference_parameters")
            spec = (tool.spec if self.options.strict or documented is None
                    else ToolSpec(tool.name, tool.description, documented))
            shown = self._shown_specs[tool.name] = (tool, spec)
        return shown[1]

    # -- protocol ----------------------------------------------------------------------------
    async def run_sample(self, sample: Sample, model: Any, epoch: int) -> dict[str, Any]:
        if self.options.protocol == FREE_RUNNING:
            return await free_running_protocol()(self, sample, model, epoch)
        conv = sample.data
        env = self.environment(conv)
        specs = self.reference_specs(conv)
        if specs is None:
            specs = [self.shown_spec(t) for t in self.offered_tools(conv)]
        prompt = self.system_prompt(conv.metadata)
        config = self.generate_config(epoch)
        # the ground truth's states, for the final-state check and to start each turn from
        # (none for an external server's tools: their state is not ours to replay)
        def world() -> Any:
            return self.environment(conv)

        truth = (None if self.remote is not None
                 else self.truth_hashes.states(sample.id, world, conv.turns))
        turns = []
        start = None  # the first turn starts from the reset state
        for i in protocol.assistant_turns(conv.turns):
            turn = await protocol.simulate_turn(env, conv.turns, i, model, specs, prompt,
                                                config, self.turn_rules(), start,
                                                None if truth is None else truth[i])
            if truth is not None:
                start = truth[i]
                check = final_state.check_turn(env, turn["state_hash"], truth[i].hash, world,
                                               conv.turns, i)
                turn["expected_state_hash"] = check["expected_hash"]
                if "diff" in check:
                    turn["state_diff"] = check["diff"]
            turns.append(turn)
        output: dict[str, Any] = {"system_prompt": prompt,
                                  "tools_offered": [s.name for s in specs], "turns": turns}
        if truth is not None:
            output["final_state"] = {"rule": final_state.EACH_TURN}
        return output

    def mode_label(self) -> str:
        scoring = "strict" if self.options.strict else "reference"
        if self.options.protocol == FREE_RUNNING:
            return FREE_RUNNING if not self.options.strict else f"{FREE_RUNNING}, strict scoring"
        if self.faithful and self.sampling_label() != REFERENCE_SAMPLING:
            return f"{scoring}, deviating sampling"  # the details: run.json's "sampling"
        return scoring

    def score_files(self, path: Path, out: Path | None = None) -> dict[str, Any]:
        """A folder of prediction files written by ToolTalk's own runner."""
        from toolscore.benchmarks.tooltalk.rescore import score_prediction_dir

        return score_prediction_dir(path, strict=self.options.strict,
                                    embedder=self.options.embedder, out=out, tools=self.tools,
                                    similarity=self.similarity)

    # -- scoring -----------------------------------------------------------------------------
    @property
    def similarity(self) -> Any:
        if self._similarity is None:
            from toolscore.data import cache_root
            from toolscore.embed.similarity import shared_similarity

            cache_root().mkdir(parents=True, exist_ok=True)
            self._similarity = shared_similarity(self.options.embedder,
                                                 cache_root() / "embeddings.sqlite")
        return self._similarity

    def warm(self) -> None:
        self.similarity.warm()

    def score(self, output: dict[str, Any], sample: Sample | None = None) -> dict[str, Any]:
        turns = [TurnCalls(t["turn"], [CallRecord.from_dict(c) for c in t["ground_truth"]],
                           [CallRecord.from_dict(c) for c in t["predictions"]], t.get("text"))
                 for t in output["turns"]]
        scores = score_turns(turns, self.tools, MatchContext(self.similarity, self.options.strict))
        state = final_state.stored_success(output)
        if state is not None:
            scores["final_state_success"] = state
        capped = sum(t.get("stop") == "max_calls" for t in output["turns"])
        if capped:  # the run's cap ended these turns: said in the report
            scores["turns_at_call_cap"] = capped
        return scores

    def aggregate(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        ok = [r for r in records if r.get("status") == "ok"]
        by_split: dict[str, list[ConversationScore]] = defaultdict(list)
        for r in ok:
            by_split[r.get("meta", {}).get("split", "all")].append(stored_score(r["scores"]))
        result: dict[str, Any] = {split: aggregate(scores)
                                  for split, scores in sorted(by_split.items())}
        for split, group in result.items():
            checked = [r["scores"]["final_state_success"] for r in ok
                       if r.get("meta", {}).get("split", "all") == split
                       and "final_state_success" in (r.get("scores") or {})]
            if checked:
                group["final_state_conversations"] = len(checked)
                group["final_state_successes"] = sum(map(bool, checked))
                group["final_state_success_rate"] = sum(map(bool, checked)) / len(checked)
        result["errors"] = len(records) - len(ok)
        result["strict"] = self.options.strict
        result["error_rule"] = error_rule(self.options.strict)
        result["embedder"] = self.options.embedder
        if self.options.protocol != "reference":
            result["protocol"] = self.options.protocol
        result["prompt_source"] = self.prompt_source()
        result["documents_source"] = self.documents_source()
        result["sampling"] = self.sampling_label()
        result["turn_protocol"] = self.turn_label()
        capped = sum(r["scores"].get("turns_at_call_cap", 0) for r in ok)
        if capped:
            result["turns_at_call_cap"] = capped
        return result


_COUNTS = ("predictions", "ground_truths", "matches", "actions", "valid_actions", "bad_actions")


def score_turns(turns: list[TurnCalls], tools: dict[str, Tool],
                ctx: MatchContext) -> dict[str, Any]:
    """A conversation's stored scores: metrics, per-prediction outcomes, per-turn error types."""
    if hasattr(ctx.similarity, "prefetch"):
        ctx.similarity.prefetch(similarity_texts(turns, tools))
    score = score_conversation(turns, tools, ctx)
    return {
        **score.metrics(),
        "error_types": {str(turn): kind for turn, kind in score.errors.items()},
        "error_counts": {str(turn): score.error_counts.get(turn, 1) for turn in score.errors},
        "outcomes": [{"turn": o.ref.turn, "index": o.ref.index, "name": o.name,
                      "action": o.action, "bad_action": o.bad_action,
                      "match": [o.match.turn, o.match.index] if o.match else None}
                     for o in score.outcomes],
    }


def stored_score(scores: dict[str, Any]) -> ConversationScore:
    """Rebuild the counts of a stored score for aggregation.

    ``error_counts`` (errors per classified turn) is absent from records scored before
    over-triggers were counted per bad action: each turn then counts once, as it was scored.
    """
    counts = scores.get("error_counts") or {}
    totals: dict[str, Any] = {k: int(scores[k]) for k in _COUNTS}
    return ConversationScore(**totals,
                             errors={int(t): e for t, e in scores.get("error_types", {}).items()},
                             error_counts={int(t): int(n) for t, n in counts.items()})


def free_running_protocol() -> Any:
    """The free-running driver (:func:`toolscore.benchmarks.serve.freerun.play`): generic code
    of the benchmark layer that serves this benchmark's world (:meth:`ToolTalkBenchmark
    .serving`) over MCP to an agent."""
    try:
        from toolscore.benchmarks.serve.freerun import play
    except ImportError as e:
        raise OptionError(f"protocol {FREE_RUNNING!r} cannot be loaded ({e}); it needs "
                          "toolscore's serve package: pip install 'toolscore[mcp]'") from None
    return play

