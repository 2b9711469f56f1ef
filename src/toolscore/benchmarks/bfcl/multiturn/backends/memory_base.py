"""What BFCL's three memory backends share: a memory that outlives one conversation.

A memory entry of BFCL's agentic categories is answered in a memory written earlier, by the
same model, while it went through the scenario's prerequisite conversations one after the
other. BFCL keeps that memory between entries as a JSON snapshot file per scenario; in toolscore
the snapshot is a plain JSON value the run keeps (:mod:`toolscore.benchmarks.bfcl.multiturn.memory`
decides which snapshot each entry starts from and stores the ones prerequisite entries leave).

The memory backends' scenario (``initial_config[ClassName]``) is ``{"snapshot": value}``: a
snapshot as :meth:`MemoryBackend._snapshot` returned it (after a JSON round trip, as BFCL's file
gives it back), or ``None``/missing for an empty memory. BFCL's backends also keep the snapshot
file paths and the entry id as public attributes; toolscore's keep none (the memory categories
are judged on the model's last answer, never on backend state).
"""

from __future__ import annotations

import json
from typing import Any

from toolscore.benchmarks.bfcl.multiturn.backend import Backend


class MemoryBackend(Backend):
    """A memory backend: state loaded from, and saved to, a JSON snapshot."""

    def _load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
        snapshot = scenario.get("snapshot")
        if snapshot:
            self._restore(snapshot)

    def _restore(self, snapshot: dict[str, Any]) -> None:
        """Take the state a snapshot holds."""
        raise NotImplementedError

    def _state(self) -> dict[str, Any]:
        """The state as BFCL writes it to its snapshot file (before JSON encoding)."""
        raise NotImplementedError

    def _snapshot(self) -> dict[str, Any]:
        """The state as a later entry reads it back: BFCL's snapshot file, decoded."""
        return json.loads(json.dumps(self._state()))

    def _memory_context(self) -> str:
        """The memory text BFCL puts in the system prompt of an entry using this backend."""
        raise NotImplementedError
