"""Puts the test suite's support package on the path of the perf scripts: the fake
OpenAI-compatible server and the recorded reference requests live in ``tests/support/testing``
(test doubles, not part of the installed package)."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = str(Path(__file__).resolve().parents[1] / "tests")
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)
