"""A prompting model's reply text decoded as BFCL's default prompting decoder decodes it.

The text is trimmed of backticks, newlines and spaces and wrapped in brackets where it does
not start or end with one; when the configuration asks for a tool-call tag, what stands
between the first ``<TOOLCALL>`` and ``</TOOLCALL>`` is kept (no tag is a failure). Then, by
output format:

- ``python``: a call or a list of calls in Python syntax, parsed (never run). Keyword
  arguments only (positional ones are dropped); values are literals, lists, dicts and tuples,
  nested calls (with keywords: a call; without: their source text), bare names and
  subscripts (their source text), and arithmetic on literals (its value). The reference's
  quirks are kept, as they decide its verdicts: a unary operator negates its constant operand
  whatever the operator, an ellipsis is the text "...", a lambda always fails;
- ``json``: ``[{"function": name, "parameters": {...}}, ...]`` found in the text; text that is
  not JSON decodes to no call at all;
- ``verbose_xml`` / ``concise_xml``: the ``<functions>`` element, each parameter's value
  converted by the type it declares.

A failure raises the exception the reference raises, with its message (the checker reports
"Failed to decode AST. <message>").
"""

from __future__ import annotations

import ast
import json
import operator
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

FORMATS = ("python", "json", "verbose_xml", "concise_xml")

_TAG = re.compile(r"<TOOLCALL>(.*?)</TOOLCALL>", re.DOTALL)
_FUNCTIONS = re.compile(r"<functions>(.*?)</functions>", re.DOTALL)
_JSON_SPAN = re.compile(r"\[.*\]", re.DOTALL)
_JSON_CALLS = re.compile(r"\[\s*{.*?}\s*(?:,\s*{.*?}\s*)*\]", re.DOTALL)


def decode_text(text: Any, ret_fmt: str = "python", tool_call_tag: bool = False
                ) -> list[Any]:
    """The calls of a reply text, ``[{name: {argument: value}}]``; raises on failure."""
    if not isinstance(text, str):
        raise AttributeError(f"'{type(text).__name__}' object has no attribute 'strip'")
    body = text.strip("`\n ")
    if not body.startswith("["):
        body = "[" + body
    if not body.endswith("]"):
        body = body + "]"
    if tool_call_tag:
        found = _TAG.search(body)
        if found is None:
            raise ValueError(f"No tool call tag found in input string: {body}")
        body = found.group(1).strip()
    if ret_fmt == "python":
        return _python_calls(body)
    if ret_fmt == "json":
        return _json_calls(body)
    if ret_fmt in ("verbose_xml", "concise_xml"):
        found = _FUNCTIONS.search(body)
        if found is None:
            raise ValueError(f"No XML function call found in input string: {body}. Missing "
                             "<functions> tag.")
        return _xml_calls(found.group(0), verbose=ret_fmt == "verbose_xml")
    raise ValueError(f"unknown output format {ret_fmt!r} (one of {', '.join(FORMATS)})")


def try_decode_text(text: Any, ret_fmt: str = "python", tool_call_tag: bool = False
                    ) -> tuple[list[Any] | None, str | None]:
    """(decoded calls, None), or (None, the failure's message)."""
    try:
        return decode_text(text, ret_fmt, tool_call_tag), None
    except Exception as e:  # any failure of the model's text is a decoding failure
        return None, str(e)


def execute_calls(text: Any, tool_call_tag: bool = False) -> list[str]:
    """The reply's calls as the call strings BFCL's multi-turn executor runs
    (``name(argument=value, ...)``), decoded as Python syntax; raises on failure.

    A value is written with ``repr``, except a dict: one whose values are all dicts is
    written as a call of its first key (so an empty dict fails, as in the reference), any
    other as ``{'key': value, ...}``."""
    return [f"{name}({_arguments_text(args)})"
            for call in decode_text(text, "python", tool_call_tag)
            for name, args in call.items()]


def _arguments_text(args: dict[Any, Any]) -> str:
    return ", ".join(f"{k}={_value_text(v)}" for k, v in args.items())


def _value_text(value: Any) -> str:
    if not isinstance(value, dict):
        return repr(value)
    if all(isinstance(v, dict) for v in value.values()):
        if not value:
            raise IndexError("list index out of range")
        name = next(iter(value))
        return f"{name}({_arguments_text(value[name])})"
    return "{" + ", ".join(f"'{k}': {_value_text(v)}" for k, v in value.items()) + "}"


# -- Python syntax ---------------------------------------------------------------------------
def _python_calls(source: str) -> list[Any]:
    tree = ast.parse(source.strip().strip("'"), mode="eval")
    if isinstance(tree.body, ast.Call):
        return [_call(tree.body)]
    items = getattr(tree.body, "elts", None)
    if items is None:
        raise AttributeError(f"'{type(tree.body).__name__}' object has no attribute 'elts'")
    out = []
    for item in items:
        if not isinstance(item, ast.Call):
            raise AssertionError()
        out.append(_call(item))
    return out


def _dotted_name(func: ast.expr) -> str:
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


def _call(node: ast.Call) -> dict[str, Any]:
    args: dict[Any, Any] = {}
    for keyword in node.keywords:
        args[keyword.arg] = _value(keyword.value)
    return {_dotted_name(node.func): args}


def _value(node: Any) -> Any:
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        operand = node.operand
        if not isinstance(operand, ast.Constant):
            raise AttributeError(f"'{type(operand).__name__}' object has no attribute 'value'")
        value: Any = operand.value
        return -value
    if isinstance(node, ast.List):
        return [_value(x) for x in node.elts]
    if isinstance(node, ast.Dict):
        return {_value(k): _value(v) for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, ast.BinOp):
        return _arithmetic(node)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return _call(node) if node.keywords else ast.unparse(node)
    if isinstance(node, ast.Tuple):
        return tuple(_value(x) for x in node.elts)
    if isinstance(node, ast.Lambda):
        raise TypeError(f"'{type(node.body).__name__}' object is not subscriptable")
    if isinstance(node, ast.Subscript):
        return ast.unparse(node.value) + "[" + ast.unparse(node.slice) + "]"
    raise Exception(f"Unsupported AST type: {type(node)}")  # the reference's own exception


_OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.BitAnd: operator.and_,
}
#: the largest result (in bits, or items of a repeated sequence) computed: a reply cannot
#: make the scorer compute for hours or fill the memory
_LIMIT = 1_000_000


def _bounded(op: ast.operator, left: Any, right: Any) -> None:
    def size(x: Any) -> int:
        return abs(x).bit_length() if isinstance(x, int) else 64

    big = False
    if isinstance(op, ast.Pow) and isinstance(right, (int, float)):
        big = abs(right) > _LIMIT or size(left) * abs(right) > _LIMIT
    elif isinstance(op, ast.LShift) and isinstance(right, int):
        big = right > _LIMIT
    elif isinstance(op, ast.Mult):
        counts = [(a, b) for a, b in ((left, right), (right, left))
                  if isinstance(a, (str, bytes, list, tuple)) and isinstance(b, int)]
        big = any(len(a) * b > _LIMIT for a, b in counts)
    if big:
        raise OverflowError("result too large")


def _arithmetic(node: ast.expr) -> Any:
    """The value of an expression of literals (what the reference gets by evaluating the
    expression's source), computed without evaluating any text: names are undefined,
    anything but literals, containers of them and operators is refused."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        raise NameError(f"name '{node.id}' is not defined")
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _arithmetic(node.left), _arithmetic(node.right)
        _bounded(node.op, left, right)
        return _OPERATORS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp):
        value = _arithmetic(node.operand)
        ops: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos,
                                                 ast.Not: operator.not_,
                                                 ast.Invert: operator.invert}
        return ops[type(node.op)](value)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_arithmetic(x) for x in node.elts]
        return {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)](items)
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_arithmetic(k): _arithmetic(v)  # type: ignore[arg-type]
                for k, v in zip(node.keys, node.values, strict=True)}
    raise ValueError(f"not evaluated: {ast.unparse(node)}")


# -- JSON ------------------------------------------------------------------------------------
def _json_calls(source: str) -> list[Any]:
    found = _JSON_SPAN.search(source)
    if found is not None:
        source = found.group(0)
    found = _JSON_CALLS.search(source)
    if found is not None:
        source = found.group(0)
    try:
        value = json.loads(source)
    except ValueError:
        return []
    out = []
    for item in value:
        if isinstance(item, dict):
            out.append({item["function"]: item["parameters"]})
    return out


# -- XML -------------------------------------------------------------------------------------
def _typed(raw: str, kind: str) -> Any:
    if kind == "integer":
        return int(raw)
    if kind == "float":
        return float(raw)
    if kind == "boolean":
        return raw.lower() == "true"
    if kind == "null":
        return None
    if kind in ("array", "tuple", "object", "dict"):
        return ast.literal_eval(raw)
    return raw


def _xml_calls(source: str, verbose: bool) -> list[Any]:
    root = ET.fromstring(source)
    out = []
    for function in root.findall("function"):
        name = function.attrib["name"]
        args: dict[Any, Any] = {}
        if verbose:
            holder = function.find("params")
            params = (holder if holder is not None else function).findall("param")
            for param in params:
                args[param.attrib.get("name")] = _typed(param.attrib.get("value", ""),
                                                        param.attrib.get("type", "string"))
        else:
            for param in function.findall("param"):
                key = param.attrib["name"]
                args[key] = _typed((param.text or "").strip(), param.attrib.get("type", "string"))
        out.append({name: args})
    return out
