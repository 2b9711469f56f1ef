"""BFCL's MemoryAPI_kv: a core and an archival memory of snake_case keys and text values.

The core memory is small and shown to the model in its system prompt; the archival memory is
larger and reached only through calls. Keys are found by exact name or ranked by BM25+ against
a query (:mod:`.bm25`). Sizes and lengths are BFCL's constants, read from its release.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from toolscore.benchmarks.bfcl.multiturn.backends.bm25 import BM25Plus
from toolscore.benchmarks.bfcl.multiturn.backends.memory_base import MemoryBackend
from toolscore.benchmarks.bfcl.release import constant

_KEY = re.compile(r"^[a-z]+(_[a-z0-9]+)*$")
_BAD_KEY = {"error": "Key must be in snake_case format and cannot contain spaces."}
_NOT_FOUND = {"error": "Key not found."}
_DUPLICATE = {"error": "Key name must be unique."}


def _limit(name: str) -> int:
    value = constant("memory_kv.py", name)
    assert isinstance(value, int)
    return value


def _too_long(limit: int) -> dict[str, str]:
    return {"error": f"Entry is too long. Please shorten the entry to less than {limit} "
                     "characters."}


def _tokens(text: str) -> list[str]:
    return text.replace("_", " ").lower().split()


def _ranked(query: str, keys: list[str], k: Any) -> dict[str, Any]:
    bm25 = BM25Plus([_tokens(key) for key in keys])
    scores = bm25.scores(_tokens(query))
    ranked = sorted(zip(scores, keys, strict=True), key=lambda pair: pair[0], reverse=True)
    return {"ranked_results": ranked[:k]}


class _Store:
    """Add/replace/remove rules shared by both memories (BFCL's checks, in BFCL's order)."""

    def __init__(self, memory: dict[str, str], size: int, length: int, full: str,
                 added: str) -> None:
        self.memory, self.size, self.length = memory, size, length
        self.full, self.added = full, added

    def add(self, key: Any, value: Any) -> dict[str, str]:
        key, value = str(key), str(value)
        if len(self.memory) >= self.size:
            return {"error": self.full}
        if len(value) > self.length:
            return _too_long(self.length)
        if not _KEY.match(key):
            return _BAD_KEY
        if key in self.memory:
            return _DUPLICATE
        self.memory[key] = value
        return {"status": self.added}

    def replace(self, key: Any, value: Any) -> dict[str, str]:
        key, value = str(key), str(value)
        if key not in self.memory:
            return _NOT_FOUND
        if len(value) > self.length:
            return _too_long(self.length)
        self.memory[key] = value
        return {"status": "Key replaced."}

    def remove(self, key: Any) -> dict[str, str]:
        if key not in self.memory:
            return _NOT_FOUND
        del self.memory[key]
        return {"status": "Key removed."}

    def retrieve(self, key: Any) -> dict[str, str]:
        if key not in self.memory:
            return _NOT_FOUND
        return {"value": self.memory[key]}


class MemoryAPI_kv(MemoryBackend):  # noqa: N801 -- BFCL's class name
    """Core and archival key-value memories."""

    def __init__(self) -> None:
        self.core_memory: dict[str, str] = {}
        self.archival_memory: dict[str, str] = {}

    def _restore(self, snapshot: dict[str, Any]) -> None:
        self.core_memory = copy.deepcopy(snapshot["core_memory"])
        self.archival_memory = copy.deepcopy(snapshot["archival_memory"])

    def _state(self) -> dict[str, Any]:
        return {"core_memory": self.core_memory, "archival_memory": self.archival_memory}

    def _memory_context(self) -> str:
        if not self.core_memory:
            return "There is no content in the core memory at this point."
        return json.dumps(self.core_memory, indent=4)

    def _core(self) -> _Store:
        return _Store(self.core_memory, _limit("MAX_CORE_MEMORY_SIZE"),
                      _limit("MAX_CORE_MEMORY_ENTRY_LENGTH"),
                      "Core memory is full. Please clear some entries.", "Key-value pair added.")

    def _archival(self) -> _Store:
        return _Store(self.archival_memory, _limit("MAX_ARCHIVAL_MEMORY_SIZE"),
                      _limit("MAX_ARCHIVAL_MEMORY_ENTRY_LENGTH"),
                      "Long term memory is full. Please clear some entries.", "Key added.")

    # -- core memory ---------------------------------------------------------------------------
    def core_memory_add(self, key: str, value: str) -> dict[str, str]:
        return self._core().add(key, value)

    def core_memory_remove(self, key: str) -> dict[str, str]:
        return self._core().remove(key)

    def core_memory_replace(self, key: str, value: str) -> dict[str, str]:
        return self._core().replace(key, value)

    def core_memory_clear(self) -> dict[str, str]:
        self.core_memory = {}
        return {"status": "Short term memory cleared."}

    def core_memory_retrieve(self, key: str) -> dict[str, str]:
        return self._core().retrieve(key)

    def core_memory_list_keys(self) -> dict[str, list[str]]:
        return {"keys": list(self.core_memory)}

    def core_memory_key_search(self, query: str, k: int = 5) -> dict[str, Any]:
        return _ranked(query, list(self.core_memory), k)

    def core_memory_retrieve_all(self) -> dict[str, str]:
        return self.core_memory

    # -- archival memory -----------------------------------------------------------------------
    def archival_memory_add(self, key: str, value: str) -> dict[str, str]:
        return self._archival().add(key, value)

    def archival_memory_remove(self, key: str) -> dict[str, str]:
        return self._archival().remove(key)

    def archival_memory_replace(self, key: str, value: str) -> dict[str, str]:
        return self._archival().replace(key, value)

    def archival_memory_clear(self) -> dict[str, str]:
        self.archival_memory = {}
        return {"status": "Long term memory cleared."}

    def archival_memory_retrieve(self, key: str) -> dict[str, str]:
        return self._archival().retrieve(key)

    def archival_memory_list_keys(self) -> dict[str, list[str]]:
        return {"keys": list(self.archival_memory)}

    def archival_memory_key_search(self, query: str, k: int = 5) -> dict[str, Any]:
        return _ranked(query, list(self.archival_memory), k)
