"""``replay:<file>``: replies recorded by ``ModelClient(record_path=...)``, played back.

A recording makes a run (or a bug report) reproducible by anyone, without keys or network, and
lets scorers be re-tested on exactly the transcripts a real model produced. Replies are matched
on what the model saw (messages, tools, tool choice), not on settings like temperature, so a
recording can be replayed under a different configuration. When the same request was recorded
several times (repeated epochs), the reply recorded with the same ``epoch`` wins, else the first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolscore.models.base import InfraError, Model
from toolscore.models.cache import sha256_json
from toolscore.types import GenerateConfig, Message, Reply, ToolSpec


def replay_key(messages: list[dict[str, Any]], tools: list[dict[str, Any]],
               tool_choice: str) -> str:
    """Hash of the request as recorded (plain dicts, as written by ``to_dict``)."""
    return sha256_json({"messages": messages, "tools": tools, "tool_choice": tool_choice})


class ReplayModel(Model):
    """Loads the whole file once; a request that was never recorded is a non-retryable error."""

    cacheable = False
    empty_is_error = False  # replays exactly what was recorded

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.name = f"replay:{path}"
        if not self.path.exists():
            raise FileNotFoundError(f"replay file not found: {self.path}")
        self._replies: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        with self.path.open(encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                    req = rec["request"]
                    key = replay_key(req["messages"], req.get("tools") or [],
                                     (req.get("config") or {}).get("tool_choice") or "auto")
                    epoch = int((req.get("config") or {}).get("epoch", 0))
                    self._replies.setdefault(key, []).append((epoch, rec["reply"]))
                except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                    # A run killed mid-write leaves a torn last line; skip it, keep the rest.
                    continue

    def __len__(self) -> int:
        return sum(len(v) for v in self._replies.values())

    def cache_identity(self) -> dict[str, object]:
        return {"provider": "replay", "file": str(self.path)}

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig
    ) -> Reply:
        key = replay_key([m.to_dict() for m in messages], [t.to_dict() for t in tools],
                         config.tool_choice or "auto")  # unset: the APIs' "auto"
        found = self._replies.get(key)
        if not found:
            raise InfraError(f"no recorded reply for this request in {self.path}",
                             retryable=False)
        data = next((r for e, r in found if e == config.epoch), found[0][1])
        return Reply.from_dict(data)
