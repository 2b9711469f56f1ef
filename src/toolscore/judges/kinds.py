"""ToolEval's judge kinds, declared as ``toolscore.judges`` entry points.

Their questions live with ToolEval (``benchmarks/tooleval/questions.py``: function calls in
the reference mode, the JSON prompts of ``prompts.py`` in the stable mode); a kind only says what
a configured judge of that kind labels, so a configuration file can be checked (an LLM kind
needs a model) before any model is called.
"""

from __future__ import annotations

from toolscore.judges.registry import LLM, JudgeKind

TOOLEVAL_PASS = JudgeKind("tooleval-pass", LLM,
                          "ToolEval answer Solved/Unsolved/Unsure, task solvable",
                          "LLM judge of ToolEval pass rate (answer status, task solvability)")
TOOLEVAL_PREF = JudgeKind("tooleval-pref", LLM, "ToolEval preference A/B (and solved status)",
                          "LLM judge of ToolEval win rate (which of two solution paths is "
                          "better)")
