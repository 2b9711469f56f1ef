"""BFCL's MemoryAPI_rec_sum: one free-text memory the model keeps summarising.

The model appends to, rewrites or edits a single text (at most BFCL's
``MAX_MEMORY_ENTRY_LENGTH`` characters, read from its release); all of it is shown in the
system prompt of later entries.
"""

from __future__ import annotations

from typing import Any

from toolscore.benchmarks.bfcl.multiturn.backends.memory_base import MemoryBackend
from toolscore.benchmarks.bfcl.release import constant


def _limit() -> int:
    value = constant("memory_rec_sum.py", "MAX_MEMORY_ENTRY_LENGTH")
    assert isinstance(value, int)
    return value


def _too_long(action: str, limit: int) -> dict[str, str]:
    return {"error": f"Entry will be too long after {action}. Please shorten the entry to less "
                     f"than {limit} characters."}


class MemoryAPI_rec_sum(MemoryBackend):  # noqa: N801 -- BFCL's class name
    """A single text memory."""

    def __init__(self) -> None:
        self.memory: str = ""

    def _restore(self, snapshot: dict[str, Any]) -> None:
        memory = snapshot["memory"]
        if not isinstance(memory, str):
            raise TypeError(f"the memory snapshot holds a {type(memory).__name__}, not text")
        self.memory = memory

    def _state(self) -> dict[str, Any]:
        return {"memory": self.memory}

    def _memory_context(self) -> str:
        if not self.memory:
            return "There is no content in the memory at this point."
        return str(self.memory)

    def memory_append(self, text: str) -> dict[str, str]:
        text = str(text)
        limit = _limit()
        if len(self.memory + text) > limit:
            return _too_long("appending", limit)
        self.memory += text
        return {"status": "Memory appended."}

    def memory_update(self, text: str) -> dict[str, str]:
        text = str(text)
        limit = _limit()
        if len(text) > limit:
            return _too_long("updating", limit)
        self.memory = text
        return {"status": "Memory updated."}

    def memory_clear(self) -> dict[str, str]:
        self.memory = ""
        return {"status": "Short term memory cleared."}

    def memory_replace(self, old_text: str, new_text: str) -> dict[str, str]:
        old_text, new_text = str(old_text), str(new_text)
        if old_text not in self.memory:
            return {"error": f"Text '{old_text}' not found in memory."}
        limit = _limit()
        if len(new_text) > limit:
            return _too_long("replacing", limit)
        self.memory = self.memory.replace(old_text, new_text)
        return {"status": "Memory updated."}

    def memory_retrieve(self) -> dict[str, str]:
        if not self.memory:
            return {"error": "Memory is empty."}
        return {"memory_content": self.memory}
