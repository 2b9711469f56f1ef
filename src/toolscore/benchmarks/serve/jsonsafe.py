"""JSON without NaN: what goes into a record or the journal must be read back by any JSON
reader, and JSON has no NaN or Infinity (Python writes them as bare ``NaN`` literals that
strict readers, browsers and ``jq`` refuse).

An agent's arguments arrive already parsed, and a lenient parser upstream may have let a
``NaN`` through; a simulator could answer one. Such a number is kept as its name, a string,
so the record stays readable and the value is not lost.
"""

from __future__ import annotations

import math
from typing import Any

NAMES = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def non_finite(value: Any, where: str = "") -> str | None:
    """Where the first NaN or infinity in ``value`` is (``"date"``, ``"[2].x"``), or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else (where or "the value")
    if isinstance(value, dict):
        for key, item in value.items():
            found = non_finite(item, f"{where}.{key}" if where else str(key))
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = non_finite(item, f"{where}[{i}]")
            if found is not None:
                return found
    return None


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinity replaced by its name (a string); the same object
    when there is none (the common case costs one walk, no copy)."""
    if non_finite(value) is None:
        return value
    return _replaced(value)


def _replaced(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return NAMES[repr(value)]
    if isinstance(value, dict):
        return {k: _replaced(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_replaced(v) for v in value]
    return value
