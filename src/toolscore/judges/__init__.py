"""Judges: programs or LLMs that label something and are measured against human labels.

``acs`` holds acs-verify, a deterministic verifier of arithmetic constraints.
"""
