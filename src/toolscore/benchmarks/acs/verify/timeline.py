"""Read a daily schedule into timed entries and measure how long an activity gets.

Schedules list entries as ranges ("9:00 AM - 5:00 PM Work") or as start times only ("9:00 AM:
Work"); a start-only entry lasts until the next later entry, and the day wraps (the last entry,
usually sleep, runs to the first one). An entry nested inside a longer one (a lunch inside a
work block, or "(includes 1-hour lunch break from 12 - 1 PM)") is cut out of the longer one,
which is how the labels count "8 hours of work". Summary lists ("Breakfast: 6:30 AM") are not
entries: an entry starts with its time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from toolscore.benchmarks.acs.verify.markdown import Line, read_lines

DAY = 24 * 60
_T = r"(\d{1,2})(?::(\d{2}))?\s*([ap]\.?\s?m\.?)?"
TIME = re.compile(rf"\b{_T}(?![\d:])|\b(noon|midnight)\b", re.I)
_LEAD = re.compile(rf"^~?\s*(?:{_T}|(noon|midnight))\s*"
                   rf"(?:(?:-|–|—|to|until)\s*(?:{_T}|(noon|midnight)))?", re.I)
DURATION = r"\b(\d+(?:\.\d+)?|an?|one|two|three|half an?)[\s-]*(hours?|hrs?|minutes?|mins?)\b"
_DUR = re.compile(DURATION, re.I)


@dataclass(frozen=True)
class Entry:
    start: int  # minutes after midnight
    end: int | None  # exclusive; may exceed DAY when the entry runs past midnight
    label: str
    explicit: bool  # the response gave the end time

    @property
    def minutes(self) -> int:
        return 0 if self.end is None else self.end - self.start


def clock(h: str, m: str | None, ampm: str | None, word: str | None = None) -> int | None:
    """'5', '30', 'pm' -> 17:30 in minutes; '15:00 PM' is read as 15:00; 'noon' is 12:00."""
    if word:
        return 12 * 60 if word.lower() == "noon" else 0
    hour, minute = int(h), int(m or 0)
    if hour > 24 or minute > 59:
        return None
    if ampm and hour <= 12:
        pm = ampm.lower().startswith("p")
        hour = (hour % 12) + (12 if pm else 0)
    return (hour % 24) * 60 + minute


Raw = tuple[int, int | None, str, bool]  # start, end, label, half of day unknown


def _lead(text: str) -> Raw | None:
    """(start, end, rest of line, am/pm unknown) when a line starts with a time or a range."""
    m = _LEAD.match(text)
    if not m:
        return None
    g = m.groups()
    h1, m1, ap1, w1, h2, m2, ap2, w2 = g
    if not (w1 or m1 or ap1 or ap2):  # a bare number is a quantity, not a time
        return None
    end = None
    if h2 or w2:
        if not (w2 or m2 or ap2 or ap1):
            return None
        end = clock(h2, m2, ap2, w2)
        if not ap1 and ap2 and h1 and int(h1) <= 12 and not w1:
            # "10 - 11 AM": the first time shares the second's half of the day
            ap1 = ap2
            if int(h1) > int(h2) and int(h2) != 12:
                ap1 = "am" if ap2.lower().startswith("p") else "pm"
    start = clock(h1, m1, ap1, w1)
    if start is None:
        return None
    rest = text[m.end():].strip()
    rest = re.sub(r"^[:\-–—|,.)]+\s*", "", rest).strip()
    unknown = not (ap1 or ap2 or w1) and int(h1) <= 12
    if unknown and end is not None and end <= start and end + 12 * 60 > start:
        end += 12 * 60  # "11:00 - 1:00" runs to 1 PM
    return start, end, rest, unknown


@lru_cache(maxsize=32)
def read_schedule(response: str) -> tuple[Entry, ...]:
    """The timed entries of a schedule, in the order written, with nested breaks made explicit."""
    lines = read_lines(response)
    raw: list[Raw] = []
    heading = ""
    for i, ln in enumerate(lines):
        parsed = _lead(ln.text) if ln.cells is None else _table_row(ln.cells)
        if parsed is None:
            if ln.heading or (not ln.bullet and (ln.text.endswith(":") or (
                    len(ln.text.split()) <= 5 and not re.search(r"\d", ln.text)))):
                heading = ln.text.rstrip(":")
            continue
        start, end, label, unknown = parsed
        if not label:
            label = _next_label(lines, i) or heading
        raw.append((start, end, label, unknown))
    if not raw:  # "Breakfast: 7:00 - 7:30 AM" — the activity first, then its time
        for ln in lines:
            m = re.match(r"^([^:(]{2,60})[:(]\s*(.*)$", ln.text)
            parsed = _lead(m.group(2)) if m else None
            if m and parsed:
                raw.append((parsed[0], parsed[1], m.group(1).strip(), parsed[3]))
    entries = _resolve(_unwrap(_dedupe(raw)))
    entries.extend(_embedded(entries))
    return tuple(entries)


def _table_row(cells: list[str]) -> Raw | None:
    """'| 9:00 AM - 5:00 PM | Work |' or '| Work | 9:00 AM - 5:00 PM |'."""
    for k, cell in enumerate(cells):
        parsed = _lead(cell)
        if parsed and not parsed[2]:
            label = " ".join(c for j, c in enumerate(cells) if j != k and c).strip()
            return parsed[0], parsed[1], label, parsed[3]
    return None


def _next_label(lines: list[Line], i: int) -> str:
    """'**5:30 AM - 6:00 AM**' followed by '* Meditation' names the entry on the next line."""
    if i + 1 < len(lines):
        cur, nxt = lines[i], lines[i + 1]
        nested = (nxt.bullet and not cur.bullet) or nxt.indent > cur.indent
        if nested and _lead(nxt.text) is None and not nxt.heading and nxt.cells is None:
            return nxt.text
    return ""


def _dedupe(raw: list[Raw]) -> list[Raw]:
    """A summary list that repeats a timeline entry ('7:00 AM - Breakfast') is not a second one."""
    seen: set[tuple[int, str]] = set()
    out: list[Raw] = []
    for r in raw:
        key = (r[0], " ".join(re.findall(r"[a-z]+", r[2].lower())[:1]))
        if key not in seen or not key[1]:
            out.append(r)
        seen.add(key)
    return out


def _unwrap(raw: list[Raw]) -> list[tuple[int, int | None, str]]:
    """Put every entry on one time line, in the order written.

    '12:30 AM Sleep' after '11 PM' belongs to the next day, and '1:00 - Lunch' written without
    AM/PM after '11:00 - Work' is 1 PM.
    """
    out: list[tuple[int, int | None, str]] = []
    offset, prev = 0, None
    for start, end, label, unknown in raw:
        shift = 0
        if prev is not None and unknown and start + offset < prev <= start + offset + 12 * 60:
            shift = 12 * 60
        elif prev is not None and start + offset < prev - 12 * 60:
            offset += DAY
        s = start + offset + shift
        e = None if end is None else end + offset + shift
        out.append((s, e, label))
        prev = s
    return out


def _resolve(raw: list[tuple[int, int | None, str]]) -> list[Entry]:
    out: list[Entry] = []
    first = raw[0][0] if raw else 0
    for k, (start, end, label) in enumerate(raw):
        explicit = end is not None
        if end is None:
            later = [s for s, _, _ in raw[k + 1:] if s > start]
            end = later[0] if later else first + DAY
        if end <= start:
            end += DAY
        out.append(Entry(start, end, label, explicit))
    return out


def _embedded(entries: list[Entry]) -> list[Entry]:
    """Breaks written inside an entry's parentheses become entries of their own."""
    out: list[Entry] = []
    for e in entries:
        for paren in re.findall(r"\(([^)]*)\)", e.label):
            if not re.search(r"break|lunch|dinner|breakfast|nap|meal", paren, re.I):
                continue
            name = re.search(r"(lunch|dinner|breakfast|nap|meal|break)\w*(?:\s+break)?", paren,
                             re.I)
            label = name.group(0) if name else "break"
            times = [m for m in TIME.finditer(paren) if m.group(2) or m.group(3) or m.group(4)]
            rng = re.search(rf"{_T}\s*(?:-|–|to)\s*{_T}", paren, re.I)
            if rng:
                span = _lead(rng.group(0))
                if span and span[1] is not None:
                    s, t = span[0], span[1]
                    out.append(Entry(s, t if t > s else t + DAY, label, True))
                continue
            dur = duration_minutes(paren)
            if dur is None:
                continue
            starts: list[re.Match[str] | None] = list(times) or [None]
            for m in starts:
                start = clock(m.group(1), m.group(2), m.group(3), m.group(4)) if m else e.start
                if start is not None:
                    out.append(Entry(start, start + int(dur), label, True))
    return out


def duration_minutes(text: str) -> Fraction | None:
    """'1.5 hours', 'a 30-minute', 'an hour', 'half an hour' -> minutes."""
    m = _DUR.search(text)
    if not m:
        return None
    n = m.group(1).lower()
    words = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3}
    val = (Fraction(1, 2) if n.startswith("half") else Fraction(words[n]) if n in words
           else Fraction(n))
    return val * 60 if m.group(2).lower().startswith("h") else val


def inside(inner: Entry, outer: Entry) -> bool:
    """``inner`` lies within ``outer`` (and is not the same span)."""
    if inner is outer or inner.end is None or outer.end is None:
        return False
    for shift in (0, DAY):
        s, t = inner.start + shift, inner.end + shift
        if outer.start <= s and t <= outer.end and (s, t) != (outer.start, outer.end):
            return True
    return False
