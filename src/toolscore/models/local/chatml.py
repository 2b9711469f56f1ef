"""The embedded model's prompt: its own chat template, our tool format, and reading replies back.

Why not llama-cpp-python's ``chatml-function-calling`` handler: it renders with HTML
autoescaping, so ``"`` reached SmolLM2 as ``&#34;`` and ``<`` as ``&lt;``, and every figure
measured with it was measured on garbled prompts. Here the conversation is rendered with the
chat template stored in the GGUF file itself (``tokenizer.chat_template``), by a Jinja sandbox
with escaping off, so every message reaches the model byte for byte.

The tool format is ours (``FORMAT``, part of the response cache's identity), in the
``<tool_call>`` tag style common in open chat models' fine-tuning data:

* The system turn starts with the tool list, one JSON object per line (name, description,
  JSON-schema parameters) between ``<tools>`` and ``</tools>``, and a one-line instruction; the
  caller's system prompt follows (``DEFAULT_SYSTEM`` when there is none). The tools come first
  because they are the part every conversation of a benchmark shares, so llama.cpp can reuse
  their evaluated prefix across conversations.
* A tool call is ``<tool_call>{"name": "NAME", "arguments": {...}}</tool_call>``; several calls
  are several blocks on consecutive lines. Calls are generated under a grammar (see
  :mod:`toolscore.models.local.toolgrammar`), so this shape holds unless the token cap cuts a call.
* One worked exchange follows the system turn when tools are offered (``example_turns``: the user
  asks for the time in Tokyo, the assistant calls a ``GetTime`` tool, reads its result and
  answers). SmolLM2-135M does not follow a written instruction to call tools: over the
  demo's eight first turns, the probability that its first token opens a call is 0.01% to 6%
  without the exchange (never the likeliest token) and 0.5% to 38% with it (the likeliest in
  five). ``GetTime`` is not an offered tool, so the grammar never lets the model call it.
* Tool results go back as a user turn of ``<tool_response>{"name": ..., "content": ...}
  </tool_response>`` blocks: small chat templates know only system, user and assistant turns
  (SmolLM2's would print a ``tool`` role the model never saw in training).
* Without tools the system prompt is the caller's (or ``DEFAULT_SYSTEM``) and nothing is added.
"""

from __future__ import annotations

import functools
import json
import re
from datetime import datetime
from typing import Any

from toolscore.types import Message, ToolCall, ToolSpec

FORMAT = "toolscore-tags-1+example"
CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
RESULT_OPEN, RESULT_CLOSE = "<tool_response>", "</tool_response>"
DEFAULT_SYSTEM = "You are a helpful assistant."
TOOLS_INTRO = ("You can call the tools listed below, one JSON object per line: the tool's name, "
               "what it does and the JSON schema of its arguments.")
TOOLS_HOWTO = ("To call a tool, reply with only " + CALL_OPEN
               + '{"name": "TOOL_NAME", "arguments": {ARGUMENTS}}' + CALL_CLOSE
               + "; its result comes back to you in " + RESULT_OPEN + " tags. Otherwise reply "
               "to the user in plain text.")
# Used when a GGUF carries no template: plain ChatML, the format SmolLM2 was trained on.
CHATML = ("{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\n' + m['content'] "
          "+ '<|im_end|>\n' }}{% endfor %}"
          "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")


def tools_block(tools: list[ToolSpec]) -> str:
    lines = [TOOLS_INTRO, "<tools>"]
    lines += [json.dumps({"name": t.name, "description": t.description,
                          "parameters": t.parameters}, ensure_ascii=False) for t in tools]
    lines += ["</tools>", TOOLS_HOWTO]
    return "\n".join(lines)


def call_text(call: ToolCall) -> str:
    """One call as the model writes it; the arguments are kept as they were written."""
    head = json.dumps({"name": call.name}, ensure_ascii=False)[:-1]
    return f'{CALL_OPEN}{head}, "arguments": {call.arguments.strip() or "{}"}}}{CALL_CLOSE}'


def result_text(name: str, content: str | None) -> str:
    """One tool result block. Content that is JSON (as every toolscore tool result is) is
    embedded as it is, not re-escaped into a string: fewer tokens, and readable."""
    text = content or ""
    try:
        json.loads(text)
    except ValueError:
        text = json.dumps(text, ensure_ascii=False)
    head = json.dumps({"name": name}, ensure_ascii=False)[:-1]
    return f'{RESULT_OPEN}{head}, "content": {text.strip()}}}{RESULT_CLOSE}'


def example_turns() -> list[dict[str, str]]:
    """The worked exchange shown before the conversation when tools are offered."""
    call = ToolCall("example", "SetTimer", '{"minutes": 10}')
    return [{"role": "user", "content": "Please set a timer for ten minutes."},
            {"role": "assistant", "content": call_text(call)},
            {"role": "user", "content": result_text("SetTimer", '{"timer_id": "t-1"}')},
            {"role": "assistant", "content": "Done: your 10-minute timer is set."}]


def chat_messages(messages: list[Message], tools: list[ToolSpec]) -> list[dict[str, str]]:
    """Our transcript as the plain ``{"role", "content"}`` list a chat template renders.

    There is always a system message first (the tools live there); consecutive tool results
    become one user turn.
    """
    system = DEFAULT_SYSTEM
    rest = messages
    if messages and messages[0].role == "system":
        system, rest = messages[0].content or "", messages[1:]
    if tools:
        system = tools_block(tools) + "\n\n" + system
    out = [{"role": "system", "content": system}]
    if tools:
        out += example_turns()
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    after_result = False
    for m in rest:
        if m.role == "tool":
            text = result_text(m.name or names.get(m.tool_call_id or "", "tool"), m.content)
            if after_result:
                out[-1]["content"] += "\n" + text
            else:
                out.append({"role": "user", "content": text})
            after_result = True
            continue
        after_result = False
        content = m.content or ""
        if m.tool_calls:
            calls = "\n".join(call_text(c) for c in m.tool_calls)
            content = f"{content}\n{calls}" if content else calls
        out.append({"role": m.role, "content": content})
    return out


@functools.lru_cache(maxsize=8)
def _compile(template: str) -> Any:
    """A Jinja template as Hugging Face chat templates expect to be run: sandboxed, blocks
    trimmed, ``loopcontrols``, ``raise_exception``, ``tojson`` without ASCII escaping, and
    autoescaping OFF (the whole point: the model must read the text, not HTML entities)."""
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, autoescape=False,
                                        extensions=[loopcontrols])

    def raise_exception(message: str) -> None:
        raise ValueError(f"chat template: {message}")

    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    env.filters["tojson"] = lambda v, indent=None: json.dumps(v, ensure_ascii=False,
                                                             indent=indent)
    return env.from_string(template)


def render(template: str | None, chat: list[dict[str, str]], *, bos_token: str = "",
           eos_token: str = "") -> str:
    """The prompt text: ``chat`` rendered by ``template`` (ChatML when None), ending with the
    opening of the assistant's turn."""
    text: str = _compile(template or CHATML).render(messages=chat, add_generation_prompt=True,
                                                    bos_token=bos_token, eos_token=eos_token)
    return text


_HEAD = re.compile(r'\s*<tool_call>\s*\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*'
                   r'"arguments"\s*:\s*')
_TAIL = re.compile(r"\s*\}\s*</tool_call>")


def parse_reply(text: str) -> tuple[str | None, list[tuple[str, str]]]:
    """The generated text as (content, [(tool name, raw argument text)]).

    A reply that starts with a call block is read as calls. Arguments are kept as written;
    a call cut short by the token cap keeps whatever argument text there is (malformed JSON,
    scored as the model's mistake). Text that is not a call block is the content.
    """
    calls: list[tuple[str, str]] = []
    pos = 0
    decoder = json.JSONDecoder()
    while True:
        head = _HEAD.match(text, pos)
        if head is None:
            break
        name = json.loads(head.group(1))
        start = head.end()
        try:
            _, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:  # cut short: keep the rest, minus a closing we recognise
            rest = text[start:].rstrip()
            for closing in ("}" + CALL_CLOSE, CALL_CLOSE):
                rest = rest[:-len(closing)] if rest.endswith(closing) else rest
            calls.append((name, rest))
            return None, calls
        calls.append((name, text[start:end]))
        tail = _TAIL.match(text, end)
        if tail is None:
            return None, calls
        pos = tail.end()
    if calls:
        return None, calls
    return text, []
