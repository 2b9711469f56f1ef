"""The oracle (every possible answer's first allowed values, written as a model would send
them) is valid on every entry of every single-turn category, and scoring all of them is fast."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from support.data import dataset

from toolscore.benchmarks.bfcl.checker import check_entry

AST_CATEGORIES = (
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
RELEVANCE_CATEGORIES = ("irrelevance", "live_irrelevance", "live_relevance")
OMIT = object()
# Entries no reply can pass, in BFCL's checker as in ours (checked against bfcl-eval): the
# answer of an ArrayList of "any" holds typed items while the conversion keeps each item as
# text; a required parameter's allowed values are empty; the answer names a parameter the
# function does not document. Each fails the oracle with the error type given.
UNREACHABLE = {
    "simple_java_36": "value_error:list/tuple",
    "simple_java_65": "value_error:list/tuple",
    "live_simple_106-63-0": "simple_function_checker:missing_required",
    "live_simple_112-68-0": "simple_function_checker:missing_required",
    "live_multiple_862-181-3": "simple_function_checker:unexpected_param",
    "live_multiple_964-207-0": "simple_function_checker:missing_required",
}


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def load(category: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    root = dataset("bfcl")
    entries = read_lines(root / f"BFCL_v4_{category}.json")
    if category in RELEVANCE_CATEGORIES:
        return entries, None
    return entries, read_lines(root / "possible_answer" / f"BFCL_v4_{category}.json")


def first(allowed: list[Any], required: bool) -> Any:
    """The value an oracle sends: the first allowed one ("" marks an omissible parameter, so
    a required one takes the first other value); dictionaries take their keys' first values.
    ``OMIT`` when the parameter is left out."""
    candidates = [v for v in allowed if v != ""] if required else allowed
    if not candidates:
        return "" if required and allowed else OMIT
    value = candidates[0]
    if value == "":
        return OMIT
    if isinstance(value, dict):
        return _first_keys(value)
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [_first_keys(item) for item in value]
    return value


def _first_keys(allowed: dict[str, Any]) -> dict[str, Any]:
    return {k: v[0] for k, v in allowed.items() if v and v[0] != ""}


def java_text(value: Any, kind: str, item_kind: str | None) -> str:
    """A value as Java source the checker's conversion reads back."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        puts = " ".join(f'put("{k}", {java_literal(v)});' for k, v in value.items())
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    if isinstance(value, list):
        if kind == "ArrayList":
            items = ", ".join(java_item(v, item_kind, quote=True) for v in value)
            return f"new ArrayList<>(Arrays.asList({items}))"
        items = ", ".join(java_item(v, item_kind, quote=False) for v in value)
        return f"new Object[]{{{items}}}"
    if kind == "long":
        return f"{value}L"
    if kind == "float":
        return f"{value}f"
    return str(value)


def java_item(value: Any, kind: str | None, quote: bool) -> str:
    if kind in ("String", "char"):
        return f'"{value}"' if quote else str(value)
    if kind == "any":
        return java_literal(value)
    return java_text(value, kind or "any", None)


def java_literal(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    return java_text(value, "any", None)


def js_text(value: Any, kind: str) -> str:
    """A value as JavaScript source the checker's conversion reads back."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f'"{k}": {js_literal(v)}' for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(js_literal(v) for v in value) + "]"
    return str(value)


def js_literal(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    return js_text(value, "any")


def oracle_call(category: str, entry: dict[str, Any], answer: dict[str, Any]) -> list[Any]:
    """The possible answer's first allowed values as calls an OpenAI-style model would make
    (dots in function names as underscores; Java and JavaScript values as source text)."""
    functions = {f["name"]: f for f in entry["function"]}
    calls = []
    for expected in answer["ground_truth"]:
        name, allowed = next(iter(expected.items()))
        document = functions.get(name, {"parameters": {"properties": {}, "required": []}})
        properties = document["parameters"]["properties"]
        required = document["parameters"].get("required", [])
        arguments = {}
        for param, values in allowed.items():
            if param not in properties and "" in values:
                continue  # an undocumented parameter the answer lets us leave out
            value = first(values, param in required)
            if value is OMIT:
                continue
            kind = properties.get(param, {}).get("type")
            item_kind = properties.get(param, {}).get("items", {}).get("type")
            if "javascript" in category:
                value = js_text(value, kind)
            elif "java" in category:
                value = java_text(value, kind, item_kind)
            arguments[param] = value
        calls.append({name.replace(".", "_"): arguments})
    return calls


@pytest.mark.parametrize("category", AST_CATEGORIES)
def test_the_oracle_is_valid_on_every_entry(category: str) -> None:
    entries, answers = load(category)
    assert answers is not None and len(entries) == len(answers)
    wrong = {}
    for entry, answer in zip(entries, answers, strict=True):
        verdict = check_entry(category, entry, answer, oracle_call(category, entry, answer))
        if verdict.error_type != UNREACHABLE.get(entry["id"]):
            wrong[entry["id"]] = verdict
    assert not wrong, list(wrong.items())[:3]


@pytest.mark.parametrize("category", RELEVANCE_CATEGORIES)
def test_relevance_follows_whether_a_call_is_made(category: str) -> None:
    entries, _ = load(category)
    call = [{"get_weather": {"city": "Paris"}}]
    wanted_call = category == "live_relevance"
    for entry in entries:
        assert check_entry(category, entry, None, call).valid is wanted_call
        assert check_entry(category, entry, None, []).valid is not wanted_call
        assert check_entry(category, entry, None, None, "no call").valid is not wanted_call


def test_scoring_every_ground_truth_takes_well_under_a_few_seconds() -> None:
    work = []
    for category in AST_CATEGORIES:
        entries, answers = load(category)
        assert answers is not None
        work += [
            (category, entry, answer, oracle_call(category, entry, answer))
            for entry, answer in zip(entries, answers, strict=True)
        ]
    started = time.process_time()
    for category, entry, answer, calls in work:
        check_entry(category, entry, answer, calls)
    assert time.process_time() - started < 1.5
