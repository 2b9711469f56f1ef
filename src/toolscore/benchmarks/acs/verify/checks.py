"""acs-verify: decide whether a response satisfies one arithmetic constraint, exactly.

``verify(request, response, constraint)`` parses the constraint (``constraints``), extracts the
quantities it needs from the response (``extract``, ``workouts``, ``timeline``) and compares
them with zero tolerance, as the human labels do. It abstains (``label=None``) rather than
guess when the constraint or the response cannot be read; the reason says which.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from toolscore.benchmarks.acs.verify.constraints import (
    Abstain,
    Constraint,
    parse_constraint,
)
from toolscore.benchmarks.acs.verify.extract import MealPlan, extract_meal_plan
from toolscore.benchmarks.acs.verify.timeline import DAY, Entry, inside, read_schedule
from toolscore.benchmarks.acs.verify.workouts import Session, extract_sessions, norm_name


@dataclass
class Verdict:
    """``label`` True/False, or None when the verifier abstains; ``values`` are the figures."""

    label: bool | None
    reason: str
    values: dict[str, Any] = field(default_factory=dict)
    kind: str = ""


def verify(request: str, response: str, constraint: str, domain: str = "") -> Verdict:
    """Check one constraint against one response; ``domain`` is the csv's domain, if known."""
    parsed = parse_constraint(constraint, request, domain)
    if isinstance(parsed, Abstain):
        return Verdict(None, f"constraint not understood: {parsed.reason}", kind="unparsed")
    try:
        return _check(parsed, response)
    except Unreadable as exc:
        return Verdict(None, f"response not understood: {exc}", kind=parsed.kind)


class Unreadable(Exception):
    """The response (or an extraction of it) lacks a figure the constraint needs."""


def clear_caches() -> None:
    """Forget parsed responses (each is parsed once and reused for all its constraints)."""
    for fn in (extract_meal_plan, extract_sessions, read_schedule):
        fn.cache_clear()


def _decide(c: Constraint, values: list[Fraction], what: str, extra: dict | None = None
            ) -> Verdict:
    """Every value must satisfy the comparison (one value for totals, one per day/session)."""
    ok = all(c.cmp.holds(v) for v in values)
    shown = [_num(v) for v in values]
    bad = [s for v, s in zip(values, shown, strict=False) if not c.cmp.holds(v)]
    why = f"{what} {shown} {'all' if len(values) > 1 else ''} {c.cmp}".replace("  ", " ")
    if not ok:
        why = f"{what} {shown}: {bad} fail {c.cmp}"
    return Verdict(ok, why, {"values": shown, **(extra or {})}, c.kind)


def _num(v: Fraction) -> int | float:
    return v.numerator if v.denominator == 1 else float(v)


MEAL_KINDS = ("days", "meals_per_day", "meals_total", "nutrient")
WORKOUT_KINDS = ("sessions", "exercises", "exercises_total", "session_minutes",
                 "session_calories", "tonnage")


def _check(c: Constraint, response: str) -> Verdict:
    if c.kind in MEAL_KINDS:
        return check_meal_plan(c, extract_meal_plan(response))
    if c.kind in WORKOUT_KINDS:
        return check_sessions(c, extract_sessions(response))
    return check_entries(c, read_schedule(response))


def check_meal_plan(c: Constraint, plan: MealPlan) -> Verdict:
    """The arithmetic of a meal-plan constraint on extracted days (from the text or, in the
    hybrid mode, from an LLM's extraction); raises Unreadable when a figure is missing."""
    if not plan.days:
        raise Unreadable("no days found")
    if c.kind == "days":
        return _decide(c, [Fraction(len(plan.days))], "days")
    if c.kind in ("meals_per_day", "meals_total"):
        def counted(header: str) -> bool:
            snack = "snack" in header.lower()
            return {"snack": snack, "meal-not-snack": not snack}.get(c.target, True)

        counts = [Fraction(sum(1 for m in d.meals if counted(m))) for d in plan.days]
        if not any(len(d.meals) for d in plan.days):
            raise Unreadable("no meal headers found")
        what = "snacks" if c.target == "snack" else "meals"
        if c.kind == "meals_total":
            return _decide(c, [sum(counts, Fraction(0))], f"{what} in total")
        return _decide(c, counts, f"{what} per day")
    missing = [d.title for d in plan.days if not d.mentions.get(c.target)]
    if missing:
        raise Unreadable(f"no {c.target} figures in {missing[0]}")
    if c.scope == "meal":
        meals = [m.get(c.target, Fraction(0)) for d in plan.days for m in d.per_meal]
        if not meals:
            raise Unreadable("no meal headers found")
        return _decide(c, meals, f"{c.target} per meal")
    per_day = [d.totals[c.target] for d in plan.days]
    if c.scope == "total":
        return _decide(c, [sum(per_day, Fraction(0))], f"{c.target} over the plan",
                       {"per_day": [_num(v) for v in per_day]})
    return _decide(c, per_day, f"{c.target} per day")


def tonnage(s: Session) -> Fraction:
    """Σ sets × reps × weight; bodyweight moves count at their stated weight, '-' as 0."""
    total = Fraction(0)
    for e in s.real:
        if e.sets is not None and e.reps is not None and e.weight is not None:
            total += e.sets * e.reps * e.weight
    return total * s.rounds


def check_sessions(c: Constraint, sessions: Sequence[Session]) -> Verdict:
    """The arithmetic of a workout constraint on extracted sessions (see check_meal_plan)."""
    if not sessions:
        raise Unreadable("no sessions found")
    if c.kind == "sessions":
        return _decide(c, [Fraction(len(sessions))], "sessions")
    if c.kind == "exercises":
        return _decide(c, [Fraction(len(s.real)) for s in sessions], "exercises per session")
    if c.kind == "exercises_total":
        names = {norm_name(e.name) for s in sessions for e in s.real}
        return _decide(c, [Fraction(len(names))], "distinct exercises")
    if c.scope == "exercise":
        attr = {"session_minutes": "minutes", "session_calories": "calories"}.get(c.kind)
        if attr is None:
            raise Unreadable("per-exercise tonnage is not supported")
        vals = [getattr(e, attr) for s in sessions for e in s.real]
        if any(v is None for v in vals) or not vals:
            raise Unreadable(f"an exercise without {attr}")
        return _decide(c, vals, f"{attr} per exercise")
    values: list[Fraction] = []
    for s in sessions:
        if c.kind == "tonnage":
            if not any(e.sets is not None and e.weight is not None for e in s.real):
                raise Unreadable(f"no sets x reps x weight in {s.title}")
            values.append(tonnage(s))
            continue
        attr = "minutes" if c.kind == "session_minutes" else "calories"
        total = Fraction(0)
        for e in s.exercises:
            v = getattr(e, attr)
            if v is None and not e.rest:
                raise Unreadable(f"no {attr} for {e.name!r} in {s.title}")
            total += v or 0
        values.append(total * s.rounds)
    what = {"tonnage": "kg per session", "session_minutes": "minutes per session",
            "session_calories": "calories per session"}[c.kind]
    if c.scope == "total":
        return _decide(c, [sum(values, Fraction(0))], what.replace("per session", "in total"))
    return _decide(c, values, what)


# --- schedules -------------------------------------------------------------------------

_STOP = {"a", "an", "the", "of", "for", "to", "and", "in", "on", "at", "my", "your", "with",
         "from", "during", "some", "daily", "each", "per", "day", "schedule", "total", "hour",
         "minut", "every", "dedicated", "allocated"}
_OPTIONAL = {"break", "session", "time", "period", "block", "slot", "activity", "routine"}
_MEALS = {"breakfast", "lunch", "dinner", "brunch", "supper", "meal"}
# Words a schedule may use for the same activity (as stems).
_SYN_GROUPS = [{"workout", "exercis", "gym", "train", "fitnes"}, {"meditation", "meditat"},
               {"study", "studi", "homework"}, {"read", "book"}, {"walk", "stroll"},
               {"nap", "siesta"}, {"hobby", "hobbi"}, {"relax", "unwind", "leisur"}]
_SYNONYMS = {w: g - {w} for g in _SYN_GROUPS for w in g}
_PART_RANGES = {"morning": [(240, 720)], "afternoon": [(720, 1080)],
                "evening": [(1020, 1440), (0, 120)], "night": [(1200, 1440), (0, 300)]}


def stem(word: str) -> str:
    """A crude stem so 'studying'~'study', 'commuting'~'commute', 'hobbies'~'hobby'."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    return w


def _words(text: str) -> list[str]:
    return [stem(w) for w in re.findall(r"[a-z]+", re.sub(r"\([^)]*\)", " ", text.lower()))]


def _category(activity: str) -> str:
    ws = set(_words(activity))
    if ws & {"commut", "travel"}:
        return "commute"
    if ws & {"sleep", "bed", "bedtim"}:
        return "sleep"
    if ws & {"meal", "eat"}:
        return "meals"
    if ws & {"work", "job"}:
        return "work"
    return ""


def _matches(e: Entry, category: str, required: set[str], strict: bool = True) -> bool:
    label = re.sub(r"\([^)]*\)", " ", e.label.lower())
    ws = set(_words(label))
    if category == "sleep":
        return (bool(ws & {"sleep", "bed", "bedtim"}) or "lights out" in label) and not re.search(
            r"prepar|get(ting)? ready|wind|routine|brush|before bed", label)
    if category == "meals":
        return bool(ws & _MEALS)
    if category == "commute":
        return bool(ws & {"commut", "travel"}) or bool(re.search(r"drive (to|home)", label))
    if category == "work":
        if not ws & {"work", "job", "office", "shift"} or re.search(
                r"commut|travel|prepar|get(ting)? ready|homework|work\s*out|after work|"
                r"to work|from work", label):
            return False
        return e.explicit or not re.search(r"\b(end|ends|finish|finished|done|leave|wrap)\b",
                                           label)
    if strict:
        return required <= ws
    return all(w in ws or ws & _SYNONYMS.get(w, set()) for w in required)


def _part_ok(e: Entry, part: str | None) -> bool:
    if part is None:
        return True
    t = e.start % DAY
    return any(a <= t < b for a, b in _PART_RANGES[part])


_WORKLIKE = re.compile(r"\b(work|meeting|call|task|project|email|presentation|office)", re.I)


def _effective(e: Entry, entries: Sequence[Entry]) -> int:
    """An entry's minutes minus those of entries nested inside it (a lunch inside work);
    a meeting inside a work block is still work."""
    return e.minutes - sum(x.minutes for x in entries
                           if inside(x, e) and not (_WORKLIKE.search(x.label)
                                                    and _WORKLIKE.search(e.label)))


def matching(c: Constraint, entries: Sequence[Entry]) -> list[Entry]:
    """The entries a schedule constraint is about, strict words first, then without fillers."""
    activity = re.sub(r"\b(to|from) (work|the office|home)\b", " ", c.target)
    category = _category(activity)
    words = {w for w in _words(activity) if w not in _STOP and w not in _PARTS_SET}
    found: list[Entry] = []
    for strict, req in ((True, words), (False, words - _OPTIONAL)):
        if not req and not category:
            continue
        found = [e for e in entries
                 if _part_ok(e, c.part) and _matches(e, category, req, strict)]
        if found or category:
            break
    if c.direction and found:
        found = sorted(found, key=lambda e: e.start)
        pat = r"to work|to the office|to office" if c.direction == "to" else r"home|from|back"
        named = [e for e in found if re.search(pat, e.label.lower())]
        found = named or [found[0] if c.direction == "to" else found[-1]]
    return found


_PARTS_SET = {"morning", "afternoon", "evening", "night"}


def check_entries(c: Constraint, entries: Sequence[Entry]) -> Verdict:
    """The arithmetic of a schedule constraint on timed entries (see check_meal_plan)."""
    if not entries:
        raise Unreadable("no timed schedule entries")
    if c.kind == "conjunction":
        verdicts = [check_entries(p, entries) for p in c.parts]
        return Verdict(all(v.label for v in verdicts), "; ".join(v.reason for v in verdicts),
                       {"parts": [v.values for v in verdicts]}, c.kind)
    found = matching(c, entries)
    shown = [f"{_hhmm(e.start)}-{_hhmm(e.end or e.start)} {e.label[:30]}" for e in found]
    if c.kind == "activity_count":
        return _decide(c, [Fraction(len(found))], f"{c.target!r} entries", {"entries": shown})
    if c.kind == "activity_time":
        return _check_time(c, found, entries, shown)
    if not found:
        return Verdict(False, f"no {c.target!r} entry in the schedule", {"minutes": 0}, c.kind)
    each = [Fraction(_effective(e, entries)) for e in found]
    total = sum(each, Fraction(0))
    extra = {"entries": shown, "minutes": _num(total)}
    if c.each_entry:
        if len(found) < 2:
            return Verdict(False, f"{c.target!r}: only {len(found)} entry", extra, c.kind)
        verdict = _decide(c, each, f"{c.target!r} minutes each", extra)
    elif c.single and any(c.cmp.holds(v) for v in each):
        verdict = Verdict(True, f"{c.target!r}: one entry {c.cmp} minutes", extra, c.kind)
    else:
        verdict = _decide(c, [total], f"{c.target!r} minutes", extra)
    anchors = _anchors(c, found)
    if verdict.label and anchors:
        return Verdict(False, f"{verdict.reason}; {anchors}", extra, c.kind)
    return verdict


def _check_time(c: Constraint, found: list[Entry], entries: Sequence[Entry], shown: list[str]
                ) -> Verdict:
    """'Dinner between 6 and 7 PM', 'wake up before 7 AM', 'work starts at 9 AM'."""
    if not found and "wake" in c.target:  # waking up is the end of the night's sleep
        sleep = [e for e in entries if _matches(e, "sleep", set())]
        found = [Entry((e.end or e.start) % DAY, None, "wake up", False) for e in sleep[-1:]]
    if not found:
        return Verdict(False, f"no {c.target!r} entry", {}, c.kind)
    first = found[0]
    if c.start is not None or c.end is not None:
        ok = (c.start is None or first.start % DAY == c.start) and (
            c.end is None or (found[-1].end or 0) % DAY == c.end)
    else:
        ok = c.cmp.holds(first.start % DAY)
        if ok and c.cmp.op == "between" and first.explicit and first.end is not None:
            ok = c.cmp.holds(first.end % DAY)
    return Verdict(ok, f"{c.target!r} at {_hhmm(first.start)}, required {c.cmp} (minutes)",
                   {"entries": shown}, c.kind)


def _anchors(c: Constraint, found: list[Entry]) -> str:
    """'' when the start/end times the constraint names hold, else what is wrong."""
    first = min(e.start for e in found) % DAY
    last = max(e.end or e.start for e in found) % DAY
    if c.start is not None and first != c.start:
        return f"starts {_hhmm(first)}, not {_hhmm(c.start)}"
    if c.end is not None and (last > c.end if c.end_by else last != c.end):
        return f"ends {_hhmm(last)}, not {'by ' if c.end_by else ''}{_hhmm(c.end)}"
    return ""


def _hhmm(m: int) -> str:
    m %= DAY
    return f"{m // 60:02d}:{m % 60:02d}"
