"""Declared benchmark options: how a benchmark says what it takes, so the CLI builds
``toolscore run NAME --help`` from it, the Python API validates keyword arguments against it and
run.json stores it (an option a benchmark does not take is an error, never silently dropped).

An option that starts a process or loads code says so (``runs_code``): its stored value is
never acted on unless the user gives it again (:mod:`toolscore.benchmarks.trust`).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal


@dataclass
class NoOptions:
    """A benchmark without options of its own."""


class OptionError(ValueError):
    """An option a benchmark does not take, or a value of the wrong type (one line)."""


@dataclass
class StoredRun:
    """How a benchmark is rebuilt from a run directory's run.json (``config``, as a dict).

    ``withheld`` are stored options that start a process or load code and that the user did
    not vouch for (name -> what it would do): the benchmark must be built without acting on
    them. ``exact``: the benchmark will score (it must score exactly as the run was scored, or
    refuse); otherwise it is only read (a report may show less)."""

    config: dict[str, Any]
    withheld: dict[str, str] = field(default_factory=dict)
    exact: bool = False

    @property
    def benchmark_config(self) -> dict[str, Any]:
        stored = self.config.get("benchmark_config")
        return stored if isinstance(stored, dict) else {}

    def refusal(self, *names: str, doing: str = "scoring this run") -> Exception:
        """The one-line error for options this benchmark cannot do without."""
        from toolscore.benchmarks.trust import UntrustedRun, Withheld

        options = self.config.get("options") or {}
        return UntrustedRun([Withheld(n, "--" + n.replace("_", "-"), options.get(n),
                                      self.withheld[n]) for n in names],
                            doing=doing, how="override")


def option(default: Any, help: str, **extra: Any) -> Any:  # noqa: A002 - mirrors argparse
    """A declared option: its default and the help text shown by ``toolscore run NAME --help``.
    ``extra`` may hold ``flag`` (the CLI spelling, e.g. "--tools"), ``cli=False`` (Python
    only, e.g. an object that cannot be typed on a command line) and ``runs_code`` (what the
    option starts or loads, e.g. "starts this command as an MCP server"): a value of such an
    option stored in a run directory is never acted on unless the user gives it again
    (:mod:`toolscore.benchmarks.trust`); :meth:`Benchmark.runs_code` finds them."""
    factory = default if default in (list, dict) or callable(default) and not isinstance(
        default, type) else None
    meta = {"help": help, **extra}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)



#: The request shapes a benchmark whose reference runner used OpenAI's legacy ``functions`` API
#: may send (:mod:`toolscore.models.openai.legacy`).
CallApi = Literal["auto", "functions", "tools"]


def call_api_option(runner: str, more: str = "") -> Any:
    """The ``call_api`` option of a benchmark whose reference (``runner``, e.g. "ToolTalk's
    runner") sends the legacy ``functions`` request shape: one wording for every such
    benchmark, ``more`` added where its protocol says more."""
    return option("auto", f"Request shape of the default mode (openai/ models): functions "
                  f"(the legacy API {runner} sends; tools when the endpoint refuses it) | tools "
                  "| auto (functions for OpenAI's own API, tools elsewhere: vLLM, llama.cpp and "
                  f"Ollama ignore functions).{' ' + more if more else ''}")


def option_fields(options_type: type) -> list[dataclasses.Field[Any]]:
    return list(dataclasses.fields(options_type))


def _default_of(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def flag_of(f: dataclasses.Field[Any]) -> str:
    """An option's command-line spelling."""
    return str(f.metadata.get("flag") or "--" + f.name.replace("_", "-"))


def same_option(options_type: type, name: str, a: Any, b: Any) -> bool:
    """Are ``a`` and ``b`` the same value of option ``name``, as the benchmark reads it (a
    command line's "true" and a stored true are; a value that does not parse is not)?"""
    hint = _types_of(options_type).get(name, Any)
    try:
        return bool(_json_value(coerce(a, hint, name)) == _json_value(coerce(b, hint, name)))
    except OptionError:
        return False


def _json_value(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return [str(x) if isinstance(x, Path) else x for x in v]
    return str(v) if isinstance(v, Path) else v


@functools.lru_cache(maxsize=256)
def _types_of(options_type: type) -> dict[str, Any]:
    """The options' type hints (read-only; cached: a sweep plan parses a thousand units')."""
    return typing.get_type_hints(options_type)


def parse_options(options_type: type, given: dict[str, Any], where: str) -> Any:
    """An ``options_type`` from keyword arguments: unknown names and wrong types are one-line
    errors naming the benchmark (``where``) and the option."""
    hints = _types_of(options_type)
    names = {f.name for f in option_fields(options_type)}
    unknown = sorted(set(given) - names)
    if unknown:
        known = ", ".join(sorted(names)) or "none"
        raise OptionError(f"{where}: unknown option {unknown[0]!r} (its options: {known})")
    values = {k: coerce(v, hints[k], f"{where}: option {k!r}") for k, v in given.items()}
    return options_type(**values)


def coerce(value: Any, hint: Any, where: str) -> Any:
    """``value`` checked against ``hint`` (str, int, float, bool, Path, Literal, X | None,
    list[X]); strings from a command line are converted."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        errors = []
        for a in inner:
            try:
                return coerce(value, a, where)
            except OptionError as e:
                errors.append(str(e))
        raise OptionError(errors[0] if errors else f"{where}: bad value {value!r}")
    if origin is Literal:
        if value in args:
            return value
        raise OptionError(f"{where}: {value!r} is not one of {', '.join(map(repr, args))}")
    if origin in (list, tuple):
        if isinstance(value, (str, Path)):
            value = [value]
        if not isinstance(value, (list, tuple)):
            raise OptionError(f"{where}: expected a list, got {value!r}")
        item = args[0] if args else Any
        return [coerce(v, item, where) for v in value]
    if hint is Any:
        return value
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "1", "yes", "false", "0", "no"):
            return value.lower() in ("true", "1", "yes")
        raise OptionError(f"{where}: expected true or false, got {value!r}")
    if hint in (int, float):
        if isinstance(value, bool):
            raise OptionError(f"{where}: expected a number, got {value!r}")
        try:
            return hint(value) if isinstance(value, (str, int, float)) else _bad(value, where)
        except ValueError:
            raise OptionError(f"{where}: expected {hint.__name__}, got {value!r}") from None
    if hint is Path:
        if isinstance(value, (str, Path)):
            return Path(value)
        raise OptionError(f"{where}: expected a path, got {value!r}")
    if hint is str:
        if isinstance(value, str):
            return value
        raise OptionError(f"{where}: expected a string, got {value!r}")
    return value


def _bad(value: Any, where: str) -> Any:
    raise OptionError(f"{where}: expected a number, got {value!r}")


def options_to_json(options: Any) -> dict[str, Any]:
    """Declared options as JSON-able values (paths as strings), for run.json."""
    out = {}
    for f in option_fields(type(options)):
        if f.metadata.get("cli") is False:
            continue
        v = getattr(options, f.name)
        out[f.name] = [str(x) if isinstance(x, Path) else x for x in v] \
            if isinstance(v, (list, tuple)) else (str(v) if isinstance(v, Path) else v)
    return out
