"""ACS (arithmetic constraint satisfaction): the model under test is a judge of whether an
agent's response satisfies one constraint of a user's request, measured against human labels.

``data`` reads the release, ``verify`` is the deterministic judge (acs-verify), ``prompt`` the
LLM judge's prompt, ``shots`` the few-shot plan, ``benchmark`` the protocol and scorer, and
``agreement`` the published metrics over a run's records.
"""
