"""Judges: the one LLM judge (templates, verdicts, votes), judge kinds found through the
``toolscore.judges`` entry points, configurations, and human labels to measure judges against.

Method-specific judges live with their method (ACS's deterministic verifier and prompt in
``benchmarks/acs``) and are registered by entry point like any installed package's.
"""
