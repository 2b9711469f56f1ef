"""Agreement between evaluation methods, from released result files or our own run directories.

Each input is one assistant evaluated one way: a per-case F1 (each case's F1 averaged over the
run's trials) and the per-trial F1 of every case. ``compare`` pairs every method run with a
reference run (typically the human evaluation of the same assistant) and reports:

- system level: each assistant's mean F1 under the method against under the reference, Pearson r
  and ICC(3,1) across assistants (the paper's Table 2);
- sample level, per assistant: ICC(3,1) over the per-case F1 of the pair, and Pearson r as the
  reference code computes it: every (trial, case) F1 of the method against the reference's
  case F1 repeated for each trial (``sample_pearson="trials"``, the default). With one trial
  the two pairings are the same; with several they differ (GPT-3.5 static vs human: 0.2092
  this way, 0.2636 over trial means). ``sample_pearson="means"`` pairs the trial means, as
  ICC(3,1) does, labelled as such;
- percentile bootstrap confidence intervals that resample *cases* (shared by all assistants at
  the system level, so the dependence between runs on the same cases is kept; a case keeps all
  its trials).

Only cases present in every input are used; for a released file that is every gold case (a
missing record counts as no call, as in the published scoring), for a run limited with
``--limit`` it is the run's samples.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from toolscore.benchmarks.autode.data import UserScript
from toolscore.benchmarks.autode.rescore import describe_run, score_results
from toolscore.stats import bootstrap_ci, icc3, pearson_r
from toolscore.stats.agreement import pearson_repeated

PAIRINGS = {
    "trials": "every (trial, case) F1 against the reference's case F1 repeated per trial "
              "(the reference code's)",
    "means": "each case's F1 averaged over trials against the reference's (trial means)",
}


@dataclass
class CaseScores:
    """One evaluated assistant: a label, uuid -> F1 (0..1, mean over trials) and, per trial,
    uuid -> F1 (a case a trial lacks is absent from that trial)."""

    label: str
    f1: dict[str, float]
    source: str = ""
    trials: list[dict[str, float]] | None = None

    def per_trial(self) -> list[dict[str, float]]:
        return self.trials if self.trials is not None else [self.f1]


def load_case_scores(path: Path, scripts: Sequence[UserScript]) -> CaseScores:
    """A released/exported result file (``*.jsonl``) or a toolscore run directory."""
    path = Path(path)
    if path.is_dir():
        if not (path / "run.json").is_file():
            raise ValueError(f"{path}: neither a result file nor a run directory (no run.json)")
        config = json.loads((path / "run.json").read_text())
        if config.get("benchmark") != "autode":
            raise ValueError(f"{path}: a {config.get('benchmark')!r} run, not an autode run")
        from toolscore.records import RunStore

        by_id: dict[str, list[float]] = defaultdict(list)
        by_epoch: dict[int, dict[str, float]] = defaultdict(dict)
        for r in RunStore(path).latest().values():
            if r.get("status") == "ok":
                by_id[str(r["id"])].append(float(r["scores"]["f1"]))
                by_epoch[int(r.get("epoch", 0))][str(r["id"])] = float(r["scores"]["f1"])
        if not by_id:
            raise ValueError(f"{path}: no scored samples")
        mode = config.get("benchmark_config", {}).get("mode", "")
        return CaseScores(f"{config.get('model')} ({mode})",
                          {k: float(np.mean(v)) for k, v in by_id.items()}, str(path),
                          [by_epoch[e] for e in sorted(by_epoch)])
    metrics = score_results(path, scripts)
    uuids = [s.uuid for s in scripts]
    trials = [{u: c.f1 for u, c in zip(uuids, t.cases, strict=True)}
              for t in metrics.exact.trials]
    return CaseScores(path.stem, dict(zip(uuids, metrics.per_case_f1, strict=True)), str(path),
                      trials)


def _agreement(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    return {"pearson": pearson_r(a, b), "icc3": icc3(np.column_stack([a, b]))}


def trial_table(method: CaseScores, cases: list[str]) -> np.ndarray:
    """trials x cases F1 of ``method`` (``nan`` where a trial lacks a case)."""
    return np.array([[trial.get(u, np.nan) for u in cases] for trial in method.per_trial()])


def trial_pairs(table: np.ndarray, reference: np.ndarray, cases: list[str]
                ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(method F1, reference case F1, case) for every (trial, case) present: the pairs of the
    reference code's sample-level Pearson, with the case of each for a case bootstrap."""
    keep = ~np.isnan(table)
    tiled = np.broadcast_to(reference, table.shape)
    names = np.broadcast_to(np.array(cases, dtype=object), table.shape)
    return table[keep], tiled[keep], [str(u) for u in names[keep]]


def compare(methods: Sequence[CaseScores], references: Sequence[CaseScores], *,
            n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0,
            sample_pearson: Literal["trials", "means"] = "trials") -> dict[str, Any]:
    """Method runs against reference runs, paired by position (see module docstring)."""
    if sample_pearson not in PAIRINGS:
        raise ValueError(f"sample_pearson must be one of {sorted(PAIRINGS)}, got "
                         f"{sample_pearson!r}")
    if len(methods) != len(references):
        raise ValueError(f"{len(methods)} runs but {len(references)} --against runs; pair "
                         "them one to one, in the same order")
    if not methods:
        raise ValueError("nothing to compare")
    shared = set.intersection(*(set(c.f1) for c in [*methods, *references]))
    cases = sorted(shared)
    if len(cases) < 2:
        raise ValueError(f"only {len(cases)} case(s) shared by all runs")
    m = np.array([[c.f1[u] for u in cases] for c in methods]).T  # cases x assistants
    r = np.array([[c.f1[u] for u in cases] for c in references]).T
    out: dict[str, Any] = {"n_cases": len(cases), "n_assistants": len(methods),
                           "confidence": confidence, "n_resamples": n_resamples, "seed": seed,
                           "sample_pearson": sample_pearson,
                           "sample_pearson_pairing": PAIRINGS[sample_pearson]}
    sys_m, sys_r = m.mean(axis=0), r.mean(axis=0)
    system = {"n": len(methods), **_agreement(sys_m, sys_r),
              "method_f1": [100 * float(x) for x in sys_m],
              "reference_f1": [100 * float(x) for x in sys_r]}
    if len(methods) >= 2:
        for name, stat in (("pearson", pearson_r),
                           ("icc3", lambda a, b: icc3(np.column_stack([a, b])))):
            system[f"{name}_ci"] = list(bootstrap_ci(
                (m, r), lambda a, b, f=stat: f(a.mean(axis=0), b.mean(axis=0)),
                n_resamples=n_resamples, confidence=confidence, seed=seed))
    out["system"] = system
    samples = []
    for i, (cm, cr) in enumerate(zip(methods, references, strict=True)):
        a, b = m[:, i], r[:, i]
        row: dict[str, Any] = {"method": cm.label, "reference": cr.label,
                               "assistant": describe_run(cm.label).assistant,
                               **_agreement(a, b), "n_trials": len(cm.per_trial())}
        if sample_pearson == "trials":
            table = trial_table(cm, cases)
            x, y, groups = trial_pairs(table, b, cases)
            row["pearson"], row["pearson_pairs"] = pearson_repeated(table, b), len(x)
            row["pearson_ci"] = list(bootstrap_ci((x, y), pearson_r, n_resamples=n_resamples,
                                                  confidence=confidence, seed=seed,
                                                  groups=groups))
        else:
            row["pearson_pairs"] = len(a)
            row["pearson_ci"] = list(bootstrap_ci((a, b), pearson_r, n_resamples=n_resamples,
                                                  confidence=confidence, seed=seed))
        row["icc3_ci"] = list(bootstrap_ci((a, b), lambda x, y: icc3(np.column_stack([x, y])),
                                           n_resamples=n_resamples, confidence=confidence,
                                           seed=seed))
        samples.append(row)
    out["sample"] = samples
    return out
