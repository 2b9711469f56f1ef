"""Statistics shared by the benchmarks: agreement with human judgement and bootstrap intervals.

numpy only at import time (scipy is used by the tests as a cross-check, not by the library).
"""

from toolscore.stats.agreement import (
    bootstrap_ci,
    cohen_kappa,
    icc3,
    icc3k,
    pearson_r,
)

__all__ = ["bootstrap_ci", "cohen_kappa", "icc3", "icc3k", "pearson_r"]
