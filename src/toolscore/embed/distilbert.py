"""sent2vec's DistilBERT sentence vector without torch: the encoder's forward pass in numpy.

ToolTalk's reference scorer compares free-text arguments by the cosine of vectors from
``sent2vec.vectorizer.Vectorizer()``, whose default is ``distilbert-base-uncased`` read by
transformers: each text is tokenised by the (Python) ``DistilBertTokenizer`` with
``encode(text, add_special_tokens=True)`` - lower-cased, accents stripped, WordPiece, ``[CLS]``
and ``[SEP]`` added, no truncation - run through ``DistilBertModel`` in eval mode, and the
vector is the last hidden state at ``[CLS]`` (position 0), float32, not normalised. ToolTalk
calls it one text at a time, so no text ever sees padding.

This module computes that vector from the standard Hugging Face files of the model
(``config.json``, ``vocab.txt``, optional ``tokenizer_config.json``, ``model.safetensors`` or
else ``pytorch_model.bin``) with numpy and ``tokenizers`` only. Texts are batched for speed
with padding masked out, which gives each text's unpadded vector (sent2vec's own multi-text
call pads with id 0 and no mask; ToolTalk never makes one). One difference is forced: a text
over the model's 512 positions makes the reference fail (the position table has no row for
it); here it is truncated, as transformers' ``truncation=True`` would (the first 510 pieces,
then ``[SEP]``).

Agreement with sent2vec run by transformers on a random-weight model is checked by
``tests/env/test_distilbert.py`` against fixtures made by
``tests/fixtures/sent2vec_distilbert/make_fixtures.py``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from toolscore.embed.minilm import (
    ModelFormatError,
    _batches,
    _layer_norm,
    _one_blas_thread,
    gelu,
    read_safetensors,
)

#: DistilBERT's LayerNorm epsilon: a constant of the architecture, not in config.json.
LAYER_NORM_EPS = 1e-12
#: Files the encoder reads from a model folder (the tokenizer's configuration is optional),
#: and the weights, either file (safetensors first: it is read without unpickling anything).
REQUIRED_FILES = ("config.json", "vocab.txt")
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ModelFormatError(f"{path}: {e}") from None


def build_tokenizer(model_dir: Path, max_length: int) -> Any:
    """The WordPiece tokenizer the Python ``DistilBertTokenizer`` is, from ``vocab.txt``.

    Its options come from ``tokenizer_config.json`` when present (``do_lower_case``,
    ``strip_accents``, ``tokenize_chinese_chars``) with that class's defaults otherwise. The
    special tokens are registered so that a text containing, say, ``[SEP]`` keeps it whole,
    as the Python tokenizer does."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab_path = model_dir / "vocab.txt"
    try:
        lines = vocab_path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise ModelFormatError(f"{vocab_path}: {e}") from None
    vocab: dict[str, int] = {}
    for i, token in enumerate(lines):
        vocab.setdefault(token.rstrip("\n"), i)
    missing = [t for t in SPECIAL_TOKENS if t not in vocab]
    if missing:
        raise ModelFormatError(f"{vocab_path}: special tokens {missing} missing")
    settings = {}
    config_path = model_dir / "tokenizer_config.json"
    if config_path.is_file():
        settings = _read_json(config_path)
    lowercase = bool(settings.get("do_lower_case", True))
    strip = settings.get("strip_accents")
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]",
                                           max_input_chars_per_word=100))
    tokenizer.normalizer = normalizers.Sequence([
        normalizers.NFC(),  # the Python tokenizer composes first (then decomposes to strip)
        normalizers.BertNormalizer(
            clean_text=True, lowercase=lowercase,
            handle_chinese_chars=bool(settings.get("tokenize_chinese_chars", True)),
            strip_accents=None if strip is None else bool(strip))])
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.BertProcessing(("[SEP]", vocab["[SEP]"]),
                                                         ("[CLS]", vocab["[CLS]"]))
    tokenizer.add_special_tokens(list(SPECIAL_TOKENS))
    tokenizer.enable_truncation(max_length)
    return tokenizer


class DistilBertEncoder:
    """DistilBERT in numpy, loaded from a Hugging Face model folder; ``encode`` returns the
    last hidden state at ``[CLS]`` of each text, as sent2vec's ``Vectorizer`` does."""

    def __init__(self, model_dir: Path) -> None:
        self.model_dir = Path(model_dir)
        config_path = self.model_dir / "config.json"
        config = _read_json(config_path)
        if config.get("model_type") != "distilbert" or config.get("activation") != "gelu":
            raise ModelFormatError(f"{config_path}: model_type/activation: only a DistilBERT "
                                   "encoder with exact GELU is supported")
        try:
            self.layers = int(config["n_layers"])
            self.heads = int(config["n_heads"])
            self.dim = int(config["dim"])
            self.max_length = int(config["max_position_embeddings"])
        except (KeyError, TypeError, ValueError) as e:
            raise ModelFormatError(f"{config_path}: {e}: not a DistilBERT configuration") from None
        if self.dim % self.heads:
            raise ModelFormatError(f"{config_path}: dim {self.dim} is not a multiple of "
                                   f"n_heads {self.heads}")
        self._weights = self._load_weights()
        self._tokenizer = build_tokenizer(self.model_dir, self.max_length)

    def _load_weights(self) -> dict[str, np.ndarray]:
        """The encoder's tensors under their ``DistilBertModel`` names: the hub's file is
        saved from the masked-LM model, whose names carry a ``distilbert.`` prefix and which
        has a prediction head this vector does not use."""
        path = next((self.model_dir / n for n in WEIGHT_FILES
                     if (self.model_dir / n).is_file()), self.model_dir / WEIGHT_FILES[0])
        if path.suffix == ".bin":
            from toolscore.embed.torch_checkpoint import CheckpointError, read_torch_checkpoint

            try:
                tensors = read_torch_checkpoint(path)
            except CheckpointError as e:
                raise ModelFormatError(str(e)) from None
        else:
            tensors = read_safetensors(path)
        w = {k.removeprefix("distilbert."): v for k, v in tensors.items()}
        wanted = ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
                  "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"]
        for i in range(self.layers):
            p = f"transformer.layer.{i}."
            wanted += [p + f"{m}.{k}" for m in ("attention.q_lin", "attention.k_lin",
                                                "attention.v_lin", "attention.out_lin",
                                                "sa_layer_norm", "ffn.lin1", "ffn.lin2",
                                                "output_layer_norm")
                       for k in ("weight", "bias")]
        missing = [k for k in wanted if k not in w]
        if missing:
            raise ModelFormatError(f"{path}: tensor {missing[0]!r} missing "
                                   f"({len(missing)} in all): not a DistilBERT model")
        out = {k: np.asarray(w[k], dtype=np.float32) if w[k].dtype != np.float32 else w[k]
               for k in wanted}
        for i in range(self.layers):  # one (3 * dim, dim) projection for query, key, value
            p = f"transformer.layer.{i}.attention."
            for k in ("weight", "bias"):
                out[p + f"qkv.{k}"] = np.concatenate(
                    [out.pop(p + f"{n}.{k}") for n in ("q_lin", "k_lin", "v_lin")])
        return out

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's ids, ``[CLS]`` first and ``[SEP]`` last."""
        return [e.ids for e in self._tokenizer.encode_batch(texts)]

    def encode(self, texts: list[str]) -> np.ndarray:
        """The ``[CLS]`` vectors, float32, shape (len(texts), dim), not normalised."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = self.token_ids(texts)
        with _one_blas_thread():
            for batch in _batches(sorted(range(len(texts)), key=lambda i: len(ids[i])), ids):
                out[batch] = self._forward([ids[i] for i in batch])
        return out

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        """The vectors of one batch. Per-token steps run on the real tokens stacked without
        padding; attention sees them padded per text, the padding masked out. The last layer
        is needed at ``[CLS]`` only, so its query, output and feed-forward run on that row."""
        w = self._weights
        lengths = np.array([len(x) for x in batch])
        longest = int(lengths.max())
        real = np.arange(longest)[None, :] < lengths[:, None]
        positions = np.nonzero(real)[1]
        h = (w["embeddings.word_embeddings.weight"][np.concatenate(batch)]
             + w["embeddings.position_embeddings.weight"][positions])
        h = _layer_norm(h, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"],
                        LAYER_NORM_EPS)
        bias = np.where(real, np.float32(0.0), np.finfo(np.float32).min)[:, None, None, :]
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        for i in range(self.layers):
            last = i == self.layers - 1
            h = self._layer(h, real, bias, f"transformer.layer.{i}.", starts if last else None)
        return h.astype(np.float32)

    def _layer(self, h: np.ndarray, real: np.ndarray, bias: np.ndarray, p: str,
               cls_rows: np.ndarray | None) -> np.ndarray:
        """One transformer block; with ``cls_rows`` (the row of each text's ``[CLS]`` in
        ``h``) only those rows are computed and returned."""
        w = self._weights
        texts, longest = real.shape
        head = self.dim // self.heads
        qkv = h @ w[p + "attention.qkv.weight"].T + w[p + "attention.qkv.bias"]
        padded = np.zeros((texts, longest, 3 * self.dim), dtype=np.float32)
        padded[real] = qkv
        qkv = padded.reshape(texts, longest, 3, self.heads, head).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        if cls_rows is not None:
            q, h = q[:, :, :1], h[cls_rows]
        # DistilBERT scales the query before the product (BERT scales the scores).
        scores = (q * np.float32(1.0 / math.sqrt(head))) @ k.transpose(0, 1, 3, 2) + bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3)
        context = context[:, 0] if cls_rows is not None else context[real]
        context = context.reshape(-1, self.dim)
        attended = context @ w[p + "attention.out_lin.weight"].T + w[p + "attention.out_lin.bias"]
        h = _layer_norm(attended + h, w[p + "sa_layer_norm.weight"], w[p + "sa_layer_norm.bias"],
                        LAYER_NORM_EPS)
        inner = gelu(h @ w[p + "ffn.lin1.weight"].T + w[p + "ffn.lin1.bias"])
        out = inner @ w[p + "ffn.lin2.weight"].T + w[p + "ffn.lin2.bias"]
        return _layer_norm(out + h, w[p + "output_layer_norm.weight"],
                           w[p + "output_layer_norm.bias"], LAYER_NORM_EPS)
