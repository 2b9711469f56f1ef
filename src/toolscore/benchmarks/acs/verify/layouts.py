"""Workout layouts without "Session N" headers: named workouts, a session column, one template.

People and models organise a plan in more ways than numbered sections: "Upper Body Day" /
"Leg Day" headings, one table whose first column says which session a row belongs to, or a
single workout under "Frequency: 3 sessions per week" that is done every session. A reader
recognises each of these at once; without them the verifier would abstain on every constraint
of such a response. This module only finds the layout (which lines form which session, how
many times a template is done); ``workouts`` reads the exercises, whatever the layout.
"""

from __future__ import annotations

import re

from toolscore.benchmarks.acs.verify.markdown import Line, parse_number

# "Upper Body Day", "Leg Day:", "Full Body Workout (45 min)", "Push Session - chest"
_NAMED = re.compile(
    r"^[A-Za-z][\w/&'’+ ,-]{0,40}?\b(?:day|workout|session|training|circuit)"
    r"(?:\s*(?::|\(|-|–|—).*)?$", re.I)
# Titles and sections that end in such a word but are not one session.
_NOT_SESSION = re.compile(
    r"\b(?:plan|program|programme|routine|schedule|split|week|weekly|overview|summary|"
    r"notes?|tips?|guidelines?|each|every|per|your|this|following|sample|example)\b", re.I)
_SESSION_COL = re.compile(r"^(?:session|workout|day|training day|week\s*day|weekday)s?"
                          r"(?:\s*#|\s*no\.?)?$", re.I)
_WORD_NUM = r"\d+|one|two|three|four|five|six|seven"
_FREQUENCY = re.compile(
    rf"\b({_WORD_NUM})\s*(?:x|×)?\s*(?:sessions?|workouts?|times|days|trainings?)?\s*"
    r"(?:per|a|each|every|/|in a)\s*week\b", re.I)
_DOC = re.compile(r"^(?:notes?|tips?|summary|totals?|disclaimer|important|remember|guidelines?|"
                  r"additional|progression|safety|hydration|nutrition|explanation|"
                  r"modifications?|benefits?|conclusion)\b", re.I)


def is_named_session(ln: Line, first: bool) -> bool:
    """A heading that names one workout ('Upper Body Day', 'Leg Day:'), not the response's
    title (its first line) nor a section about the whole plan ('Weekly Workout Plan')."""
    if first or ln.cells is not None or not ln.heading:
        return False
    head = re.split(r"\s*(?::|\(|\s-\s|–|—)", ln.text, maxsplit=1)[0]
    return bool(_NAMED.match(ln.text)) and not _NOT_SESSION.search(head)


def session_column(lines: list[Line]) -> tuple[int, list[str], list[tuple[str, list[str]]]] | None:
    """The first table whose first or second column names the session of each row: the
    column's index, the header and the (session, cells) rows; an empty cell continues the
    session above (a merged cell)."""
    header: list[str] | None = None
    col: int | None = None
    rows: list[tuple[str, list[str]]] = []
    for ln in lines:
        if ln.cells is None:
            if rows:
                break
            header = col = None
            continue
        if ln.separator:
            continue
        if header is None:
            header = ln.cells
            col = next((j for j, h in enumerate(header[:2]) if _SESSION_COL.match(h.strip())),
                       None)
            continue
        if col is None or len(ln.cells) <= col:
            continue
        key = ln.cells[col].strip() or (rows[-1][0] if rows else "")
        rows.append((key, ln.cells))
    if header is None or col is None or not rows:
        return None
    return col, header, rows


def weekly_frequency(lines: list[Line]) -> int | None:
    """'Frequency: 3 sessions per week', 'Do this workout 3x a week' -> 3."""
    for ln in lines:
        m = _FREQUENCY.search(ln.text)
        if m and (n := parse_number(m.group(1))) is not None and n.denominator == 1 and n > 0:
            return int(n)
    return None


def template_body(lines: list[Line]) -> list[Line]:
    """The lines of a single listed workout: up to the first notes/tips section."""
    out: list[Line] = []
    for ln in lines:
        if ln.heading and _DOC.match(ln.text) and out:
            break
        out.append(ln)
    return out
