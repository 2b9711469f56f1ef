"""When does a predicted ToolTalk call count as a ground-truth call?

ToolTalk does not ask for identical calls: a search may use different filters as long as it
finds what the ground truth found, and free text (an email body, an event name) only has to say
nearly the same thing. Each tool therefore carries one of the rules below (attached with
``@tool(equivalence=...)``). Common to all of them: only the ground truth's argument keys are
read, so an extra optional argument in the prediction is ignored while a missing one fails.

The default (``ctx.strict`` false) reproduces the reference scorer, defects included; strict mode
fixes the known ones (SendMessage never comparing the receiver). A null ``due_date`` predicted
against a dated AddReminder ground truth crashed the reference scorer; here it is simply not
equal, in both modes. No rule ever raises, whatever the model sent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from toolscore.env.tool import CallRecord, EquivalenceRule, MatchContext

#: Thresholds on the similarity of free-text arguments, as in the reference scorer.
TEXT_THRESHOLD = 0.9
LONG_TEXT_THRESHOLD = 0.8  # email bodies and chat messages

_MISSING = object()


def _arguments(record: CallRecord) -> dict[str, Any] | None:
    return record.arguments if isinstance(record.arguments, dict) else None


def similar(ctx: MatchContext, prediction: Any, truth: Any, threshold: float) -> bool:
    """Whether two free-text values are close enough; a non-string side scores 0."""
    if not isinstance(prediction, str) or not isinstance(truth, str):
        return False
    if prediction == truth:  # an embedder may give NaN for two empty strings
        return True
    try:
        score = float(ctx.similarity(prediction, truth))
    except Exception:  # a broken embedder must not turn into a crash of the whole run
        return False
    return not math.isnan(score) and score >= threshold


def _keys_match(
    prediction: dict[str, Any],
    truth: dict[str, Any],
    ctx: MatchContext,
    *,
    skip: Iterable[str] = (),
    compare: dict[str, Callable[[Any, Any, MatchContext], bool]] | None = None,
) -> bool:
    """Every ground-truth argument (except ``skip``) is present and passes its comparison."""
    compare = compare or {}
    skipped = set(skip)
    for key, expected in truth.items():
        if key in skipped:
            continue
        got = prediction.get(key, _MISSING)
        if got is _MISSING:
            return False
        check = compare.get(key)
        if not (check(got, expected, ctx) if check else _equal(got, expected)):
            return False
    return True


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return False


def _text(threshold: float) -> Callable[[Any, Any, MatchContext], bool]:
    return lambda got, expected, ctx: similar(ctx, got, expected, threshold)


def _same_session(prediction: dict[str, Any], truth: dict[str, Any]) -> bool:
    return prediction.get("session_token") == truth.get("session_token")


# -- rules ------------------------------------------------------------------------------------
def exact(prediction: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
    """Same response, same exception and every ground-truth argument exactly equal."""
    pred, gt = _arguments(prediction), _arguments(truth)
    if pred is None or gt is None:
        return False
    return (_equal(prediction.response, truth.response)
            and prediction.exception == truth.exception
            and _keys_match(pred, gt, ctx))


def exact_ignoring_response(prediction: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
    """Like ``exact`` but the response is not compared (AddAlarm: the new id may differ)."""
    pred, gt = _arguments(prediction), _arguments(truth)
    if pred is None or gt is None:
        return False
    return prediction.exception == truth.exception and _keys_match(pred, gt, ctx)


def _ids(response: Any, list_key: str, id_key: str) -> set[Any] | None:
    """The ids listed in a search response, or None when the response has no such list."""
    if not isinstance(response, dict) or not isinstance(response.get(list_key), list):
        return None
    ids = set()
    for item in response[list_key]:
        if isinstance(item, dict) and isinstance(item.get(id_key), (str, int)):
            ids.add(item[id_key])
    return ids


def _found_all(prediction: CallRecord, truth: CallRecord, list_key: str, id_key: str) -> bool:
    expected = _ids(truth.response, list_key, id_key) or set()
    if not expected:
        return True
    got = _ids(prediction.response, list_key, id_key)
    return got is not None and expected <= got


def results_found(list_key: str, id_key: str) -> EquivalenceRule:
    """For searches: same exception and session, and every ground-truth result was found.

    The filters are not compared: any query that retrieves what the ground truth retrieved is
    as good (extra results are allowed).
    """

    def rule(prediction: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
        pred, gt = _arguments(prediction), _arguments(truth)
        if pred is None or gt is None:
            return False
        return (prediction.exception == truth.exception
                and _same_session(pred, gt)
                and _found_all(prediction, truth, list_key, id_key))

    rule.__name__ = f"results_found_{id_key}"
    return rule


def get_reminders(prediction: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
    """The whole request equal and every ground-truth reminder listed in the prediction."""
    pred, gt = _arguments(prediction), _arguments(truth)
    if pred is None or gt is None:
        return False
    return _equal(pred, gt) and _found_all(prediction, truth, "reminders", "reminder_id")


_EVENT_TEXT = ("name", "description", "location")


def create_event(prediction: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
    """Same exception; every ground-truth argument given (not null); texts similar, rest exact.

    Attendees are compared as an ordered list, as in the reference.
    """
    pred, gt = _arguments(prediction), _arguments(truth)
    if pred is None or gt is None or prediction.exception != truth.exception:
        return False
    if any(pred.get(key) is None for key in gt):
        return False
    return _keys_match(pred, gt, ctx, compare={k: _text(TEXT_THRESHOLD) for k in _EVENT_TEXT})


def modify_event(prediction: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
    """Same response and exception; new texts similar, every other new value exact."""
    pred, gt = _arguments(prediction), _arguments(truth)
    if pred is None or gt is None:
        return False
    if not _equal(prediction.response, truth.response) or prediction.exception != truth.exception:
        return False
    texts = {f"new_{k}": _text(TEXT_THRESHOLD) for k in _EVENT_TEXT}
    return _keys_match(pred, gt, ctx, compare=texts)


def _same_set(got: Any, expected: Any, ctx: MatchContext) -> bool:
    if not isinstance(got, (list, tuple)) or not isinstance(expected, (list, tuple)):
        return False
    try:
        return set(got) == set(expected)
    except TypeError:  # unhashable items such as nested lists
        return False


def send_email(prediction: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
    """Same exception and session; same recipients in any order; subject and body similar."""
    pred, gt = _arguments(prediction), _arguments(truth)
    if pred is None or gt is None or prediction.exception != truth.exception:
        return False
    if not _same_session(pred, gt):
        return False
    checks = {"to": _same_set, "subject": _text(TEXT_THRESHOLD),
              "body": _text(LONG_TEXT_THRESHOLD)}
    return _keys_match(pred, gt, ctx, skip=set(gt) - set(checks), compare=checks)


def send_message(prediction: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
    """Same exception and session and a similar message.

    The reference never compares the receiver, so a message to the wrong person matches; strict
    mode also requires the same receiver.
    """
    pred, gt = _arguments(prediction), _arguments(truth)
    if pred is None or gt is None or prediction.exception != truth.exception:
        return False
    if not _same_session(pred, gt):
        return False
    compared = {"message"} | ({"receiver"} if ctx.strict else set())
    return _keys_match(pred, gt, ctx, skip=set(gt) - compared,
                       compare={"message": _text(LONG_TEXT_THRESHOLD)})


def _calendar_date(value: Any) -> Any:
    """The date part of a '%Y-%m-%d %H:%M:%S' timestamp (or of a bare date); None if invalid."""
    if not isinstance(value, str):
        return None
    for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d"):
        try:
            return datetime.strptime(value, fmt).date()
        except ValueError:
            continue
    return None


def _same_day(got: Any, expected: Any, ctx: MatchContext) -> bool:
    if got is None or expected is None:
        return got is None and expected is None
    day = _calendar_date(expected)
    return day is not None and _calendar_date(got) == day


def add_reminder(prediction: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
    """Same exception; due date on the same calendar day; task similar; the rest exact."""
    pred, gt = _arguments(prediction), _arguments(truth)
    if pred is None or gt is None or prediction.exception != truth.exception:
        return False
    return _keys_match(pred, gt, ctx,
                       compare={"due_date": _same_day, "task": _text(TEXT_THRESHOLD)})


#: The free-text arguments each rule compares by similarity (the texts worth embedding).
SIMILARITY_FIELDS: dict[str, tuple[str, ...]] = {
    "CreateEvent": _EVENT_TEXT,
    "ModifyEvent": tuple(f"new_{k}" for k in _EVENT_TEXT),
    "SendEmail": ("subject", "body"),
    "SendMessage": ("message",),
    "AddReminder": ("task",),
}

#: The rule of every ToolTalk tool, by tool name (tools not listed use ``exact``).
RULES: dict[str, EquivalenceRule] = {
    "AddAlarm": exact_ignoring_response,
    "FindAlarms": results_found("alarms", "alarm_id"),
    "QueryCalendar": results_found("events", "event_id"),
    "SearchInbox": results_found("emails", "email_id"),
    "SearchMessages": results_found("messages", "message_id"),
    "GetReminders": get_reminders,
    "CreateEvent": create_event,
    "ModifyEvent": modify_event,
    "SendEmail": send_email,
    "SendMessage": send_message,
    "AddReminder": add_reminder,
}


def rule_for(tool_name: str) -> EquivalenceRule:
    """The equivalence rule of a ToolTalk tool."""
    return RULES.get(tool_name, exact)
