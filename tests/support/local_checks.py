"""Checks of the embedded model that load llama.cpp: each runs in a child process of its own
(:func:`support.child.run_in_child`), called by a test in tests/models/test_local.py. A
failed assertion (or a crash) ends the child with a non-zero status, which fails that test."""

from __future__ import annotations

import json

from toolscore.models.local import chatml
from toolscore.types import GenerateConfig, Message, ToolSpec

TOOLS = [ToolSpec("get_weather", "Get the current weather for a city",
                  {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]})]


def _raises(exc: type[BaseException], fn: object, *args: object, match: str = "") -> None:
    try:
        fn(*args)  # type: ignore[operator]
    except exc as e:
        assert match in str(e), str(e)
        return
    raise AssertionError(f"{fn} did not raise {exc.__name__}")


def call_grammar_lists_the_offered_tools() -> None:
    from toolscore.models.local.toolgrammar import JSON_CHAR, call_grammar

    tools = [*TOOLS, ToolSpec("Odd \"one\"", "no schema", {}),
             ToolSpec("weird", "unconvertible", {"type": "object",
                                                 "properties": {"x": {"$ref": "#/nope"}}})]
    grammar = call_grammar(tools, max_calls=3)
    assert grammar.startswith('root ::= call ( "\\n" call ){0,2}\n')
    assert '"<tool_call>"' in grammar and '"}</tool_call>"' in grammar
    assert '{\\"name\\": \\"get_weather\\", \\"arguments\\": ' in grammar
    assert '\\"Odd \\\\\\"one\\\\\\"\\"' in grammar  # the name as JSON, escaped for GBNF
    assert "args0-city" in grammar  # get_weather's schema became rules
    assert JSON_CHAR in grammar.splitlines() and '[^"\\\\] |' not in grammar
    only = call_grammar(tools, only="get_weather")
    assert only.startswith("root ::= call\n") and "weird" not in only
    _raises(ValueError, lambda: call_grammar(tools, only="nope"), match="no tool named 'nope'")


def plan_follows_tool_choice() -> None:
    from toolscore.models.local.engine import CALL_TOKENS, TEXT_TOKENS, plan

    assert plan([], GenerateConfig()) == (None, False, TEXT_TOKENS)
    assert plan(TOOLS, GenerateConfig(tool_choice="none")) == (None, False, TEXT_TOKENS)
    grammar, choose, cap = plan(TOOLS, GenerateConfig(tool_choice="auto", max_tokens=None))
    assert grammar and choose and cap == max(TEXT_TOKENS, CALL_TOKENS)
    grammar, choose, cap = plan(TOOLS, GenerateConfig(tool_choice="required", max_tokens=8))
    assert grammar and not choose and cap == 8
    grammar, choose, _ = plan(TOOLS, GenerateConfig(tool_choice="get_weather"))
    assert grammar and not choose
    _raises(ValueError, lambda: plan(TOOLS, GenerateConfig(tool_choice="missing_tool")))


def _engine() -> object:
    from toolscore.models.local.engine import LlamaEngine
    from toolscore.models.local.model import find_gguf

    return LlamaEngine(find_gguf())


def strings_never_hold_control_characters() -> None:
    """Biased towards control characters, the model writes them wherever the grammar lets it:
    under the converter's own string rule, raw inside strings (invalid JSON); under ours, as
    escapes or whitespace between tokens (valid JSON)."""
    import numpy as np
    from llama_cpp import LlamaGrammar, LogitsProcessorList

    from toolscore.models.local.model import find_gguf, prompt_text
    from toolscore.models.local.toolgrammar import JSON_CHAR, call_grammar

    engine = _engine()
    llm = engine.llm  # type: ignore[attr-defined]
    controls = [t for t in range(llm.n_vocab())
                if any(ord(c) < 0x20 for c in llm.detokenize([t]).decode("utf-8", "replace"))]
    assert len(controls) > 10  # newlines, tabs and runs of them

    def biased(_ids: object, scores: np.ndarray) -> np.ndarray:
        scores[controls] += 12.0
        return scores

    note = ToolSpec("AddNote", "Save a note.", {"type": "object", "properties": {
        "title": {"type": "string"}, "body": {"type": "string"}},
        "required": ["title", "body"]})
    ours = call_grammar([note], only="AddNote")
    theirs = ours.replace(JSON_CHAR, JSON_CHAR.replace("\\x7F\\x00-\\x1F", ""))
    assert theirs != ours
    prompts = ["Save a note titled Groceries listing milk, eggs and bread, one per line.",
               "Note down this poem:\nRoses are red\nViolets are blue",
               "Save a note with a table: name<TAB>qty, apples<TAB>3"]

    def calls(grammar: str) -> list[str]:
        written = []
        for text in prompts:
            tokens = engine.tokenize(prompt_text(find_gguf(), [  # type: ignore[attr-defined]
                Message(role="user", content=text)], [note]), "")
            out = []
            for token in llm.generate(tokens, temp=0.0, reset=True,
                                      grammar=LlamaGrammar.from_string(grammar, verbose=False),
                                      logits_processor=LogitsProcessorList([biased])):
                if token == llm.token_eos() or len(out) >= 120:
                    break
                out.append(token)
            written.append(llm.detokenize(out).decode("utf-8", "replace"))
        return written

    def strict_json(reply: str) -> bool:
        _, parsed = chatml.parse_reply(reply)
        if not parsed:
            return False
        try:
            json.loads(parsed[0][1])
        except ValueError:
            return False
        return True

    unsafe = calls(theirs)
    assert any(any(ord(c) < 0x20 and c not in "\n" for c in r) or not strict_json(r)
               for r in unsafe), unsafe  # the check can fail: raw controls got in
    safe = calls(ours)
    finished = [r for r in safe if r.endswith(chatml.CALL_CLOSE)]
    assert finished and all(strict_json(r) for r in finished), safe


def prefix_reuse_never_changes_a_reply() -> None:
    import numpy as np

    from toolscore.models.local.model import find_gguf, prompt_text

    engine = _engine()
    llm = engine.llm  # type: ignore[attr-defined]
    path = find_gguf()

    def tokens(messages: list[Message]) -> list[int]:
        return engine.tokenize(prompt_text(path, messages, []), "")  # type: ignore[attr-defined]

    def logits() -> np.ndarray:
        return np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(llm.n_vocab(),)).copy()

    def empty() -> None:
        engine.states.clear()  # type: ignore[attr-defined]
        llm.reset()
        llm._ctx.kv_cache_clear()

    states = engine.states  # type: ignore[attr-defined]
    first = [Message(role="user", content="I am planning breakfast for the whole week and I "
                     "keep forgetting things at the shop. Please add 2 cartons of oat milk.")]
    other = [Message(role="user", content="How many km is 26.2 miles? My friend is running a "
                     "marathon next month and I want to write it on a banner.")]
    empty()
    reply, _, _ = engine.complete(tokens(first), None, 40, False)  # type: ignore[attr-defined]
    follow = [*first, Message(role="assistant", content=engine.text(reply)),  # type: ignore
              Message(role="user", content="Thanks! Now add the big loaf of bread too.")]
    engine.complete(tokens(other), None, 8, False)  # type: ignore[attr-defined]
    restored = states.restored
    states.evaluate(llm, tokens(follow))
    reused = logits()
    assert states.restored == restored + 1 and states.reused >= 32
    empty()
    states.evaluate(llm, tokens(follow))
    assert np.array_equal(logits(), reused)
    empty()
