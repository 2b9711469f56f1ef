"""Transcript types in the OpenAI chat shape, so every provider maps onto one vocabulary.

Tool-call arguments are kept as the raw string the model produced: a malformed argument string is
a model mistake that must be recorded and scored, so it cannot be parsed away at the boundary.
Everything here round-trips through JSON (``to_dict`` / ``from_dict``) because runs are stored as
JSON lines and must be re-scorable without the model.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolSpec:
    """What the model is shown about a tool: name, description and JSON-schema parameters.
    Frozen: the renderings of a tool list are memoised by the identity of its specs (and the
    schema dict is never edited once offered; see ``models.cache.ToolsMemo``)."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    # keys a document carries beside ``parameters`` (ToolTalk's carry ``required`` there, as
    # its legacy ``functions`` API took them); left out of ``to_dict`` while empty, so that
    # every cache key made before it existed stays valid
    extra: dict[str, Any] = field(default_factory=dict)

    def schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments, ``extra`` folded in: the ``tools`` API (and
        Anthropic's ``input_schema``) accepts nothing beside ``parameters`` (an unknown key
        there is refused by strict servers), and ``required`` belongs inside the schema."""
        if not self.extra:
            return self.parameters
        return {**self.parameters, **{k: v for k, v in self.extra.items()
                                      if k not in self.parameters}}

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.schema(),
            },
        }

    def to_openai_function(self) -> dict[str, Any]:
        """The document as the legacy ``functions`` API took it, ``extra`` beside
        ``parameters`` (what ToolTalk's runner sent)."""
        return {"name": self.name, "description": self.description,
                "parameters": self.parameters, **self.extra}

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if not d["extra"]:
            del d["extra"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ToolSpec:
        if "function" in d:  # OpenAI tool shape
            d = d["function"]
        return cls(
            name=d["name"],
            description=d.get("description", ""),
            parameters=d.get("parameters") or {"type": "object", "properties": {}},
            extra=dict(d.get("extra") or {}),
        )


class ArgumentsError(ValueError):
    """The model's argument string is not a JSON object."""


def clean_text(text: str) -> str:
    """``text`` with lone surrogates (half an emoji, from a model cut off mid-character)
    replaced by U+FFFD: they cannot be encoded as UTF-8, so left in they would break every
    writer downstream (run store, cache, report). Valid surrogate pairs are joined."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def clean_value(value: Any) -> Any:
    """:func:`clean_text` applied to every string (and key) of a JSON value."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [clean_value(v) for v in value]
    if isinstance(value, dict):
        return {clean_text(k) if isinstance(k, str) else k: clean_value(v)
                for k, v in value.items()}
    return value


@dataclass
class ToolCall:
    """One tool call as the model emitted it; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str = "{}"

    def parse_arguments(self) -> dict[str, Any]:
        """The arguments as a dict; raises ArgumentsError when the text is not a JSON object."""
        if not isinstance(self.arguments, str):
            raise ArgumentsError(f"arguments of {self._label()} are not a JSON text")
        try:
            value = json.loads(self.arguments) if self.arguments.strip() else {}
            if isinstance(value, dict):
                value = clean_value(value)
        except (ValueError, TypeError, RecursionError) as e:
            # ValueError covers bad JSON and Python's limit on integer digits; RecursionError
            # arrays nested thousands deep (in the decoder or in cleaning what it gave): all
            # the model's malformed output, never a crash.
            problem = ("nested too deeply" if isinstance(e, RecursionError)
                       else clean_text(str(e)[:200]))
            raise ArgumentsError(f"arguments of {self._label()} are not valid JSON: "
                                 f"{problem}") from None
        if not isinstance(value, dict):
            raise ArgumentsError(f"arguments of {self._label()} are not a JSON object")
        return value

    def _label(self) -> str:
        """The tool's name as an error message quotes it: UTF-8 safe and at most 200 chars (a
        model's name can be a megabyte of broken Unicode)."""
        name = self.name if isinstance(self.name, str) else repr(self.name)
        return clean_text(repr(name[:200] + ("…" if len(name) > 200 else "")))

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": self.arguments}}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ToolCall:
        fn = d.get("function", d)
        args = fn.get("arguments", "{}")
        if not isinstance(args, str):
            args = json.dumps(args)
        return cls(id=d.get("id", ""), name=fn.get("name", ""), arguments=args)


@dataclass
class ToolResult:
    """What executing a call produced: a JSON-able response, or an exception string."""

    call_id: str
    name: str
    response: Any = None
    exception: str | None = None

    def content(self) -> str:
        """The text the model sees in the tool message."""
        return json.dumps({"response": self.response, "exception": self.exception})

    def to_message(self) -> Message:
        return Message(role="tool", content=self.content(), tool_call_id=self.call_id,
                       name=self.name)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ToolResult:
        return cls(call_id=d.get("call_id", ""), name=d.get("name", ""),
                   response=d.get("response"), exception=d.get("exception"))


@dataclass
class Message:
    """One message of a transcript.

    ``reasoning`` is what a reasoning model wrote before its answer (a chat server's
    ``reasoning_content``, Anthropic's thinking, a summary of OpenAI's reasoning): kept in the
    transcript for people to read, never scored (a scorer reads ``content`` and ``tool_calls``).
    ``reasoning_items`` are the provider's own blocks that must be sent back with the
    conversation (Anthropic's signed thinking blocks, the Responses API's reasoning items), in
    the provider's shape, each with its ``type``; a provider sends back only the types it
    knows. Both are left out of :meth:`to_dict` while unset, so every cache key and record made
    before they existed stays the same.
    """

    role: Role
    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    reasoning: str | None = None
    reasoning_items: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            d["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.tool_call_id is not None:
            d["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            d["name"] = self.name
        if self.reasoning is not None:
            d["reasoning"] = self.reasoning
        if self.reasoning_items:
            d["reasoning_items"] = self.reasoning_items
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Message:
        reasoning = d.get("reasoning")
        items = d.get("reasoning_items")
        return cls(
            role=d["role"],
            content=d.get("content"),
            tool_calls=[ToolCall.from_dict(c) for c in d.get("tool_calls") or []],
            tool_call_id=d.get("tool_call_id"),
            name=d.get("name"),
            reasoning=reasoning if isinstance(reasoning, str) else None,
            reasoning_items=[i for i in items if isinstance(i, dict)]
            if isinstance(items, list) else [],
        )


@dataclass
class Usage:
    """Tokens and calls. ``reasoning_tokens``: the part of ``output_tokens`` a reasoning model
    spent reasoning, as the endpoint counts it (0: none, or not said); in :meth:`to_dict` only
    when not 0."""

    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    cached_calls: int = 0
    latency_s: float = 0.0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.calls += other.calls
        self.cached_calls += other.cached_calls
        self.latency_s += other.latency_s
        self.reasoning_tokens += other.reasoning_tokens

    def to_dict(self) -> dict[str, Any]:  # asdict's deep copy cost more than the whole record
        d: dict[str, Any] = {"input_tokens": self.input_tokens,
                             "output_tokens": self.output_tokens, "calls": self.calls,
                             "cached_calls": self.cached_calls, "latency_s": self.latency_s}
        if self.reasoning_tokens:
            d["reasoning_tokens"] = self.reasoning_tokens
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Usage:
        return cls(**{k: d[k] for k in ("input_tokens", "output_tokens", "calls",
                                        "cached_calls", "latency_s", "reasoning_tokens")
                      if k in d})


@dataclass
class Reply:
    """One model completion: an assistant message plus accounting. ``api``: the request shape
    the reply came from when the provider chose among several ("functions" or "tools", see
    ``GenerateConfig.call_api``); None otherwise."""

    message: Message
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    model: str | None = None
    api: str | None = None

    @property
    def text(self) -> str | None:
        return self.message.content

    @property
    def tool_calls(self) -> list[ToolCall]:
        return self.message.tool_calls

    def to_dict(self) -> dict[str, Any]:
        d = {"message": self.message.to_dict(), "usage": self.usage.to_dict(),
             "finish_reason": self.finish_reason, "model": self.model}
        if self.api is not None:
            d["api"] = self.api
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Reply:
        api = d.get("api")
        return cls(message=Message.from_dict(d["message"]),
                   usage=Usage.from_dict(d.get("usage") or {}),
                   finish_reason=d.get("finish_reason"), model=d.get("model"),
                   api=api if isinstance(api, str) else None)


@dataclass
class GenerateConfig:
    """Generation settings; part of the cache key.

    ``tool_choice`` is "auto", "required", "none" or a tool name. ``temperature``,
    ``max_tokens``, ``seed`` and ``tool_choice`` may be None: not sent, the model's own default
    applies (a benchmark whose reference sends none of them, such as ToolTalk's runner, must
    leave them out to send what it sends). ``epoch`` separates repeated
    samples in the cache. What the ``oracle`` replays travels beside the request
    (:func:`toolscore.models.scripted.oracle.reference`), never in it, so it is in no cache key.

    ``reasoning_effort`` and ``extra`` (further request parameters, passed to the provider as
    given, e.g. ``presence_penalty``) come from a run's model arguments
    (:mod:`toolscore.models.modelargs`). ``call_api`` ("functions", "tools" or "auto") asks a
    provider that has both for the legacy ``functions`` request shape (one call per reply) that
    older reference runners send (:mod:`toolscore.models.openai.legacy`); None: the provider's
    usual shape.
    These are left out of :meth:`to_dict` while unset, so the cache keys of every request
    made before they existed stay valid.
    """

    temperature: float | None = 0.0
    max_tokens: int | None = 512
    seed: int | None = 0
    top_p: float | None = None
    tool_choice: str | None = "auto"
    epoch: int = 0
    reasoning_effort: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    call_api: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if d["reasoning_effort"] is None:
            del d["reasoning_effort"]
        if d["call_api"] is None:
            del d["call_api"]
        if not d["extra"]:
            del d["extra"]
        return d
