"""The llama.cpp grammar (GBNF) under which the embedded model writes tool calls.

Under this grammar a call is always ``<tool_call>{"name": NAME, "arguments": ARGS}</tool_call>``
with NAME one of the offered tools and ARGS a JSON object that follows that tool's parameter
schema (llama-cpp-python's JSON-schema converter writes those rules; a schema it cannot convert
falls back to any JSON object; its strings hold no raw control character, as JSON requires:
``JSON_CHAR``). A reply holds 1 to ``max_calls`` such blocks, one per line. So a call can only
be malformed when the token cap cuts it short.

The grammar is only for calls: when the model may also answer in text ("auto"), it chooses by
its first token, unconstrained (see :mod:`toolscore.models.local.model`), because checking every
token of free text against a grammar adds about 40% to the cost of generating it (7 of 17 ms
per token on one thread, measured).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from toolscore.models.local.chatml import CALL_CLOSE, CALL_OPEN
from toolscore.types import ToolSpec

ANY_OBJECT: dict[str, Any] = {"type": "object"}
# One character of a JSON string: anything but a quote, a backslash or a control character
# (U+0000-U+001F, and DEL, which llama.cpp's own converter also leaves out), or an escape.
# llama-cpp-python's converter allows raw controls (``[^"\\]``): the model then wrote a raw
# newline inside a string, which no strict JSON parser reads. Its rule is replaced by this one.
JSON_CHAR = (r'char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] '
             r'[0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])')
# What a reply of the embedded model depends on besides its prompt: part of its cache identity.
FORMAT = "toolscore-calls-2"


def literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + '"'


def _converter() -> Any:
    from llama_cpp.llama_grammar import SchemaConverter

    # llama_cpp leaves SchemaConverter.__init__ unannotated
    return SchemaConverter(  # type: ignore[no-untyped-call]
        prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)


def _arguments_rules(schema: Any, name: str) -> list[str]:
    """GBNF rules whose rule ``name`` is one tool's arguments; any JSON object if the schema
    cannot be converted, so one odd schema never takes the whole model down."""
    for candidate in (schema if isinstance(schema, dict) and schema else ANY_OBJECT, ANY_OBJECT):
        conv = _converter()
        try:
            conv.visit(conv.resolve_refs(json.loads(json.dumps(candidate)), "tool"), name)
        except Exception:  # the converter raises many kinds of errors: fall back
            continue
        return [JSON_CHAR if line.startswith("char ::= ") else line
                for line in conv.format_grammar().splitlines()]
    raise AssertionError("a plain JSON object always converts")


def call_grammar(tools: list[ToolSpec], *, only: str | None = None, max_calls: int = 1) -> str:
    """GBNF for 1..``max_calls`` call blocks over ``tools`` (or just the tool named ``only``).

    Cached: converting ToolTalk's 28 schemas takes a tenth of a second, and every call of a
    run offers the same tools."""
    chosen = [(t.name, t.parameters) for t in tools if only is None or t.name == only]
    if not chosen:
        raise ValueError(f"no tool named {only!r} among the offered tools")
    return _grammar(json.dumps(chosen, sort_keys=True), max_calls)


@functools.lru_cache(maxsize=64)
def _grammar(chosen_json: str, max_calls: int) -> str:
    rules: dict[str, None] = {}  # ordered set: shared primitives (string, space...) once
    alternatives = []
    for i, (name, parameters) in enumerate(json.loads(chosen_json)):
        rules.update(dict.fromkeys(_arguments_rules(parameters, f"args{i}")))
        head = json.dumps({"name": name}, ensure_ascii=False)[:-1] + ', "arguments": '
        alternatives.append(f"( {literal(head)} args{i} )")
    more = f' ( "\\n" call ){{0,{max_calls - 1}}}' if max_calls > 1 else ""
    return "\n".join([f"root ::= call{more}",
                      f"call ::= {literal(CALL_OPEN)} ( {' | '.join(alternatives)} ) "
                      f"{literal('}' + CALL_CLOSE)}", *rules]) + "\n"
