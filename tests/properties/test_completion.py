"""Property: ``parse_completion`` reads any JSON an endpoint sends as a Reply (odd shapes are
the model's output, kept and scored) or, when there is no message at all, raises InfraError
(retried, then recorded as an error). Nothing else escapes, and a Reply can always be stored."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from properties.strategies import FUZZ, json_values, texts

from toolscore.models.base import InfraError
from toolscore.models.openai.provider import parse_completion
from toolscore.types import Reply

calls = st.fixed_dictionaries({}, optional={
    "id": json_values, "type": json_values,
    "function": json_values | st.fixed_dictionaries({}, optional={
        "name": json_values, "arguments": json_values})})
messages = st.fixed_dictionaries({}, optional={
    "role": json_values, "content": json_values,
    "tool_calls": json_values | st.lists(calls | json_values, max_size=3)})
choices = st.fixed_dictionaries({}, optional={
    "message": messages | json_values, "finish_reason": json_values})
completions = st.fixed_dictionaries({}, optional={
    "choices": st.lists(choices | json_values, max_size=2) | json_values,
    "usage": json_values | st.dictionaries(st.sampled_from(["prompt_tokens",
                                                            "completion_tokens"]), json_values),
    "model": json_values | texts})


def _check(resp: Any) -> None:
    try:
        reply = parse_completion(resp, model="fallback")
    except InfraError:
        return
    assert isinstance(reply, Reply)
    assert reply.text is None or isinstance(reply.text, str)
    for call in reply.tool_calls:
        assert all(isinstance(v, str) for v in (call.id, call.name, call.arguments))
    assert reply.usage.input_tokens >= 0 and reply.usage.output_tokens >= 0
    json.dumps(reply.to_dict(), ensure_ascii=False).encode("utf-8")


@FUZZ
@given(resp=completions)
def test_completion_shapes_give_a_storable_reply_or_an_infra_error(resp: Any) -> None:
    _check(resp)


@FUZZ
@given(resp=json_values)
def test_any_json_at_all_gives_a_reply_or_an_infra_error(resp: Any) -> None:
    _check(resp)
