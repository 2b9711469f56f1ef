"""BFCL's MemoryAPI_vector: core and archival memories of texts found by meaning.

Each memory is a store of texts under sequential integer ids, searched by the cosine between
all-MiniLM-L6-v2 sentence vectors (BFCL: sentence-transformers and a FAISS flat inner-product
index; toolscore: its own numpy encoder, extra ``embed``, and an exact search in numpy: a flat
index *is* an exact search). The ranking is BFCL's: highest score first, equal scores (the same
text stored twice) latest-indexed first, as FAISS's heap leaves them. The scores themselves
agree with BFCL's to about 1e-6, not to the last digit (two encoders' float32 sums).

The few argument errors BFCL's libraries raise for a malformed ``top_k`` or query are raised
here with the same texts (the executor sends them to the model).
"""

from __future__ import annotations

import json
import threading
from typing import Any

import numpy as np

from toolscore.benchmarks.bfcl.multiturn.backends.memory_base import MemoryBackend
from toolscore.benchmarks.bfcl.release import constant

_lock = threading.Lock()
_embedder: Any = None
#: text -> its vector: every entry of a scenario reloads the same memory, so the same texts
#: come back many times (a vector depends on its text alone)
_vectors_cache: dict[str, np.ndarray] = {}
_CACHE_SIZE = 8192


def set_embedder(embedder: Any) -> None:
    """Use ``embedder`` (anything with ``embed(texts) -> array``) instead of all-MiniLM-L6-v2,
    e.g. a non-semantic one in tests; ``None`` goes back to the default."""
    global _embedder
    with _lock:
        _embedder = embedder
        _vectors_cache.clear()


def embedder() -> Any:
    """The sentence embedder of every vector store (loaded once; EmbedderUnavailable, an
    ImportError, when the ``embed`` extra or the model's weights are missing)."""
    global _embedder
    with _lock:
        if _embedder is None:
            from toolscore.embed.similarity import MiniLMEmbedder

            loaded = MiniLMEmbedder()
            loaded.load()
            _embedder = loaded
        return _embedder


def _vectors(texts: list[Any]) -> np.ndarray:
    for text in texts:
        if not isinstance(text, str):
            raise ValueError(f"Unsupported input type: {type(text).__name__}. Expected one of: "
                             "str, dict, PIL.Image.Image, np.ndarray, torch.Tensor")
    found: dict[str, np.ndarray] = {}
    for text in texts:
        vector = _vectors_cache.get(text)
        if vector is not None:
            found[text] = vector
    missing = [t for t in dict.fromkeys(texts) if t not in found]
    if missing:
        # toolscore's embedders return unit vectors already, as BFCL asks its encoder to
        new = np.asarray(embedder().embed(missing), dtype=np.float32)
        found.update(zip(missing, new, strict=True))
        with _lock:
            if len(_vectors_cache) + len(missing) > _CACHE_SIZE:
                _vectors_cache.clear()
            _vectors_cache.update(zip(missing, new, strict=True))
    return np.stack([found[t] for t in texts])


def _count(top_k: Any, size: int) -> int:
    k = min(top_k, size)
    if type(k) is bool:
        raise TypeError("an integer is required")
    if not isinstance(k, int):
        raise TypeError(f"'{type(k).__name__}' object cannot be interpreted as an integer")
    if k <= 0:
        raise AssertionError()
    return k


class VectorStore:
    """Texts under ids, with their vectors in the order they were indexed."""

    def __init__(self, max_size: int, max_entry_length: int) -> None:
        self.max_size = max_size
        self.max_entry_length = max_entry_length
        self._store: dict[int, str] = {}
        self._next_id = 0
        self._ids: list[int] = []  # index positions -> ids
        self._rows: list[np.ndarray] = []

    def _index(self, vec_id: int, vector: np.ndarray) -> None:
        self._ids.append(int(vec_id))
        self._rows.append(vector)

    def _unindex(self, vec_id: int) -> None:
        keep = [i for i, x in enumerate(self._ids) if x != vec_id]
        self._ids = [self._ids[i] for i in keep]
        self._rows = [self._rows[i] for i in keep]

    def _too_long(self) -> dict[str, str]:
        return {"error": f"Entry length exceeds maximum length of {self.max_entry_length} "
                         "characters."}

    def _absent(self, vec_id: Any) -> dict[str, str]:
        return {"error": f"ID {vec_id} not present in store."}

    def add(self, text: Any) -> dict[str, Any]:
        if len(text) > self.max_entry_length:
            return self._too_long()
        if len(self._store) >= self.max_size:
            return {"error": f"Memory size exceeds maximum size of {self.max_size} entries."}
        vec_id = self._next_id
        self._next_id += 1
        self._index(vec_id, _vectors([text])[0])
        self._store[vec_id] = text
        return {"id": vec_id}

    def remove(self, vec_id: Any) -> dict[str, str]:
        if vec_id not in self._store:
            return self._absent(vec_id)
        self._unindex(int(vec_id))
        del self._store[vec_id]
        return {"status": f"ID {vec_id} removed from store."}

    def update(self, vec_id: Any, new_text: Any) -> dict[str, str]:
        if vec_id not in self._store:
            return self._absent(vec_id)
        if len(new_text) > self.max_entry_length:
            return self._too_long()
        self._unindex(int(vec_id))
        self._index(int(vec_id), _vectors([new_text])[0])
        self._store[vec_id] = new_text
        return {"status": f"ID {vec_id} updated."}

    def clear(self) -> dict[str, str]:
        self._ids, self._rows = [], []
        self._store.clear()
        self._next_id = 0
        return {"status": "Memory cleared."}

    def retrieve(self, query: Any, top_k: Any = 5) -> list[dict[str, Any]]:
        if not self._store:
            return []
        q = _vectors([query])[0]
        k = _count(top_k, len(self._store))
        # one float32 dot product per row, so that a text stored twice scores the same twice
        scores = [np.dot(row, q) for row in self._rows]
        order = sorted(range(len(self._ids)), key=lambda i: (-float(scores[i]), -i))[:k]
        return [{"id": self._ids[i], "similarity_score": float(scores[i]),
                 "text": self._store[self._ids[i]]} for i in order]

    def retrieve_all(self) -> list[dict[str, Any]]:
        return [{"id": int(vec_id), "text": text} for vec_id, text in self._store.items()]

    def _export(self) -> dict[str, Any]:
        return {"next_id": self._next_id, "store": self._store}

    def _load(self, snapshot: dict[str, Any]) -> None:
        self._next_id = snapshot["next_id"]
        self._store = {int(k): v for k, v in snapshot["store"].items()}
        self._ids, self._rows = [], []
        if self._store:
            ids = sorted(self._store)
            for vec_id, row in zip(ids, _vectors([self._store[i] for i in ids]), strict=True):
                self._index(vec_id, row)


def _limit(name: str) -> int:
    value = constant("memory_vector.py", name)
    assert isinstance(value, int)
    return value


class MemoryAPI_vector(MemoryBackend):  # noqa: N801 -- BFCL's class name
    """Core and archival memories searched by sentence similarity."""

    def __init__(self) -> None:
        self.core_memory = VectorStore(_limit("MAX_CORE_MEMORY_SIZE"),
                                       _limit("MAX_CORE_MEMORY_ENTRY_LENGTH"))
        self.archival_memory = VectorStore(_limit("MAX_ARCHIVAL_MEMORY_SIZE"),
                                           _limit("MAX_ARCHIVAL_MEMORY_ENTRY_LENGTH"))

    def _restore(self, snapshot: dict[str, Any]) -> None:
        self.core_memory._load(snapshot["core_memory"])
        self.archival_memory._load(snapshot["archival_memory"])

    def _state(self) -> dict[str, Any]:
        return {"core_memory": self.core_memory._export(),
                "archival_memory": self.archival_memory._export()}

    def _memory_context(self) -> str:
        # BFCL tests the store object itself, which is always true: an empty memory shows "{}"
        return json.dumps(self.core_memory._store, indent=4)

    # -- core memory ---------------------------------------------------------------------------
    def core_memory_add(self, text: str) -> dict[str, Any]:
        return self.core_memory.add(text)

    def core_memory_remove(self, vec_id: int) -> dict[str, str]:
        return self.core_memory.remove(vec_id)

    def core_memory_update(self, vec_id: int, new_text: str) -> dict[str, str]:
        return self.core_memory.update(vec_id, new_text)

    def core_memory_clear(self) -> dict[str, str]:
        return self.core_memory.clear()

    def core_memory_retrieve(self, query: str, top_k: int | None = 5) -> dict[str, Any]:
        return {"result": self.core_memory.retrieve(query, top_k)}

    def core_memory_retrieve_all(self) -> dict[str, Any]:
        return {"result": self.core_memory.retrieve_all()}

    # -- archival memory -----------------------------------------------------------------------
    def archival_memory_add(self, text: str) -> dict[str, Any]:
        return self.archival_memory.add(text)

    def archival_memory_remove(self, vec_id: int) -> dict[str, str]:
        return self.archival_memory.remove(vec_id)

    def archival_memory_update(self, vec_id: int, new_text: str) -> dict[str, str]:
        return self.archival_memory.update(vec_id, new_text)

    def archival_memory_clear(self) -> dict[str, str]:
        return self.archival_memory.clear()

    def archival_memory_retrieve(self, query: str, top_k: int | None = 5) -> dict[str, Any]:
        return {"result": self.archival_memory.retrieve(query, top_k)}

    def archival_memory_retrieve_all(self) -> dict[str, Any]:
        return {"result": self.archival_memory.retrieve_all()}
