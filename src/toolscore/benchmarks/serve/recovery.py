"""The episodes a stopped server left open, recorded from its journal as unfinished.

A server killed outright (SIGKILL, a crash, power) never ends its open episodes, but every
event of theirs is in the run directory's journal (:mod:`.journal`). On the
next start over the same run directory (or with ``toolscore mcp recover OUT``), each episode
the journal shows opened and never ended is rebuilt (a fresh world of its conversation, its
calls executed again in order to reach the state it had, its turns and resets replayed; the
call log keeps the responses the agent saw) and recorded like any other, scored, with
``unfinished`` saying why it ended early. An episode whose record made it to ``samples.jsonl``
before the kill (only its ``end`` line is missing) is not recorded twice.

The journal is emptied once every episode in it has a record; an episode that cannot be
rebuilt here (another world than the one served now) stays in it, named in
``Episodes.recovery_failures``, for ``toolscore mcp recover``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from toolscore.benchmarks.serve.episode import CallLogEntry, Episode
from toolscore.benchmarks.serve.world import ServedWorld
from toolscore.records.store import without_output

UNFINISHED = ("the server stopped before the episode ended (recorded from the journal when "
              "the run directory was next opened)")
_ENTRY_FIELDS = ("episode", "turn", "time", "tool", "arguments", "response", "exception")


@dataclass
class Pending:
    """An episode the journal shows opened and never ended."""

    episode: str
    sample: str | None
    epoch: int
    started: float
    origin: dict[str, Any] | None  # the world of the server that opened it
    agent: str | None
    events: list[dict[str, Any]] = field(default_factory=list)


def pending(events: Iterable[dict[str, Any]]) -> list[Pending]:
    """The open episodes of a journal, in the order they were opened."""
    origin: dict[str, Any] | None = None
    agent: str | None = None
    opened: dict[str, Pending] = {}
    for event in events:
        kind, episode = event["event"], str(event.get("episode"))
        if kind == "server":
            origin, agent = event.get("world"), event.get("agent")
        elif kind == "open":
            opened[episode] = Pending(episode, event.get("sample"), int(event.get("epoch", 0)),
                                      float(event.get("time", 0.0)), origin, agent)
        elif kind == "end":
            opened.pop(episode, None)
        elif episode in opened:
            opened[episode].events.append(event)
    return list(opened.values())


def same_world(served: ServedWorld, origin: dict[str, Any] | None) -> bool:
    """Whether the journaled ``origin`` is the world served now (its data folder aside: the
    same data may be reached another way; an unknown origin is taken to be this world)."""
    if origin is None or served.origin is None:
        return True
    keys = ("benchmark", "plugins", "options")
    return all(origin.get(k) == served.origin.get(k) for k in keys)


def rebuild(world: ServedWorld, item: Pending) -> Episode:
    """The episode as it stood at its last journaled event."""
    episode = Episode(item.episode, world.open(item.sample), item.epoch, started=item.started)
    last = item.started
    for event in item.events:
        last = max(last, float(event.get("time") or last))
        kind = event["event"]
        if kind == "call":
            fields: dict[str, Any] = {k: event.get(k) for k in _ENTRY_FIELDS}
            entry = CallLogEntry(**fields)
            episode.replay(entry, executed=bool(event.get("executed", True)))
        elif kind == "turn":
            episode.advance(int(event["turn"]))
        elif kind == "reset":
            episode.reset(str(event.get("reason") or "reset"))
            episode.discarded[-1]["time"] = event.get("time")
    episode.last_seen = last
    return episode


def recover(episodes: Any) -> None:
    """Record the open episodes of ``episodes``' journal (an entered
    :class:`~toolscore.benchmarks.serve.episodes.Episodes`, under the run directory's lock);
    ``episodes.recovered`` and ``recovery_failures`` say what came of it."""
    journal, store = episodes.journal, episodes.store
    assert journal is not None and store is not None
    todo = pending(journal.events())
    recorded: set[str] = set()
    if todo:
        recorded = {str((r.get("meta") or {}).get("episode"))
                    for r in store.records(without_output)}
    for item in todo:
        if item.episode in recorded:  # recorded, killed before its end line
            journal.write({"event": "end", "episode": item.episode})
            continue
        if not same_world(episodes.world, item.origin):
            what = (item.origin or {}).get("benchmark")
            episodes.recovery_failures.append(
                f"episode {item.episode} was served on another world ({what}); record it with "
                f"'toolscore mcp recover {store.path}'")
            continue
        try:
            episode = rebuild(episodes.world, item)
            episodes.recovered.append(episodes.finish(episode, UNFINISHED))
        except (LookupError, ValueError, TypeError, KeyError) as e:
            episodes.recovery_failures.append(f"episode {item.episode} could not be rebuilt "
                                               f"from the journal: {e}")
    if not episodes.recovery_failures:
        journal.clear()
