"""Export formats that methods declare (entry points of ``toolscore.exports``).

An :class:`~toolscore.report.export.formats.ExportFormat` belongs to the report layer and a
method's writer to the benchmark layer below it, so the object joining them is made here,
above both."""

from __future__ import annotations

from toolscore.benchmarks.bfcl.results import stream_results, validate_results, write_results
from toolscore.report.export.formats import ExportFormat

BFCL = ExportFormat("bfcl", "BFCL's own result files (BFCL_v4_<category>_result.json, a folder "
                    "per BFCL model), for BFCL's evaluator", write_results, stream_results,
                    validate_results)
