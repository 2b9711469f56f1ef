"""AutoDE's slot scoring, exactly as published, plus clearly separate supplementary views.

The published metric (Table 1 of the paper) is slot precision / recall / F1 with exact value
matching, macro-averaged over all gold cases within a trial, then averaged over trials, with the
sample standard deviation over trials as the "±". Everything in this module that is not that
metric says so in its name (``normalised``, ``exact_match``, ``called``): exact string matching
penalises harmless variation ("Level 2" against "level 2", "1,000" against "1000"), which is worth
seeing, but beside the published number, never instead of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

FUNCTION_KEY = "functionName"  # the key naming the API in the assistant's JSON call

Equal = Callable[[Any, Any], bool]


def filter_arguments(arguments: Mapping[str, Any],
                     function_key: str = FUNCTION_KEY) -> dict[str, str | bool]:
    """The predicted arguments that are scored.

    Drops the function-name key; keeps a value only if it is a boolean, or a string that is
    non-empty after stripping and is not "null" in any case. Numbers, lists, objects and nulls
    are dropped, as in the reference, so an assistant that answers ``"volume": 80`` instead of
    ``"80"`` loses the slot. Idempotent: the released result files already hold filtered slots.
    """
    kept: dict[str, str | bool] = {}
    for key, value in arguments.items():
        if key == function_key:
            continue
        if value is True or value is False:
            kept[key] = value
        elif isinstance(value, str):
            stripped = value.strip()
            if stripped and stripped.lower() != "null":
                kept[key] = value
    return kept


def exact_equal(gold: Any, predicted: Any) -> bool:
    """The published rule: same type and same value, no normalisation (``True`` != ``"true"``)."""
    return type(gold) is type(predicted) and gold == predicted


_NUMBER = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])|\d+\.\d+|\d+")


def _canonical_number(text: str) -> str:
    text = text.replace(",", "")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def normalise_value(value: Any) -> str:
    """A supplementary normal form: case-folded, whitespace collapsed, numbers canonical.

    Thousands separators and trailing decimal zeros are dropped ("1,000.50" -> "1000.5");
    booleans become "true"/"false" so a boolean and its spelling match. Leading zeros are kept
    because ids (order numbers, stock codes) depend on them.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    return _normalise_text(str(value))


@lru_cache(maxsize=65536)
def _normalise_text(text: str) -> str:
    """Memoised: rescoring compares the same few thousand values in every trial and file."""
    text = " ".join(text.casefold().split())
    return _NUMBER.sub(lambda m: _canonical_number(m.group()), text)


def normalised_equal(gold: Any, predicted: Any) -> bool:
    """Supplementary: values equal after :func:`normalise_value`."""
    return normalise_value(gold) == normalise_value(predicted)


@dataclass(frozen=True)
class CaseScore:
    """Slot precision, recall and F1 of one case (0..1)."""

    precision: float
    recall: float
    f1: float


def score_case(gold: Mapping[str, Any], predicted: Mapping[str, Any], *,
               equal: Equal = exact_equal, filtered: bool = False) -> CaseScore:
    """Score one prediction against the gold slots; ``predicted`` is filtered first (unless
    ``filtered`` says it is the output of :func:`filter_arguments` already: rescoring filters
    each record once for all its views).

    Both empty scores 1 (nothing to find, nothing claimed); exactly one empty scores 0. A
    predicted slot is correct when the gold has the same key with an ``equal`` value.
    """
    pred = predicted if filtered else filter_arguments(predicted)
    if not gold or not pred:
        return case_score(0, len(pred), len(gold))
    correct = 0
    if equal is exact_equal:  # the published rule, inlined: rescoring calls it 30,000 times
        for k, v in pred.items():
            if k in gold and type(g := gold[k]) is type(v) and g == v:
                correct += 1
    else:
        correct = sum(1 for k, v in pred.items() if k in gold and equal(gold[k], v))
    return _case_score(correct, len(pred), len(gold))


def slot_counts(gold: Mapping[str, Any], gold_forms: Mapping[str, str],
                kept: Mapping[str, Any], form: Callable[[Any], str]) -> tuple[int, int]:
    """How many of the ``kept`` (filtered) predicted slots are right by the published rule
    (:func:`exact_equal`) and by normal forms (``gold_forms``: each gold value's
    :func:`normalise_value`; ``form``: the same of a predicted value), in one pass:
    rescoring counts both for every record (see :func:`case_score`)."""
    correct = normalised = 0
    for k, v in kept.items():
        if k in gold:
            if type(g := gold[k]) is type(v) and g == v:
                correct += 1
            if gold_forms[k] == form(v):
                normalised += 1
    return correct, normalised


def case_score(correct: int, predicted: int, gold: int) -> CaseScore:
    """The :class:`CaseScore` of ``correct`` right slots out of ``predicted`` and ``gold``
    (the rules of :func:`score_case`: both empty scores 1, exactly one empty 0)."""
    if not gold or not predicted:
        return _ONE_EMPTY if gold or predicted else _BOTH_EMPTY
    return _case_score(correct, predicted, gold)


_BOTH_EMPTY = CaseScore(1.0, 1.0, 1.0)
_ONE_EMPTY = CaseScore(0.0, 0.0, 0.0)


@lru_cache(maxsize=4096)
def _case_score(correct: int, predicted: int, gold: int) -> CaseScore:
    """The scores of ``correct`` right slots out of ``predicted`` and ``gold``: a function of
    three small counts, so one (immutable) instance serves every case with the same counts."""
    precision, recall = correct / predicted, correct / gold
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return CaseScore(precision, recall, f1)


def exact_match(gold: Mapping[str, Any], predicted: Mapping[str, Any], *,
                filtered: bool = False) -> bool:
    """Supplementary: the filtered prediction has exactly the gold keys and values."""
    pred = predicted if filtered else filter_arguments(predicted)
    return pred.keys() == gold.keys() and all(exact_equal(gold[k], pred[k]) for k in gold)


@dataclass
class TrialScore:
    """Macro means over every gold case of one trial, and the per-case scores behind them."""

    precision: float
    recall: float
    f1: float
    cases: list[CaseScore] = field(default_factory=list)


def score_trial(gold: Sequence[Mapping[str, Any]],
                predicted: Sequence[Mapping[str, Any] | None], *,
                equal: Equal = exact_equal, filtered: bool = False) -> TrialScore:
    """Macro-average over all gold cases; ``None`` (no record for the case) counts as no call.
    ``filtered``: as in :func:`score_case`."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold cases but {len(predicted)} predictions")
    if not gold:
        raise ValueError("no gold cases")
    return trial_score([score_case(g, p or {}, equal=equal, filtered=filtered)
                        for g, p in zip(gold, predicted, strict=True)])


def trial_score(cases: list[CaseScore]) -> TrialScore:
    """The macro means of one trial's case scores (every gold case, in gold order)."""
    n = len(cases)
    return TrialScore(sum(c.precision for c in cases) / n, sum(c.recall for c in cases) / n,
                      sum(c.f1 for c in cases) / n, cases)


@dataclass
class RunScore:
    """Mean over trials of the per-trial means, with the sample std (ddof=1) over trials.

    With a single trial the std is ``nan`` (the paper leaves the "±" out for human runs).
    """

    precision: float
    recall: float
    f1: float
    precision_std: float
    recall_std: float
    f1_std: float
    n_trials: int
    trials: list[TrialScore] = field(default_factory=list, repr=False)

    def per_case_f1(self) -> list[float]:
        """Each case's F1 averaged over trials: the unit of sample-level agreement."""
        table = [[c.f1 for c in t.cases] for t in self.trials]
        if len(table) < 8:  # numpy sums fewer than 8 values in order, along either axis alike
            return np.array(table).mean(axis=0).tolist()
        return [float(np.mean(c)) for c in zip(*table, strict=True)]  # pairwise sums per case

    def to_dict(self, scale: float = 100.0) -> dict[str, float | int | None]:
        """The numbers, ``scale``d (100 = the paper's percentages); a nan std becomes None."""
        out: dict[str, float | int | None] = {"n_trials": self.n_trials}
        for name in ("precision", "recall", "f1", "precision_std", "recall_std", "f1_std"):
            value = getattr(self, name) * scale
            out[name] = None if np.isnan(value) else value
        return out

    def __str__(self) -> str:
        std = "" if np.isnan(self.f1_std) else f" ±{100 * self.f1_std:.2f}"
        return (f"P {100 * self.precision:.2f} / R {100 * self.recall:.2f} / "
                f"F1 {100 * self.f1:.2f}{std}")


def aggregate_trials(trials: Sequence[TrialScore]) -> RunScore:
    """Combine trials the published way (see :class:`RunScore`)."""
    if not trials:
        raise ValueError("no trials to aggregate")
    table = np.array([[t.precision, t.recall, t.f1] for t in trials])
    means = table.mean(axis=0)
    stds = table.std(axis=0, ddof=1) if len(trials) > 1 else np.full(3, np.nan)
    return RunScore(float(means[0]), float(means[1]), float(means[2]), float(stds[0]),
                    float(stds[1]), float(stds[2]), len(trials), list(trials))
