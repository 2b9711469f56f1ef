"""The llama.cpp grammar (GBNF) under which the embedded model writes tool calls.

Under this grammar a call is always ``<tool_call>{"name": NAME, "arguments": ARGS}</tool_call>``
with NAME one of the offered tools and ARGS a JSON object that follows that tool's parameter
schema (llama-cpp-python's JSON-schema converter writes those rules; a schema it cannot convert
falls back to any JSON object). A reply holds 1 to ``max_calls`` such blocks, one per line. So
a call can only be malformed when the token cap cuts it short.

The grammar is only for calls: when the model may also answer in text ("auto"), it chooses by
its first token, unconstrained (see :mod:`toolscore.models.local`), because checking every
token of free text against a grammar costs as much as generating it.
"""

from __future__ import annotations

import json
from typing import Any

from toolscore.models.chatml import CALL_CLOSE, CALL_OPEN
from toolscore.types import ToolSpec

ANY_OBJECT: dict[str, Any] = {"type": "object"}


def literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + '"'


def _converter() -> Any:
    from llama_cpp.llama_grammar import SchemaConverter

    return SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)


def _arguments_rule(conv: Any, schema: dict[str, Any], name: str) -> str:
    """The rule name for one tool's arguments (added to ``conv``); any object if the schema
    cannot be converted, so one odd schema never takes the whole model down."""
    schema = schema if isinstance(schema, dict) and schema else ANY_OBJECT
    trial = _converter()
    try:
        trial.visit(trial.resolve_refs(json.loads(json.dumps(schema)), "tool"), name)
    except Exception:  # noqa: BLE001 - the converter raises many kinds; fall back, never fail
        schema = ANY_OBJECT
    return conv.visit(conv.resolve_refs(json.loads(json.dumps(schema)), "tool"), name)


def call_grammar(tools: list[ToolSpec], *, only: str | None = None, max_calls: int = 1) -> str:
    """GBNF for 1..``max_calls`` call blocks over ``tools`` (or just the tool named ``only``)."""
    chosen = [t for t in tools if only is None or t.name == only]
    if not chosen:
        raise ValueError(f"no tool named {only!r} among the offered tools")
    conv = _converter()
    alternatives = []
    for i, tool in enumerate(chosen):
        args = _arguments_rule(conv, tool.parameters, f"args{i}")
        head = json.dumps({"name": tool.name}, ensure_ascii=False)[:-1] + ', "arguments": '
        alternatives.append(f"{literal(head)} {args}")
    rules = conv.format_grammar()
    body = " | ".join(f"( {a} )" for a in alternatives)
    more = f' ( "\\n" call ){{0,{max_calls - 1}}}' if max_calls > 1 else ""
    return (f"root ::= call{more}\n"
            f"call ::= {literal(CALL_OPEN)} ( {body} ) {literal('}' + CALL_CLOSE)}\n"
            f"{rules}\n")
