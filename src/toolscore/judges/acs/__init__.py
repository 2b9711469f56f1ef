"""acs-verify: a deterministic verifier of arithmetic constraints (ACS benchmark)."""

from toolscore.judges.acs.verify import Verdict, verify

__all__ = ["Verdict", "verify"]
