"""JavaScript arguments: the model writes each one as JavaScript source text, converted here to
the Python value it denotes as BFCL's JavaScript type conversion does (what fails to parse stays
a string).

Behaviour kept from the reference, on purpose: a "2-D" array is any text starting with arrays of
arrays, and its items are read as untyped literals; any error while reading an array leaves the
text as it was; objects are read with a non-greedy pattern, so one nested object cuts the outer
one short; object values lose their surrounding quotes before being read.
"""

from __future__ import annotations

import re
from typing import Any

from .typecheck import JAVASCRIPT_TYPES, number_or_text

_INTEGER = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?\d+(\.\d+)?$")
_BIGINT = re.compile(r"^-?\d+n$")
_ARRAY_2D = re.compile(
    r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)"
)
_ARRAY = re.compile(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)")
_INNER_ARRAY = re.compile(r"\[(.*?)\]")
_OBJECT = re.compile(r"\{(.*?)\}")
_PAIR = re.compile(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)")


def _quoted(text: str) -> bool:
    return (text.startswith('"') and text.endswith('"')) or (
        text.startswith("'") and text.endswith("'")
    )


def convert(text: str, js_type: str, item_type: str | None = None) -> Any:
    """The value ``text`` denotes as a ``js_type``; ``text`` itself when it does not parse."""
    if js_type not in JAVASCRIPT_TYPES:
        raise ValueError(f"Unsupported type: {js_type}")
    if js_type == "String":
        return text[1:-1] if _quoted(text) else text
    if js_type == "integer":
        return int(text) if _INTEGER.match(text) else text
    if js_type == "float":
        return float(text) if _FLOAT.match(text) else text
    if js_type == "Bigint":
        return int(text[:-1]) if _BIGINT.match(text) else text
    if js_type == "Boolean":
        return text == "true" if text in ("true", "false") else text
    if js_type == "dict":
        code = text.strip()
        try:
            return _object(code)
        except Exception:  # the reference leaves the text as it was on any error
            return code
    if js_type == "array":
        return _array(text.strip(), item_type)
    return text  # any


def _array(code: str, item_type: str | None) -> Any:
    try:
        return _read_array(code, item_type)
    except Exception:  # the reference leaves the text as it was on any error
        return code


def _read_array(code: str, item_type: str | None) -> Any:
    found = _ARRAY_2D.match(code)
    if found:
        rows = []
        for index, row in enumerate(_INNER_ARRAY.findall(found.group(0))):
            row = row.strip()
            if index == 0 and row.startswith("["):
                row = row[1:]
            rows.append([literal(part.strip()) for part in row.split(",")])
        return rows
    found = _ARRAY.match(code)
    if not found:
        return code
    body = found.group(1) if found.group(1) is not None else found.group(2)
    body = body.strip() if body is not None else ""
    parts = body.split(",") if body else []
    if item_type:
        # quoted items are converted with "String" as their own item type (unused but for
        # arrays and objects, as in the reference)
        return [
            convert(part.strip(), item_type, "String")
            if part.strip().startswith(("'", '"'))
            else convert(part.strip(), item_type)
            for part in parts
        ]
    return [literal(part.strip()) for part in parts]


def _object(code: str) -> Any:
    if code == "{}":
        return {}
    found = _OBJECT.match(code)
    if not found:
        return code
    result: dict[str, Any] = {}
    for key, value in _PAIR.findall(found.group(1)):
        key = key.strip().strip("'\"")
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            result[key] = _array(value.strip(), None)
        elif value.startswith("{") and value.endswith("}"):
            result[key] = _object(value.strip())
        else:
            result[key] = literal(value.strip("'\""))
    return result


def literal(text: str) -> Any:
    """A JavaScript literal of unknown type: boolean, quoted string, int, float, or the text."""
    text = text.strip()
    if text == "true":
        return True
    if text == "false":
        return False
    if _quoted(text):
        return text[1:-1]
    return number_or_text(text)
