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

from toolscore.benchmarks.acs.verify.timeline import (
    DAY,
    DURATION,
    TIME,
    clock,
    duration_minutes,
)

_NUM = r"(\d+(?:,\d{3})*(?:\.\d+)?)"
_GE = (r"at least|a minimum of|\bminimum\b|\bminimal\b|\bmin\b|no less than|not less than|"
       r"no fewer than|not fewer than|greater than or equal|more than or equal|"
       r"equal to or (?:greater|more) than|or more\b|or greater|or above|and above|>=|≥|"
       r"upwards of")
_LE = (r"at most|no more than|not more than|\bmaximum\b|\bmax\b|up to \d|less than or equal|"
       r"equal to or less|not exceed|not to exceed|not exceeding|no greater than|"
       r"not greater than|or less\b|or fewer|or below|and below|limited to|within \d|<=|≤|"
       r"no longer than|not longer than|not go (?:over|above)|capped at")
_LT = r"less than|fewer than|\bbelow \d|\bunder \d|shorter than|lower than|<"
_GT = (r"more than|greater than|\babove \d|\bover \d|\bexceeds?\b|exceeding|longer than|"
       r"higher than|>")
_PARTS = ("morning", "afternoon", "evening", "night")


@dataclass(frozen=True)
class Comparison:
    """``x op value`` (or ``value <= x <= high`` for 'between'), exact on Fractions."""

    op: str  # "==", ">=", "<=", ">", "<", "between"
    value: Fraction
    high: Fraction | None = None

    def holds(self, x: Fraction | int) -> bool:
        x = Fraction(x)
        if self.op == "between":
            return self.value <= x <= (self.high if self.high is not None else self.value)
        return {"==": x == self.value, ">=": x >= self.value, "<=": x <= self.value,
                ">": x > self.value, "<": x < self.value}[self.op]

    def __str__(self) -> str:
        if self.op == "between":
            return f"between {_fmt(self.value)} and {_fmt(self.high or self.value)}"
        return f"{self.op} {_fmt(self.value)}"


def _fmt(v: Fraction) -> str:
    return str(v.numerator) if v.denominator == 1 else f"{float(v):g}"


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


def comparison_op(text: str) -> str:
    """The comparison a sentence asks for; equality when it names none ('must be 2000')."""
    t = text.lower()
    for op, pat in ((">=", _GE), ("<=", _LE), ("<", _LT), (">", _GT)):
        if re.search(pat, t):
            return op
    return "=="


def _cmp(text: str, value: Fraction, scale: Fraction | int = 1) -> Comparison:
    """The comparison with ``value``; a range ('between 30 and 45', 'at least 30 and at most
    45') is read from the text and multiplied by ``scale`` (60 when it is in hours)."""
    m = (re.search(rf"between\s+{_NUM}\s*[a-z-]*\s+and\s+{_NUM}", text, re.I)
         or re.search(rf"(?:{_GE})\s*{_NUM}[^.;]*?\band\b[^.;]*?(?:{_LE})\s*{_NUM}", text, re.I))
    if m:
        lo, hi = (Fraction(g.replace(",", "")) * scale for g in m.groups()[-2:])
        return Comparison("between", min(lo, hi), max(lo, hi))
    return Comparison(comparison_op(text), value)


def _strip_parens(text: str) -> str:
    return re.sub(r"\([^)]*\)", " ", text)


def _number_near(text: str, unit: str) -> Fraction | None:
    """The number written next to ``unit`` ('4 days', '2 meals', '2700 calories', '170g')."""
    m = re.search(rf"{_NUM}\s*-?\s*(?:{unit})", text, re.I)
    if m:
        return Fraction(m.group(1).replace(",", ""))
    return None


def _last_number(text: str) -> Fraction | None:
    nums = re.findall(_NUM, text)
    return Fraction(nums[-1].replace(",", "")) if nums else None


def parse_constraint(text: str, request: str = "", domain: str = "") -> Constraint | Abstain:
    """Read one constraint sentence; ``domain`` (the csv column) narrows the kinds tried."""
    raw = " ".join(text.split())
    t = _strip_parens(raw).lower()
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
        value = (_number_near(t, r"k?cal|g\b|grams?") if nutrient != "calories"
                 else _number_near(t, r"k?cal")) or _last_number(t)
        if value is None:
            return Abstain(f"no target value for {nutrient}")
        # "(2500 calories per day for 2 days)" marks a whole-plan total; otherwise meal-plan
        # targets are per day, however the sentence words them (the labels read them so).
        total = bool(re.search(r"per day (?:for|over|x|×) \d+ days|\bx\s*\d+\s*days|"
                               r"across all days|entire (?:meal )?plan|whole (?:meal )?plan|"
                               r"over (?:the )?\d+ days", raw, re.I))
        scope = ("meal" if re.search(r"\b(?:each|every|per) meal\b", t)
                 else "total" if total else "each")
        return Constraint("nutrient", _cmp(t, value), scope, nutrient, text=raw)
    what = re.search(r"\b(meals?|snacks?)\b(?![\s-]*plan)", t)
    if what:
        value = _number_near(t, r"(?:\w+\s)?(?:meals?|snacks?)") or _count_value(t)
        if value is None:
            return Abstain("no number of meals")
        per_day = re.search(r"per day|each day|every day|a day\b|daily|/day|per each day", t)
        # Snacks are meals ("4 meals: breakfast, lunch, dinner, snack") unless the user asked
        # for snacks separately ("3 meals and 2 snacks a day").
        target = ("snack" if what.group(1).startswith("snack")
                  else "meal-not-snack" if re.search(r"snack", request + " " + t, re.I) else "")
        return Constraint("meals_per_day" if per_day else "meals_total", _cmp(t, value),
                          target=target, text=raw)
    value = _number_near(t, r"(?:-|\s)?days?\b")
    if value is None and re.search(r"number of days|days in the", t):
        value = _count_value(t)
    if value is not None:
        return Constraint("days", _cmp(t, value), text=raw)
    return Abstain("meal-plan constraint of an unknown kind")


def _count_value(t: str) -> Fraction | None:
    """'number of days = 2', 'must be equal to 4', 'is 4' -> the number."""
    m = re.search(rf"(?:=|:|equal(?:s)?(?: to)?|\bis|\bbe|\bof|\bhave|\binclude|\bcontain)\s*"
                  rf"(?:exactly\s+|a total of\s+)?{_NUM}\b", t)
    return Fraction(m.group(1).replace(",", "")) if m else None


def _plan_scope(t: str) -> str:
    """'each' session unless the sentence sums over the plan ('in total', 'per week') or is
    about single exercises ('each exercise must last at least 5 minutes')."""
    if re.search(r"\b(?:each|every|per|any|all) exercises?\b", t):
        return "exercise"
    if re.search(r"\b(?:per|each|every|a|single) (?:session|workout|day|class)\b|"
                 r"\bin each\b|\beach (?:workout )?session", t):
        return "each"
    if re.search(r"\btotal\b|per week|weekly|a week|whole plan|entire plan|all sessions|"
                 r"combined|across", t):
        return "total"
    return "each"


def _workout(raw: str, t: str) -> Constraint | Abstain:
    if re.search(r"tonnage|weight lifted|lifting weight|total lift|\blift|\bkg\b|kilogram|volume",
                 t):
        value = _number_near(t, r"kg|kilograms?") or _last_number(t)
        if value is None:
            return Abstain("no tonnage value")
        return Constraint("tonnage", _cmp(t, value), _plan_scope(t), text=raw)
    if re.search(r"\bburn|calori|kcal", t):
        value = _number_near(t, r"k?cal") or _last_number(t)
        if value is None:
            return Abstain("no calorie value")
        return Constraint("session_calories", _cmp(t, value), _plan_scope(t), text=raw)
    if re.search(r"\blast|\blong\b|duration|\bminutes?\b|\bmins?\b|\bhours?\b", t):
        value = duration_minutes(t)
        if value is None:
            return Abstain("no session duration")
        hours = re.search(r"\bhours?\b|\bhrs?\b", t) and not re.search(r"minutes?|mins?", t)
        return Constraint("session_minutes", _cmp(t, value, 60 if hours else 1), _plan_scope(t),
                          text=raw)
    if re.search(r"exercises?", t):
        value = _number_near(t, r"(?:different |distinct |unique )?exercises?") or _count_value(t)
        if value is None:
            return Abstain("no number of exercises")
        per = re.search(r"per session|each session|per workout|each workout|per day|each day|"
                        r"in each|every session|session must include", t)
        total = re.search(r"\btotal\b|in total|different|distinct|unique|overall", t)
        kind = "exercises_total" if total and not per else "exercises"
        return Constraint(kind, _cmp(t, value), text=raw)
    if re.search(r"\brest\b|\boff\b", t):
        return Abstain("rest-day constraints are not supported")
    if re.search(r"sessions?|workouts?\b(?! (?:plan|routine|program))|training days|"
                 r"days (?:per|a) week|times (?:per|a) week|\d+ days", t):
        value = (_number_near(t, r"(?:\w+\s)?(?:sessions?|workouts?|days|times)")
                 or _count_value(t))
        if value is None:
            return Abstain("no number of sessions")
        return Constraint("sessions", _cmp(t, value), text=raw)
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
    cmp = _cmp(body, minutes, 60 if hours else 1)
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
        return Constraint("activity_count", _cmp(lower, Fraction(m.group(1))), "total",
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
