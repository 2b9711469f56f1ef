"""Parse a constraint sentence into a formal check: what to measure, over what scope, compared how.

Constraints are one English sentence each ("Each workout session must burn at least 300
calories", "The schedule must include exactly 6 hours of work ending at 5 pm"). The parser
recognises a fixed set of quantity kinds and comparison phrasings and abstains, with a reason,
on anything else: a wrong formal reading would be a confident wrong verdict, while an
abstention is visible in the coverage figure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction

from toolscore.benchmarks.acs.verify.comparison import (
    _GE,
    _GT,
    _LE,
    _LT,
    _NUM,
    Comparison,
    cmp_of,
    comparison_op,  # noqa: F401  (re-exported: part of this module's reading API)
    last_number,
    number_near,
    strip_parens,
)
from toolscore.benchmarks.acs.verify.markdown import KG_PER_LB
from toolscore.benchmarks.acs.verify.timeline import (
    DAY,
    DURATION,
    TIME,
    clock,
    duration_minutes,
)

_PARTS = ("morning", "afternoon", "evening", "night")


@dataclass(frozen=True)
class Constraint:
    """A formal reading of one constraint sentence.

    kind: days | meals_per_day | meals_total | nutrient | sessions | exercises |
    exercises_total | session_minutes | session_calories | tonnage | activity_minutes |
    activity_count | activity_time | conjunction (every one of ``parts`` must hold).
    scope: "each" (every day / session must pass) or "total" (summed over the plan).
    """

    kind: str
    cmp: Comparison
    scope: str = "each"
    target: str = ""  # nutrient name or activity phrase
    part: str | None = None  # morning / afternoon / evening / night
    start: int | None = None  # required start time, minutes after midnight
    end: int | None = None  # required end time
    end_by: bool = False  # "ending by 5 PM": the end may be earlier
    each_entry: bool = False  # "1.5 hours for each direction": every matching entry
    direction: str | None = None  # commute "to" / "from" work
    single: bool = False  # "a 30-minute workout": one entry may satisfy it on its own
    parts: tuple[Constraint, ...] = field(default_factory=tuple)
    text: str = ""


@dataclass(frozen=True)
class Abstain:
    """The sentence could not be read formally; ``reason`` says why."""

    reason: str


def parse_constraint(text: str, request: str = "", domain: str = "") -> Constraint | Abstain:
    """Read one constraint sentence; ``domain`` (the csv column) narrows the kinds tried."""
    raw = " ".join(text.split())
    t = strip_parens(raw).lower()
    dom = domain.lower() or infer_domain(t, request)
    if dom.startswith("schedule"):
        return _schedule(raw)
    if dom.startswith("meal"):
        return _meal(raw, t, request)
    if dom.startswith("workout"):
        return _workout(raw, t)
    return Abstain("unknown constraint domain")


def infer_domain(constraint: str, request: str = "") -> str:
    """The ACS domain of a constraint, from its words, else from the request's."""
    cues = (("schedule", r"\bschedule"), ("meal-planning", r"meal[\s-]plan"),
            ("workout", r"session|exercise|workout|tonnage|\bburn|\blift|\bkg\b|training"),
            ("schedule", r"\bsleep|\bwork\b|\bbreak\b|commut|\bnap\b|[ap]\.?m\b"),
            ("meal-planning", r"meal|calori|protein|\bfats?\b|carb|diet"))
    for text in (constraint.lower(), request.lower()):
        for name, pattern in cues:
            if re.search(pattern, text):
                return name
    return ""


_NUTRIENT_WORDS = (("calories", r"calori|kcal|\benergy\b"), ("protein", r"protein"),
                   ("fat", r"\bfats?\b"), ("carbs", r"carb"))


def _meal(raw: str, t: str, request: str) -> Constraint | Abstain:
    nutrient = next((n for n, pat in _NUTRIENT_WORDS if re.search(pat, t)), None)
    if nutrient:
        value = (number_near(t, r"k?cal|g\b|grams?") if nutrient != "calories"
                 else number_near(t, r"k?cal")) or last_number(t)
        if value is None:
            return Abstain(f"no target value for {nutrient}")
        # "(2500 calories per day for 2 days)" marks a whole-plan total; otherwise meal-plan
        # targets are per day, however the sentence words them (the labels read them so).
        total = bool(re.search(r"per day (?:for|over|x|×) \d+ days|\bx\s*\d+\s*days|"
                               r"across all days|entire (?:meal )?plan|whole (?:meal )?plan|"
                               r"over (?:the )?\d+ days", raw, re.I))
        # "in total", "altogether", "for the week" sum over the plan unless a day is named
        total = total or bool(
            re.search(r"\bin total\b|\baltogether\b|\bcombined\b|\bfor the (?:whole )?week\b|"
                      r"\bfor (?:all|both) (?:the )?(?:\d+ )?days\b|\bper week\b", t)
            and not re.search(r"\b(?:per|each|every|a) day\b|\bdaily\b", t))
        scope = ("meal" if re.search(r"\b(?:each|every|per) meal\b", t)
                 else "total" if total else "each")
        return Constraint("nutrient", cmp_of(t, value), scope, nutrient, text=raw)
    what = re.search(r"\b(meals?|snacks?)\b(?![\s-]*plan)", t)
    if what:
        value = number_near(t, r"(?:\w+\s)?(?:meals?|snacks?)") or _count_value(t)
        if value is None:
            return Abstain("no number of meals")
        per_day = re.search(r"per day|each day|every day|a day\b|daily|/day|per each day", t)
        # Snacks are meals ("4 meals: breakfast, lunch, dinner, snack") unless the user asked
        # for snacks separately ("3 meals and 2 snacks a day").
        target = ("snack" if what.group(1).startswith("snack")
                  else "meal-not-snack" if re.search(r"snack", request + " " + t, re.I) else "")
        return Constraint("meals_per_day" if per_day else "meals_total", cmp_of(t, value),
                          target=target, text=raw)
    value = number_near(t, r"(?:-|\s)?days?\b")
    if value is None and re.search(r"number of days|days in the", t):
        value = _count_value(t)
    if value is not None:
        return Constraint("days", cmp_of(t, value), text=raw)
    return Abstain("meal-plan constraint of an unknown kind")


def _count_value(t: str) -> Fraction | None:
    """'number of days = 2', 'must be equal to 4', 'is 4' -> the number."""
    m = re.search(rf"(?:=|:|equal(?:s)?(?: to)?|\bis|\bbe|\bof|\bhave|\binclude|\bcontain)\s*"
                  rf"(?:exactly\s+|a total of\s+)?{_NUM}\b", t)
    return Fraction(m.group(1).replace(",", "")) if m else None


_PER_UNIT = (r"\b(?:per|each|every|a|single|one) (?:workout |training |exercise )?"
             r"(?:session|workout|day|class)\b|\bin each\b|\beach (?:workout )?session")
_WHOLE = (r"\btotal\b|\bper week\b|\bweekly\b|\ba week\b|\beach week\b|whole|entire|"
          r"all (?:the )?(?:sessions|workouts|days)|combined|across|altogether|overall|"
          r"\b(?:for|over|of|throughout) (?:the |this |my |your )?(?:routine|plan|program|"
          r"programme|week|schedule)\b")


def _plan_scope(t: str) -> str:
    """'each' session unless the sentence sums over the plan ('in total', 'per week', 'for the
    routine') or is about single exercises ('each exercise must last at least 5 minutes').
    A per-session word wins ('total tonnage per session' is each session's total)."""
    if re.search(r"\b(?:each|every|per|any|all) exercises?\b", t):
        return "exercise"
    if re.search(_PER_UNIT, t):
        return "each"
    if re.search(_WHOLE, t):
        return "total"
    # "The routine must burn 1200 calories": a plan-level subject with no per-session word
    subject = re.split(r"\b(?:must|should|needs? to|has to|shall|is|are)\b", t)[0]
    if re.search(r"\b(?:routine|plan|program|programme|week)\b", subject):
        return "total"
    return "each"


def _workout(raw: str, t: str) -> Constraint | Abstain:
    if re.search(r"tonnage|weight lifted|lifting weight|total lift|\blift|\bkg\b|kilogram|volume|"
                 r"\blbs?\b|\bpounds?\b", t):
        value = number_near(t, r"kg|kgs|kilograms?") or last_number(t)
        if value is None:
            return Abstain("no tonnage value")
        scale = KG_PER_LB if number_near(t, r"lbs?\b|pounds?") is not None else 1
        return Constraint("tonnage", cmp_of(t, value * scale, scale), _plan_scope(t), text=raw)
    if re.search(r"\bburn|calori|kcal", t):
        value = number_near(t, r"k?cal") or last_number(t)
        if value is None:
            return Abstain("no calorie value")
        return Constraint("session_calories", cmp_of(t, value), _plan_scope(t), text=raw)
    if re.search(r"\blast|\blong\b|duration|\bminutes?\b|\bmins?\b|\bhours?\b", t):
        value = duration_minutes(t)
        if value is None:
            return Abstain("no session duration")
        hours = re.search(r"\bhours?\b|\bhrs?\b", t) and not re.search(r"minutes?|mins?", t)
        return Constraint("session_minutes", cmp_of(t, value, 60 if hours else 1), _plan_scope(t),
                          text=raw)
    if re.search(r"exercises?", t):
        value = number_near(t, r"(?:different |distinct |unique )?exercises?") or _count_value(t)
        if value is None:
            return Abstain("no number of exercises")
        per = re.search(r"per session|each session|per workout|each workout|per day|each day|"
                        r"in each|every session|session must include", t)
        total = re.search(r"\btotal\b|in total|different|distinct|unique|overall", t)
        kind = "exercises_total" if total and not per else "exercises"
        return Constraint(kind, cmp_of(t, value), text=raw)
    if re.search(r"\brest\b|\boff\b", t):
        return Abstain("rest-day constraints are not supported")
    if re.search(r"sessions?|workouts?\b(?! (?:plan|routine|program))|training days|"
                 r"days (?:per|a) week|times (?:per|a) week|\d+ days", t):
        value = (number_near(t, r"(?:\w+\s)?(?:sessions?|workouts?|days|times)")
                 or _count_value(t))
        if value is None:
            return Abstain("no number of sessions")
        return Constraint("sessions", cmp_of(t, value), text=raw)
    return Abstain("workout constraint of an unknown kind")


_PREFIX = re.compile(r"^.*?\b(?:must|should|needs? to|has to|have to|shall)\s+"
                     r"(?:include|allocate|account for|have|contain|provide|allow(?: for)?|"
                     r"reserve|dedicate|set aside|schedule|feature|be)\s+", re.I)
_CUES = re.compile(rf"\b(?:exactly|a total of|in total|total of|total|{_GE}|{_LE}|{_LT}|{_GT}|"
                   r"only|approximately|about|around)\b\s*", re.I)
_CLOCK = (r"\d{1,2}(?::\d{2})?\s*(?:[ap]\.?\s?m\.?)?"
          r"(?![\d.]|\s*-?\s*(?:hours?|hrs?|minutes?|mins?)\b)|noon|midnight")


def _schedule(raw: str) -> Constraint | Abstain:
    durs = list(re.finditer(DURATION, raw, re.I))
    if len(durs) >= 2:
        cut = raw.rfind(" and ", durs[0].end(), durs[1].start())
        if cut > 0:
            head = raw[:durs[0].start()]
            first = _schedule(raw[:cut])
            second = _schedule(head + raw[cut + 5:])
            if isinstance(first, Abstain):
                return first
            if isinstance(second, Abstain):
                return second
            return Constraint("conjunction", Comparison("==", Fraction(1)),
                              parts=(first, second),
                              text=raw)
    body = _PREFIX.sub("", raw).strip().rstrip(".")
    lower = body.lower()
    start = end = None
    end_by = False
    m = re.search(rf"\bfrom\s+({_CLOCK})\s*(?:-|–|to|until)\s*({_CLOCK})", lower)
    if m:
        start, end = _clock(m.group(1)), _clock(m.group(2))
        lower = lower[:m.start()] + lower[m.end():]
    m = re.search(rf"\b(?:starting|start(?:s)?|beginning|begin(?:s)?)\s+(?:at|from)?\s*({_CLOCK})",
                  lower)
    if m:
        start = _clock(m.group(1))
        lower = lower[:m.start()] + lower[m.end():]
    m = re.search(rf"\b(?:that\s+)?(?:ending|end(?:s)?|finish(?:ing|es)?|until|done)\s+"
                  rf"(by|at|before)?\s*({_CLOCK})", lower)
    if m:
        end, end_by = _clock(m.group(2)), m.group(1) in ("by", "before")
        lower = lower[:m.start()] + lower[m.end():]
    m = re.search(rf"\b(?:at|around)\s+({_CLOCK})", lower)
    if m and start is None and _clock(m.group(1)) is not None:
        start = _clock(m.group(1))  # "a 1-hour lunch break at 12 PM"
        lower = lower[:m.start()] + lower[m.end():]
    each = bool(re.search(r"each (?:direction|way)|per direction|both ways|either way", lower))
    lower = re.sub(r"\b(?:for\s+)?(?:each (?:direction|way)|per direction|both ways)\b", " ",
                   lower)
    direction = None
    dm = re.search(r"\b(to|from) (?:work|the office|home)\b", lower)
    if dm and re.search(r"commut|travel|drive", lower):
        direction = "to" if (dm.group(1) == "to") != ("home" in dm.group(0)) else "from"
    part = None
    pm = re.search(r"\b(?:in|during) the (morning|afternoon|evening|night)\b", lower)
    if pm:
        part = pm.group(1)
        lower = lower[:pm.start()] + lower[pm.end():]
    dur = re.search(DURATION + r"(?:\s+long)?", lower)
    if dur is None:
        return _schedule_point(raw, lower, start, end)
    minutes = duration_minutes(dur.group(0))
    if minutes is None:
        return Abstain("unreadable duration")
    before, after = lower[:dur.start()], lower[dur.end():]
    single = bool(re.search(r"(?:^|\b)(?:a|an|one)\s*$", _CUES.sub("", before).strip()))
    activity = re.sub(r"^\s*(?:of|for|to|on|devoted to|dedicated to|allocated to|long)\b", "",
                      after).strip(" ,.")
    if not activity or activity in ("long",):
        # "Work hours must not exceed 8 hours": the activity precedes the duration.
        activity = " ".join(re.sub(
            r"\b(?:must|should|needs? to|has to|shall|not|be|is|are|include|have|last|lasts|"
            r"take|takes|of|a|an|the|for|that)\b", " ", _CUES.sub(" ", before)).split())
    if not activity:
        activity = _subject(raw)  # "The lunch break must be 30 minutes long"
    activity = _CUES.sub("", activity).strip(" ,.")
    for p in _PARTS:
        if re.search(rf"\b{p}\b", activity) and part is None:
            part = p
    if not activity:
        return Abstain("no activity named")
    hours = re.search(r"\bhours?\b|\bhrs?\b", lower) and not re.search(r"minutes?", lower)
    cmp = cmp_of(body, minutes, 60 if hours else 1)
    return Constraint("activity_minutes", cmp, "total", activity, part, start, end, end_by,
                      each, direction, single, text=raw)


def _subject(raw: str) -> str:
    """The grammatical subject: 'The lunch break must be ...' -> 'lunch break'."""
    subject = re.split(r"\b(?:must|should|needs? to|has to|shall|is|lasts?)\b", raw,
                       flags=re.I)[0].lower()
    subject = re.sub(r"\b(?:the|a|an|daily|schedule's|schedule|my|i)\b", " ", subject)
    return " ".join(subject.split())


def _schedule_point(raw: str, lower: str, start: int | None, end: int | None
                    ) -> Constraint | Abstain:
    """No duration: a count ('3 meals') or a time of day ('wake up before 7 AM')."""
    bm = re.search(rf"\bbetween\s+({_CLOCK})\s+and\s+({_CLOCK})", lower)
    if bm and (lo := _clock(bm.group(1))) is not None and (hi := _clock(bm.group(2))) is not None:
        act = re.sub(r"\b(must|should|is|be|scheduled|planned|to|that|the|a|an|my)\b", " ",
                     lower[:bm.start()])
        return Constraint("activity_time", Comparison("between", Fraction(lo), Fraction(hi)),
                          "each", " ".join(act.split()) or _subject(raw), text=raw)
    m = re.search(r"(\d+)\s+([a-z][a-z\s-]*?)(?:\s+(?:per|each|a)\s+day)?$", lower.strip())
    if m and not TIME.fullmatch(m.group(0)):
        return Constraint("activity_count", cmp_of(lower, Fraction(m.group(1))), "total",
                          m.group(2).strip(), text=raw)
    tm = re.search(rf"\b(at|before|after|by|no later than|no earlier than)\s+({_CLOCK})", lower)
    if tm and (when := _clock(tm.group(2))) is not None:
        op = {"before": "<", "by": "<=", "no later than": "<=", "after": ">",
              "no earlier than": ">="}.get(tm.group(1), "==")
        act = re.sub(r"\b(must|should|is|be|to|that|the|a|an|my|i)\b", " ", lower[:tm.start()])
        return Constraint("activity_time", Comparison(op, Fraction(when)), "each",
                          " ".join(act.split()) or _subject(raw), text=raw)
    if start is not None or end is not None:
        act = re.sub(r"\b(must|should|is|be|to|that|the|a|an)\b", " ", lower)
        return Constraint("activity_time", Comparison("==", Fraction(start or 0)), "each",
                          " ".join(act.split()) or _subject(raw), start=start, end=end,
                          text=raw)
    return Abstain("schedule constraint without a duration, count or time")


def _clock(text: str) -> int | None:
    m = TIME.search(text)
    if not m:
        return None
    v = clock(m.group(1) or "0", m.group(2), m.group(3), m.group(4))
    return v if v is None or v < DAY else v % DAY
