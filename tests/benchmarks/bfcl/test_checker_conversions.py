"""Java and JavaScript arguments arrive as source text and are converted as BFCL converts them,
quirks included; then the usual rules apply."""

from __future__ import annotations

from typing import Any

import pytest

from toolscore.benchmarks.bfcl.checker import Verdict, check_entry, java, javascript


@pytest.mark.parametrize(("text", "kind", "items", "value"), [
    ("42", "integer", None, 42),
    ("-7", "short", None, -7),
    ("4.5", "integer", None, "4.5"),  # not an integer: kept as text
    ("2.5f", "float", None, 2.5),
    ("2.5", "float", None, "2.5"),  # a float needs its suffix
    ("1e3", "double", None, 1000.0),
    ("12L", "long", None, 12),
    ("12", "long", None, "12"),
    ("true", "boolean", None, True),
    ("True", "boolean", None, "True"),
    ("'a'", "char", None, "'a'"),  # never unquoted
    ('"text"', "String", None, '"text"'),
    ("new int[]{1, 2, 3}", "Array", "integer", [1, 2, 3]),
    ('new String[]{"a", "b"}', "Array", "String", ['"a"', '"b"']),  # quotes kept in arrays
    ('new ArrayList<>(Arrays.asList("a", "b"))', "ArrayList", "String", ["a", "b"]),
    ("new ArrayList<Long>() {{ add(1L); add(2L); }}", "ArrayList", "long", [1, 2]),
    ("new ArrayList<>()", "ArrayList", "integer", []),
    ('new HashMap<String, Object>() {{ put("k", 1); put("s", "v"); }}', "HashMap", None,
     {"k": 1, "s": "v"}),
    ("new HashMap<>()", "HashMap", None, {}),
    ("myMap", "HashMap", None, "myMap"),
])
def test_java_values(text: str, kind: str, items: str | None, value: Any) -> None:
    assert java.convert(text, kind, items) == value
    assert type(java.convert(text, kind, items)) is type(value)


def test_java_types_bfcl_does_not_convert() -> None:
    with pytest.raises(NotImplementedError):
        java.convert("new HashSet<>()", "Set")
    with pytest.raises(ValueError, match="Unsupported type"):
        java.convert("1", "int")


@pytest.mark.parametrize(("text", "kind", "items", "value"), [
    ("'hi'", "String", None, "hi"),
    ('"hi"', "String", None, "hi"),
    ("hi", "String", None, "hi"),
    ("3", "integer", None, 3),
    ("3.5", "float", None, 3.5),
    ("1e3", "float", None, "1e3"),
    ("9n", "Bigint", None, 9),
    ("false", "Boolean", None, False),
    ("[1, 2]", "array", "integer", [1, 2]),
    ("['a', \"b\"]", "array", "String", ["a", "b"]),
    ("new Array(1.5, 2)", "array", "float", [1.5, 2.0]),
    ("[[1, 2], [3, 'x']]", "array", "array", [[1, 2], [3, "x"]]),
    ("[]", "array", "integer", []),
    ("[1, 2]", "array", "object", "[1, 2]"),  # an unknown item type: kept as text
    ("{a: 1, 'b': 'two', c: [true, 2]}", "dict", None, {"a": 1, "b": "two", "c": [True, 2]}),
    ("{}", "dict", None, {}),
    ("{outer: {inner: 1}}", "dict", None, {"outer": "{inner: 1"}),  # cut at the first "}"
    ("config", "dict", None, "config"),
])
def test_javascript_values(text: str, kind: str, items: str | None, value: Any) -> None:
    assert javascript.convert(text, kind, items) == value


def java_entry(kind: str, items: str | None = None) -> dict[str, Any]:
    details: dict[str, Any] = {"type": kind}
    if items:
        details["items"] = {"type": items}
    return {"id": "simple_java_0", "function": [{
        "name": "Store.put", "parameters": {"type": "dict", "properties": {"value": details},
                                            "required": ["value"]}}]}


def check(category: str, entry: dict[str, Any], allowed: list[Any], value: Any) -> Verdict:
    answer = {"id": entry["id"], "ground_truth": [{"Store.put": {"value": allowed}}]}
    return check_entry(category, entry, answer, [{"Store_put": {"value": value}}])


def test_java_arguments_must_be_text() -> None:
    assert check("simple_java", java_entry("integer"), [42], "42").valid
    assert check("simple_java", java_entry("integer"), [42], 42) == Verdict(
        False, "type_error:java",
        ("Incorrect type for parameter 'value'. Expected type String, got int. "
         "Parameter value: 42.",))


def test_java_values_converted_then_compared() -> None:
    assert check("simple_java", java_entry("long"), [5], "5L").valid
    assert check("simple_java", java_entry("long"), [5], "6L").error_type == "value_error:others"
    entry = java_entry("ArrayList", "integer")
    assert check("simple_java", entry, [[1, 2]], "new ArrayList<>(Arrays.asList(1, 2))").valid
    # text that does not parse is a string: a type error unless the answer is a variable name
    assert check("simple_java", java_entry("long"), [5], "five").error_type == (
        "type_error:simple")
    assert check("simple_java", java_entry("integer"), ["MAX"], "MAX").valid


def test_javascript_arguments_must_be_text() -> None:
    entry = java_entry("Boolean")
    entry["id"] = "simple_javascript_0"
    assert check("simple_javascript", entry, [True], "true").valid
    assert check("simple_javascript", entry, [True], True) == Verdict(
        False, "type_error:js",
        ("Incorrect type for parameter 'value'. Expected type String, got bool. "
         "Parameter value: True.",))


def test_javascript_objects_compared_key_by_key() -> None:
    entry = java_entry("dict")
    entry["id"] = "simple_javascript_1"
    allowed = [{"mode": ["fast"], "retries": [3, ""]}]
    assert check("simple_javascript", entry, allowed, "{mode: 'FAST', retries: 3}").valid
    assert check("simple_javascript", entry, allowed, "{retries: 3}").error_type == (
        "value_error:dict_key")
