"""acs-verify: a deterministic verifier of arithmetic constraints, toolscore's own judge of ACS
rows (no model). ``JUDGE`` is its kind, declared as the ``acs-verify`` entry point of
``toolscore.judges``.

Its rules were written while reading ``acs_dev.csv``, so its agreement there is optimistic;
the requests held out of that file are the fair test of it.
"""

from toolscore.benchmarks.acs.judging import verify_plan
from toolscore.benchmarks.acs.verify.checks import Verdict, verify
from toolscore.judges.registry import DETERMINISTIC, JudgeKind

JUDGE = JudgeKind("acs-verify", DETERMINISTIC, "ACS constraint satisfied / not",
                  "deterministic verifier of arithmetic constraints (toolscore's own)",
                  verify_plan)

__all__ = ["JUDGE", "Verdict", "verify"]
