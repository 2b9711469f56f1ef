"""A small reader for the markdown that assistants write: lines, headings, bullets, tables, units.

Responses are LLM-written markdown with no fixed schema: "**Day 1**" headings or "* **Day 1**"
bullets, tables or bullet lists, "Day 1 and 3" for a shared day, "Day 6-7: Rest". Reading them
line by line into a flat list of typed ``Line``s, then cutting that list into *units* (days or
sessions), keeps every extractor independent of the surface format it happens to face.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

_BULLET = re.compile(r"^(\s*)(?:([*+\-•])|(\d{1,2})[.)])\s+")
_BOLD = re.compile(r"\*\*|__")
_NUM_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
              "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a": 1, "an": 1}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_UNIT = re.compile(
    r"^(?:(?:training|workout|cardio|strength)\s+)?(day|session|workout)s?\s*#?\s*"
    r"(\d+|(?-i:[A-H])(?![\w'’]))"
    r"((?:\s*(?:-|–|—|&|,|and|to|\+)\s*(?:day\s*|session\s*|workout\s*)?"
    r"(?:\d+|(?-i:[A-H])(?![\w'’])))*)(?![\w'’])", re.I)
KG_PER_LB = Fraction(45359237, 100_000_000)  # the international pound, exactly
_WEEKDAY_UNIT = re.compile(r"^({})\b".format("|".join(WEEKDAYS)), re.I)
# Headings that close a day or session: what follows them is commentary, not plan content.
_DOC_HEADING = re.compile(
    r"^(notes?|tips?|summary|totals?|disclaimer|instructions?|important|remember|guidelines?|"
    r"general|key|additional|shopping|grocery|exercise breakdown|breakdown|explanation|"
    r"modifications?|progression|safety|hydration|nutrition|calorie burn|important notes?|"
    r"weekly|overview|goal|benefits?|conclusion)\b", re.I)


@dataclass
class Line:
    """One non-empty line with its markup decoded."""

    no: int
    indent: int
    text: str  # markers (bullet, bold, '#') removed, whitespace trimmed
    bullet: bool = False
    heading: bool = False  # '#' heading or a line that is entirely bold
    cells: list[str] | None = None  # table row cells
    separator: bool = False  # table '|---|' row


@dataclass
class Unit:
    """A day of a meal plan or a session of a workout, with the lines under its header."""

    title: str
    numbers: list[int]  # the day/session numbers the header names ("Day 1 and 3" -> [1, 3])
    lines: list[Line] = field(default_factory=list)
    named: bool = False  # a named header ("Upper Body Day"): a unit only if it has content

    @property
    def multiplicity(self) -> int:
        return max(1, len(self.numbers))


def parse_number(tok: str) -> Fraction | None:
    """'2', '2.5', '1,200', '1/2', 'two', 'half' -> Fraction; None when it is not a number."""
    t = tok.strip().lower().replace(",", "")
    if t.isdigit():
        return Fraction(int(t))
    if t in _NUM_WORDS:
        return Fraction(_NUM_WORDS[t])
    if t == "half":
        return Fraction(1, 2)
    try:
        if "/" in t:
            a, b = t.split("/", 1)
            return Fraction(int(a), int(b))
        return Fraction(t)
    except (ValueError, ZeroDivisionError):
        return None


def read_lines(text: str) -> list[Line]:
    """Decode every non-empty line of a markdown response."""
    out: list[Line] = []
    for no, raw in enumerate(text.replace("\r\n", "\n").split("\n")):
        if not raw.strip():
            continue
        expanded = raw.replace("\t", "    ")
        indent = len(expanded) - len(expanded.lstrip(" "))
        s = expanded.strip()
        if s.startswith("|") or (s.count("|") >= 2 and not _BULLET.match(s)):
            cells = [c.strip() for c in s.strip("|").split("|")]
            sep = all(re.fullmatch(r":?-{2,}:?|", c) for c in cells) and any(cells)
            out.append(Line(no, indent, " | ".join(_unbold(c) for c in cells),
                            cells=[_unbold(c) for c in cells], separator=sep))
            continue
        heading = False
        if s.startswith("#"):
            s, heading = s.lstrip("#").strip(), True
        m = _BULLET.match(s)
        bullet = bool(m)
        if m:
            s = s[m.end():]
        if re.fullmatch(r"(\*\*|__)[^*_].*?(\*\*|__):?", s) and s.count("**") <= 2:
            heading = True
        elif not bullet and s.endswith(":") and len(s.split()) <= 6:
            heading = True  # a plain "Notes:" line heads a section like a bold one
        text_ = _unbold(s)
        if not text_:
            continue
        out.append(Line(no, indent, text_, bullet=bullet, heading=heading))
    return out


def _unbold(s: str) -> str:
    if "*" not in s and "_" not in s:
        return s.strip()
    s = _BOLD.sub("", s)
    s = re.sub(r"(?<![\w*])\*(?!\s)([^*]+?)\*(?!\w)", r"\1", s)  # *italic*
    return s.strip()


def unit_numbers(text: str) -> list[int] | None:
    """The day/session numbers a unit header names, or None if the text is not a unit header."""
    t = text.strip().rstrip(":").strip()
    m = _UNIT.match(t)
    if m:
        first = _ordinal(m.group(2))
        rest = [_ordinal(x) for x in re.findall(r"\d+|\b[A-H]\b", m.group(3) or "")]
        if re.search(r"[-–—]|\bto\b", m.group(3) or "") and len(rest) == 1 and rest[0] > first:
            return list(range(first, rest[0] + 1))
        return [first, *rest]
    m = _WEEKDAY_UNIT.match(t)
    if m:
        names = re.findall(r"\b({})\b".format("|".join(WEEKDAYS)), t.split(":")[0], re.I)
        return [WEEKDAYS.index(n.lower()) + 1 for n in names] or [0]
    return None


def _ordinal(tok: str) -> int:
    """'3' -> 3; a lettered unit ('Workout B') -> its place in the alphabet (2)."""
    return int(tok) if tok.isdigit() else ord(tok.upper()) - 64


def is_unit_header(line: Line) -> bool:
    """A header line ('**Day 1:**', '### Session 2', '* **Day 3: Rest**', 'Day 4:')."""
    if line.cells is not None or unit_numbers(line.text) is None:
        return False
    if line.heading:
        return True
    # A short 'Day 1:' / 'Session 2 - Legs' line also counts, but not 'Day 1: oats (300 cal)'.
    head, _, tail = line.text.partition(":")
    return len(line.text.split()) <= 8 and not re.search(r"\d", tail) and len(head) < 60


def split_units(lines: list[Line], named: Callable[[Line], bool] | None = None
                ) -> tuple[list[Unit], list[Line]]:
    """Cut the lines into units (days/sessions); return them and the lines outside any unit.
    ``named`` also accepts headers without a number ("Upper Body Day"), marked ``named``."""
    units: list[Unit] = []
    outside: list[Line] = []
    current: Unit | None = None
    for ln in lines:
        if is_unit_header(ln):
            nums = unit_numbers(ln.text) or []
            current = Unit(ln.text.rstrip(":"), nums)
            units.append(current)
            continue
        if named is not None and named(ln):
            current = Unit(ln.text.rstrip(":"), [], named=True)
            units.append(current)
            continue
        if current is not None and ln.heading and _DOC_HEADING.match(ln.text):
            current = None
        if current is None:
            outside.append(ln)
        else:
            current.lines.append(ln)
    return units, outside


def children(lines: list[Line], i: int) -> list[Line]:
    """The lines nested under ``lines[i]`` (deeper-indented bullets that follow it)."""
    base = lines[i].indent
    out: list[Line] = []
    for ln in lines[i + 1:]:
        if ln.cells is not None or ln.heading or ln.indent <= base:
            break
        out.append(ln)
    return out
