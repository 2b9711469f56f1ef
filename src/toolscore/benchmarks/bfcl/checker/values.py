"""Value rules: is a (type-checked) argument one of the possible answer's allowed values?

Strings are compared after BFCL's normalisation (no spaces nor ``,./-_*^``, lower case, single
quotes as double quotes), also inside lists and as dictionary values. Everything else is
compared with Python's ``==`` (so ``1 == 1.0 == True``), as the reference does.
"""

from __future__ import annotations

from typing import Any

from .verdict import VALID, Verdict, invalid

_DROPPED = str.maketrans("", "", " ,./-_*^")


def normalise(text: str) -> str:
    """BFCL's string normalisation, so "April 1, 2024" equals "april 1 2024"."""
    return text.translate(_DROPPED).lower().replace("'", '"')


def _normalised_items(values: Any) -> list[Any]:
    # indexed like the reference, so a non-list allowed value fails (or passes) the same way
    return [
        normalise(values[i]) if type(values[i]) is str else values[i] for i in range(len(values))
    ]


def check_string(param: str, value: str, allowed: list[Any]) -> Verdict:
    wanted = [normalise(a) for a in allowed if type(a) is str]
    if normalise(value) in wanted:
        return VALID
    return invalid(
        "value_error:string",
        f"Invalid value for parameter {param!r}: {value!r}. Expected one of {allowed}. "
        "Case insensitive.",
    )


def check_list(param: str, value: list[Any], allowed: list[Any]) -> Verdict:
    got = [normalise(v) if type(v) is str else v for v in value]
    # an allowed "" (optional parameter) normalises to an empty list: [] then matches it
    if got in [_normalised_items(option) for option in allowed]:
        return VALID
    return invalid(
        "value_error:list/tuple",
        f"Invalid value for parameter {param!r}: {value!r}. Expected one of {allowed}.",
    )


_DICT_UNCLEAR = invalid("dict_checker:unclear")


def _check_dict_against(value: dict[str, Any], option: Any) -> Verdict:
    errors: list[str] = []
    error_type = "dict_checker:unclear"
    for key, item in value.items():
        if key not in option:
            errors.append(f"Unexpected dict key parameter: '{key}'.")
            error_type = "value_error:dict_key"
            break
        got = normalise(item) if type(item) is str else item
        wanted = _normalised_items(option[key])
        if got not in wanted:
            errors.append(
                f"Invalid value for parameter {key!r}: {item!r}. Expected one of {wanted}."
            )
            error_type = "value_error:dict_value"
            break
    # The reference looks for missing keys even after a failure above, so one verdict can
    # carry two messages, the error type being the last one's.
    for key, allowed in option.items():
        if key not in value and "" not in allowed:
            errors.append(f"Missing dict key parameter: '{key}'.")
            error_type = "value_error:dict_key"
            break
    if not errors:
        return VALID
    return invalid(error_type, *errors)


def check_dict(param: str, value: dict[str, Any], allowed: list[Any]) -> Verdict:
    """Valid when ``value`` matches one allowed dictionary; otherwise the last one's failure
    (an unspecific one when every allowed value is "")."""
    outcome = _DICT_UNCLEAR
    for option in allowed:
        if option == "":
            continue
        outcome = _check_dict_against(value, option)
        if outcome.valid:
            return VALID
    return outcome


def check_list_of_dicts(param: str, value: list[Any], allowed: list[Any]) -> Verdict:
    """Dictionaries compared position by position with one allowed list; the failure reported
    is the last one met.

    One departure from the reference: an item that is not a dictionary (possible when "" is
    among the allowed values, which lets any items through the type check) crashes BFCL's
    evaluator; here it is a nested type error."""
    outcome = invalid("list_dict_checker:unclear")
    for option in allowed:
        if len(value) != len(option):
            outcome = invalid(
                "value_error:list_dict_count", "Wrong number of dictionaries in the list."
            )
            continue
        matched = True
        for position, item in enumerate(value):
            if type(item) is not dict:  # where the reference stops, with no verdict
                return invalid(
                    "type_error:nested",
                    f"Nested type checking failed for parameter {param!r}. Expected outer type "
                    f"array with inner type {dict}. Parameter value: {value!r}.",
                )
            outcome = check_dict(param, item, [option[position]])
            if not outcome.valid:
                matched = False
                break
        if matched:
            return VALID
    return outcome
