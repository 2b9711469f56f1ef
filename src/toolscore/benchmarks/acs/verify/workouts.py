"""Extract workout sessions and their exercises: duration, calories, sets × reps × weight.

Sessions come as tables, bullet lists or name-only lists whose figures live in a separate
"Exercises" table or "Exercise Breakdown" section (the *pool*, looked up by name). Rest rows
count towards a session's minutes but are not exercises; rest days are not sessions; "Repeat
Day 1" is a session with Day 1's exercises; "Perform this routine two times" doubles minutes and
calories but not the number of exercises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache

from toolscore.benchmarks.acs.verify.layouts import (
    is_named_session,
    session_column,
    template_body,
    weekly_frequency,
)
from toolscore.benchmarks.acs.verify.markdown import (
    KG_PER_LB,
    Line,
    Unit,
    children,
    parse_number,
    read_lines,
    split_units,
)

_NUM = r"(\d+(?:\.\d+)?)"
_DURATION = re.compile(
    rf"{_NUM}\s*(?:[-–]\s*{_NUM}\s*)?(hours?|hrs?|minutes?|mins?|seconds?|secs?)\b", re.I)
_CALORIES = re.compile(
    rf"~?{_NUM}\s*(?:k?cal(?:orie)?s?)\b|calories(?:\s+burned)?\s*[:=]?\s*~?{_NUM}", re.I)
_SETS_REPS = re.compile(rf"{_NUM}\s*(?:sets?)?\s*(?:x|×|of)\s*{_NUM}(?:\s*[-–]\s*\d+)?"
                        r"\s*(?:reps?|repetitions)?", re.I)
_KG = re.compile(rf"{_NUM}\s*(?:(kg|kgs|kilos?|kilograms?)|(lbs?|pounds?))\b", re.I)
_EACH = re.compile(r"\b(each|per (?:dumbbell|hand|arm|leg|side))\b|\bdumbbells\b", re.I)
_REST = re.compile(r"^(rest|recovery|break|warm[\s-]?up|cool[\s-]?down)\b"
                   r"(?!\s+(?:for|between|as))", re.I)
_REST_UNIT = re.compile(r"\b(rest|off|recovery)\b", re.I)
_REPEAT = re.compile(r"^(?:repeat|same as)\s+(?:day|session|workout)\s*(\d+)", re.I)
# "Perform this routine two times": the whole session repeats (not "repeat 10 times" in a drill)
_ROUNDS = re.compile(
    r"\b(?:perform|repeat|do|complete)\b[^.!]*?\b(?:this|the|entire|whole|above|all)\b[^.!]*?"
    r"\b(?:routine|circuit|workout|session|sequence|exercises|block)\b[^.!]*?"
    r"\b(twice|two times|three times|four times|(\d+)\s*(?:times|rounds|x)\b)([^.!]*)", re.I)
_INSTRUCTION = re.compile(r"^(perform|repeat|do|complete|focus|aim|make sure|rest for|"
                          r"take|note|remember|start|finish|warm up|cool down with)\b", re.I)
_TOTAL = re.compile(r"^(?:session\s+)?totals?\b", re.I)
_NAMED_FIGURE = re.compile(r"^(?!(?:calories|duration|time|sets|reps|weight|intensity|rest)\b)"
                           r"[A-Za-z][^:\d]{1,50}(?::|\s[-–—]\s|\()\s*~?\d", re.I)
_WORDS = {"twice": 2, "two times": 2, "three times": 3, "four times": 4}


@dataclass
class Exercise:
    """One row of a session; figures the response does not give are None."""

    name: str
    minutes: Fraction | None = None
    calories: Fraction | None = None
    sets: Fraction | None = None
    reps: Fraction | None = None
    weight: Fraction | None = None  # kg; a bodyweight figure when the response states one
    each_side: bool = False  # "30 kg each", "per dumbbell", "8 reps per arm"
    bodyweight: bool = False
    rest: bool = False


@dataclass
class Session:
    title: str
    exercises: list[Exercise] = field(default_factory=list)
    rounds: int = 1

    @property
    def real(self) -> list[Exercise]:
        return [e for e in self.exercises if not e.rest]


def norm_name(name: str) -> str:
    """Lower-case an exercise name without parentheses, numbering, bold or trailing colon."""
    n = re.sub(r"\([^)]*\)", "", name.lower())
    n = re.sub(r"^\s*\d+[.)]\s*", "", n)
    return re.sub(r"[^a-z0-9]+", " ", n).strip()


def _minutes(text: str) -> Fraction | None:
    m = _DURATION.search(text)
    if not m:
        return None
    val = parse_number(m.group(1))
    unit = m.group(3).lower()
    if val is None:
        return None
    if unit.startswith("h"):
        return val * 60
    if unit.startswith("s"):
        return val / 60
    return val


def _calories(text: str) -> Fraction | None:
    m = _CALORIES.search(text)
    return parse_number(m.group(1) or m.group(2)) if m else None


def _strength(ex: Exercise, text: str) -> None:
    m = _SETS_REPS.search(text)
    if m and (re.search(r"sets?|reps?|repetitions", m.group(0), re.I) or "x" in m.group(0)):
        ex.sets, ex.reps = parse_number(m.group(1)), parse_number(m.group(2))
        tail = text[m.end():]
        if re.match(r"\s*(?:reps?|repetitions)?\s*per\s+(?:arm|leg|side)", tail, re.I):
            ex.each_side = True
        w = _KG.search(tail) or _KG.search(text[: m.start()])
        if w:
            ex.weight = _kg(parse_number(w.group(1)), bool(w.group(3)))
            ex.each_side |= bool(_EACH.search(tail[w.start():w.end() + 25]))
        ex.bodyweight = bool(re.search(r"body\s*weight", text, re.I))


def _kg(value: Fraction | None, pounds: bool) -> Fraction | None:
    """A weight in kg, exactly (a plan in lb is weighed as a person converting it would)."""
    return value * KG_PER_LB if value is not None and pounds else value


_LB = re.compile(r"\blbs?\b|pounds?", re.I)


def _from_text(name: str, text: str, extra: str = "") -> Exercise:
    ex = Exercise(name.strip(), rest=bool(_REST.match(name.strip())))
    ex.minutes = _minutes(text) if _minutes(text) is not None else _minutes(extra)
    ex.calories = _calories(text) if _calories(text) is not None else _calories(extra)
    _strength(ex, text)
    return ex


def _from_row(header: list[str], cells: list[str]) -> Exercise:
    ex = Exercise(cells[0] if cells else "")
    ex.rest = bool(_REST.match(ex.name))
    for h, c in zip(header, cells, strict=False):
        hl, cl = h.lower(), c.strip()
        num = re.search(_NUM, cl.replace(",", ""))
        val = parse_number(num.group(1)) if num else None
        if re.search(r"tonnage|volume|total", hl):
            continue  # the response's own products are claims; they are recomputed
        if re.search(r"exercise|activity|name", hl):
            ex.name = cl
        elif re.search(r"\bsets?\b", hl) and re.search(r"reps?|repetitions", hl):
            _strength(ex, cl if re.search(r"sets?|x|×", cl) else f"{cl} sets")
        elif re.search(r"duration|time|min", hl):
            ex.minutes = _minutes(cl) if _minutes(cl) is not None else (
                val * 60 if val is not None and "hour" in hl else val)
        elif re.search(r"cal|burn", hl):
            ex.calories = val
        elif re.search(r"\bsets?\b", hl):
            ex.sets = val
        elif re.search(r"reps?|repetitions", hl):
            timed = re.search(r"sec|min|hold", cl, re.I)
            ex.reps = None if timed else val
            ex.each_side |= bool(re.search(r"per (arm|leg|side)|each", cl, re.I))
        elif re.search(r"weight|load|kg|\blbs?\b|pounds?", hl):
            # the unit is the cell's when it names one, else the column's
            unit = _KG.search(cl)
            pounds = bool(unit.group(3)) if unit else bool(_LB.search(hl))
            ex.weight = _kg(val, pounds)
            ex.bodyweight = bool(re.search(r"body\s*weight", cl, re.I))
            ex.each_side |= bool(_EACH.search(cl))
    ex.rest = bool(_REST.match(ex.name))
    return ex


def _entries(lines: list[Line]) -> list[Exercise]:
    """The exercise rows of one unit (or of the pool outside units)."""
    out: list[Exercise] = []
    header: list[str] | None = None
    for ln in lines:
        if ln.cells is None:
            header = None
            continue
        if ln.separator:
            continue
        if header is None:
            header = ln.cells
            continue
        if ln.cells and not _TOTAL.match(ln.cells[0]):
            out.append(_from_row(header, ln.cells))
    if out:
        return out
    items = [i for i, ln in enumerate(lines) if ln.bullet and ln.cells is None]
    if items:
        top = min(lines[i].indent for i in items)
        for i in items:
            ln = lines[i]
            if ln.indent != top or _INSTRUCTION.match(ln.text) or _TOTAL.match(ln.text):
                continue
            kids = children(lines, i)
            named = [k for k in kids if _NAMED_FIGURE.match(k.text)]
            if not re.search(r"\d", ln.text) and len(named) >= 2:
                # "* Main set:" grouping bullets whose children are the exercises
                out.extend(_from_text(_name(k.text), k.text) for k in named)
                continue
            out.append(_from_text(_name(ln.text), ln.text, " ".join(k.text for k in kids)))
        return out
    for i, ln in enumerate(lines):  # "Name: 20 minutes (150 calories)" lines without bullets
        name, sep, rest = ln.text.partition(":")
        if sep and rest.strip() and len(name.split()) <= 6:
            detail = " ".join(k.text for k in children(lines, i))
            ex = _from_text(name, rest, detail)
            if ex.minutes is not None or ex.calories is not None or ex.sets is not None:
                out.append(ex)
    return out


def _name(text: str) -> str:
    return re.split(r":|\s[-–—]\s|\(", text, maxsplit=1)[0]


def _pool(lines: list[Line]) -> dict[str, Exercise]:
    """Exercises described outside the sessions, by normalised name, for name-only sessions."""
    pool: dict[str, Exercise] = {}
    entries = _entries(lines)
    for _i, ln in enumerate(lines):
        name, sep, rest = ln.text.partition(":")
        if ln.cells is None and sep and rest.strip() and len(name.split()) <= 6:
            entries.append(_from_text(name, rest))
    for ex in entries:
        key = norm_name(ex.name)
        if key and key not in pool and (ex.minutes is not None or ex.calories is not None):
            pool[key] = ex
    return pool


def _rounds(lines: list[Line]) -> int:
    for ln in lines:
        m = _ROUNDS.search(ln.text)
        if m and not re.search(r"\b(week|day)\b", m.group(0), re.I):
            word = m.group(1).lower()
            n = _WORDS.get(word) or int(m.group(2))
            return n + 1 if re.match(r"\s*more\b", m.group(3) or "") else n
    return 1


@lru_cache(maxsize=32)
def extract_sessions(response: str) -> tuple[Session, ...]:
    """The sessions of a workout plan, repeated as often as their headers say. Numbered
    sections first ("Session 2", "Workout B"); without them, named workouts ("Leg Day"), a
    table with a session column, or one listed workout done "N sessions per week"."""
    lines = read_lines(response)
    units, outside = split_units(lines)
    if not units:
        first = lines[0] if lines else None
        units, outside = split_units(lines, lambda ln: is_named_session(ln, ln is first))
    pool = _pool(outside)
    by_number: dict[int, Session] = {}
    result: list[Session] = []
    for unit in units:
        session = _read_unit(unit, pool, by_number)
        if session is None:
            continue
        for n in unit.numbers:
            by_number.setdefault(n, session)
        result.extend([session] * unit.multiplicity)
    if result or any(not u.named for u in units):
        return tuple(result)
    return _headerless(lines)


def _headerless(lines: list[Line]) -> tuple[Session, ...]:
    """A plan without session headers: a table with a session column, else one workout done
    as many times a week as the response says (once when it does not say)."""
    table = session_column(lines)
    if table is not None:
        col, header, rows = table
        head = header[:col] + header[col + 1:]
        groups: dict[str, list[Exercise]] = {}
        for key, cells in rows:
            ex = _from_row(head, cells[:col] + cells[col + 1:])
            groups.setdefault(key, []).append(ex)
        return tuple(Session(k, ex) for k, ex in groups.items()
                     if [e for e in ex if not e.rest]
                     and not _REST_UNIT.fullmatch(k.split(":")[-1].strip() or "-"))
    body = template_body(lines)
    exercises = [e for e in _entries(body) if not _TOTAL.match(e.name)]
    if not [e for e in exercises if not e.rest]:
        return ()
    n = weekly_frequency(lines) or 1
    return (Session("the workout", exercises, _rounds(body)),) * n


def _read_unit(unit: Unit, pool: dict[str, Exercise],
               by_number: dict[int, Session]) -> Session | None:
    exercises = _entries(unit.lines)
    body = [ln.text for ln in unit.lines if ln.bullet or ln.heading]
    ref = next((m for t in [unit.title.split(":", 1)[-1].strip(), *body]
                if (m := _REPEAT.match(t))), None)
    others = [e for e in exercises if not _REPEAT.match(e.name) and not e.rest]
    if ref and int(ref.group(1)) in by_number and not others:
        # "Day 6: Repeat Day 1" is a session with Day 1's exercises
        return replace(by_number[int(ref.group(1))], title=unit.title)
    head_tail = unit.title.split(":", 1)[1] if ":" in unit.title else unit.title
    if unit.named and (_REST_UNIT.search(unit.title) or not [e for e in exercises
                                                              if not e.rest]):
        return None  # a named section without exercises is not a session
    if not [e for e in exercises if not e.rest] and (
            _REST_UNIT.search(head_tail) or exercises or not unit.lines):
        return None  # a rest day
    for i, ex in enumerate(exercises):
        found = pool.get(norm_name(ex.name))
        if found and (ex.minutes is None or ex.calories is None):
            exercises[i] = replace(ex, minutes=ex.minutes if ex.minutes is not None
                                   else found.minutes,
                                   calories=ex.calories if ex.calories is not None
                                   else found.calories)
    return Session(unit.title, exercises, _rounds(unit.lines))
