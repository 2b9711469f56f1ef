"""Rewrites of ACS dev workout responses into formats the dev set does not use: the unseen-format
proxy for acs-verify.

acs-verify's rules were written while reading acs_dev.csv, so 100% there says little about
requests it has never seen, and leaving requests out cannot measure rules written by reading
every request. What can be measured is whether the verifier reads the *same plan* written
differently. Each workout response is parsed (by acs-verify itself, whose readings agree with
every dev label) into sessions, and the sessions are rendered again, by code, in a format
people and models also write: named workouts, one table with a session column, bullet lists,
one template with "N sessions per week", weights in lb, rest days and rest rows.

The label of a rewritten row: the human label when the rewrite keeps every quantity the
constraint checks (the same figures, computed from the rendered sessions, not from the text);
otherwise the label is *derived*, by the constraint's comparison on the rendered quantities
(lb converted at 1 lb = 0.45359237 kg; rest rows counting towards a session's minutes, as the
dev labels count them). Derived rows are counted per format. Rows whose response yields no
sessions are left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction

from toolscore.benchmarks.acs.data import AcsRow
from toolscore.benchmarks.acs.verify.checks import WORKOUT_KINDS, Unreadable, check_sessions
from toolscore.benchmarks.acs.verify.constraints import Abstain, parse_constraint
from toolscore.benchmarks.acs.verify.workouts import Exercise, Session, extract_sessions

LB = Fraction(45359237, 100_000_000)  # kg per lb, the international definition
_NAMES = ("Upper Body Day", "Lower Body Day", "Push Day", "Pull Day", "Leg Day", "Core Day",
          "Full Body Day", "Conditioning Day")


def _n(v: Fraction | None) -> str:
    if v is None:
        return "-"
    if v.denominator == 1:
        return str(v.numerator)
    return f"{float(v):.2f}".rstrip("0").rstrip(".")


def _lb(kg: Fraction) -> Fraction:
    """kg -> lb, rounded to 0.1 lb as a person converting would write it."""
    return Fraction(round(kg / LB * 10), 10)


@dataclass
class Style:
    """How one rendering writes its figures."""

    unit: str = "kg"  # "kg" | "lb"

    def weight(self, w: Fraction | None) -> Fraction | None:
        return None if w is None else (_lb(w) if self.unit == "lb" else w)


def _minutes(m: Fraction) -> str:
    if m.denominator != 1 and (m * 60).denominator == 1:
        return f"{_n(m * 60)} seconds"
    return f"{_n(m)} minutes"


def _cols(sessions: list[Session]) -> list[str]:
    ex = [e for s in sessions for e in s.exercises]
    cols = []
    if any(e.sets is not None for e in ex):
        cols += ["sets", "reps", "weight"]
    if any(e.minutes is not None for e in ex):
        cols.append("minutes")
    if any(e.calories is not None for e in ex):
        cols.append("calories")
    return cols


def _head(col: str, st: Style) -> str:
    return {"sets": "Sets", "reps": "Reps", "weight": f"Weight ({st.unit})",
            "minutes": "Duration (min)", "calories": "Calories Burned"}[col]


def _cell(e: Exercise, col: str, st: Style) -> str:
    if col == "weight":
        if e.weight is None:
            return "bodyweight" if e.bodyweight else "-"
        return _n(st.weight(e.weight)) + (" each" if e.each_side else "")
    return _n(getattr(e, col))


def _table(exercises: list[Exercise], cols: list[str], st: Style, lead: list[str] = (),
           lead_cells: list[str] = ()) -> list[str]:
    head = [*lead, "Exercise", *(_head(c, st) for c in cols)]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for e in exercises:
        out.append("| " + " | ".join([*lead_cells, e.name, *(_cell(e, c, st) for c in cols)])
                   + " |")
    return out


def _heading(text: str, k: int) -> str:
    """Three ways people head a section: '### X', '**X**', 'X:'."""
    return (f"### {text}", f"**{text}**", f"{text}:")[k % 3]


def _bullet(e: Exercise, st: Style, k: int = 0) -> str:
    parts = []
    unit = st.unit if st.unit == "kg" else ("lb", "lbs", "pounds")[k % 3]
    if e.sets is not None and e.reps is not None:
        w = st.weight(e.weight)
        if k % 2:
            at = f" @ {_n(w)}{unit if unit == 'kg' else ' ' + unit}" if w is not None else ""
            parts.append(f"{_n(e.sets)}x{_n(e.reps)}{at}")
        else:
            at = f" with {_n(w)} {unit}" if w is not None else (
                " (bodyweight)" if e.bodyweight else "")
            parts.append(f"{_n(e.sets)} sets of {_n(e.reps)} reps{at}")
    elif e.sets is not None:
        parts.append(f"{_n(e.sets)} sets")
    if e.minutes is not None:
        parts.append(_minutes(e.minutes))
    if e.calories is not None:
        parts.append(f"burns about {_n(e.calories)} calories")
    mark = ("-", "*", "1.")[k % 3]
    return f"{mark} {e.name} — " + ", ".join(parts) if parts else f"{mark} {e.name}"


def _rounds(s: Session) -> list[str]:
    return [f"Complete this circuit {s.rounds} times."] if s.rounds > 1 else []


def named_tables(sessions: tuple[Session, ...], letters: bool = True) -> str:
    st, cols = Style(), _cols(list(sessions))
    out = ["Here is your plan, organised as named workouts.", ""]
    k = _key(sessions)
    for i, s in enumerate(sessions):
        name = f"Workout {chr(65 + i)}" if letters else _NAMES[i % len(_NAMES)]
        if k % 2:
            name += (" - Upper Body", " (Lower Body)", ": Full Body")[i % 3]
        out += [_heading(name, k), "", *_table(s.exercises, cols, st), *_rounds(s), ""]
    out += ["Alternate the workouts through the week and rest between them."]
    return "\n".join(out)


def session_column(sessions: tuple[Session, ...]) -> str:
    st, cols = Style(), _cols(list(sessions))
    if any(s.rounds > 1 for s in sessions):
        raise ValueError("rounds cannot be written in a single table")
    head = ["Session", "Exercise", *(_head(c, st) for c in cols)]
    out = ["Weekly plan:", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for i, s in enumerate(sessions):
        for e in s.exercises:
            out.append("| " + " | ".join([str(i + 1), e.name, *(_cell(e, c, st) for c in cols)])
                       + " |")
    return "\n".join(out)


def _key(sessions: tuple[Session, ...]) -> int:
    """A deterministic variation index: the same response always gets the same style."""
    return len(sessions) + sum(len(s.exercises) for s in sessions)


def bullets(sessions: tuple[Session, ...]) -> str:
    st, k = Style(), _key(sessions)
    out = []
    for i, s in enumerate(sessions):
        out += [_heading(f"Session {i + 1}", k), *(_bullet(e, st, k) for e in s.exercises),
                *_rounds(s), ""]
    return "\n".join(out)


def template(sessions: tuple[Session, ...]) -> str:
    st, first, k = Style(), sessions[0], _key(sessions)
    n = len(sessions)
    freq = (f"**Frequency:** {n} sessions per week", f"Train {n}x per week.",
            f"Do this workout {n} times a week:")[k % 3]
    body = (_table(first.exercises, _cols([first]), st) if k % 2 == 0
            else [_bullet(e, st, k) for e in first.exercises])
    return "\n".join([freq, "", *body, *_rounds(first), "", "**Notes:**",
                      "- Rest 60-90 seconds between sets.", "- Warm up for 5 minutes first."])


def _weighted(sessions: tuple[Session, ...]) -> None:
    if not any(e.weight is not None for s in sessions for e in s.exercises):
        raise ValueError("no weights to write in lb")


def pounds(sessions: tuple[Session, ...]) -> str:
    _weighted(sessions)
    st, cols = Style("lb"), _cols(list(sessions))
    out = []
    for i, s in enumerate(sessions):
        out += [f"**Session {i + 1}:**", "", *_table(s.exercises, cols, st), *_rounds(s), ""]
    return "\n".join(out)


def pound_bullets(sessions: tuple[Session, ...]) -> str:
    _weighted(sessions)
    st, k = Style("lb"), _key(sessions)
    out = []
    for i, s in enumerate(sessions):
        out += [_heading(f"Day {i + 1}", k), *(_bullet(e, st, k + i) for e in s.exercises),
                *_rounds(s), ""]
    return "\n".join(out)


REST_ROW = Exercise("Rest", minutes=Fraction(2), rest=True)


def rest(sessions: tuple[Session, ...]) -> str:
    """Sessions as 'Day N' with a rest day after each and a rest row after the second exercise."""
    st, cols = Style(), _cols(list(sessions))
    out, day = [], 1
    for s in _with_rest(sessions):
        out += [f"**Day {day}:**", "", *_table(s.exercises, cols, st), *_rounds(s), "",
                f"**Day {day + 1}: Rest day**", "", "Light stretching or a walk.", ""]
        day += 2
    return "\n".join(out)


def _with_rest(sessions: tuple[Session, ...]) -> tuple[Session, ...]:
    out = []
    for s in sessions:
        ex = list(s.exercises)
        if "minutes" in _cols([s]):
            ex.insert(min(2, len(ex)), REST_ROW)
        out.append(replace(s, exercises=ex))
    return tuple(out)


def _lb_sessions(sessions: tuple[Session, ...]) -> tuple[Session, ...]:
    """The sessions a reader gets back from the lb text: each weight converted to lb (rounded
    to 0.1 lb) and back to kg exactly."""
    return tuple(replace(s, exercises=[replace(e, weight=None if e.weight is None
                                               else _lb(e.weight) * LB)
                                       for e in s.exercises]) for s in sessions)


@dataclass(frozen=True)
class Format:
    render: Callable[[tuple[Session, ...]], str]
    # the sessions the rendered text describes (for the labels); identity by default
    meaning: Callable[[tuple[Session, ...]], tuple[Session, ...]] = lambda s: s


FORMATS: dict[str, Format] = {
    "named workouts (Workout A/B), tables": Format(named_tables),
    "named days (Upper Body Day...), tables": Format(lambda s: named_tables(s, letters=False)),
    "one table with a session column": Format(session_column),
    "bullet lists per session": Format(bullets),
    "template + 'N sessions per week'": Format(template, lambda s: (s[0],) * len(s)),
    "weights in lb, tables": Format(pounds, _lb_sessions),
    "weights in lb, bullets under 'Day N'": Format(pound_bullets, _lb_sessions),
    "rest days and rest rows": Format(rest, _with_rest),
}


@dataclass
class Rewritten:
    row: AcsRow  # the rewritten row, with its (kept or derived) label
    derived: bool


def _values(row: AcsRow, sessions: tuple[Session, ...]) -> tuple[bool | None, object]:
    parsed = parse_constraint(row.constraint, row.request, row.domain)
    if isinstance(parsed, Abstain) or parsed.kind not in WORKOUT_KINDS:
        return None, None
    try:
        v = check_sessions(parsed, sessions)
    except Unreadable:
        return None, None
    return v.label, v.values.get("values")


def rewrite(rows: list[AcsRow], fmt: Format) -> tuple[list[Rewritten], int]:
    """The workout rows rewritten in ``fmt``, and how many rows were left out."""
    out, skipped = [], 0
    for r in rows:
        if not r.domain.startswith("workout"):
            continue
        sessions = extract_sessions(r.response)
        if not sessions:
            skipped += 1
            continue
        try:
            text = fmt.render(sessions)
        except ValueError:
            skipped += 1
            continue
        _, before = _values(r, sessions)
        label, after = _values(r, fmt.meaning(sessions))
        derived = label is not None and before != after
        new = replace(r, response=text, label=label if derived else r.label)
        out.append(Rewritten(new, derived))
    return out, skipped
