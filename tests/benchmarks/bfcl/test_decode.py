"""Replies kept and decoded as BFCL's OpenAI function-calling handler keeps and decodes them,
quirks included (an empty text decodes to no call; any other text fails to decode)."""

from __future__ import annotations

from toolscore.benchmarks.bfcl.decode import raw_result, try_decode
from toolscore.types import Message, Reply, ToolCall


def _reply(content: str | None, *calls: tuple[str, str]) -> Reply:
    return Reply(Message(role="assistant", content=content,
                         tool_calls=[ToolCall(f"c{i}", n, a) for i, (n, a) in enumerate(calls)]))


def test_calls_are_kept_as_name_to_arguments_text() -> None:
    raw = raw_result(_reply("ignored", ("f", '{"a": 1}'), ("g", "{}")))
    assert raw == [{"f": '{"a": 1}'}, {"g": "{}"}]
    assert try_decode(raw) == ([{"f": {"a": 1}}, {"g": {}}], None)


def test_text_is_kept_and_fails_to_decode() -> None:
    assert raw_result(_reply("I cannot help.")) == "I cannot help."
    assert try_decode("I cannot help.") == (None, "'str' object has no attribute 'keys'")


def test_an_empty_text_decodes_to_no_call() -> None:
    assert try_decode("") == ([], None)


def test_no_content_is_kept_as_null_and_fails_to_decode() -> None:
    assert raw_result(_reply(None)) is None
    assert try_decode(None) == (None, "'NoneType' object is not iterable")


def test_malformed_arguments_fail_with_the_json_error() -> None:
    assert try_decode([{"f": "{not json"}]) == (
        None, "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)")
