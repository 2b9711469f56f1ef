"""ToolEval (ToolBench's evaluator): pass rate and win rate of solution paths, by an LLM judge.

``data`` (and ``from_runs``, for toolscore's own runs) reads the answers judged, ``prompts``
holds toolscore's own judge prompts, ``passrate`` and ``winrate`` decide one query, ``judge``
puts the run's model behind the judge; ``benchmark`` (``tooleval``) and ``winrate_benchmark``
(``tooleval-winrate``) make them runs, scored from their records by ``scoring``.
"""
