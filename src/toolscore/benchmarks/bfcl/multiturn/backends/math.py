"""BFCL's MathAPI: arithmetic, statistics and unit conversions, without state.

Results are BFCL's: dicts holding ``result`` or an ``error`` text, with the same Python values
(``logarithm`` gives an ``mpmath`` number, ``square_root`` a ``Decimal``), so the executor's
text of a result reads the same. ``mpmath`` (the ``bfcl`` extra) is imported by ``logarithm``
only. Like BFCL, ``logarithm`` leaves ``mpmath``'s working precision at the requested number
of digits (the text of its result depends on it); ``square_root`` works in a local decimal
context instead of changing the thread's.
"""

from __future__ import annotations

import decimal
import math
from typing import Any, ClassVar

from toolscore.benchmarks.bfcl.multiturn.backend import Backend

_NOT_NUMBERS = "Both inputs must be numbers"
_NOT_ALL_NUMBERS = "All elements in the list must be numbers"
_TOO_LARGE = "Conversion resulted in a value too large to represent"

#: metres per unit
_METRES: dict[str, float] = {"km": 1000, "m": 1, "cm": 0.01, "mm": 0.001, "um": 1e-6, "nm": 1e-9}

#: "<from>_to_<to>" -> factor (temperatures: the factor of the scale, the offset is 32)
_IMPERIAL: dict[str, float] = {
    "cm_to_in": 0.393701, "in_to_cm": 2.54,
    "m_to_ft": 3.28084, "ft_to_m": 0.3048,
    "m_to_yd": 1.09361, "yd_to_m": 0.9144,
    "km_to_miles": 0.621371, "miles_to_km": 1.60934,
    "kg_to_lb": 2.20462, "lb_to_kg": 0.453592,
    "celsius_to_fahrenheit": 1.8, "fahrenheit_to_celsius": 5 / 9,
}


def _error(text: str) -> dict[str, Any]:
    return {"error": text}


def _unsupported(unit_in: str, unit_out: str) -> dict[str, Any]:
    return _error(f"Conversion from '{unit_in}' to '{unit_out}' is not supported")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float))


def _over_list(numbers: list[Any], empty: str, fold: Any) -> dict[str, Any]:
    if not numbers:
        return _error(empty)
    try:
        return {"result": fold(numbers)}
    except TypeError:
        return _error(_NOT_ALL_NUMBERS)


def _spread(numbers: list[Any]) -> float:
    centre = sum(numbers) / len(numbers)
    return math.sqrt(sum((x - centre) ** 2 for x in numbers) / len(numbers))


class MathAPI(Backend):
    """BFCL's MathAPI."""

    _stateless: ClassVar[bool] = True

    def logarithm(self, value: float, base: float, precision: int) -> dict[str, Any]:
        import mpmath

        try:
            mpmath.mp.dps = precision
            return {"result": mpmath.log(value) / mpmath.log(base)}
        except Exception as e:
            return _error(str(e))

    def mean(self, numbers: list[float]) -> dict[str, Any]:
        return _over_list(numbers, "Cannot calculate mean of an empty list",
                          lambda xs: sum(xs) / len(xs))

    def standard_deviation(self, numbers: list[float]) -> dict[str, Any]:
        return _over_list(numbers, "Cannot calculate standard deviation of an empty list",
                          _spread)

    def si_unit_conversion(self, value: float, unit_in: str, unit_out: str) -> dict[str, Any]:
        if not _is_number(value):
            return _error("Value must be a number")
        if unit_in not in _METRES or unit_out not in _METRES:
            return _unsupported(unit_in, unit_out)
        try:
            return {"result": value * _METRES[unit_in] * (1 / _METRES[unit_out])}
        except OverflowError:
            return _error(_TOO_LARGE)

    def imperial_si_conversion(self, value: float, unit_in: str,
                               unit_out: str) -> dict[str, Any]:
        if not _is_number(value):
            return _error("Value must be a number")
        if unit_in == unit_out:
            return {"result": value}
        factor = _IMPERIAL.get(f"{unit_in}_to_{unit_out}")
        if factor is None:
            return _unsupported(unit_in, unit_out)
        try:
            if (unit_in, unit_out) == ("celsius", "fahrenheit"):
                return {"result": (value * factor) + 32}
            if (unit_in, unit_out) == ("fahrenheit", "celsius"):
                return {"result": (value - 32) * factor}
            return {"result": value * factor}
        except OverflowError:
            return _error(_TOO_LARGE)

    def add(self, a: float, b: float) -> dict[str, Any]:
        try:
            return {"result": a + b}
        except TypeError:
            return _error(_NOT_NUMBERS)

    def subtract(self, a: float, b: float) -> dict[str, Any]:
        try:
            return {"result": a - b}
        except TypeError:
            return _error(_NOT_NUMBERS)

    def multiply(self, a: float, b: float) -> dict[str, Any]:
        if not (_is_number(a) and _is_number(b)):
            return _error(_NOT_NUMBERS)
        return {"result": a * b}

    def divide(self, a: float, b: float) -> dict[str, Any]:
        try:
            if b == 0:
                return _error("Cannot divide by zero")
            return {"result": a / b}
        except TypeError:
            return _error(_NOT_NUMBERS)

    def power(self, base: float, exponent: float) -> dict[str, Any]:
        try:
            return {"result": base**exponent}
        except TypeError:
            return _error(_NOT_NUMBERS)

    def square_root(self, number: float, precision: int) -> dict[str, Any]:
        try:
            if number < 0:
                return _error("Cannot calculate square root of a negative number")
            with decimal.localcontext() as context:
                context.prec = precision
                return {"result": decimal.Decimal(number).sqrt()}
        except (TypeError, decimal.InvalidOperation):
            return _error("Input must be a number or computation resulted in an invalid "
                          "operation")

    def absolute_value(self, number: float) -> dict[str, Any]:
        try:
            return {"result": abs(number)}
        except TypeError:
            return _error("Input must be a number")

    def round_number(self, number: float, decimal_places: int = 0) -> dict[str, Any]:
        try:
            return {"result": round(number, decimal_places)}
        except TypeError:
            return _error("First input must be a number, second input must be an integer")

    def percentage(self, part: float, whole: float) -> dict[str, Any]:
        try:
            if whole == 0:
                return _error("Whole value cannot be zero")
            return {"result": (part / whole) * 100}
        except TypeError:
            return _error(_NOT_NUMBERS)

    def min_value(self, numbers: list[float]) -> dict[str, Any]:
        return _over_list(numbers, "Cannot find minimum of an empty list", min)

    def max_value(self, numbers: list[float]) -> dict[str, Any]:
        return _over_list(numbers, "Cannot find maximum of an empty list", max)

    def sum_values(self, numbers: list[float]) -> dict[str, Any]:
        return _over_list(numbers, "Cannot calculate sum of an empty list", sum)
