"""AutoDE: does an assistant still call APIs correctly when the user reveals details only when
asked? This package loads the released user scripts, result files and API documents, scores
slots exactly as the paper does, and measures agreement between evaluation methods.

Recorded runs are rescored with :func:`score_results` and :func:`score_table1`; new runs go
through :class:`~toolscore.benchmarks.autode.benchmark.AutoDEBenchmark`: by default the
reference runner's own loop, wording and API documents (:mod:`.reference_protocol`,
:mod:`.reference_user`, read from the release by :mod:`.release`), with ``--strict``
toolscore's own dynamic, static and human protocols (:mod:`.protocol`, user simulators in
:mod:`toolscore.users`); evaluation
methods are compared with :mod:`.compare`. Users bring their own API documents (JSON / YAML,
:mod:`.apidocs`) and user scripts, or generate scripts with a model (:mod:`.generate`); two
runs of one assistant are compared, and redundant questions counted, in :mod:`.analysis`.
"""

from toolscore.benchmarks.autode.analysis import gap, load_run_dialogues, redundant_questions
from toolscore.benchmarks.autode.apidocs import ApiDoc, check_arguments, load_api_docs
from toolscore.benchmarks.autode.data import (
    DataError,
    ResultFile,
    TrialRecord,
    Turn,
    UserScript,
    group_trials,
    load_results,
    load_scripts,
)
from toolscore.benchmarks.autode.rescore import (
    TABLE1_RUNS,
    Agreement,
    RunMetrics,
    describe_run,
    sample_agreement,
    score_results,
    score_table1,
    system_agreement,
    table1_agreement,
)
from toolscore.benchmarks.autode.scoring import (
    CaseScore,
    RunScore,
    TrialScore,
    aggregate_trials,
    filter_arguments,
    score_case,
    score_trial,
)

__all__ = [
    "TABLE1_RUNS", "Agreement", "ApiDoc", "CaseScore", "DataError", "ResultFile", "RunMetrics",
    "RunScore", "TrialRecord", "TrialScore", "Turn", "UserScript", "aggregate_trials",
    "check_arguments", "describe_run", "filter_arguments", "gap", "group_trials",
    "load_api_docs", "load_results", "load_run_dialogues", "load_scripts", "redundant_questions",
    "sample_agreement", "score_case", "score_results", "score_table1",
    "score_trial", "system_agreement", "table1_agreement",
]
