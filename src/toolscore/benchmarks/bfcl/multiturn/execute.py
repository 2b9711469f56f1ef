"""Running a model's calls on BFCL's backends the way BFCL's executor runs them.

BFCL's executor turns each call string into Python source by prefixing every mapped method
name with the variable holding its instance, refuses a handful of names, then hands the text to
``eval``. toolscore never evaluates model text: :class:`World` parses a call with :mod:`ast`
and evaluates only literals (constants, unary minus/plus, lists, tuples, sets, dicts) and calls
of the involved instances' public methods, nested calls included, in the order ``eval`` would
run them. The outcome of a call is what BFCL records: a ``str`` result as is, a ``dict``
through ``json.dumps`` (``str()`` when it cannot be serialized), anything else through
``str()``, and any exception as ``"Error during execution: {exception}"`` -- including
Python's own texts for a syntax error, an unknown name (``name 'x' is not defined``) and a call
whose arguments do not fit the method (the backends keep BFCL's class and method names, so the
``TypeError`` reads the same).

Where this differs from BFCL's ``eval`` (only for calls no released data set contains):

* a name that BFCL's executor module happens to define (a Python builtin such as ``len`` or
  ``print``, or a module it imports) is reported as not defined rather than run;
* any other expression (arithmetic, comprehensions, ``*args``, a method of a result, such as
  ``ls().get('x')``) is reported as ``Error during execution: unsupported expression in a
  call: <kind>``. A function-calling model's calls never hold one: :func:`call_strings`
  writes every argument as the ``repr`` of a JSON value;
* BFCL's prefixing is textual and also rewrites ``name(`` inside string literals, using a
  variable name built from the model's name; toolscore leaves string literals as written.
"""

from __future__ import annotations

import ast
import copy
import inspect
import json
import operator
import re
from collections.abc import Callable, Container
from typing import Any

from toolscore.benchmarks.bfcl.multiturn.backend import Backend, backend_class

#: names BFCL's executor refuses to evaluate
REFUSED = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})

#: a function name in a call, as BFCL's executor finds it for prefixing
_CALLED_NAME = re.compile(r"\b([a-zA-Z_]\w*)\s*(?=\()")

_UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}


class _Unsupported(Exception):
    pass


def is_long_context(entry_id: str) -> bool:
    """Whether BFCL loads an entry's backends with long-context filler (from its category)."""
    category = entry_id.rsplit("_", 1)[0]
    return "long_context" in category or "composite" in category


def format_result(value: Any) -> str:
    """A method's return value as BFCL's executor records it."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except Exception:
            return str(value)
    return str(value)


def _refused_name(call: str, methods: Container[str]) -> str | None:
    """The name BFCL's safety check looks at, when it is refused. BFCL checks the call text
    after prefixing mapped method names with an instance variable (a name without dots)."""
    prefixed = _CALLED_NAME.sub(
        lambda m: f"instance.{m.group(1)}" if m.group(1) in methods else m.group(1), call)
    head = prefixed.split("(")[0]
    if "." in head:
        head = head.split(".")[1]
    return head if head in REFUSED else None


class World:
    """The backend instances of one entry, kept across turns (the model's world and the ground
    truth's world are two separate objects)."""

    def __init__(self, entry: dict[str, Any], *, long_context: bool | None = None) -> None:
        if long_context is None:
            long_context = is_long_context(str(entry.get("id", "")))
        config: dict[str, Any] = entry.get("initial_config") or {}
        self.instances: dict[str, Backend] = {}
        self._methods: dict[str, Callable[..., Any]] = {}
        for name in entry["involved_classes"]:
            instance = backend_class(name)()
            if not instance._stateless:
                instance._load_scenario(copy.deepcopy(config.get(name, {})),
                                        long_context=long_context)
            self.instances[name] = instance
            for attr, method in inspect.getmembers(instance, inspect.ismethod):
                if not attr.startswith("_"):
                    self._methods[attr] = method

    def execute(self, calls: list[str]) -> list[str]:
        """Run the calls in order; one result text per call."""
        return [self._run(call) for call in calls]

    def _run(self, call: str) -> str:
        try:
            refused = _refused_name(call, self._methods)
            if refused is not None:
                raise Exception(f"Function call {refused} is not allowed.")
            source = call.lstrip(" \t")
            # compiled (never run) for the compiler's own syntax errors, which ast.parse skips
            compile(source, "<string>", "eval", dont_inherit=True)
            tree = ast.parse(source, filename="<string>", mode="eval")
            return format_result(self._value(tree.body))
        except _Unsupported as e:
            return f"Error during execution: unsupported expression in a call: {e}"
        except Exception as e:
            return f"Error during execution: {e}"

    def _value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            raise NameError(f"name '{node.id}' is not defined")
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](self._value(node.operand))
        if isinstance(node, ast.List):
            return [self._value(x) for x in self._plain(node.elts)]
        if isinstance(node, ast.Tuple):
            return tuple(self._value(x) for x in self._plain(node.elts))
        if isinstance(node, ast.Set):
            return {self._value(x) for x in self._plain(node.elts)}
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise _Unsupported("**")
            return {self._value(k): self._value(v)  # type: ignore[arg-type]
                    for k, v in zip(node.keys, node.values, strict=True)}
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Attribute):
            value = self._value(node.value)
            if not hasattr(value, node.attr):
                raise AttributeError(
                    f"'{type(value).__name__}' object has no attribute '{node.attr}'")
        raise _Unsupported(type(node).__name__)

    @staticmethod
    def _plain(elts: list[ast.expr]) -> list[ast.expr]:
        if any(isinstance(x, ast.Starred) for x in elts):
            raise _Unsupported("Starred")
        return elts

    def _call(self, node: ast.Call) -> Any:
        func = node.func
        if not isinstance(func, ast.Name):
            # evaluated for what eval would report first: an unknown name, a missing attribute
            value = self._value(func)
            if not callable(value):
                raise TypeError(f"'{type(value).__name__}' object is not callable")
            raise _Unsupported(type(func).__name__)
        method = self._methods.get(func.id)
        if method is None:
            raise NameError(f"name '{func.id}' is not defined")
        args = [self._value(a) for a in self._plain(node.args)]
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise _Unsupported("**")
            kwargs[kw.arg] = self._value(kw.value)
        return method(*args, **kwargs)


def call_strings(step: Any) -> list[str]:
    """BFCL's decoding of one step of an OpenAI function-calling model for execution:
    ``[{name: arguments}]`` (or one such dict) -> ``["name(k=repr(v),...)"]``. Arguments given
    as text are parsed as JSON; text that is not JSON (or JSON that is not an object) raises,
    as BFCL's decoder does -- its callers then drop the step."""
    if type(step) is dict:
        step = [step]
    out: list[str] = []
    for item in step:
        for name, arguments in item.items():
            if type(arguments) is str:
                arguments = json.loads(arguments)
            out.append(f"{name}({','.join(f'{k}={v!r}' for k, v in arguments.items())})")
    return out
