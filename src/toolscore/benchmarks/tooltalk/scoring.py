"""ToolTalk scoring: which predicted calls count as ground-truth calls, and the metrics.

The published numbers depend on details that are easy to get subtly wrong, so this module follows
the reference behaviour exactly (see ``shared/specs/tooltalk.md``):

* matching is greedy, first-fit and one-to-one over the WHOLE conversation, not per turn: each
  prediction, in order, takes the first still-unmatched ground-truth call (in file order) that
  its tool's equivalence rule accepts; a prediction to an unknown tool never matches;
* a bad (incorrect) action is a prediction to an action tool that executed without an exception
  and matched nothing. A failed call, or an extra call to a non-action tool, only lowers
  precision: it changed nothing in the world;
* metrics are per conversation and aggregated per split by summing counts (micro average),
  except success, which is a fraction of conversations.

The error analysis counts error types exactly as ToolTalk's ``calculate_error_types.py`` does
(see :func:`classify_errors`); ``ctx.strict`` switches to a labelled per-turn variant that
follows the intent stated in that script's comment instead of its code.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolscore.env.tool import CallRecord, MatchContext, Tool

OVER_TRIGGER = "over-trigger"
BAD_PLANNING = "bad planning"
BAD_CALL = "bad call"
ERROR_TYPES = (OVER_TRIGGER, BAD_PLANNING, BAD_CALL)

# Errors an equivalence rule may raise on malformed predicted arguments (e.g. a null where a
# date is expected). The reference crashes the whole run there; we count it as "no match".
_RULE_ERRORS = (TypeError, ValueError, KeyError, AttributeError, IndexError)


@dataclass
class TurnCalls:
    """One evaluated assistant turn: its ground-truth calls and the model's predicted calls.

    ``turn`` identifies the turn within the conversation (its position in the file);
    ``reply`` is the model's final text for the turn, kept only so prediction files round-trip.
    """

    turn: int
    ground_truth: list[CallRecord]
    predictions: list[CallRecord]
    reply: str | None = None


@dataclass(frozen=True)
class CallRef:
    """A call's address: the ``turn`` of its TurnCalls and its position in that turn's list."""

    turn: int
    index: int


@dataclass
class PredictionOutcome:
    """How one predicted call was judged."""

    ref: CallRef
    name: str
    action: bool
    match: CallRef | None
    bad_action: bool

    @property
    def matched(self) -> bool:
        return self.match is not None


@dataclass
class ConversationScore:
    """Counts, per-call outcomes and per-turn error types of one conversation."""

    predictions: int
    ground_truths: int
    matches: int
    actions: int
    valid_actions: int  # action predictions that matched a ground-truth call
    bad_actions: int
    outcomes: list[PredictionOutcome] = field(default_factory=list)
    truth_matches: dict[CallRef, CallRef] = field(default_factory=dict)  # truth -> prediction
    errors: dict[int, str] = field(default_factory=dict)  # turn -> error type (failed only)
    # turn -> how many errors of its type the turn counts (>1 only for over-triggers, which the
    # reference counts per bad action); a turn missing here counts once.
    error_counts: dict[int, int] = field(default_factory=dict)

    def error_totals(self) -> Counter[str]:
        """Errors per type as the split totals count them (over-triggers per bad action)."""
        totals: Counter[str] = Counter()
        for turn, kind in self.errors.items():
            totals[kind] += self.error_counts.get(turn, 1)
        return totals

    @property
    def precision(self) -> float:
        return self.matches / self.predictions if self.predictions else 0.0

    @property
    def recall(self) -> float:
        # A conversation without ground-truth calls has nothing to recall: 1.0 (cannot occur in
        # the released data, where every conversation has at least one call).
        return self.matches / self.ground_truths if self.ground_truths else 1.0

    @property
    def action_precision(self) -> float:
        return self.valid_actions / self.actions if self.actions else 1.0

    @property
    def incorrect_action_rate(self) -> float:
        return self.bad_actions / self.actions if self.actions else 0.0

    @property
    def success(self) -> bool:
        return self.recall == 1.0 and self.bad_actions == 0

    @property
    def soft_success(self) -> float:
        return self.recall * (1.0 - self.incorrect_action_rate)

    def metrics(self) -> dict[str, Any]:
        return {"predictions": self.predictions, "ground_truths": self.ground_truths,
                "matches": self.matches, "actions": self.actions,
                "valid_actions": self.valid_actions, "bad_actions": self.bad_actions,
                "precision": self.precision, "recall": self.recall,
                "action_precision": self.action_precision,
                "incorrect_action_rate": self.incorrect_action_rate,
                "success": self.success, "soft_success": self.soft_success}


def _equivalent(tool: Tool, prediction: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
    try:
        return bool(tool.equivalent(prediction, truth, ctx))
    except _RULE_ERRORS:
        return False


def match_calls(turns: Sequence[TurnCalls], tools: dict[str, Tool],
                ctx: MatchContext) -> list[PredictionOutcome]:
    """Greedy first-fit one-to-one matching of all predictions against all ground truths."""
    truths = [(CallRef(t.turn, i), c) for t in turns for i, c in enumerate(t.ground_truth)]
    taken: set[CallRef] = set()
    outcomes: list[PredictionOutcome] = []
    for t in turns:
        for i, pred in enumerate(t.predictions):
            tool = tools.get(pred.name)
            match: CallRef | None = None
            if tool is not None:
                for ref, truth in truths:
                    if ref not in taken and truth.name == pred.name and _equivalent(
                            tool, pred, truth, ctx):
                        match = ref
                        taken.add(ref)
                        break
            action = tool is not None and tool.action
            bad = action and match is None and pred.exception is None
            outcomes.append(PredictionOutcome(CallRef(t.turn, i), pred.name, action, match, bad))
    return outcomes


def score_conversation(turns: Sequence[TurnCalls], tools: dict[str, Tool],
                       ctx: MatchContext) -> ConversationScore:
    """Score one conversation's evaluated turns (in conversation order)."""
    outcomes = match_calls(turns, tools, ctx)
    actions = [o for o in outcomes if o.action]
    score = ConversationScore(
        predictions=len(outcomes),
        ground_truths=sum(len(t.ground_truth) for t in turns),
        matches=sum(o.matched for o in outcomes),
        actions=len(actions),
        valid_actions=sum(o.matched for o in actions),
        bad_actions=sum(o.bad_action for o in outcomes),
        outcomes=outcomes,
        truth_matches={o.match: o.ref for o in outcomes if o.match is not None},
    )
    if not score.success:
        score.errors, score.error_counts = classify_errors(turns, score, strict=ctx.strict)
    return score


def classify_errors(turns: Sequence[TurnCalls], score: ConversationScore,
                    strict: bool = False) -> tuple[dict[int, str], dict[int, int]]:
    """Error type of each turn of a failed conversation, and how many errors each turn counts.

    Default: as ToolTalk's ``calculate_error_types.py`` counts them, because the published error
    breakdown is that script's output. A turn without ground truth counts one over-trigger per
    bad action in it. Otherwise, with B all the turn's unmatched predictions (failed calls and
    non-action extras included) and U its unmatched ground truths: both empty, the turn is
    skipped; different tool-name sets (B non-empty with U empty included) is bad planning; equal
    sets are bad planning when some tool has more unmatched predictions than unmatched ground
    truths, else a bad call.

    ``strict``: the script's comment says a tool "not called enough times" is bad planning, the
    opposite of its code. The strict variant follows the comment (U has more calls to a tool
    than B), classifies only turns that caused the failure (an unmatched ground truth or a bad
    action), and counts one error per turn, over-triggers included, so that every type is in
    the same unit.
    """
    by_turn: dict[int, list[PredictionOutcome]] = {}
    for o in score.outcomes:
        by_turn.setdefault(o.ref.turn, []).append(o)
    errors: dict[int, str] = {}
    counts: dict[int, int] = {}
    for t in turns:
        outcomes = by_turn.get(t.turn, [])
        bad = sum(o.bad_action for o in outcomes)
        if not t.ground_truth:
            if bad:
                errors[t.turn] = OVER_TRIGGER
                if not strict and bad > 1:
                    counts[t.turn] = bad
            continue
        unmatched_truths = [c.name for i, c in enumerate(t.ground_truth)
                            if CallRef(t.turn, i) not in score.truth_matches]
        unmatched_preds = [o.name for o in outcomes if not o.matched]
        if not unmatched_truths and (not bad if strict else not unmatched_preds):
            continue
        need, got = Counter(unmatched_truths), Counter(unmatched_preds)
        if set(need) != set(got):
            errors[t.turn] = BAD_PLANNING
            continue
        if strict:
            planning = any(need[n] > got[n] for n in need)  # not called enough times
        else:
            planning = any(need[n] < got[n] for n in need)  # called more often than needed
        errors[t.turn] = BAD_PLANNING if planning else BAD_CALL
    return errors, counts


def error_rule(strict: bool) -> str:
    """How the error types were counted, for every report that shows them."""
    if strict:
        return "strict (one per turn that caused the failure; the comment's direction)"
    return "reference (as ToolTalk's calculate_error_types.py)"


def aggregate(scores: Iterable[ConversationScore]) -> dict[str, Any]:
    """Split-level metrics: micro-averaged rates from summed counts, success over conversations.

    Edge cases follow the per-conversation definitions (precision 0 without predictions, action
    precision 1 and incorrect-action rate 0 without actions).
    """
    scores = list(scores)
    total = {k: sum(getattr(s, k) for s in scores)
             for k in ("predictions", "ground_truths", "matches", "actions", "valid_actions",
                       "bad_actions")}
    n = len(scores)
    errors: Counter[str] = Counter()
    for s in scores:
        errors.update(s.error_totals())
    return {
        "conversations": n,
        **total,
        "precision": total["matches"] / total["predictions"] if total["predictions"] else 0.0,
        "recall": (total["matches"] / total["ground_truths"]
                   if total["ground_truths"] else 1.0),
        "action_precision": (total["valid_actions"] / total["actions"]
                             if total["actions"] else 1.0),
        "incorrect_action_rate": (total["bad_actions"] / total["actions"]
                                  if total["actions"] else 0.0),
        "successes": sum(s.success for s in scores),
        "success_rate": sum(s.success for s in scores) / n if n else 0.0,
        # fsum is exact, so the total does not depend on the order conversations finished
        # in: a resumed run and an uninterrupted one write byte-identical scores.
        "soft_success": math.fsum(s.soft_success for s in scores) / n if n else 0.0,
        "errors": {e: errors.get(e, 0) for e in ERROR_TYPES},
    }


def similarity_texts(turns: Sequence[TurnCalls], tools: dict[str, Tool]) -> list[str]:
    """Every text an equivalence rule might pass to ``ctx.similarity`` for these turns.

    Only a prediction to a tool that also appears in the ground truth is ever compared, so only
    those calls' string arguments are collected. A tool may narrow the fields with
    ``tool.extra["similarity_fields"]``; otherwise all top-level string arguments are taken
    (a few extra short texts cost far less than one unbatched embedding call).
    """
    truth_names = {c.name for t in turns for c in t.ground_truth}
    texts: dict[str, None] = {}
    for t in turns:
        for call in [*t.ground_truth, *t.predictions]:
            tool = tools.get(call.name)
            if tool is None or call.name not in truth_names or not call.arguments:
                continue
            fields = tool.extra.get("similarity_fields")
            for key, value in call.arguments.items():
                if isinstance(value, str) and (fields is None or key in fields):
                    texts.setdefault(value, None)
    return list(texts)
