"""The outcome of judging one entry, as BFCL's evaluator reports it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

#: The one error type whose messages include structured items (one per call tried in vain).
NO_MATCH = "parallel_function_checker_no_order:cannot_find_match"


@dataclass(frozen=True)
class Verdict:
    """One entry judged: ``error_type`` and ``errors`` are BFCL's strings, verbatim (users grep
    score files for them). ``error_type`` is None when the entry is valid. Where BFCL's list
    holds a structured item (the parallel checker's detail of each call that did not match),
    ``errors`` holds it as JSON text; :meth:`score_file_errors` gives BFCL's list itself."""

    valid: bool
    error_type: str | None
    errors: tuple[str, ...] = ()

    def score_file_errors(self) -> list[Any]:
        """The errors as BFCL's score file lists them (structured items as JSON objects)."""
        if self.error_type != NO_MATCH:
            return list(self.errors)
        return [self.errors[0], *(json.loads(item) for item in self.errors[1:])]


VALID = Verdict(True, None)


def invalid(error_type: str, *errors: str) -> Verdict:
    return Verdict(False, error_type, errors)
