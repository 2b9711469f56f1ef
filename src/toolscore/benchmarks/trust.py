"""What a run directory may make toolscore do: nothing but be read.

A run directory is shared (a colleague's results, a leaderboard submission, a CI artefact), so
its files are data, never instructions. Some options start a process or load code when a
benchmark is built or run (an MCP server's command line, an installed plugin set or model
provider named by the run, an agent driven over HTTP); such an option is declared so
(``option(..., runs_code="what it does")``, :func:`toolscore.benchmarks.base.option`) and is
taken only from what the user vouches for: the command line, a plan they run, or Python code
they call. A stored one is withheld: reading, scoring and reporting the run work without it
(from what the run recorded), and continuing the run refuses, in one line, until the user
repeats the option with the same value or allows it for this run (``--allow-run-commands``).

What is trusted: the command line, plans you run, installed packages' code when you name it.
What is not: the contents of a run directory.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ALLOW_FLAG = "--allow-run-commands"


@dataclass(frozen=True)
class Trust:
    """What the user vouched for besides the run's files: option values they gave themselves
    (``options``, compared with the stored ones), the model they named, or everything
    (``everything``: ``--allow-run-commands``)."""

    options: Mapping[str, Any] = field(default_factory=dict)
    model: str | None = None
    everything: bool = False

    def vouches(self, name: str, stored: Any, same: Any = None) -> bool:
        """Is the stored value of option ``name`` one the user gave too? ``same(a, b)``
        compares two values as the benchmark reads them (default: as JSON)."""
        if self.everything:
            return True
        if name not in self.options:
            return False
        equal = same or _same_json
        return bool(equal(self.options[name], stored))


    @classmethod
    def given(cls, values: Mapping[str, Any] | None, everything: bool = False) -> Trust:
        """From what a caller repeated: option values by name, the key "model" for the
        model."""
        values = dict(values or {})
        model = values.pop("model", None)
        return cls(options=values, model=model, everything=everything)


NOTHING = Trust()
EVERYTHING = Trust(everything=True)


def _same_json(a: Any, b: Any) -> bool:
    try:
        return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True,
                                                                        default=str)
    except (TypeError, ValueError):
        return a == b


@dataclass(frozen=True)
class Withheld:
    """One stored option that would start a process or load code: its name, its command-line
    spelling, its stored value and what it would do."""

    name: str
    flag: str
    value: Any
    what: str

    def shown(self) -> str:
        value = self.value
        if isinstance(value, (list, tuple)):
            return " ".join(f"{self.flag} {shlex.quote(str(v))}" for v in value)
        return f"{self.flag} {shlex.quote(str(value))}"


class UntrustedRun(ValueError):
    """A run directory asks for something toolscore does not do on a run's say-so (one line,
    exit 2): it names what is asked and how the user can vouch for it."""

    def __init__(self, items: list[Withheld], *, doing: str = "continuing this run",
                 how: str = "flag", source: str = "") -> None:
        self.items, self.doing, self.how = items, doing, how
        asks = "; ".join(f"{w.name} {_short(w.value)} {w.what}" for w in items)
        if how == "override":  # -T NAME=VALUE takes one value: a list of two cannot be said
            repeat = " ".join(f"-T {w.name}={shlex.quote(_text(w.value))}" for w in items
                              if not (isinstance(w.value, (list, tuple)) and len(w.value) > 1))
        else:
            repeat = " ".join(w.shown() for w in items)
        where = f"{source}: " if source else ""
        vouch = f"repeat it ({repeat}) or add {ALLOW_FLAG}" if repeat else f"add {ALLOW_FLAG}"
        super().__init__(
            f"{where}{asks}: not done, as a run directory is not trusted to start processes "
            f"or load code; {doing} needs it: {vouch} (Python: allow_run_commands=True)")


def _text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    return str(value)


def _short(value: Any, limit: int = 200) -> str:
    text = repr(_text(value))
    return text if len(text) <= limit else text[:limit - 4] + "...'"


def extension_origin(registry: Any, name: str) -> str | None:
    """Where the code behind ``name`` in ``registry`` (an :mod:`toolscore.entrypoints`
    group) comes from, when loading it is not a given: None for toolscore's own code and for
    what this process registered itself, else "from distribution X 1.0" (or "not
    installed")."""
    from toolscore.entrypoints import ExtensionError

    if name in registry.extra:
        return None
    try:
        ext = registry.extension(name)
    except ExtensionError:
        return "not installed here"
    if ext.builtin:
        return None
    return f"from distribution {ext.dist_id!r} ({ext.target})"


def provider_origin(model: str | None) -> str | None:
    """:func:`extension_origin` of the provider a model name names (None when the name
    cannot be split: building the model then says what is wrong)."""
    if not model or model == "none":
        return None
    from toolscore.entrypoints import PROVIDERS

    cut = min((i for i in (model.find("/"), model.find(":")) if i >= 0), default=-1)
    provider = model if cut < 0 else model[:cut]
    if not provider:
        return None
    origin = extension_origin(PROVIDERS, provider)
    return None if origin == "not installed here" else origin


def plugin_origins(names: Any) -> list[str]:
    """The plugin sets among ``names`` whose code would be imported from a package other
    than toolscore (or is not installed), as "name (origin)"."""
    from toolscore.entrypoints import PLUGINS

    if isinstance(names, str):
        names = [names]
    out = []
    for name in names if isinstance(names, (list, tuple)) else [names]:
        origin = extension_origin(PLUGINS, str(name))
        if origin is not None:
            out.append(f"{name!r} ({origin})")
    return out
