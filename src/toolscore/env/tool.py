"""A Tool is defined once, as a typed Python function; its JSON schema is derived from the type
hints and the docstring so the documentation shown to the model and the implementation that is
executed cannot drift apart.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolscore.env.schema import SchemaError, schema_for

__all__ = ["CallRecord", "MatchContext", "SchemaError", "Tool", "parse_docstring", "schema_for",
           "tool"]

Similarity = Callable[[Any, Any], float]


@dataclass
class MatchContext:
    """What an equivalence rule may use besides the two calls.

    ``similarity(a, b)`` is the cosine similarity of two free-text values (0.0 when either is
    not a string); ``strict`` asks the rule to fix known defects of the reference behaviour.
    """

    similarity: Similarity
    strict: bool = False


# An equivalence rule decides whether a predicted call counts as a ground-truth call.
EquivalenceRule = Callable[["CallRecord", "CallRecord", MatchContext], bool]


@dataclass
class CallRecord:
    """An executed call: what was asked and what came back (ToolTalk's request/response/exception).

    ``arguments`` is None when the model's argument text could not be parsed.
    """

    name: str
    arguments: dict[str, Any] | None
    response: Any = None
    exception: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"request": {"api_name": self.name, "parameters": self.arguments},
                "response": self.response, "exception": self.exception}

    @classmethod
    def from_dict(cls, d: Any) -> CallRecord:
        """Read a stored call. A stored prediction of another shape (a hand-edited record,
        another tool's file) is read as far as it goes, never a crash: a name that is not a
        string becomes its JSON text (an unknown tool), arguments that are not an object are
        unparseable (None), and a record that is not an object at all is a failed call."""
        if not isinstance(d, dict):
            return cls(name="", arguments=None, exception=MALFORMED_RECORD)
        req = d.get("request")
        req = req if isinstance(req, dict) else {}
        name = req.get("api_name", "")
        arguments = req.get("parameters")
        exception = d.get("exception")
        return cls(name=name if isinstance(name, str) else _json_text(name),
                   arguments=arguments if isinstance(arguments, dict) else None,
                   response=d.get("response"),
                   exception=(exception if exception is None or isinstance(exception, str)
                              else _json_text(exception)))


MALFORMED_RECORD = "Malformed call record"


def _json_text(value: Any) -> str:
    """A stored value that should have been text, as its JSON text ("" for null)."""
    if value is None:
        return ""
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (ValueError, TypeError, RecursionError):
        return repr(value)[:1000]


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {param: description})."""
    if not doc:
        return "", {}
    text = inspect.cleandoc(doc)
    head, _, rest = text.partition("\nArgs:")
    params: dict[str, str] = {}
    current = None
    for line in rest.splitlines():
        m = re.match(r"^\s{2,}(\w+)\s*(?:\([^)]*\))?:\s*(.*)$", line)
        if m and (current is None or len(line) - len(line.lstrip()) <= _indent_of(rest, current)):
            current = m.group(1)
            params[current] = m.group(2).strip()
        elif current and line.strip():
            if re.match(r"^\S", line):  # a new section such as "Returns:"
                current = None
                continue
            params[current] = (params[current] + " " + line.strip()).strip()
    return " ".join(head.split()), params


def _indent_of(block: str, name: str) -> int:
    for line in block.splitlines():
        if re.match(rf"^\s+{name}\s*(?:\([^)]*\))?:", line):
            return len(line) - len(line.lstrip())
    return 0


_IMMUTABLE = (str, int, float, bool, type(None))


def json_copy(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, immutable scalars), what a tool hands back
    of its database rows so the model's later calls cannot edit them through a response.
    ``copy.deepcopy`` was the largest cost of ToolTalk's lookups; this is several times
    cheaper on rows, and anything that is not JSON-shaped still goes through it."""
    cls = type(value)
    if cls is dict:
        return {k: json_copy(v) for k, v in value.items()}
    if cls is list:
        return [json_copy(v) for v in value]
    if cls in _IMMUTABLE:
        return value
    return copy.deepcopy(value)


@dataclass
class Tool:
    """A callable tool over environment state.

    ``fn(env, **arguments)`` returns the JSON-able response or raises; any exception becomes the
    call's exception string. ``auth`` tools receive the session token from the environment in
    ``session_token`` (hidden from the model). ``action`` marks tools with side effects.

    ``call_label`` names the callable in argument-binding errors (a missing or unexpected
    argument), as a simulator being reproduced named its own (ToolTalk: ``AddAlarm.call``).
    Those texts are what the model reads next, so they are part of the simulated world. Without
    it, binding errors are Python's own for ``fn``.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any]
    action: bool = False
    auth: bool = False
    equivalence: EquivalenceRule | None = None
    hidden: tuple[str, ...] = ()
    plugin: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    call_label: str | None = None

    @property
    def spec(self):  # -> ToolSpec; imported lazily to keep this module dependency-free
        from toolscore.types import ToolSpec

        return ToolSpec(self.name, self.description, self.parameters)

    def equivalent(self, prediction: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
        if prediction.name != truth.name:
            return False
        if self.equivalence is None:
            return (prediction.arguments == truth.arguments
                    and prediction.response == truth.response
                    and prediction.exception == truth.exception)
        return self.equivalence(prediction, truth, ctx)

    def check_arguments(self, arguments: dict[str, Any]) -> None:
        """Raise the TypeError Python gives for a call of ``call_label(**arguments)``.

        Only when ``call_label`` is set; the environment parameter is not one the caller can
        name, so an argument called ``env`` is unexpected rather than a duplicate.
        """
        if self.call_label is not None:
            binding_error = _binding_error(self.call_label, self.fn, arguments)
            if binding_error is not None:
                raise TypeError(binding_error)


def _binding_error(label: str, fn: Callable[..., Any], arguments: dict[str, Any]) -> str | None:
    """CPython's own text for binding keyword ``arguments`` to ``fn`` minus its first parameter:
    the first unexpected keyword (in the caller's order) wins, then every missing required
    parameter (in signature order)."""
    var_keyword, named, required = _shape(fn)
    if (var_keyword or arguments.keys() <= named) and all(r in arguments for r in required):
        return None  # the usual case, decided without walking the signature
    params = _parameters(fn)
    if not any(p.kind is p.VAR_KEYWORD for p in params):
        named = frozenset(p.name for p in params
                          if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        for key in arguments:
            if key not in named:
                return f"{label}() got an unexpected keyword argument '{key}'"
    for kind, word in ((inspect.Parameter.POSITIONAL_OR_KEYWORD, "positional"),
                       (inspect.Parameter.KEYWORD_ONLY, "keyword-only")):
        missing = [p.name for p in params if p.kind is kind
                   and p.default is inspect.Parameter.empty and p.name not in arguments]
        if missing:
            plural = "s" if len(missing) > 1 else ""
            return (f"{label}() missing {len(missing)} required {word} argument{plural}: "
                    f"{_name_list(missing)}")
    return None


@functools.cache
def _parameters(fn: Callable[..., Any]) -> list[inspect.Parameter]:
    """``fn``'s parameters after the first, read once per function: ``inspect.signature``
    costs ~0.2 ms, and every tool call of a run is checked."""
    return list(inspect.signature(fn).parameters.values())[1:]


@functools.cache
def _shape(fn: Callable[..., Any]) -> tuple[bool, frozenset[str], tuple[str, ...]]:
    """(takes ``**kwargs``, the names a keyword may bind, the required names) of ``fn``."""
    params = _parameters(fn)
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return (any(p.kind is p.VAR_KEYWORD for p in params),
            frozenset(p.name for p in params if p.kind in keyword),
            tuple(p.name for p in params if p.kind in keyword
                  and p.default is inspect.Parameter.empty))


def _name_list(names: list[str]) -> str:
    """'a'; 'a' and 'b'; 'a', 'b', and 'c' (CPython's wording)."""
    quoted = [f"'{n}'" for n in names]
    if len(quoted) == 1:
        return quoted[0]
    if len(quoted) == 2:
        return f"{quoted[0]} and {quoted[1]}"
    return ", ".join(quoted[:-1]) + f", and {quoted[-1]}"


def tool(
    name: str | None = None,
    *,
    action: bool = False,
    auth: bool = False,
    equivalence: EquivalenceRule | None = None,
    description: str | None = None,
    hidden: tuple[str, ...] = (),
) -> Callable[[Callable[..., Any]], Tool]:
    """Decorator: turn ``def f(env, a: str, b: int | None = None) -> dict`` into a Tool.

    The first parameter receives the Environment. Parameters without a default are required.
    ``session_token`` is hidden automatically for ``auth`` tools. A parameter whose type has
    no JSON schema (see :mod:`toolscore.env.schema`) is a TypeError naming the tool and the
    parameter, raised here rather than when a model is first shown the tool.
    """

    def wrap(fn: Callable[..., Any]) -> Tool:
        tool_name = name or fn.__name__
        doc, param_docs = parse_docstring(fn.__doc__)
        try:
            hints = typing.get_type_hints(fn, include_extras=False)
        except Exception as e:  # an unresolvable forward reference, a bad annotation
            raise SchemaError(f"tool {tool_name!r}: cannot read its type hints "
                              f"({type(e).__name__}: {e})") from None
        sig = inspect.signature(fn)
        hide = set(hidden) | ({"session_token"} if auth else set())
        props: dict[str, Any] = {}
        required: list[str] = []
        for i, (pname, p) in enumerate(sig.parameters.items()):
            if i == 0 or pname in hide or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                continue
            try:
                prop = schema_for(hints.get(pname, Any))
            except SchemaError as e:
                raise SchemaError(f"tool {tool_name!r}, parameter {pname!r}: {e}") from None
            if pname in param_docs:
                prop["description"] = param_docs[pname]
            props[pname] = prop
            if p.default is inspect.Parameter.empty:
                required.append(pname)
        schema: dict[str, Any] = {"type": "object", "properties": props}
        if required:
            schema["required"] = required
        return Tool(name=tool_name, description=description or doc, parameters=schema,
                    fn=fn, action=action, auth=auth, equivalence=equivalence,
                    hidden=tuple(sorted(hide)))

    return wrap
