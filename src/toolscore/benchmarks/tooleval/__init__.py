"""ToolEval (ToolBench's evaluator): pass rate and win rate of solution paths, by an LLM judge.

``data`` (and ``from_runs``, for toolscore's own runs) reads the answers judged; ``questions``
says what the judge is asked in each mode (``reference``: ToolBench's own evaluator questions
and function schemas, read at run time by ``release``; ``stable``: ``prompts``, toolscore's JSON
prompts); ``passrate`` decides one query and
aggregates; ``winrate`` (stable) and ``winrate_reference`` compare two answers, ``sides`` pairs
the two answer sets; ``judge`` puts the run's model behind the judge; ``benchmark``
(``tooleval``) and ``winrate_benchmark`` (``tooleval-winrate``) make them runs, scored from
their records by ``scoring``.
"""
