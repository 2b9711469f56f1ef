"""Episodes: one Environment per agent session, its call log, and its record when it ends.

An agent that runs its own loop is evaluated on what it did to the world, so every call is
logged as it happens (episode, turn, time, tool, arguments as executed, response, exception)
and ending an episode writes one ``samples.jsonl`` record into a run directory, in the shape
ToolTalk's protocol stores (per assistant turn: ground truth and predictions), so the same
scorer, report and compare read it. The world is not reset between turns: this is the
free-running protocol, labelled as such in run.json and in every record, and not comparable
with the reference protocol's figures.

The turn counter is the index of the conversation turn the agent is answering (ToolTalk's
turn numbering); whoever plays the user advances it. A person driving a desktop client never
does, so all their calls fall in the first assistant turn: matching is over the whole
conversation, only the per-turn error analysis then sees one turn.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import options_to_json
from toolscore.env.tool import CallRecord
from toolscore.records import RunConfig, RunStore, SampleRecord
from toolscore.serve.world import PROTOCOL, EpisodeWorld, ServedWorld

AGENT_LABEL = "mcp-client"


class EpisodeError(LookupError):
    """An unknown or already ended episode (the HTTP layer answers 404 / 409)."""


@dataclass
class CallLogEntry:
    episode: str
    turn: int
    time: float  # seconds since the epoch, when the call arrived
    tool: str
    arguments: dict[str, Any] | None
    response: Any = None
    exception: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Episode:
    id: str
    world: EpisodeWorld
    epoch: int = 0
    turn: int = 0
    calls: list[CallLogEntry] = field(default_factory=list)
    turn_hashes: dict[int, str] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    ended: bool = False

    def __post_init__(self) -> None:
        self.turn = self._assistant_turns()[0] if self._assistant_turns() else 0

    def _assistant_turns(self) -> list[int]:
        if self.world.sample is None:
            return []
        return [i for i, t in enumerate(self.world.sample.data.turns) if t.role == "assistant"]

    def call(self, name: str, arguments: dict[str, Any] | None) -> CallRecord:
        """Execute one call in this episode's world and log it."""
        if self.ended:
            raise EpisodeError(f"episode {self.id} has ended")
        arrived = time.time()
        record = self.world.env.call(name, arguments if arguments is not None else {})
        self.calls.append(CallLogEntry(self.id, self.turn, arrived, name, record.arguments,
                                       record.response, record.exception))
        return record

    def advance(self, turn: int | None = None) -> int:
        """Move to ``turn`` (default: the conversation's next assistant turn, or +1)."""
        self.turn_hashes[self.turn] = self.world.env.state_hash()
        if turn is None:
            later = [i for i in self._assistant_turns() if i > self.turn]
            turn = later[0] if later else self.turn + 1
        self.turn = int(turn)
        return self.turn

    def reset(self) -> None:
        """Back to the world's initial state; the log and the turn counter start again."""
        self.world.env.reset()
        self.calls.clear()
        self.turn_hashes.clear()
        self.__post_init__()

    def output(self) -> dict[str, Any]:
        """The stored output: ToolTalk's per-turn shape plus the full call log."""
        from toolscore.benchmarks.tooltalk.protocol import stored_call

        final = self.world.env.state_hash()
        turns = self._assistant_turns() or sorted({c.turn for c in self.calls} or {0})
        ground = self.world.sample.data.turns if self.world.sample is not None else None
        by_turn: dict[int, list[dict[str, Any]]] = {t: [] for t in turns}
        for c in self.calls:
            home = max([t for t in turns if t <= c.turn], default=turns[0])
            by_turn[home].append(stored_call(CallRecord(c.tool, c.arguments, c.response,
                                                        c.exception),
                                             json.dumps(c.arguments, default=str)))
        output = {
            "protocol": PROTOCOL, "served_over": "mcp", "episode": self.id,
            "system_prompt": self.world.system_prompt,
            "tools_offered": list(self.world.specs),
            "turns": [{"turn": t,
                       "ground_truth": [g.to_dict() for g in ground[t].apis] if ground else [],
                       "predictions": by_turn[t], "text": None, "stop": "episode_end",
                       "state_hash": self.turn_hashes.get(t, final)} for t in turns],
            "calls": [c.to_dict() for c in self.calls],
            "state_hash": final,
        }
        if self.world.truth is not None and ground is not None:
            self._check_final_state(output)
        return output

    def _check_final_state(self, output: dict[str, Any]) -> None:
        """The final-state check (:mod:`toolscore.benchmarks.tooltalk.final_state`): the world
        at the end against reset + every ground-truth call; per turn, the hash the ground
        truth reaches by then, as a diagnostic."""
        from toolscore.benchmarks.tooltalk import final_state

        assert self.world.truth is not None and self.world.sample is not None
        truth = self.world.truth()
        turns = self.world.sample.data.turns
        for stored in output["turns"]:
            final_state.replay(truth, turns[stored["turn"]].apis)
            stored["expected_state_hash"] = truth.state_hash()
        check = final_state.compare(self.world.env, truth)
        output["final_state"] = {"rule": final_state.END_OF_CONVERSATION, **check}


class Episodes:
    """Every episode of one server, and the run directory their records go to (optional).

    The run directory is locked while the server runs (one writer), and its ``scores.json``
    is rewritten after every ended episode, so the run can be reported at any moment.
    """

    def __init__(self, world: ServedWorld, out: str | Path | None = None,
                 agent: str = AGENT_LABEL) -> None:
        self.world = world
        self.agent = agent
        self.store = RunStore(out) if out is not None else None
        self._lock: Any = None
        self._episodes: dict[str, Episode] = {}
        self._epochs: dict[str, int] = {}

    def __enter__(self) -> Episodes:
        if self.store is not None:
            self._lock = self.store.lock().acquire()
            self.store.repair()
            for record in self.store.records():
                key = str(record.get("id"))
                self._epochs[key] = max(self._epochs.get(key, 0), int(record.get("epoch", 0)) + 1)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def create(self, sample_id: str | None = None) -> Episode:
        world = self.world.open(sample_id)
        episode_id = uuid.uuid4().hex[:12]
        key = world.sample.id if world.sample is not None else episode_id
        epoch = self._epochs.get(key, 0)
        self._epochs[key] = epoch + 1
        episode = Episode(episode_id, world, epoch)
        self._episodes[episode_id] = episode
        return episode

    def get(self, episode_id: str) -> Episode:
        episode = self._episodes.get(episode_id)
        if episode is None:
            raise EpisodeError(f"no episode {episode_id!r}")
        return episode

    def end(self, episode_id: str) -> SampleRecord:
        """End an episode: its record (written to the run directory when there is one)."""
        episode = self.get(episode_id)
        if episode.ended:
            raise EpisodeError(f"episode {episode_id} has already ended")
        episode.ended = True
        record = self.record(episode)
        if self.store is not None:
            if not self.store.exists():
                self.store.write_config(self.run_config())
            self.store.append(record)
            bench = self.world.benchmark
            if bench is not None:
                self.store.write_scores(bench.aggregate(list(self.store.latest().values())))
        return record

    def record(self, episode: Episode) -> SampleRecord:
        output = episode.output()
        sample = episode.world.sample
        bench = self.world.benchmark
        scores = bench.score(output, sample) if bench is not None and sample else None
        meta = {**episode.world.meta, "episode": episode.id, "protocol": PROTOCOL}
        return SampleRecord(id=sample.id if sample else episode.id, epoch=episode.epoch,
                            meta=meta, output=output, scores=scores,
                            time_s=round(time.time() - episode.started, 3))

    def run_config(self) -> RunConfig:
        from toolscore import __version__

        options = self.world.options
        if self.world.benchmark is not None:
            from toolscore.benchmarks.base import option_fields, parse_options

            cls = type(self.world.benchmark)
            if "protocol" in {f.name for f in option_fields(cls.Options)}:
                options = {**options, "protocol": PROTOCOL}  # reports then label it
            options = options_to_json(parse_options(cls.Options, options, self.world.name))
        return RunConfig(benchmark=self.world.name, model=self.agent, options=options,
                         benchmark_config=self.world.config(),
                         data=str(self.world.data) if self.world.data else None,
                         created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                         versions={"toolscore": __version__, "mcp": _mcp_version()},
                         command=list(sys.argv), max_concurrency=1)


def _mcp_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mcp")
    except PackageNotFoundError:
        return ""
