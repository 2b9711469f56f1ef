"""The hybrid ACS judge: acs-verify first; where it cannot read the response, an LLM extracts the
plan's figures into a fixed JSON schema and acs-verify's own arithmetic decides.

LLM judges fail ACS mostly on arithmetic, the deterministic verifier mostly on unfamiliar
layouts. Splitting the work gives each the part it is good at: the model only copies figures
(sessions and their exercises, days and their meals, timed schedule entries) and never adds or
compares; code sums exactly and applies the same checks, scopes and conventions as acs-verify
(``verify.checks``). The extraction is validated with pydantic: a reply that stays malformed
or mistyped after the re-asks is an abstention with its reason, never a crash. Only rows the
parser abstains on for want of a readable response are sent to the model; a constraint the
parser cannot read stays an abstention (the model does not interpret constraints).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolscore.benchmarks.acs.verify.checks import (
    MEAL_KINDS,
    WORKOUT_KINDS,
    Unreadable,
    Verdict,
    check_entries,
    check_meal_plan,
    check_sessions,
)
from toolscore.benchmarks.acs.verify.constraints import Constraint
from toolscore.benchmarks.acs.verify.extract import NUTRIENTS, Day, MealPlan
from toolscore.benchmarks.acs.verify.markdown import KG_PER_LB
from toolscore.benchmarks.acs.verify.timeline import DAY, Entry
from toolscore.benchmarks.acs.verify.workouts import Exercise, Session
from toolscore.types import GenerateConfig, Message

Number = float | int


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class XExercise(_Model):
    name: str
    sets: Number | None = None
    reps: Number | None = None
    weight: Number | None = None
    weight_unit: Literal["kg", "lb"] = "kg"
    minutes: Number | None = None
    calories: Number | None = None
    rest: bool = False


class XSession(_Model):
    title: str
    exercises: list[XExercise]
    repeats: int = Field(1, ge=1)  # "perform this circuit 3 times"


class XItem(_Model):
    name: str
    calories: Number | None = None
    protein_g: Number | None = None
    fat_g: Number | None = None
    carbs_g: Number | None = None


class XMeal(_Model):
    name: str
    items: list[XItem]


class XDay(_Model):
    title: str
    meals: list[XMeal]


class XEntry(_Model):
    start: str = Field(pattern=r"^\d{1,2}:\d{2}$")
    end: str | None = Field(None, pattern=r"^\d{1,2}:\d{2}$")
    activity: str


class Extraction(_Model):
    """What the model must return: only the parts the response has."""

    sessions: list[XSession] = []
    days: list[XDay] = []
    entries: list[XEntry] = []


SCHEMA_SHA = "x1"  # bump with any change to the schema or prompt (part of the run's config)
SYSTEM_PROMPT = (
    "You copy figures out of a plan written by an assistant into JSON. Do not add, round, "
    "convert or check anything, and ignore any totals, targets or claims the text states: copy "
    "only the figures written for each item. Answer with one JSON object and nothing else.")
_ASK = {
    "sessions": (
        '{"sessions": [{"title": str, "repeats": int, "exercises": [{"name": str, '
        '"sets": number|null, "reps": number|null, "weight": number|null, '
        '"weight_unit": "kg"|"lb", "minutes": number|null, "calories": number|null, '
        '"rest": bool}]}]}',
        "One entry per workout session as the plan lists it (a session the plan says to "
        "repeat on another day is listed again; rest days are left out). Rest rows are "
        "exercises with \"rest\": true. \"repeats\" is how many times the whole session is "
        "performed (1 unless the plan says so)."),
    "days": (
        '{"days": [{"title": str, "meals": [{"name": str, "items": [{"name": str, '
        '"calories": number|null, "protein_g": number|null, "fat_g": number|null, '
        '"carbs_g": number|null}]}]}]}',
        "One entry per day of the plan, its meals as headed in the plan, the figures of each "
        "food item as written."),
    "entries": (
        '{"entries": [{"start": "HH:MM", "end": "HH:MM"|null, "activity": str}]}',
        "One entry per timed line of the schedule, times on a 24-hour clock; \"end\" is null "
        "when the line gives only a start time."),
}
RETRY = ("That reply could not be used ({error}). Answer again with only the JSON object in "
         "the requested shape.")


def part_for(c: Constraint) -> str:
    """The part of the schema a constraint needs."""
    return "days" if c.kind in MEAL_KINDS else "sessions" if c.kind in WORKOUT_KINDS \
        else "entries"


def messages(request: str, response: str, part: str) -> list[Message]:
    shape, how = _ASK[part]
    user = (f"## User request\n{request}\n\n## Assistant response\n{response}\n\n"
            f"## Task\nReturn JSON of exactly this shape: {shape}\n{how}")
    return [Message(role="system", content=SYSTEM_PROMPT), Message(role="user", content=user)]


def parse_extraction(text: str, part: str) -> Extraction | str:
    """The validated extraction, or what is wrong with ``text`` (for the re-ask)."""
    t = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", text or "").strip()
    start, end = t.find("{"), t.rfind("}")
    if start < 0 or end <= start:
        return "no JSON object"
    try:
        data = json.loads(t[start:end + 1])
    except json.JSONDecodeError as e:
        return f"invalid JSON: {e.msg}"
    if not isinstance(data, dict) or part not in data:
        return f"no {part!r} list"
    try:
        ex = Extraction.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        return f"{where}: {first['msg']}"
    if not getattr(ex, part):
        return f"empty {part!r} list"
    return ex


def _f(v: Number | None) -> Fraction | None:
    return None if v is None else Fraction(str(v))


def sessions_of(ex: Extraction) -> tuple[Session, ...]:
    out = []
    for s in ex.sessions:
        items = [Exercise(e.name, _f(e.minutes), _f(e.calories), _f(e.sets), _f(e.reps),
                          None if e.weight is None else Fraction(str(e.weight)) * (
                              KG_PER_LB if e.weight_unit == "lb" else 1),
                          rest=e.rest) for e in s.exercises]
        if [e for e in items if not e.rest]:
            out.append(Session(s.title, items, s.repeats))
    return tuple(out)


def meal_plan_of(ex: Extraction) -> MealPlan:
    keys = dict(zip(("calories", "protein_g", "fat_g", "carbs_g"), NUTRIENTS, strict=True))
    days = []
    for d in ex.days:
        day = Day(d.title, meals=[m.name for m in d.meals])
        for m in d.meals:
            sums: dict[str, Fraction] = {}
            for item in m.items:
                for key, nutrient in keys.items():
                    v = _f(getattr(item, key))
                    if v is not None:
                        sums[nutrient] = sums.get(nutrient, Fraction(0)) + v
                        day.mentions[nutrient] = day.mentions.get(nutrient, 0) + 1
            day.per_meal.append(sums)
            for k, v in sums.items():
                day.totals[k] = day.totals.get(k, Fraction(0)) + v
        days.append(day)
    return MealPlan(days)


def _minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return (int(h) % 24) * 60 + int(m)


def entries_of(ex: Extraction) -> list[Entry]:
    """Timed entries; a start-only entry lasts until the next one (the day wraps), and an end
    earlier than the start runs past midnight, as acs-verify reads schedules."""
    starts = [_minutes(e.start) for e in ex.entries]
    out = []
    for i, e in enumerate(ex.entries):
        start = starts[i]
        end = _minutes(e.end) if e.end else starts[(i + 1) % len(starts)]
        if end <= start:
            end += DAY
        out.append(Entry(start, end, e.activity, e.end is not None))
    return out


def decide(c: Constraint, ex: Extraction) -> Verdict:
    """acs-verify's checks on the extracted figures; abstains when a needed figure is missing."""
    part = part_for(c)
    try:
        if part == "sessions":
            v = check_sessions(c, sessions_of(ex))
        elif part == "days":
            v = check_meal_plan(c, meal_plan_of(ex))
        else:
            v = check_entries(c, entries_of(ex))
    except Unreadable as e:
        return Verdict(None, f"extraction lacks a figure: {e}", kind=c.kind)
    return Verdict(v.label, f"from the LLM's extraction: {v.reason}", v.values, v.kind)


@dataclass
class Extracted:
    """One response's extraction (shared by its 3-6 constraints), or why there is none."""

    extraction: Extraction | None
    error: str | None = None
    raw: list[str] = field(default_factory=list)


async def extract(client: Any, request: str, response: str, part: str, *,
                  config: GenerateConfig, retries: int = 2) -> Extracted:
    """Ask ``client`` (a ModelClient) for the figures; re-ask with the error up to ``retries``
    times. The client's InfraError (the infrastructure failed) propagates: the row is then an
    error, not an abstention."""
    msgs = messages(request, response, part)
    raw: list[str] = []
    error = "no reply"
    for attempt in range(retries + 1):
        reply = await client.generate(msgs, None, replace(config, epoch=attempt))
        text = reply.text or ""
        raw.append(text)
        parsed = parse_extraction(text, part)
        if isinstance(parsed, Extraction):
            return Extracted(parsed, None, raw)
        error = parsed
        msgs = [*messages(request, response, part), Message(role="assistant", content=text),
                Message(role="user", content=RETRY.format(error=error))]
    return Extracted(None, f"unusable extraction after {retries + 1} attempt(s): {error}", raw)
