"""BFCL's single-turn AST checker, reproduced verdict by verdict: :func:`check_entry` judges one
entry's decoded calls as bfcl-eval's evaluator does (same validity, same error types and
messages), including the quirks of the reference, each noted where it is kept."""

from .entry import check_entry
from .verdict import Verdict

__all__ = ["Verdict", "check_entry"]
