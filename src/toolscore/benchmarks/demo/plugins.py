"""The demo benchmark's own tools: Notes, Shopping and Calculator (7 tools, all ours).

They are deliberately small: short descriptions keep the prompt cheap for a tiny local model,
and no tool needs a login (``auth=False``). Ids come from ``env.rng(tool_name)``, so the n-th id a
tool creates after a reset is always the same and the recorded ground truth can refer to it.

Equivalence rules follow ToolTalk's spirit: only the ground truth's argument keys are read, ids
and numbers must be exact, free text (titles, item names) is compared by ``ctx.similarity``
(>= 0.8), and searches, listings and computations are compared by their results, not by how the
model phrased the query.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any, cast

from toolscore.env.environment import Environment
from toolscore.env.plugin import Plugin
from toolscore.env.tool import CallRecord, MatchContext, Tool, tool

SIMILARITY = 0.8
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


# -- equivalence rules -------------------------------------------------------------------------
def _args(record: CallRecord) -> dict[str, Any]:
    return record.arguments or {}


def _texts_similar(a: Any, b: Any, ctx: MatchContext) -> bool:
    if isinstance(a, str) and isinstance(b, str) and a.strip().lower() == b.strip().lower():
        return True  # identical up to case: no need to ask the embedder
    return ctx.similarity(a, b) >= SIMILARITY


def exact(pred: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
    """Same exception, same response, and every ground-truth argument equal."""
    p = _args(pred)
    return (pred.exception == truth.exception and pred.response == truth.response
            and all(k in p and p[k] == v for k, v in _args(truth).items()))


def same_result(pred: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
    """Same outcome, however the input was written ("2*3" and "3 * 2" both give 6)."""
    return pred.exception == truth.exception and pred.response == truth.response


def contains_results(key: str, id_field: str) -> Callable[..., bool]:
    """Every id the ground truth found is in the prediction's results (extra hits are fine)."""

    def rule(pred: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
        if pred.exception != truth.exception:
            return False
        if truth.exception is not None:
            return True

        def ids(record: CallRecord) -> set[Any]:
            items = record.response.get(key) if isinstance(record.response, dict) else None
            return {i.get(id_field) for i in items or [] if isinstance(i, dict)}

        return ids(truth) <= ids(pred)

    return rule


def _create_note_rule(pred: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
    p = _args(pred)
    return pred.exception == truth.exception and all(
        _texts_similar(p.get(k), v, ctx) for k, v in _args(truth).items())


def _add_item_rule(pred: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
    p, t = _args(pred), _args(truth)
    return (pred.exception == truth.exception
            and _texts_similar(p.get("name"), t.get("name"), ctx)
            and p.get("quantity", 1) == t.get("quantity", 1))  # an omitted quantity means 1


# -- Notes ---------------------------------------------------------------------------------------
def _new_id(env: Environment, tool_name: str, prefix: str, taken: dict[str, Any]) -> str:
    rng = env.rng(tool_name)
    while True:
        candidate = f"{prefix}-{rng.randint(0, 0xFFFF):04x}"
        if candidate not in taken:
            return candidate


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be a non-empty string")
    return value.strip()


@tool("CreateNote", action=True, equivalence=_create_note_rule)
def create_note(env: Environment, title: str, text: str) -> dict[str, Any]:
    """Save a new note.

    Args:
        title: Short title.
        text: Content of the note.
    """
    notes = env.db("Notes")
    note_id = _new_id(env, "CreateNote", "n", notes)
    notes[note_id] = {"note_id": note_id, "title": _text(title, "title"),
                      "text": _text(text, "text"), "created": env.now.strftime(TIME_FORMAT)}
    return {"note_id": note_id}


@tool("SearchNotes", equivalence=contains_results("notes", "note_id"))
def search_notes(env: Environment, query: str) -> dict[str, Any]:
    """Find notes containing all words of the query (newest first, at most 5).

    Args:
        query: Words to look for in titles and texts.
    """
    words = _text(query, "query").lower().split()
    hits = [n for n in env.db("Notes").values()
            if all(w in f"{n['title']} {n['text']}".lower() for w in words)]
    hits.sort(key=lambda n: n["created"], reverse=True)
    return {"notes": [dict(n) for n in hits[:5]]}


@tool("DeleteNote", action=True, equivalence=exact)
def delete_note(env: Environment, note_id: str) -> dict[str, Any]:
    """Delete a note by id.

    Args:
        note_id: Id of the note, from SearchNotes.
    """
    notes = env.db("Notes")
    if note_id not in notes:
        raise ValueError(f"Note {note_id} not found")
    del notes[note_id]
    return {"status": "success"}


# -- Shopping ------------------------------------------------------------------------------------
@tool("AddItem", action=True, equivalence=_add_item_rule)
def add_item(env: Environment, name: str, quantity: int = 1) -> dict[str, Any]:
    """Add an item to the shopping list.

    Args:
        name: What to buy.
        quantity: How many (default 1).
    """
    if isinstance(quantity, bool) or not isinstance(quantity, (int, float)) \
            or quantity != int(quantity) or quantity < 1:
        raise ValueError("quantity must be a positive whole number")
    items = env.db("Shopping")
    name = _text(name, "name")
    for item in items.values():  # already listed: buy more of it rather than list it twice
        if item["name"].lower() == name.lower():
            item["quantity"] += int(quantity)
            return {"item_id": item["item_id"]}
    item_id = _new_id(env, "AddItem", "i", items)
    items[item_id] = {"item_id": item_id, "name": name, "quantity": int(quantity)}
    return {"item_id": item_id}


@tool("ListItems", equivalence=contains_results("items", "item_id"))
def list_items(env: Environment) -> dict[str, Any]:
    """List everything on the shopping list."""
    return {"items": [dict(i) for i in env.db("Shopping").values()]}


# -- Calculator ----------------------------------------------------------------------------------
# unit -> (dimension, factor to the base unit); temperatures are handled separately.
_UNITS: dict[str, tuple[str, float]] = {
    "m": ("length", 1.0), "km": ("length", 1000.0), "cm": ("length", 0.01),
    "mm": ("length", 0.001), "mi": ("length", 1609.344), "yd": ("length", 0.9144),
    "ft": ("length", 0.3048), "in": ("length", 0.0254),
    "kg": ("mass", 1.0), "g": ("mass", 0.001), "lb": ("mass", 0.45359237),
    "oz": ("mass", 0.028349523125),
    "l": ("volume", 1.0), "ml": ("volume", 0.001), "gal": ("volume", 3.785411784),
    "cup": ("volume", 0.2365882365),
    "c": ("temperature", 1.0), "f": ("temperature", 1.0), "k": ("temperature", 1.0),
}
_ALIASES = {
    "meter": "m", "metre": "m", "kilometer": "km", "kilometre": "km", "centimeter": "cm",
    "centimetre": "cm", "millimeter": "mm", "millimetre": "mm", "mile": "mi", "yard": "yd",
    "foot": "ft", "feet": "ft", "inch": "in", "inches": "in", "kilogram": "kg", "kilo": "kg",
    "gram": "g", "pound": "lb", "lbs": "lb", "ounce": "oz", "liter": "l", "litre": "l",
    "milliliter": "ml", "millilitre": "ml", "gallon": "gal", "celsius": "c", "°c": "c",
    "fahrenheit": "f", "°f": "f", "kelvin": "k",
}


def _unit(name: Any) -> str:
    """Canonical unit name; accepts symbols, full names and plurals ("Miles" -> "mi")."""
    key = str(name).strip().lower().removeprefix("degrees ").strip()
    for candidate in (key, key.removesuffix("s"), key.removesuffix("es")):
        if candidate in _UNITS:
            return candidate
        if candidate in _ALIASES:
            return _ALIASES[candidate]
    raise ValueError(f"Unknown unit: {name}")


def _to_kelvin(value: float, unit: str) -> float:
    return {"c": value + 273.15, "f": (value - 32) * 5 / 9 + 273.15, "k": value}[unit]


def _from_kelvin(value: float, unit: str) -> float:
    return {"c": value - 273.15, "f": (value - 273.15) * 9 / 5 + 32, "k": value}[unit]


@tool("ConvertUnits", equivalence=same_result)
def convert_units(env: Environment, value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Convert a length, weight, volume or temperature.

    Args:
        value: Amount to convert.
        from_unit: Unit of value, e.g. mi, km, lb, kg, F, C.
        to_unit: Unit wanted.
    """
    try:
        amount = float(value)
    except (TypeError, ValueError):
        raise ValueError("value must be a number") from None
    src, dst = _unit(from_unit), _unit(to_unit)
    if _UNITS[src][0] != _UNITS[dst][0]:
        raise ValueError(f"Cannot convert {_UNITS[src][0]} to {_UNITS[dst][0]}")
    if _UNITS[src][0] == "temperature":
        result = _from_kelvin(_to_kelvin(amount, src), dst)
    else:
        result = amount * _UNITS[src][1] / _UNITS[dst][1]
    return {"value": round(result, 2), "unit": dst.upper() if dst in ("c", "f", "k") else dst}


_OPS: dict[type, Callable[..., float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.USub: operator.neg, ast.UAdd: operator.pos,
}


def _evaluate(node: ast.AST) -> float:
    """Arithmetic only: numbers, + - * / // % ** and parentheses; nothing else is executed."""
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return cast(float, node.value)  # an int or a float, not a bool
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and (abs(right) > 100 or abs(left) > 1e6):
            raise ValueError("Number too large")
        return _OPS[type(node.op)](left, right)
    raise ValueError("Only numbers and + - * / % ^ ( ) are allowed")


@tool("Calculate", equivalence=same_result)
def calculate(env: Environment, expression: str) -> dict[str, Any]:
    """Evaluate an arithmetic expression such as "12 * 7.5".

    Args:
        expression: Numbers with + - * / % ^ and parentheses.
    """
    # "2^3" means a power to most people (and to models): give it the power's precedence
    text = _text(expression, "expression").replace("^", "**").replace(",", "")
    text = text.replace("×", "*").replace("÷", "/")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise ValueError(f"Invalid expression: {expression}") from None
    try:
        result = float(_evaluate(tree))
    except ZeroDivisionError:
        raise ValueError("Division by zero") from None
    except OverflowError:
        raise ValueError("Number too large") from None
    if not math.isfinite(result):
        raise ValueError("Number too large")
    result = round(result, 6)
    return {"result": int(result) if result.is_integer() else result}


NOTES = Plugin("Notes", [create_note, search_notes, delete_note], databases=("Notes",),
               description="Personal notes with titles.")
SHOPPING = Plugin("Shopping", [add_item, list_items], databases=("Shopping",),
                  description="One shopping list.")
CALCULATOR = Plugin("Calculator", [convert_units, calculate],
                    description="Deterministic arithmetic and unit conversion; no state.")

PLUGINS: list[Plugin] = [NOTES, SHOPPING, CALCULATOR]
ALL_TOOLS: list[Tool] = [t for p in PLUGINS for t in p.tools]
