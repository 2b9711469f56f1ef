"""Rescore recorded AutoDE runs and measure how well one evaluation method agrees with another.

The paper's claim is about agreement: a dynamic evaluation with a simulated user ranks assistants
the way human evaluators do, and a static one does not. So besides the per-run slot scores this
module computes system-level agreement (one number per assistant and method, correlated across
assistants: Pearson r and ICC(3,1)) and sample-level agreement (per-case F1 of two runs of the
same assistant).

Per-run metrics, in three clearly separated groups:

- ``exact``: the published metric (slot P/R/F1, mean ± sample std over trials);
- supplementary views: ``normalised`` P/R/F1, ``exact_match_rate``, ``call_rate``;
- the paper's behaviour analyses: ``refusal_rate``, ``hallucinated_parameter_rate`` and
  ``mean_dialogue_length`` (compared between a dynamic and a static run of one assistant),
  and ours, ``redundant_questions`` (see :mod:`.analysis`).
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from toolscore.benchmarks.autode.analysis import DialogueStats
from toolscore.benchmarks.autode.apidocs import ApiDoc
from toolscore.benchmarks.autode.data import DataError, UserScript, group_trials, load_scripts
from toolscore.benchmarks.autode.recorded import ResultReader
from toolscore.benchmarks.autode.scoring import (
    RunScore,
    aggregate_trials,
    score_case,
    trial_score,
)
from toolscore.stats import icc3, pearson_r
from toolscore.stats.agreement import pearson_repeated

ASSISTANTS = ("gpt35", "claude_instant_1_2", "codellama13b_oasst", "zephyr_7b_alpha", "llama70b")

# Which released file fills which cell of the paper's Table 1 (method -> assistant -> file stem).
TABLE1_RUNS: dict[str, dict[str, str]] = {
    "static": {
        "gpt35": "a_gpt35_static_v2",
        "claude_instant_1_2": "a_claude_instant_1_2_static",
        "codellama13b_oasst": "a_codellama13b_oasst_static_force_5rounds",
        "zephyr_7b_alpha": "a_zephyr_7b_alpha_substitute_static_5rounds",
        "llama70b": "a_llama70b_static_force_5rounds",
    },
    "human": {
        "gpt35": "u_human_a_gpt35_complementary",
        "claude_instant_1_2": "a_claude_instant_1_2_human",
        "codellama13b_oasst": "a_codellama13b_oasst_human_good_complementary",
        "zephyr_7b_alpha": "a_zephyr_7b_alpha_human_1round_complementary",
        "llama70b": "a_llama70b_human",
    },
    "llama7b": {  # the Llama 2 70B Chat run with this user agent was not released
        "gpt35": "u_llama7b_a_gpt35_complementary",
        "claude_instant_1_2": "u_llama7b_a_claude_instant_1_2_complementary",
        "codellama13b_oasst": "u_llama7b_a_codellama13b_oasst_5rounds",
        "zephyr_7b_alpha": "u_llama7b_a_zephyr_7b_alpha_5rounds",
    },
}


@dataclass(frozen=True)
class RunName:
    """What a result file's name says: the assistant, the method and (if dynamic) the user."""

    assistant: str | None
    method: str | None  # "static", "human" or "dynamic"
    user: str | None  # "human", or the user agent of a dynamic run


def describe_run(name: str) -> RunName:
    """Parse ``a_<assistant>_static*``, ``a_<assistant>_human*``, ``u_<user>_a_<assistant>*``."""
    match = re.match(r"^u_(?P<user>[a-z0-9]+)_a_(?P<rest>.+)$", name)
    if match:
        user: str | None = match["user"]
        rest = match["rest"]
        method: str | None = "human" if user == "human" else "dynamic"
    elif name.startswith("a_"):
        user, rest = None, name[2:]
        method = "static" if "_static" in rest else "human" if "_human" in rest else None
        user = "human" if method == "human" else None
    else:
        return RunName(None, None, None)
    assistant = next((a for a in ASSISTANTS if rest == a or rest.startswith(a + "_")), None)
    return RunName(assistant, method, user)


@dataclass
class RunMetrics:
    """Everything computed from one recorded run, cases in gold order."""

    name: str
    path: Path
    run: RunName
    n_cases: int
    n_records: int
    ignored_records: int  # beyond the T-th record of a uuid
    missing: int  # (trial, case) pairs with no record, scored as no call
    exact: RunScore  # the published metric
    normalised: RunScore  # supplementary: case/whitespace/number-format-insensitive values
    exact_match_rate: float  # supplementary: filtered prediction == gold slots
    call_rate: float  # supplementary: trials that ended in an API call
    refusal_rate: float  # analysis: trials that hit the round or context limit
    hallucinated_parameter_rate: float | None  # analysis: trials using a non-parameter key
    hallucinated_parameter_rate_successful: float | None  # same, among successful trials
    mean_dialogue_length: float  # analysis: messages before the call
    redundant_questions: dict[str, Any] | None = None  # analysis: asked for a given value
    per_case_f1: list[float] = field(default_factory=list, repr=False)

    @property
    def n_trials(self) -> int:
        return self.exact.n_trials

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary; scores ×100 like the paper, rates as fractions."""
        return {
            "name": self.name, "assistant": self.run.assistant, "method": self.run.method,
            "user": self.run.user, "n_cases": self.n_cases, "n_trials": self.n_trials,
            "n_records": self.n_records, "ignored_records": self.ignored_records,
            "missing": self.missing, "exact": self.exact.to_dict(),
            "supplementary": {"normalised": self.normalised.to_dict(),
                              "exact_match_rate": self.exact_match_rate,
                              "call_rate": self.call_rate},
            "analysis": {"refusal_rate": self.refusal_rate,
                         "hallucinated_parameter_rate": self.hallucinated_parameter_rate,
                         "hallucinated_parameter_rate_successful":
                             self.hallucinated_parameter_rate_successful,
                         "mean_dialogue_length": self.mean_dialogue_length,
                         "redundant_questions": self.redundant_questions},
        }


def _share(count: int, n: int) -> float:
    """``count`` of ``n`` as a fraction (nan for none): numpy's mean of the flags, exactly."""
    return count / n if n else float("nan")


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while result files are parsed and scored. Loading
    Table 1's 14 files allocates millions of containers, which sets off some 250 collections
    that find nothing (records hold no reference cycles) and cost a tenth of the rescoring;
    reference counting still frees everything. Nested uses keep it paused until the outer
    one ends."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def score_results(path: Path, scripts: Sequence[UserScript] | None = None,
                  api_docs: Sequence[ApiDoc] | None = None, *,
                  questions: DialogueStats | None = None,
                  reader: ResultReader | None = None) -> RunMetrics:
    """Rescore one result file against the gold user scripts.

    ``scripts`` default to ``data_v1_2.jsonl`` in the dataset folder above ``results/``.
    ``api_docs`` are needed only for the hallucinated-parameter rates and the redundant
    questions (None without them); ``questions`` may carry the per-case facts of the same
    scripts and documents from file to file (built here if not given), ``reader`` (a
    :class:`ResultReader` of the same scripts, documents and questions) the lines already
    read. A record whose uuid is not a gold case is a data error.
    """
    path = Path(path)
    if scripts is None:
        scripts = load_scripts(path.parent.parent)
    if reader is None:
        reader = ResultReader(scripts, api_docs, questions)
    with paused_gc():
        return _score_results(path, scripts, reader)


def _score_results(path: Path, scripts: Sequence[UserScript], reader: ResultReader
                   ) -> RunMetrics:
    records = reader.read(path)
    rows = [[trial.get(s.uuid) for s in scripts] for trial in group_trials(records)]
    if not rows:
        raise DataError(f"{path}: no trials")
    # A case with no record in a trial scores as no call (both empty: 1, else 0).
    absent = [score_case(s.slots, {}, filtered=True) for s in scripts]
    exact = aggregate_trials([trial_score([f.exact if f and f.exact else a
                                           for f, a in zip(row, absent, strict=True)])
                              for row in rows])
    normalised = aggregate_trials([trial_score([f.normalised if f and f.normalised else a
                                                for f, a in zip(row, absent, strict=True)])
                                   for row in rows])
    pairs = len(rows) * len(scripts)
    used = [f for row in rows for f in row if f is not None]
    matched = sum(f.exact_match if f else not s.slots for row in rows
                  for f, s in zip(row, scripts, strict=True))
    successful = [f for f in used if f.success]
    no_docs = reader.params is None
    redundant = None
    if reader.questions is not None:
        counts = [f.questions for f in used if f.questions is not None]
        redundant = DialogueStats.summary(len(counts), sum(q for q, _ in counts),
                                          sum(r for _, r in counts),
                                          sum(r > 0 for _, r in counts))
    return RunMetrics(
        name=path.stem, path=path, run=describe_run(path.stem), n_cases=len(scripts),
        n_records=len(records), ignored_records=len(records) - len(used),
        missing=pairs - len(used), exact=exact, normalised=normalised,
        exact_match_rate=_share(matched, pairs),
        call_rate=_share(sum(f.called for f in used), pairs),
        refusal_rate=_share(sum(f.refused for f in used), len(used)),
        hallucinated_parameter_rate=None if no_docs else _share(
            sum(bool(f.hallucinated) for f in used), len(used)),
        hallucinated_parameter_rate_successful=None if no_docs else _share(
            sum(bool(f.hallucinated) for f in successful), len(successful)),
        mean_dialogue_length=sum(f.length for f in used) / len(used),
        redundant_questions=redundant, per_case_f1=exact.per_case_f1(),
    )


# -- agreement -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Agreement:
    """How closely two score lists agree: Pearson r and ICC(3,1) over ``n`` paired values."""

    n: int
    pearson: float
    icc3: float

    def to_dict(self) -> dict[str, float | int]:
        return {"n": self.n, "pearson": self.pearson, "icc3": self.icc3}


def agreement(a: Sequence[float], b: Sequence[float]) -> Agreement:
    """Pearson r and ICC(3,1) of two aligned score lists (raters = the two methods)."""
    return Agreement(len(a), pearson_r(a, b), icc3(np.column_stack([a, b])))


def system_agreement(method: Mapping[str, float], reference: Mapping[str, float]) -> Agreement:
    """Agreement across the assistants both mappings score (assistant -> mean F1)."""
    shared = [k for k in reference if k in method]
    return agreement([method[k] for k in shared], [reference[k] for k in shared])


def sample_agreement(a: RunMetrics, b: RunMetrics) -> Agreement:
    """Agreement of run ``a`` with reference ``b`` over per-case F1, as AutoDE's code computes
    it: Pearson pairs every (trial, case) F1 of ``a`` with ``b``'s case F1 repeated for each
    trial; ICC(3,1) is over the per-case means."""
    if a.n_cases != b.n_cases:
        raise ValueError(f"{a.name} has {a.n_cases} cases, {b.name} has {b.n_cases}")
    per_trial = [[c.f1 for c in t.cases] for t in a.exact.trials]
    return Agreement(a.n_cases, pearson_repeated(per_trial, b.per_case_f1),
                     icc3(np.column_stack([a.per_case_f1, b.per_case_f1])))


def score_table1(root: Path, api_docs: Sequence[ApiDoc] | None = None
                 ) -> dict[str, dict[str, RunMetrics]]:
    """Rescore every released run of the paper's Table 1: method -> assistant -> metrics."""
    root = Path(root)
    scripts = load_scripts(root)
    reader = ResultReader(scripts, api_docs)  # lines and dialogues shared by all the files
    with paused_gc():
        return {method: {assistant: score_results(root / "results" / f"{stem}.jsonl",
                                                  scripts, api_docs, reader=reader)
                         for assistant, stem in runs.items()}
                for method, runs in TABLE1_RUNS.items()}


def table1_agreement(scores: Mapping[str, Mapping[str, RunMetrics]], reference: str = "human"
                     ) -> dict[str, dict[str, Any]]:
    """Each method against ``reference``: system level over assistants' F1, and per assistant
    at sample level (per-case F1)."""
    ref = scores[reference]
    out: dict[str, dict[str, Any]] = {}
    for method, runs in scores.items():
        if method == reference:
            continue
        out[method] = {
            "system": system_agreement({a: m.exact.f1 for a, m in runs.items()},
                                       {a: m.exact.f1 for a, m in ref.items()}),
            "sample": {a: sample_agreement(m, ref[a]) for a, m in runs.items() if a in ref},
        }
    return out


def write_scores(out: Path, files: list[Path], results: list[dict[str, Any]]) -> list[Path]:
    """Each result file's scores as ``out/<file name>.scores.json`` (the folder is made);
    the paths written."""
    import json

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for f, result in zip(files, results, strict=True):
        target = out / f"{f.name}.scores.json"
        target.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        written.append(target)
    return written


def score_result_files(path: Path, scripts: list[Any], docs: list[Any],
                       out: Path | None = None) -> dict[str, Any]:
    """The scores of a released result file, or of every ``*.jsonl`` in a folder; with
    ``out``, each file's scores are also written there as ``<file name>.scores.json``."""
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        raise FileNotFoundError(f"{path}: no *.jsonl result files")
    with paused_gc():
        reader = ResultReader(scripts, docs)  # lines, dialogues, case facts: once for all
        results = [score_results(f, scripts, docs, reader=reader).to_dict() for f in files]
        # Dropped while the collector still sleeps: when it wakes, its first pass looks at
        # every container made since it was paused, and the reader's are most of them.
        del reader
    doc: dict[str, Any] = {"benchmark": "autode", "results": results}
    if out is not None:
        doc["out"] = [str(p) for p in write_scores(out, files, results)]
    return doc
