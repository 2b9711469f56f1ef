"""Plugin discovery: built-in plugin sets by name, external ones through entry points.

Adding tools must not require editing toolscore (the central-registry trap). An external package
declares, in its pyproject.toml::

    [project.entry-points."toolscore.plugins"]
    counter = "toolscore_counter:PLUGINS"

and once it is installed, ``load_plugins("counter")`` finds it. The object an entry point names
may be a Plugin, a list of Plugins, or a zero-argument callable returning either (so a package
can build its plugins lazily). Built-ins are imported only when asked for, so listing the
available sets never imports a benchmark's tools or their dependencies.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from toolscore.env.plugin import Plugin

GROUP = "toolscore.plugins"

# name -> "module:attribute"; imported lazily by load_plugins
BUILTIN: dict[str, str] = {
    "demo": "toolscore.benchmarks.demo.plugins:PLUGINS",
    "tooltalk": "toolscore.benchmarks.tooltalk.plugins:PLUGINS",
}


class PluginError(LookupError):
    """A plugin set is unknown, or its code failed to load or returned the wrong thing."""


@dataclass(frozen=True)
class _Source:
    """Where a plugin set comes from: a built-in target or an installed entry point."""

    name: str
    target: str
    distribution: str | None = None  # "name version" for entry points, None for built-ins
    entry_point: EntryPoint | None = None

    def describe(self) -> str:
        return f"{self.target} ({self.distribution or 'built-in'})"

    def where(self) -> str:
        if self.entry_point is None:
            return f"built-in plugin set {self.name!r} ({self.target})"
        return (f"plugin set {self.name!r} from distribution {self.distribution!r} "
                f"(entry point {self.name} = {self.target} in group {GROUP!r})")


def _distribution(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "unknown distribution"
    return f"{getattr(dist, 'name', None) or dist.metadata['Name']} {dist.version}"


def _external() -> list[_Source]:
    sources = []
    seen: set[tuple[str, str, str]] = set()
    for ep in entry_points(group=GROUP):
        source = _Source(ep.name, ep.value, _distribution(ep), ep)
        key = (ep.name, ep.value, source.distribution or "")
        if key not in seen:  # the same dist visible twice on sys.path is one source
            seen.add(key)
            sources.append(source)
    return sources


def _sources() -> tuple[dict[str, list[_Source]], list[_Source]]:
    """(sources by name, shadowed entry points). Built-ins shadow external sets of the same
    name, so an installed package cannot replace the tools a published benchmark is scored on."""
    found: dict[str, list[_Source]] = {n: [_Source(n, t)] for n, t in BUILTIN.items()}
    shadowed: list[_Source] = []
    for source in _external():
        if source.name in BUILTIN:
            if source.target != BUILTIN[source.name]:  # toolscore's own declaration is no clash
                shadowed.append(source)
        else:
            found.setdefault(source.name, []).append(source)
    return found, shadowed


def available_plugin_sets() -> dict[str, str]:
    """Every plugin set that ``load_plugins`` accepts: name -> "target (distribution)".

    Nothing is imported; a set listed here can still fail to load.
    """
    found, shadowed = _sources()
    listing = {name: " | ".join(s.describe() for s in srcs) for name, srcs in sorted(found.items())}
    for s in shadowed:
        listing[s.name] += f"; ignored, the name is built-in: {s.describe()}"
    return listing


def load_plugins(name: str) -> list[Plugin]:
    """The plugins of the set called ``name`` (built-in or from an installed package).

    Raises PluginError with a one-line message when the name is unknown or ambiguous, or when
    the code behind it fails to import or does not produce Plugins.
    """
    sources, _ = _sources()
    if name not in sources:
        known = ", ".join(sorted(sources)) or "none"
        raise PluginError(f"Unknown plugin set {name!r}; known: {known}")
    if len(sources[name]) > 1:
        dists = ", ".join(repr(s.distribution) for s in sources[name])
        raise PluginError(f"Plugin set {name!r} is declared by several distributions: {dists}; "
                          "uninstall all but one")
    source = sources[name][0]
    try:
        obj = _load_target(source)
    except Exception as e:  # import errors, missing attributes, errors in a factory
        raise PluginError(f"Cannot load {source.where()}: {type(e).__name__}: "
                          f"{_one_line(e)}") from e
    if callable(obj) and not isinstance(obj, Plugin):
        try:
            obj = obj()
        except Exception as e:
            raise PluginError(f"Cannot load {source.where()}: its factory raised "
                              f"{type(e).__name__}: {_one_line(e)}") from e
    return _as_plugins(obj, source)


def _load_target(source: _Source) -> Any:
    if source.entry_point is not None:
        return source.entry_point.load()
    module, _, attribute = source.target.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attribute.split(".") if attribute else ():
        obj = getattr(obj, part)
    return obj


def _as_plugins(obj: Any, source: _Source) -> list[Plugin]:
    if isinstance(obj, Plugin):
        return [obj]
    if isinstance(obj, Iterable) and not isinstance(obj, (str, bytes, dict)):
        items = list(obj)
        if items and all(isinstance(p, Plugin) for p in items):
            return items
    raise PluginError(f"Cannot load {source.where()}: it gave {_kind(obj)}, expected a Plugin, a "
                      "non-empty list of Plugins, or a callable returning either")


def _kind(obj: Any) -> str:
    if isinstance(obj, (list, tuple)):
        return f"a {type(obj).__name__} of {len(obj)} item(s) that are not all Plugins"
    return f"a {type(obj).__name__}"


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or "(no message)"
