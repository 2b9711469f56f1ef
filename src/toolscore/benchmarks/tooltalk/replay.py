"""Replay runs made with ToolTalk's own runner through our simulator, call by call.

ToolTalk's evaluated-prediction files record, for every call a model made, the response and the
exception the reference simulator returned. Those strings are what the model read next, so a
faithful simulator must return exactly them. This module re-executes each recorded prediction
in the state the reference executed it in (the turn's reset, then the ground truth of the earlier
turns, then the turn's earlier predictions) and lists every call whose response or exception
differs. It is how a user checks toolscore against runs made with the reference code.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.benchmarks.tooltalk.data import (
    Conversation,
    conversation_from_dict,
    load_databases,
    make_environment,
    require_databases,
)
from toolscore.benchmarks.tooltalk.predictions import PredictionFormatError, read_prediction_file
from toolscore.benchmarks.tooltalk.protocol import start_turn
from toolscore.data import read_text
from toolscore.env.plugin import Plugin
from toolscore.env.tool import CallRecord


@dataclass(frozen=True)
class CallDifference:
    """A recorded call whose replay gave another response or exception."""

    file: str
    turn: int
    index: int
    api: str
    request: dict[str, Any] | None
    expected: dict[str, Any]
    got: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "turn": self.turn, "index": self.index, "api": self.api,
                "request": self.request, "expected": self.expected, "got": self.got}


@dataclass
class ReplayReport:
    """How many recorded calls were replayed, how many came back identical, and the rest."""

    calls: int = 0
    identical: int = 0
    files: int = 0
    differences: list[CallDifference] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "identical": self.identical, "files": self.files,
                "differences": [d.to_dict() for d in self.differences],
                "skipped": list(self.skipped)}


def _outcome(call: CallRecord) -> dict[str, Any]:
    return {"response": call.response, "exception": call.exception}


def _same(recorded: CallRecord, replayed: CallRecord) -> bool:
    """Exact equality of the JSON values (1 and 1.0 and True are told apart, as JSON does)."""
    return (json.dumps(recorded.response, sort_keys=True)
            == json.dumps(replayed.response, sort_keys=True)
            and recorded.exception == replayed.exception)


def replay_conversation(conversation: Conversation, turns: Iterable[Any],
                        databases: dict[str, Any], label: str,
                        plugins: list[Plugin] | None = None) -> ReplayReport:
    """Replay the recorded predictions of ``turns`` (predictions' TurnCalls) of one file."""
    report = ReplayReport(files=1)
    env = make_environment(conversation, databases, plugins)
    for turn in turns:
        start_turn(env, conversation.turns, turn.turn)
        for i, recorded in enumerate(turn.predictions):
            replayed = env.call(recorded.name, recorded.arguments)
            report.calls += 1
            if _same(recorded, replayed):
                report.identical += 1
            else:
                report.differences.append(CallDifference(
                    label, turn.turn, i, recorded.name, recorded.arguments,
                    _outcome(recorded), _outcome(replayed)))
    return report


def prediction_files(directory: str | Path) -> list[Path]:
    """The ``*.json`` files of ``directory`` and of its sub-folders (e.g. easy/ and hard/)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"{directory}: not a directory")
    files = sorted(directory.glob("*.json"))
    for sub in sorted(p for p in directory.iterdir() if p.is_dir()):
        files.extend(sorted(sub.glob("*.json")))
    return files


def replay_directory(directory: str | Path, data_dir: str | Path,
                     plugins: list[Plugin] | None = None) -> ReplayReport:
    """Replay every prediction file under ``directory`` against the dataset in ``data_dir``.

    JSON files that are not conversations (no ``conversation`` list, such as a saved summary)
    are listed in ``skipped``; a conversation file with a bad shape raises a one-line error.
    """
    directory = Path(directory)
    databases = load_databases(Path(data_dir))
    if plugins is None:
        from toolscore.benchmarks.tooltalk.plugins import PLUGINS

        plugins = PLUGINS
    total = ReplayReport()
    for path in prediction_files(directory):
        label = str(path.relative_to(directory))
        try:
            raw = json.loads(read_text(path))
        except json.JSONDecodeError as e:
            raise PredictionFormatError(f"{path}: unreadable JSON: {e}") from None
        if not isinstance(raw, dict) or not isinstance(raw.get("conversation"), list):
            total.skipped.append(label)
            continue
        predicted = read_prediction_file(path)
        conversation = conversation_from_dict(raw, path, label)
        called = ({c.name for t in conversation.turns for c in t.apis}
                  | {c.name for t in predicted.turns for c in t.predictions})
        # the databases of the plugins this file calls: a partial world of one's own replays
        require_databases(Path(data_dir), databases,
                          [p for p in plugins if any(t.name in called for t in p.tools)])
        one = replay_conversation(conversation, predicted.turns, databases, label, plugins)
        total.files += 1
        total.calls += one.calls
        total.identical += one.identical
        total.differences.extend(one.differences)
    if total.files == 0:
        raise FileNotFoundError(f"{directory}: no ToolTalk prediction files (*.json with a "
                                "'conversation' list) in it or its sub-folders")
    return total
