"""Java arguments: the model writes each one as Java source text, converted here to the Python
value it denotes as BFCL's Java type conversion does (what fails to parse stays a string).

Behaviour kept from the reference, on purpose: a ``char`` is never unquoted (its pattern cannot
match, so the text is returned as given); the items of an ``Array`` of ``String`` keep their
quotes while those of an ``ArrayList`` lose them; a ``$`` in the patterns also matches before a
final newline; Set, Hashtable, Queue and Stack are not converted (an error, as there).
"""

from __future__ import annotations

import re
from typing import Any

from .typecheck import JAVA_TYPES, number_or_text

_INTEGER = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$")
_DOUBLE = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$")
_LONG = re.compile(r"^-?\d+[lL]$")
_FLOAT_SUFFIX = re.compile(r"[fF]$")
_LONG_SUFFIX = re.compile(r"[lL]$")
_AS_LIST = re.compile(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)")
_BRACE_INIT = re.compile(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", re.DOTALL)
_ADD = re.compile(r"add\((.+?)\)")
_EMPTY_LIST = re.compile(r"new\s+ArrayList<\w*>\(\)")
_ARRAY = re.compile(r"new\s+\w+\[\]\s*\{(.*?)\}")
_MAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", re.DOTALL)
_PUT = re.compile(r"put\(\"(.*?)\",\s*(.*?)\)")
_EMPTY_MAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)")
_NOT_CONVERTED = frozenset({"Set", "Hashtable", "Queue", "Stack"})


def convert(text: str, java_type: str, item_type: str | None = None) -> Any:
    """The value ``text`` denotes as a ``java_type``; ``text`` itself when it does not parse."""
    if java_type not in JAVA_TYPES:
        raise ValueError(f"Unsupported type: {java_type}")
    if java_type in ("byte", "short", "integer"):
        return int(text) if _INTEGER.match(text) else text
    if java_type == "float":
        return float(_FLOAT_SUFFIX.sub("", text)) if _FLOAT.match(text) else text
    if java_type == "double":
        return float(text) if _DOUBLE.match(text) else text
    if java_type == "long":
        return int(_LONG_SUFFIX.sub("", text)) if _LONG.match(text) else text
    if java_type == "boolean":
        return text == "true" if text in ("true", "false") else text
    if java_type == "ArrayList":
        return _array_list(text, item_type)
    if java_type == "Array":
        return _array(text, item_type)
    if java_type == "HashMap":
        return _hash_map(text)
    if java_type in _NOT_CONVERTED:
        raise NotImplementedError(f"{java_type} values are not converted")
    return text  # char, String, any


def _list_item(text: str, item_type: str | None) -> Any:
    if item_type in ("char", "String"):
        return text[1:-1]
    return convert(text, item_type) if item_type else literal(text)


def _array_list(text: str, item_type: str | None) -> Any:
    found = _AS_LIST.search(text)
    if found:
        return [_list_item(part.strip(), item_type) for part in found.group(1).split(",")]
    found = _BRACE_INIT.search(text)
    if found:
        return [_list_item(add.strip(), item_type) for add in _ADD.findall(found.group(1))]
    if _EMPTY_LIST.search(text):
        return []
    return text


def _array(text: str, item_type: str | None) -> Any:
    found = _ARRAY.search(text)
    if not found:
        return text
    parts = [part.strip() for part in found.group(1).split(",")]
    if item_type:
        return [convert(part, item_type) for part in parts if part]
    return [literal(part) for part in parts if part]


def _hash_map(text: str) -> Any:
    found = _MAP.search(text)
    if found:
        body = found.group(1)
        if not body.strip():
            return {}
        return {key: literal(value.strip()) for key, value in _PUT.findall(body)}
    if _EMPTY_MAP.search(text):
        return {}
    return text


def literal(text: str) -> Any:
    """A Java literal of unknown type: boolean, quoted string, long, float, int, double, or
    the text itself."""
    if text == "true":
        return True
    if text == "false":
        return False
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if _LONG.match(text):
        return int(text[:-1])
    if _FLOAT.match(text):
        return float(_FLOAT_SUFFIX.sub("", text))
    return number_or_text(text)
