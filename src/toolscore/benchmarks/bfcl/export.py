"""BFCL's result files as an export format (``toolscore export RUN --format bfcl``), declared
with the method as the ``bfcl`` entry of ``toolscore.exports``."""

from __future__ import annotations

from toolscore.benchmarks.bfcl.results import stream_results, validate_results, write_results
from toolscore.records.export_format import ExportFormat

FORMAT = ExportFormat("bfcl", "BFCL's own result files (BFCL_v4_<category>_result.json, a "
                      "folder per BFCL model), for BFCL's evaluator", write_results,
                      stream_results, validate_results)
