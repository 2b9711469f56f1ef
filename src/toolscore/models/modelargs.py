"""Run-level model arguments: generation settings a user sets for a whole run.

Benchmarks choose the generation settings of their protocol (ToolTalk's default mode leaves them
all unset, as its reference runner does; its strict mode and the demo ask for temperature 0, 512
tokens, seed 0), which is what reproduces a paper. A user may need others: a reasoning
model that takes no temperature, a longer token limit, an effort level, a provider parameter.
The rule is one: **a model argument replaces, on every call made with the run's model (in
whatever role the benchmark uses it: assistant, user agent or judge), the value the benchmark
asked for; an argument left unset leaves the benchmark's value.** Other models (a separate user
model, a judge named by its own configuration) are not affected.

The arguments are applied to the :class:`~toolscore.types.GenerateConfig` before the client
computes its cache key, so the key is that of the request actually sent: changing an argument
never reuses another setting's reply, and a run without arguments keeps today's keys. They are
stored flat in ``run.json`` (``model_args``), so a resume uses them again.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from toolscore.models.client import ModelClient
from toolscore.types import GenerateConfig, Message, Reply, ToolSpec

#: Arguments that are fields of GenerateConfig; any other name goes to ``extra``.
NAMED = ("temperature", "max_tokens", "seed", "top_p", "reasoning_effort")
#: Other names for a named argument (OpenAI's newer name for the token limit).
ALIASES = {"max_completion_tokens": "max_tokens"}
#: Request parts that belong to the benchmark's protocol or to the client, not to the user.
RESERVED = frozenset({"model", "messages", "tools", "tool_choice", "epoch", "stream", "n",
                      "functions", "function_call"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _number(key: str, value: Any, source: str, *, low: float, high: float | None = None,
            integer: bool = False) -> Any:
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds):
        kind = "an integer" if integer else "a number"
        raise ValueError(f"{source} {key!r}: {value!r} is not {kind}")
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"between {low} and {high}"
        raise ValueError(f"{source} {key!r}: {value!r} must be {bound}")
    return value if integer else float(value)


@dataclass(frozen=True)
class ModelArgs:
    """The model arguments of a run (None: not set, the benchmark's value stands)."""

    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    top_p: float | None = None
    reasoning_effort: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, args: Any, source: str = "model argument") -> ModelArgs:
        """Validated arguments from a flat dict; a one-line ValueError naming the argument."""
        if args is None:
            return cls()
        if not isinstance(args, dict):
            raise ValueError(f"{source}: expected a mapping of name to value, got "
                             f"{type(args).__name__}")
        named: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for raw_key, value in args.items():
            if not isinstance(raw_key, str) or not _NAME.fullmatch(raw_key):
                raise ValueError(f"{source} {raw_key!r}: not a parameter name")
            key = ALIASES.get(raw_key, raw_key)
            if key in RESERVED:
                raise ValueError(f"{source} {raw_key!r}: set by the benchmark's protocol or "
                                 "the client, not a model argument")
            if key in named:
                raise ValueError(f"{source} {raw_key!r}: given twice")
            if key in NAMED and value is None:  # null: not set, the benchmark's value stands
                continue
            if key == "temperature":
                named[key] = _number(key, value, source, low=0.0)
            elif key == "top_p":
                named[key] = _number(key, value, source, low=0.0, high=1.0)
            elif key == "max_tokens":
                named[key] = _number(key, value, source, low=1, integer=True)
            elif key == "seed":
                named[key] = _number(key, value, source, low=-(2**63), integer=True)
            elif key == "reasoning_effort":
                if not isinstance(value, str) or not value.strip():
                    raise ValueError(f"{source} {key!r}: {value!r} is not a level name "
                                     "(e.g. low, medium, high)")
                named[key] = value.strip()
            elif key == "extra_body" and not isinstance(value, dict):
                raise ValueError(f"{source} 'extra_body': {value!r} is not a JSON object")
            else:
                _json_value(key, value, source)
                extra[key] = value
        return cls(**named, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        """The arguments that are set, flat (as stored in run.json and given to -M)."""
        out = {k: getattr(self, k) for k in NAMED if getattr(self, k) is not None}
        out.update(self.extra)
        return out

    def __bool__(self) -> bool:
        return bool(self.to_dict())

    def apply(self, config: GenerateConfig) -> GenerateConfig:
        """``config`` with every set argument replacing the benchmark's value."""
        if not self:
            return config
        named = {k: getattr(self, k) for k in NAMED if getattr(self, k) is not None}
        extra = {**config.extra, **self.extra} if self.extra else config.extra
        return replace(config, **named, extra=extra)


def _json_value(key: str, value: Any, source: str) -> None:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{source} {key!r}: not a JSON value ({e})") from None


def split_pair(pair: str, flag: str, what: str) -> tuple[str, str]:
    """``KEY=VALUE`` as (key with dashes read as underscores, value text); a pair without
    ``=`` or a key is a one-line ValueError naming ``flag`` and ``what`` the pair sets."""
    key, sep, text = pair.partition("=")
    key = key.strip().replace("-", "_")
    if not sep or not key:
        raise ValueError(f"{flag} {pair!r}: expected KEY=VALUE ({what})")
    return key, text


def parse_pairs(pairs: list[str] | tuple[str, ...], flag: str = "-M") -> dict[str, Any]:
    """``key=value`` pairs as a flat dict, each value read as JSON when it is JSON and kept as
    text otherwise (``-M reasoning_effort=low`` needs no quotes; ``-M stop='["x"]'`` is a
    list). Dashes in keys become underscores. One-line ValueError for a pair without ``=``."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, text = split_pair(pair, flag, "a model argument")
        if key in out:
            raise ValueError(f"{flag} {key!r}: given twice")
        try:
            out[key] = json.loads(text)
        except ValueError:
            out[key] = text
    return out


class ArgsClient(ModelClient):
    """A :class:`ModelClient` that applies a run's model arguments to every call, before its
    cache key is computed (so the key is that of the request sent). Copies made by
    :meth:`with_role` keep the arguments: they are calls of the same model."""

    model_args: ModelArgs = ModelArgs()

    async def generate(self, messages: list[Message], tools: list[ToolSpec] | None = None,
                       config: GenerateConfig | None = None) -> Reply:
        return await super().generate(messages, tools,
                                      self.model_args.apply(config or GenerateConfig()))
