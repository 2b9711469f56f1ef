"""Property: ``ToolCall.parse_arguments`` never lets an exception other than ArgumentsError
escape, whatever text the model wrote, and what it returns can be stored (a dict of UTF-8
encodable JSON)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from properties.strategies import FUZZ, argument_texts, json_values, texts

from toolscore.types import ArgumentsError, ToolCall


def _check(call: ToolCall) -> None:
    try:
        value = call.parse_arguments()
    except ArgumentsError as e:
        assert str(e).encode("utf-8")  # the message is shown and stored: it must encode
        return
    assert isinstance(value, dict)
    json.dumps(value, ensure_ascii=False).encode("utf-8")


@FUZZ
@given(name=texts, arguments=argument_texts)
def test_parse_arguments_returns_a_dict_or_records_the_mistake(name: str, arguments: str) -> None:
    _check(ToolCall("c", name, arguments))


@FUZZ
@given(raw=json_values)
def test_calls_read_back_from_any_stored_shape_parse_or_fail_cleanly(raw: Any) -> None:
    """A stored call whose ``arguments`` is not a string (an old record, another tool's file)."""
    call = ToolCall.from_dict({"id": "c", "function": {"name": "X", "arguments": raw}})
    assert isinstance(call.arguments, str)
    _check(call)
