"""Checks of user scripts against the API documents, before the first model call (one line and
exit 2 on bad input, instead of an error in every sample)."""

from __future__ import annotations

from pathlib import Path

from toolscore.benchmarks.autode.apidocs import ApiDoc, check_arguments
from toolscore.benchmarks.autode.data import UserScript, scripts_path
from toolscore.data import DataError


def check_apis(scripts: list[UserScript], docs: dict[str, ApiDoc], where: Path) -> None:
    """Every script's gold API is documented: otherwise no assistant could ever call it."""
    for s in scripts:
        if s.api not in docs:
            raise DataError(f"{scripts_path(where)}:{s.line}: field 'api' {s.api!r} is not in "
                            "the API documents")


def check_scripts(scripts: list[UserScript], docs: dict[str, ApiDoc], where: Path) -> None:
    """User scripts must call documented APIs with valid arguments (one-line error)."""
    for s in scripts:
        doc = docs.get(s.api)
        if doc is None:
            raise DataError(f"{where}:{s.line}: field 'api' {s.api!r} is not in the API "
                            "documents")
        problems = check_arguments(doc, s.slots)
        if problems:
            raise DataError(f"{where}:{s.line}: {problems[0][1]} (field 'slots')")
