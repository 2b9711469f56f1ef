"""Extract the quantities a constraint needs from a response: meal-plan days, workout sessions.

Only the plan itself is evidence. Lines that state totals, targets or claims ("Total: 2700
calories", "This plan provides 170g of protein per day") are skipped, because the labelling
convention is to recompute every figure from the items, and responses often claim figures
their items do not add up to. Values are Fractions so sums are exact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from toolscore.benchmarks.acs.verify.markdown import (
    Line,
    Unit,
    children,
    parse_number,
    read_lines,
    split_units,
)

NUTRIENTS = ("calories", "protein", "fat", "carbs")
_N = r"(\d+(?:,\d{3})*(?:\.\d+)?)"
_NOT_AMOUNT = r"(?!\s*(?:powder|bars?|shakes?|pancakes?|mix|isolate|cookies?|bites?|balls?|chips?))"
_NUTRIENT_RE = re.compile(
    rf"~?{_N}\s*(?:k?cal(?:orie)?s?|kcals?)\b(?P<cal>)"
    rf"|\b(?:calories|kcal|cal|energy)\s*(?:burned)?\s*[:=]\s*~?{_N}(?P<cal2>)"
    rf"|~?{_N}\s*g(?:rams?)?\s+(?:of\s+)?(?:protein|prot)\b{_NOT_AMOUNT}(?P<pro>)"
    rf"|\bprotein\s*[:=]?\s*~?{_N}\s*g\b(?P<pro2>)"
    rf"|~?{_N}\s*g(?:rams?)?\s+(?:of\s+)?(?:total\s+)?fats?\b(?![-\s]free)(?P<fat>)"
    rf"|\bfats?\s*[:=]?\s*~?{_N}\s*g\b(?P<fat2>)"
    rf"|~?{_N}\s*g(?:rams?)?\s+(?:of\s+)?carb(?:ohydrate)?s?\b(?P<carb>)"
    rf"|\bcarb(?:ohydrate)?s?\s*[:=]?\s*~?{_N}\s*g\b(?P<carb2>)",
    re.I,
)
_GROUPS = {"cal": "calories", "cal2": "calories", "pro": "protein", "pro2": "protein",
           "fat": "fat", "fat2": "fat", "carb": "carbs", "carb2": "carbs"}
_CLAIM = re.compile(r"\b(totals?|provides?|providing|daily|per day|each day|average|target|"
                    r"goals?|meets?|meeting|meal plan|this plan|requirements?|intake|"
                    r"approximately \d[\d,]* calories)\b", re.I)
_MEAL_WORD = (r"(?:(?:early|late|mid|morning|afternoon|evening|night|late-night|pre-workout|"
              r"post-workout|bedtime)[\s-]+)*(?:breakfast|brunch|lunch|dinner|supper|snacks?|"
              r"desserts?|meal\s*#?\d+|meal)")
_MEAL_HEAD = re.compile(rf"^(?:{_MEAL_WORD})\b", re.I)


@dataclass
class Day:
    """One day of a meal plan: its meal headers and the nutrient sums over its items."""

    title: str
    meals: list[str] = field(default_factory=list)
    totals: dict[str, Fraction] = field(default_factory=dict)
    mentions: dict[str, int] = field(default_factory=dict)  # how many item values were summed
    per_meal: list[dict[str, Fraction]] = field(default_factory=list)  # one per meal header


@dataclass
class MealPlan:
    days: list[Day]  # a "Day 1 and 3" unit appears twice


def nutrient_values(text: str) -> dict[str, list[Fraction]]:
    """Every nutrient figure in a piece of text, by nutrient."""
    out: dict[str, list[Fraction]] = {}
    if not any(ch.isdigit() for ch in text):
        return out
    for m in _NUTRIENT_RE.finditer(text):
        # each alternative is (number)(?P<name>): the last group names the nutrient
        kind = _GROUPS[m.lastgroup or ""]
        val = parse_number(m.group((m.lastindex or 1) - 1))
        if val is not None:
            out.setdefault(kind, []).append(val)
    return out


def is_meal_header(ln: Line) -> bool:
    """'**Breakfast**', 'Meal 2: Lunch', 'Snack:' or 'Dinner (7 pm)' — not 'Breakfast burrito'."""
    if ln.cells is not None or not _MEAL_HEAD.match(ln.text):
        return False
    if ln.heading:
        return True
    rest = _MEAL_HEAD.sub("", ln.text, count=1).strip()
    rest = re.sub(r"^\([^)]*\)", "", rest).strip()
    return rest == "" or rest[0] in ":-–—|"


def _table_values(header: list[str], cells: list[str]) -> dict[str, list[Fraction]]:
    out: dict[str, list[Fraction]] = {}
    for h, c in zip(header, cells, strict=False):
        hl = h.lower()
        kind = ("calories" if re.search(r"cal|energy", hl) else "protein" if "protein" in hl
                else "fat" if re.search(r"\bfats?\b", hl) else "carbs" if "carb" in hl else None)
        m = re.search(_N, c)
        if kind and m and (v := parse_number(m.group(1))) is not None:
            out.setdefault(kind, []).append(v)
    return out


def _line_values(lines: list[Line], i: int, header: list[str] | None) -> dict[str, list[Fraction]]:
    ln = lines[i]
    if ln.cells is not None:
        if ln.separator or header is None or ln.cells == header:
            return {}
        if ln.cells and re.match(r"^\s*(daily\s+)?totals?\b", ln.cells[0], re.I):
            return {}
        vals = _table_values(header, ln.cells)
        return vals or nutrient_values(ln.text)
    if _CLAIM.search(ln.text):
        return {}
    vals = nutrient_values(ln.text)
    # A parent line whose nested lines break the same nutrient down is not counted twice.
    kids = children(lines, i)
    if vals and kids:
        kid_vals = nutrient_values(" ".join(k.text for k in kids if not _CLAIM.search(k.text)))
        vals = {k: v for k, v in vals.items() if k not in kid_vals}
    return vals


def _read_day(unit: Unit) -> Day:
    day = Day(unit.title)
    blocks: list[tuple[Line | None, list[int]]] = [(None, [])]
    for i, ln in enumerate(unit.lines):
        if is_meal_header(ln):
            day.meals.append(ln.text)
            blocks.append((ln, [i]))
        else:
            blocks[-1][1].append(i)
    header: list[str] | None = None
    for head, idxs in blocks:
        sums: dict[str, list[Fraction]] = {}
        head_vals: dict[str, list[Fraction]] = {}
        for i in idxs:
            ln = unit.lines[i]
            if ln.cells is not None and not ln.separator and header is None:
                header = ln.cells
                if re.match(r"^\s*(day|date)\b", header[0], re.I):
                    header = []  # a per-day summary table restates totals: not evidence
                _count_table_meals(day, header, unit.lines)
                continue
            if ln.cells is None:
                header = None
            if ln is head:
                # The header's own figures count only when its items carry none.
                inline = _MEAL_HEAD.sub("", ln.text, count=1)
                head_vals = {} if _CLAIM.search(inline) else nutrient_values(inline)
                continue
            for k, v in _line_values(unit.lines, i, header).items():
                sums.setdefault(k, []).extend(v)
        for k, v in head_vals.items():
            sums.setdefault(k, v)
        if head is not None:
            day.per_meal.append({k: sum(v, Fraction(0)) for k, v in sums.items()})
        for k, v in sums.items():
            day.totals[k] = day.totals.get(k, Fraction(0)) + sum(v, Fraction(0))
            day.mentions[k] = day.mentions.get(k, 0) + len(v)
    return day


def _count_table_meals(day: Day, header: list[str], lines: list[Line]) -> None:
    """A table with a 'Meal' column names the day's meals in that column."""
    col = next((j for j, h in enumerate(header) if re.fullmatch(r"meals?|meal type", h, re.I)),
               None)
    if col is None or day.meals:
        return
    seen: list[str] = []
    for ln in lines:
        if ln.cells and not ln.separator and ln.cells != header and len(ln.cells) > col:
            v = ln.cells[col].strip()
            if v and _MEAL_HEAD.match(v) and v not in seen:
                seen.append(v)
    day.meals.extend(seen)


@lru_cache(maxsize=32)
def extract_meal_plan(response: str) -> MealPlan:
    """The days of a meal plan; a response without day headers but with meals is one day."""
    lines = read_lines(response)
    units, outside = split_units(lines)
    units = [u for u in units if u.lines]
    if not units and any(is_meal_header(ln) for ln in outside):
        units = [Unit("Day 1", [1], outside)]
    days: list[Day] = []
    for u in units:
        day = _read_day(u)
        days.extend([day] * u.multiplicity)
    return MealPlan(days)
