"""One episode: an Environment per agent session and its call log, turn by turn.

An agent that runs its own loop is evaluated on what it did to the world, so every call is
logged as it happens (episode, turn, time, tool, arguments as executed, response, exception),
and the stored output is per assistant turn (ground truth and predictions, each call in the
shape the benchmark's ``Serving.stored_call`` gives), so the benchmark's own scorer, report and
compare read it. The world is not reset between turns:
this is the free-running protocol.

Nothing an episode went through is lost from its output: a reset keeps the attempt it
discarded (``discarded_attempts``, with its calls), and an episode recorded before it ended
says so (``unfinished``). Each event is handed to ``note`` (the run's journal, when there is
one) as it happens.

The turn counter is the index of the conversation turn the agent is answering (the numbering
of the benchmark's ``Serving.assistant_turns``); whoever plays the user advances it. A person
driving a desktop client never does, so all their calls fall in the first assistant turn:
matching is over the whole conversation, only the per-turn error analysis then sees one turn.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from toolscore.benchmarks.serve.jsonsafe import finite, non_finite
from toolscore.benchmarks.serve.world import PROTOCOL, EpisodeWorld
from toolscore.env.tool import CallRecord


class EpisodeError(LookupError):
    """A request about an episode that cannot be served; ``status``: the HTTP answer."""

    status = 400


class UnknownEpisode(EpisodeError):
    status = 404


class EpisodeEnded(EpisodeError):
    status = 409


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


Note = Callable[[dict[str, Any]], None]


def _silent(event: dict[str, Any]) -> None:
    return None


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
    # the secret in the episode's MCP address: it reaches the tools, never the control API
    key: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    # attempts a reset (or a retry of the protocol) threw away, with their calls
    discarded: list[dict[str, Any]] = field(default_factory=list)
    unfinished: str | None = None  # why the episode was recorded before it ended
    last_seen: float | None = None  # its last event, when rebuilt from the journal
    note: Note = field(default=_silent, repr=False)  # where its events are journaled

    def __post_init__(self) -> None:
        self.turn = self._assistant_turns()[0] if self._assistant_turns() else 0

    def _assistant_turns(self) -> list[int]:
        if self.world.sample is None or self.world.serving is None:
            return []
        return self.world.serving.assistant_turns(self.world.sample)

    def call(self, name: str, arguments: dict[str, Any] | None) -> CallRecord:
        """Execute one call in this episode's world and log it.

        Arguments holding a NaN or an infinity (not JSON: a lenient client or parser let it
        through) are not executed: the call is logged, the number kept as its name, and
        answered with a tool error saying why.
        """
        if self.ended:
            raise EpisodeEnded(f"episode {self.id} has ended")
        arrived = time.time()
        arguments = arguments if arguments is not None else {}
        where = non_finite(arguments)
        if where is None:
            record = self.world.env.call(name, arguments)
        else:
            record = CallRecord(name, finite(arguments), None,
                                f"invalid arguments: {where} is not a JSON number (JSON has "
                                "no NaN or Infinity)")
        entry = CallLogEntry(self.id, self.turn, arrived, name, finite(record.arguments),
                             finite(record.response), record.exception)
        self.calls.append(entry)
        self.note({"event": "call", **entry.to_dict(), "executed": where is None})
        return record

    def replay(self, entry: CallLogEntry, executed: bool = True) -> None:
        """Log a call made before (from the journal), running it again to rebuild the state
        when it ran then and the world can be replayed; the logged response stays."""
        if executed and self.world.replayable and entry.arguments is not None:
            self.world.env.call(entry.tool, entry.arguments)
        self.calls.append(entry)

    def advance(self, turn: int | None = None) -> int:
        """Move to ``turn`` (default: the conversation's next assistant turn, or +1)."""
        if self.ended:
            raise EpisodeEnded(f"episode {self.id} has ended")
        self.turn_hashes[self.turn] = self.world.env.state_hash()
        if turn is None:
            later = [i for i in self._assistant_turns() if i > self.turn]
            turn = later[0] if later else self.turn + 1
        self.turn = int(turn)
        self.note({"event": "turn", "episode": self.id, "turn": self.turn})
        return self.turn

    def reset(self, reason: str = "reset") -> None:
        """Back to the world's initial state; the log and the turn counter start again, and
        the attempt thrown away is kept (its calls, when, why) for the record."""
        if self.ended:
            raise EpisodeEnded(f"episode {self.id} has ended")
        self.discarded.append(self.attempt(reason))
        self.world.env.reset()
        self.calls.clear()
        self.turn_hashes.clear()
        self.__post_init__()
        self.note({"event": "reset", "episode": self.id, "reason": reason,
                   "time": time.time()})

    def attempt(self, ended_by: str) -> dict[str, Any]:
        """This attempt as a record keeps a discarded one."""
        return {"attempt": len(self.discarded) + 1, "episode": self.id, "ended_by": ended_by,
                "time": time.time(), "turn": self.turn,
                "calls": [c.to_dict() for c in self.calls],
                "state_hash": self.world.env.state_hash()}

    def output(self) -> dict[str, Any]:
        """The stored output: the benchmark's per-turn shape plus the full call log."""
        final = self.world.env.state_hash()
        turns = self._assistant_turns() or sorted({c.turn for c in self.calls} or {0})
        serving, sample = self.world.serving, self.world.sample
        known = serving if sample is not None else None  # the benchmark's, with its sample
        stored_call = serving.stored_call if serving is not None else _stored_call
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
                       "ground_truth": (known.ground_truth(sample, t) if known is not None
                                        else []),
                       "predictions": by_turn[t], "text": None,
                       "stop": "unfinished" if self.unfinished else "episode_end",
                       "state_hash": self.turn_hashes.get(t, final)} for t in turns],
            "calls": [c.to_dict() for c in self.calls],
            "state_hash": final,
            "attempts": len(self.discarded) + 1,
            "discarded_attempts": list(self.discarded),
        }
        if self.unfinished:
            output["unfinished"] = self.unfinished
        if self.world.truth is not None and known is not None:
            # the benchmark's check of the world left at the end against the ground truth's
            known.check_final_state(sample, self.world.env, self.world.truth, output)
        return output


def _stored_call(record: CallRecord, raw_arguments: str) -> dict[str, Any]:
    """A call of a world served without a benchmark (installed plugin sets alone)."""
    from toolscore.env.limits import NAME_LIMIT, bounded, bounded_text

    return {"request": {"api_name": bounded_text(record.name, NAME_LIMIT),
                        "parameters": bounded(record.arguments)},
            "response": bounded(record.response),
            "exception": bounded_text(record.exception),
            "raw_arguments": bounded_text(raw_arguments)}
