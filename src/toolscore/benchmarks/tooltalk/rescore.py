"""Score a folder of prediction files written by the original ToolTalk runner.

Splits are told apart by name: the released easy conversations are named ``<Tool>-easy``.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from toolscore.benchmarks.tooltalk.predictions import (
    compare_with_reference,
    read_predictions,
    write_predictions,
)
from toolscore.benchmarks.tooltalk.scoring import ConversationScore, aggregate, score_conversation
from toolscore.env.tool import MatchContext


def split_of(name: str) -> str:
    return "easy" if name.endswith("-easy") else "hard"


def score_prediction_dir(directory: Path, *, strict: bool = False, embedder: str = "minilm",
                         out: Path | None = None, tools: dict[str, Any] | None = None,
                         similarity: Any = None) -> dict[str, Any]:
    if tools is None:
        from toolscore.benchmarks.tooltalk.plugins import ALL_TOOLS as tools
    if similarity is None:
        from toolscore.env.similarity import Similarity

        similarity = Similarity(embedder)
    files = read_predictions(directory)
    if not files:
        raise FileNotFoundError(f"{directory}: no *.json prediction files")
    ctx = MatchContext(similarity, strict)
    from toolscore.benchmarks.tooltalk.scoring import similarity_texts

    similarity.prefetch([t for f in files for t in similarity_texts(f.turns, tools)])
    scores: list[ConversationScore] = [score_conversation(f.turns, tools, ctx) for f in files]
    by_split: dict[str, list[ConversationScore]] = defaultdict(list)
    per_conversation = {}
    for f, s in zip(files, scores, strict=True):
        name = str(f.conversation.get("name", "?"))
        by_split[split_of(name)].append(s)
        per_conversation[name] = s.metrics()
    metrics: dict[str, Any] = {k: aggregate(v) for k, v in sorted(by_split.items())}
    metrics.update(errors=0, strict=strict, embedder=similarity.name)
    diffs = compare_with_reference(files, scores)
    if out is not None:
        write_predictions(out, [(f.conversation, f.turns, s)
                                for f, s in zip(files, scores, strict=True)])
    with_reference = sum(f.reference is not None for f in files)
    return {
        "run_dir": str(out) if out else None,
        "config": {"benchmark": "tooltalk", "model": f"predictions:{directory}",
                   "benchmark_config": {"embedder": similarity.name, "strict": strict,
                                        "tools": "n/a (recorded)"}},
        "metrics": metrics,
        "conversations": per_conversation,
        "reference_comparison": {"files_with_reference_metrics": with_reference,
                                 "differences": [str(d) for d in diffs]},
    }
