"""Comparisons in constraint sentences: 'at least 300', 'no more than 2 hours', 'between 30 and
45', read into an exact ``Comparison`` on Fractions (zero tolerance, as the labels are).

Shared by the meal, workout and schedule readings in ``constraints``; the phrase lists are
ordered so that 'greater than or equal' is read before 'greater than'.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

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
            return f"between {fmt(self.value)} and {fmt(self.high or self.value)}"
        return f"{self.op} {fmt(self.value)}"


def fmt(v: Fraction) -> str:
    return str(v.numerator) if v.denominator == 1 else f"{float(v):g}"


def comparison_op(text: str) -> str:
    """The comparison a sentence asks for; equality when it names none ('must be 2000')."""
    t = text.lower()
    for op, pat in ((">=", _GE), ("<=", _LE), ("<", _LT), (">", _GT)):
        if re.search(pat, t):
            return op
    return "=="


def cmp_of(text: str, value: Fraction, scale: Fraction | int = 1) -> Comparison:
    """The comparison with ``value``; a range ('between 30 and 45', 'at least 30 and at most
    45') is read from the text and multiplied by ``scale`` (60 when it is in hours)."""
    m = (re.search(rf"between\s+{_NUM}\s*[a-z-]*\s+and\s+{_NUM}", text, re.I)
         or re.search(rf"(?:{_GE})\s*{_NUM}[^.;]*?\band\b[^.;]*?(?:{_LE})\s*{_NUM}", text, re.I))
    if m:
        lo, hi = (Fraction(g.replace(",", "")) * scale for g in m.groups()[-2:])
        return Comparison("between", min(lo, hi), max(lo, hi))
    return Comparison(comparison_op(text), value)


def strip_parens(text: str) -> str:
    return re.sub(r"\([^)]*\)", " ", text)


def number_near(text: str, unit: str) -> Fraction | None:
    """The number written next to ``unit`` ('4 days', '2 meals', '2700 calories', '170g')."""
    m = re.search(rf"{_NUM}\s*-?\s*(?:{unit})", text, re.I)
    if m:
        return Fraction(m.group(1).replace(",", ""))
    return None


def last_number(text: str) -> Fraction | None:
    nums = re.findall(_NUM, text)
    return Fraction(nums[-1].replace(",", "")) if nums else None
