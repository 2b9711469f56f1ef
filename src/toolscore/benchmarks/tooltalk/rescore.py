"""Score a folder of prediction files written by the original ToolTalk runner.

This is how a user checks toolscore's scorer against ToolTalk's own on the same predictions, so
the calls are scored exactly as recorded: nothing is re-executed (the responses and exceptions
in the files are the ones the model saw), and the metrics, the per-call flags and the error
types are those ToolTalk's ``evaluate`` and ``calculate_error_types.py`` compute. The folder
may hold one split or one subfolder per split (see ``predictions.prediction_paths``).

Splits are told apart by name: the released easy conversations are named ``<Tool>-easy``.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from toolscore.benchmarks.tooltalk.predictions import (
    PredictionFormatError,
    compare_with_reference,
    read_predictions,
    write_predictions,
)
from toolscore.benchmarks.tooltalk.scoring import (
    ConversationScore,
    aggregate,
    error_rule,
    score_conversation,
    similarity_texts,
)
from toolscore.env.tool import MatchContext


def split_of(name: str) -> str:
    return "easy" if name.endswith("-easy") else "hard"


def conversation_result(score: ConversationScore) -> dict[str, Any]:
    """One conversation's metrics and, if it failed, its error types per turn and in total."""
    return {**score.metrics(),
            "error_types": {str(turn): kind for turn, kind in score.errors.items()},
            "error_totals": dict(score.error_totals())}


def score_prediction_dir(directory: Path, *, strict: bool = False, embedder: str = "minilm",
                         out: Path | None = None, tools: dict[str, Any] | None = None,
                         similarity: Any = None) -> dict[str, Any]:
    """Metrics per split and per conversation, and where they differ from the files' own."""
    if tools is None:
        from toolscore.benchmarks.tooltalk.plugins import ALL_TOOLS

        tools = ALL_TOOLS
    if similarity is None:
        from toolscore.embed.similarity import Similarity

        similarity = Similarity(embedder)
    files = read_predictions(directory)
    if not files:
        raise PredictionFormatError(f"{directory}: no *.json prediction files")
    ctx = MatchContext(similarity, strict)
    similarity.prefetch([t for f in files for t in similarity_texts(f.turns, tools)])
    scores: list[ConversationScore] = [score_conversation(f.turns, tools, ctx) for f in files]
    by_split: dict[str, list[ConversationScore]] = defaultdict(list)
    per_conversation = {}
    for f, s in zip(files, scores, strict=True):
        by_split[split_of(f.name)].append(s)
        per_conversation[f.name] = conversation_result(s)
    metrics: dict[str, Any] = {k: aggregate(v) for k, v in sorted(by_split.items())}
    metrics.update(errors=0, strict=strict, error_rule=error_rule(strict),
                   embedder=similarity.name)
    diffs = compare_with_reference(files, scores)
    if out is not None:
        write_predictions(out, [(f.conversation, f.turns, s)
                                for f, s in zip(files, scores, strict=True)])
    with_reference = sum(f.reference is not None for f in files)
    return {
        "run_dir": str(out) if out else None,
        "config": {"benchmark": "tooltalk", "model": f"predictions:{directory}",
                   "benchmark_config": {"embedder": similarity.name, "strict": strict,
                                        "error_rule": error_rule(strict),
                                        "tools": "n/a (recorded)"}},
        "metrics": metrics,
        "conversations": per_conversation,
        "reference_comparison": {"files_with_reference_metrics": with_reference,
                                 "differences": [str(d) for d in diffs]},
    }
