"""Where the tests find the released datasets, and what happens when they are absent.

``$TOOLSCORE_DATA`` (CI sets it to ``../shared/datasets``), else ``../shared/datasets`` next to
the repository. A test that needs a dataset uses ``needs("autode")`` (a marker) or
``dataset("autode")`` (a path, inside a test): when the data is missing the test is skipped on
a developer's machine, but fails when ``TOOLSCORE_REQUIRE_DATA=1`` (as in CI), so a green CI
run always means the fidelity tests ran.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ROOT = Path(os.environ.get("TOOLSCORE_DATA") or REPO.parent / "shared" / "datasets")
REQUIRED = os.environ.get("TOOLSCORE_REQUIRE_DATA") == "1"
# a file or folder that must exist for a dataset to count as present
MARKERS = {"tooltalk": "databases", "autode": "data_v1_2.jsonl", "acs": "acs_dev.csv",
           "tooleval": "converted", "tooltalk-reference": "README.md"}


def path(name: str) -> Path:
    """The dataset folder (whether or not it exists)."""
    return ROOT / name


def present(name: str) -> bool:
    return (ROOT / name / MARKERS.get(name, "")).exists()


def missing_reason(name: str) -> str:
    return f"dataset {name!r} not found under {ROOT} (set TOOLSCORE_DATA)"


def dataset(name: str) -> Path:
    """The dataset folder; skips (or, when data is required, fails) the test if absent."""
    if not present(name):
        if REQUIRED:
            pytest.fail(missing_reason(name) + "; TOOLSCORE_REQUIRE_DATA=1", pytrace=False)
        pytest.skip(missing_reason(name))
    return ROOT / name


def needs(*names: str) -> pytest.MarkDecorator:
    """Marker: the test needs these datasets (see :func:`dataset`)."""
    return pytest.mark.needs_data(*names)
