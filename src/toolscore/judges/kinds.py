"""ToolEval's judge kinds, declared as ``toolscore.judges`` entry points.

Their questions live with ToolEval (``benchmarks/tooleval/questions.py``: function calls in
the reference mode, the JSON prompts of ``prompts.py`` in the stable mode); a kind only says what
a configured judge of that kind labels, so a configuration file can be checked (an LLM kind
needs a model) before any model is called.
"""

from __future__ import annotations

from pathlib import Path

from toolscore.judges.applying import JudgeRequest, JudgeRun
from toolscore.judges.registry import LLM, JudgeKind


def pass_plan(request: JudgeRequest) -> JudgeRun:
    """A stored run judged by the pass-rate judge: a ``tooleval`` run whose answers are that
    run's transcripts (any benchmark whose records hold one: ToolTalk, demo, AutoDE...)."""
    model, url = request.judge_model()
    options = dict(request.options)
    if request.judge_config is not None:  # its prompt and votes (and model, unless given)
        options["judge_config"] = Path(request.judge_config)
    return JudgeRun("tooleval", {**options, "answers": request.run_dir}, model, url)


def pref_plan(request: JudgeRequest) -> JudgeRun:
    raise request.cannot("it compares two runs (which answer is better): toolscore tooleval "
                         "winrate CANDIDATE REFERENCE")


TOOLEVAL_PASS = JudgeKind("tooleval-pass", LLM,
                          "ToolEval answer Solved/Unsolved/Unsure, task solvable",
                          "LLM judge of ToolEval pass rate (answer status, task solvability)",
                          pass_plan)
TOOLEVAL_PREF = JudgeKind("tooleval-pref", LLM, "ToolEval preference A/B (and solved status)",
                          "LLM judge of ToolEval win rate (which of two solution paths is "
                          "better)", pref_plan)
