"""Type rules: the Python type each documented type stands for, and BFCL's type check.

The function documents name types in BFCL's vocabulary ("string", "integer", "float", "dict",
"array", "tuple", "any" for Python; Java and JavaScript have their own names). An argument
whose type differs from the documented one still passes when it has the type of the possible
answer's values: the reference treats it as a variable's name standing for the value.
"""

from __future__ import annotations

from typing import Any

from .verdict import VALID, Verdict, invalid

PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}
#: Python types whose items are type-checked too (one level deep only, as in the reference).
PYTHON_NESTED = frozenset({"array", "tuple"})

JAVA_TYPES: dict[str, type] = {
    "byte": int,
    "short": int,
    "integer": int,
    "float": float,
    "double": float,
    "long": int,
    "boolean": bool,
    "char": str,
    "Array": list,
    "ArrayList": list,
    "Set": set,
    "HashMap": dict,
    "Hashtable": dict,
    "Queue": list,
    "Stack": list,
    "String": str,
    "any": str,
}

JAVASCRIPT_TYPES: dict[str, type] = {
    "String": str,
    "integer": int,
    "float": float,
    "Bigint": int,
    "Boolean": bool,
    "dict": dict,
    "array": list,
    "any": str,
}

#: Java and JavaScript types converted with their item type.
CONVERTED_WITH_ITEMS = frozenset({"Array", "ArrayList", "array"})


def _answer_type(allowed: Any) -> type | None:
    """The type of the first allowed value that is not "" (the optional marker)."""
    for option in allowed:
        if option != "":
            return type(option)
    return None


def _items_match(value: Any, allowed: Any, item_type: type) -> bool:
    """Do all of ``value``'s items have ``item_type`` (or the type of ``allowed``'s values)?"""
    answer_type = _answer_type(allowed)
    for item in value:
        if type(item) is not item_type and (answer_type is None or type(item) is not answer_type):
            return False
    return True


def check_type(
    param: str,
    value: Any,
    allowed: list[Any],
    described: str,
    expected: type,
    item_type: type | None,
) -> tuple[Verdict, bool]:
    """(verdict, is_variable): ``is_variable`` when the allowed values' type is not the
    documented one, i.e. the answer names a variable rather than giving a value."""
    answer_type = _answer_type(allowed)
    is_variable = answer_type is not None and answer_type is not expected
    errors: list[str] = []
    error_type = "type_error:simple"
    if type(value) is expected:
        if item_type is None:
            return VALID, is_variable
        # Valid when the items fit one allowed value; an allowed value that is not a list
        # (such as "") accepts any items.
        for option in allowed:
            if type(option) is not list or _items_match(value, option, item_type):
                return VALID, is_variable
        errors.append(
            f"Nested type checking failed for parameter {param!r}. Expected outer type "
            f"{described} with inner type {item_type}. Parameter value: {value!r}."
        )
        error_type = "type_error:nested"
    # The reference falls through here after a nested failure too: a value of the allowed
    # values' type then returns the nested failure flagged as a variable, anything else gets
    # a second message and the simple error type.
    if answer_type is not None and type(value) is answer_type:
        if errors:
            return invalid(error_type, *errors), True
        return VALID, True
    errors.append(
        f"Incorrect type for parameter {param!r}. Expected type {described}, got "
        f"{type(value).__name__}. Parameter value: {value!r}."
    )
    return invalid("type_error:simple", *errors), is_variable


def number_or_text(text: str) -> Any:
    """An untyped literal's last resorts, as both converters end: an int, else a float, else
    the text itself."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text
