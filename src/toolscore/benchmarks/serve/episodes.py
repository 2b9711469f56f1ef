"""Episodes: every episode of a server, and the record each one leaves when it ends.

Ending an episode writes one ``samples.jsonl`` record into a run directory, scored by the
benchmark's own scorer. The world is not reset between turns: this is the free-running
protocol, labelled as such in run.json and in every record, and not comparable with the
reference protocol's figures.

Nothing is lost between two records: with a run directory every event is journaled as it
happens (:mod:`toolscore.benchmarks.serve.journal`), an episode still open when the server stops is
recorded as unfinished (``unfinished`` in the output and the meta), and the episodes a killed
server left open are recorded so on the next start (:mod:`toolscore.benchmarks.serve.recovery`).
"""

from __future__ import annotations

import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import options_to_json
from toolscore.benchmarks.serve.episode import (
    CallLogEntry,
    Episode,
    EpisodeEnded,
    EpisodeError,
    UnknownEpisode,
)
from toolscore.benchmarks.serve.journal import JOURNAL_FILE, Journal
from toolscore.benchmarks.serve.jsonsafe import finite
from toolscore.benchmarks.serve.recovery import pending, recover
from toolscore.benchmarks.serve.world import PROTOCOL, ServedWorld
from toolscore.records import RunConfig, RunStore, SampleRecord
from toolscore.records.store import without_output

__all__ = ["AGENT_LABEL", "STOPPED", "CallLogEntry", "Episode", "EpisodeEnded", "EpisodeError",
           "Episodes", "UnknownEpisode"]

AGENT_LABEL = "mcp-client"
STOPPED = "the server stopped before the episode ended"


class Episodes:
    """Every episode of one server, and the run directory their records go to (optional).

    The run directory is locked while the server runs (one writer), its events are journaled,
    and its ``scores.json`` is rewritten after every ended episode, so the run can be reported
    at any moment. Entering recovers what a stopped server left open (see the module).
    """

    def __init__(self, world: ServedWorld, out: str | Path | None = None,
                 agent: str = AGENT_LABEL) -> None:
        self.world = world
        self.agent = agent
        self.store = RunStore(out) if out is not None else None
        self.journal = Journal(out) if out is not None else None
        self.recovered: list[SampleRecord] = []
        self.recovery_failures: list[str] = []
        self._lock: Any = None
        self._tidy = False  # entered, and nothing in the journal is left to record
        self._episodes: dict[str, Episode] = {}
        self._keys: dict[str, Episode] = {}
        self._epochs: dict[str, int] = {}

    def __enter__(self) -> Episodes:
        if self.store is not None and self.journal is not None:
            self._lock = self.store.lock().acquire()
            try:
                self.store.repair()
                self.journal.open()
                recover(self)
                for record in self.store.records(without_output):
                    key = str(record.get("id"))
                    self._epochs[key] = max(self._epochs.get(key, 0),
                                            int(record.get("epoch", 0)) + 1)
                self.journal.write({"event": "server", "time": time.time(),
                                    "world": self.world.origin, "agent": self.agent})
            except BaseException:
                self.__exit__()
                raise
            self._tidy = not self.recovery_failures
        return self

    def __exit__(self, *exc: object) -> None:
        if self.journal is not None:
            self.journal.close()
            if self._tidy and not self.open_episodes():  # every episode in it is recorded
                self.journal.path.unlink(missing_ok=True)
            self._tidy = False
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    @property
    def needs_conversation(self) -> bool:
        """Whether an episode must name a conversation: its record goes to a run directory
        of a benchmark, whose scores are of conversations (a bare tool world has none)."""
        return (self.world.benchmark is not None and self.store is not None
                and self.world.default_sample is None)

    def create(self, sample_id: str | None = None) -> Episode:
        if sample_id is None and self.needs_conversation:
            raise EpisodeError(f"name a conversation ({{\"conversation\": ID}}): the episodes "
                               f"of {self.world.name} are scored into a run directory, and one "
                               "without a conversation has nothing to be scored against")
        world = self.world.open(sample_id)
        episode_id = uuid.uuid4().hex[:12]
        key = world.sample.id if world.sample is not None else episode_id
        epoch = self._epochs.get(key, 0)
        self._epochs[key] = epoch + 1
        episode = Episode(episode_id, world, epoch)
        self._episodes[episode_id] = episode
        self._keys[episode.key] = episode
        if self.journal is not None:
            episode.note = self.journal.write
            episode.note({"event": "open", "episode": episode_id,
                          "sample": world.sample.id if world.sample is not None else None,
                          "epoch": epoch, "time": episode.started, "turn": episode.turn})
        return episode

    def get(self, episode_id: str) -> Episode:
        episode = self._episodes.get(episode_id)
        if episode is None:
            raise UnknownEpisode(f"no episode {episode_id!r}")
        return episode

    def at(self, key: str) -> Episode:
        """The episode whose MCP address holds ``key`` (an unknown one is not echoed back)."""
        episode = self._keys.get(key)
        if episode is None:
            raise UnknownEpisode("no episode at this address")
        return episode

    def open_episodes(self) -> list[Episode]:
        return [e for e in self._episodes.values() if not e.ended]

    def end(self, episode_id: str, unfinished: str | None = None) -> SampleRecord:
        """End an episode: its record (written to the run directory when there is one).
        ``unfinished``: why it is recorded before whoever drove it ended it."""
        episode = self.get(episode_id)
        if episode.ended:
            raise EpisodeEnded(f"episode {episode_id} has already ended")
        return self.finish(episode, unfinished)

    def finish(self, episode: Episode, unfinished: str | None = None) -> SampleRecord:
        """Record ``episode`` (scored, stored, journaled as ended), then mark it ended: an
        episode whose record could not be made stays open."""
        before = episode.unfinished
        episode.unfinished = unfinished or before
        try:
            record = self.record(episode)
            self.keep(record)
        except BaseException:
            episode.unfinished = before
            raise
        episode.ended = True
        return record

    def stop(self, reason: str = STOPPED) -> list[SampleRecord]:
        """Record every open episode as unfinished (the server is going away); a no-op
        without a run directory (nobody would read the records). One that fails does not
        keep the others from being recorded (it stays in the journal for the next start)."""
        if self.store is None:
            return []
        records: list[SampleRecord] = []
        failed: Exception | None = None
        for episode in self.open_episodes():
            try:
                records.append(self.finish(episode, reason))
            except Exception as e:
                failed = failed or e
        if failed is not None:
            raise failed
        return records

    def keep(self, record: SampleRecord) -> None:
        """Append ``record`` to the run directory and rescore it (when there is one)."""
        if self.store is None:
            return
        if not self.store.exists():
            self.store.write_config(self.run_config())
        self.store.append(record)
        if self.journal is not None:
            self.journal.write({"event": "end", "episode": record.meta.get("episode"),
                                "time": time.time()})
        bench = self.world.benchmark
        if bench is not None:
            # a record without scores (a bare tool world's, or one written by an older
            # version) has nothing to aggregate; it must not stop the others being scored
            scored = [r for r in self.store.latest(without_output).values()
                      if r.get("status") != "ok" or isinstance(r.get("scores"), dict)]
            self.store.write_scores(bench.aggregate(scored))

    def record(self, episode: Episode) -> SampleRecord:
        """The episode's record, JSON throughout (no NaN: see :mod:`.jsonsafe`)."""
        output = finite(episode.output())
        sample = episode.world.sample
        bench = self.world.benchmark
        scores = finite(bench.score(output, sample)) if bench is not None and sample else None
        meta = {**episode.world.meta, "episode": episode.id, "protocol": PROTOCOL}
        if episode.unfinished:
            meta["unfinished"] = True
        ended = episode.last_seen if episode.last_seen is not None else time.time()
        return SampleRecord(id=sample.id if sample else episode.id, epoch=episode.epoch,
                            meta=finite(meta), output=output, scores=scores,
                            time_s=round(max(0.0, ended - episode.started), 3))

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


def recover_directory(out: str | Path, data: str | Path | None = None) -> Episodes:
    """``toolscore mcp recover OUT``: the world OUT's journal names, built again (``data``:
    its data folder, when it moved), and the episodes it shows open recorded as unfinished.
    Returns the (closed) :class:`Episodes`: ``recovered`` and ``recovery_failures`` say what
    happened."""
    journal = Journal(out)
    if not journal.path.is_file() and not RunStore(out).exists():
        raise FileNotFoundError(f"{out}: not the run directory of 'toolscore mcp serve' (no "
                                f"run.json, no {JOURNAL_FILE})")
    todo = pending(journal.events())  # none without a journal: a server stopped cleanly
    origin = next((p.origin for p in todo if p.origin), None)
    agent = next((p.agent for p in todo if p.agent), None) or AGENT_LABEL
    if origin is not None:
        world = ServedWorld.recreate(origin, data)
    elif todo:
        raise ValueError(f"{journal.path}: the journal does not say which world was served "
                         "(a server started from Python with a world of its own): open the "
                         "run directory with that world (Episodes(world, out)) to record them")
    else:
        world = ServedWorld("(nothing open)")  # entering only tidies the journal
    episodes = Episodes(world, out, agent=agent)
    with episodes:
        pass
    return episodes


def _mcp_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mcp")
    except PackageNotFoundError:
        return ""
