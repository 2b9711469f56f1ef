"""ToolEval (ToolBench's evaluator): pass rate and win rate of solution paths, by an LLM judge.

``data`` reads the released answers, ``prompts`` holds toolscore's own judge prompts,
``passrate`` and ``winrate`` compute the metrics; ``toolscore tooleval`` runs them.
"""
