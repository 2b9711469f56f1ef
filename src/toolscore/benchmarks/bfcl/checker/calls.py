"""One call against one function document and its allowed arguments, BFCL's way.

The checks, each ending the verdict at its first failure: the function's name, the required
parameters, then every argument (documented and present in the possible answer; its type;
its value), and last the possible answer's parameters the call left out, which must allow ""
(BFCL's mark of an optional parameter).
"""

from __future__ import annotations

from typing import Any

from . import java, javascript
from .typecheck import (
    CONVERTED_WITH_ITEMS,
    JAVA_TYPES,
    JAVASCRIPT_TYPES,
    PYTHON_NESTED,
    PYTHON_TYPES,
    check_type,
)
from .values import check_dict, check_list, check_list_of_dicts, check_string
from .verdict import VALID, Verdict, invalid

PYTHON, JAVA, JAVASCRIPT = "python", "java", "javascript"


def language_of(category: str) -> str:
    """The language a category's arguments are written in, as the reference tells it."""
    if "javascript" in category:
        return JAVASCRIPT
    if "java" in category:
        return JAVA
    return PYTHON


def call_name(name: str, dots_to_underscores: bool) -> str:
    """The name a model calls a documented function by: function-calling APIs such as
    OpenAI's do not allow dots in tool names, so BFCL expects them as underscores there."""
    return name.replace(".", "_") if dots_to_underscores and "." in name else name


def _source_text(
    param: str, value: Any, described: str, details: dict[str, Any], language: str
) -> tuple[Any, type, type | None] | Verdict:
    """Java or JavaScript source text converted to (value, expected type, item type)."""
    table, convert, code = (
        (JAVA_TYPES, java.convert, "type_error:java")
        if language == JAVA
        else (JAVASCRIPT_TYPES, javascript.convert, "type_error:js")
    )
    expected = table[described]
    if type(value) is not str:
        return invalid(
            code,
            f"Incorrect type for parameter {param!r}. Expected type String, got "
            f"{type(value).__name__}. Parameter value: {value!r}.",
        )
    if described in CONVERTED_WITH_ITEMS:
        item_described = details["items"]["type"]
        item_type = table[item_described]
        return convert(value, described, item_described), expected, item_type
    return convert(value, described), expected, None


def check_argument(
    param: str, value: Any, details: dict[str, Any], allowed: list[Any], language: str
) -> Verdict:
    described = details["type"]
    item_type: type | None = None
    if language == PYTHON:
        expected = PYTHON_TYPES[described]
        if described in PYTHON_NESTED:
            item_type = PYTHON_TYPES[details["items"]["type"]]
    else:
        converted = _source_text(param, value, described, details, language)
        if isinstance(converted, Verdict):
            return converted
        value, expected, item_type = converted
    if described == "tuple" and type(value) is tuple:
        value = list(value)  # the possible answers, read from JSON, hold lists
    if language == PYTHON and described == "float" and type(value) is int:
        value = float(value)
    typed, is_variable = check_type(param, value, allowed, described, expected, item_type)
    if not typed.valid:
        return typed
    # a variable's name is compared as it is, without the rules for dicts, lists and strings
    if not is_variable:
        if expected is dict:
            return check_dict(param, value, allowed)
        if expected is list and item_type is dict:
            return check_list_of_dicts(param, value, allowed)
        if expected is str:
            return check_string(param, value, allowed)
        if expected is list:
            return check_list(param, value, allowed)
    if value not in allowed:
        return invalid(
            "value_error:others",
            f"Invalid value for parameter {param!r}: {value!r}. Expected one of {allowed}.",
        )
    return VALID


def check_call(
    function: dict[str, Any],
    call: dict[str, Any],
    expected: dict[str, Any],
    language: str,
    dots_to_underscores: bool,
) -> Verdict:
    """``call`` ({name: arguments}) against ``function``'s document and ``expected``, the
    possible answer's {name: {parameter: allowed values}}."""
    allowed = next(iter(expected.values()))
    name = call_name(function["name"], dots_to_underscores)
    if name not in call:
        return invalid(
            "simple_function_checker:wrong_func_name",
            f"Function name {name!r} not found in model output.",
        )
    arguments = call[name]
    documented = function["parameters"]["properties"]
    for param in function["parameters"]["required"]:
        if param not in arguments:
            return invalid(
                "simple_function_checker:missing_required",
                f"Missing required parameter: {param!r}.",
            )
    for param, value in arguments.items():
        if param not in documented or param not in allowed:
            return invalid(
                "simple_function_checker:unexpected_param", f"Unexpected parameter: {param!r}."
            )
        outcome = check_argument(param, value, documented[param], allowed[param], language)
        if not outcome.valid:
            return outcome
    for param, values in allowed.items():
        if param not in arguments and "" not in values:
            return invalid(
                "simple_function_checker:missing_optional",
                f"Optional parameter {param!r} not provided and not marked as optional.",
            )
    return VALID
