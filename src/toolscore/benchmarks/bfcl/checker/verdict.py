"""The outcome of judging one entry, as BFCL's evaluator reports it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    """One entry judged: ``error_type`` and ``errors`` are BFCL's strings, verbatim (users grep
    score files for them). ``error_type`` is None when the entry is valid."""

    valid: bool
    error_type: str | None
    errors: tuple[str, ...] = ()


VALID = Verdict(True, None)


def invalid(error_type: str, *errors: str) -> Verdict:
    return Verdict(False, error_type, errors)
