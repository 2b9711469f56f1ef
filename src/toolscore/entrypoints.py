"""Extension points: benchmarks, model providers, judges, plugin sets and export formats are
found through entry points, toolscore's own included, so adding one never means editing
toolscore.

A package declares, in its pyproject.toml, for example::

    [project.entry-points."toolscore.benchmarks"]
    counter = "toolscore_counter:CounterBenchmark"

and once it is installed ``toolscore run counter`` finds it. toolscore's own entries are
declared the same way in its pyproject.toml; an installed package cannot shadow one of them
(a published benchmark must keep being scored on its own code), and two packages declaring one
name is a one-line error. Nothing is imported until a name is asked for, so listing is cheap
and an optional dependency is only needed by what uses it.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any

GROUPS = {
    "benchmarks": "toolscore.benchmarks",
    "providers": "toolscore.providers",
    "judges": "toolscore.judges",
    "plugins": "toolscore.plugins",
    "exports": "toolscore.exports",
}
OWN = "toolscore"


class ExtensionError(LookupError):
    """An unknown or ambiguous name, or an entry point whose code failed to load."""


@dataclass(frozen=True)
class Extension:
    """One entry point: its name, target (``module:attr``) and distribution."""

    name: str
    target: str
    distribution: str
    version: str
    entry_point: EntryPoint | None = None

    @property
    def builtin(self) -> bool:
        return self.distribution == OWN

    @property
    def dist_id(self) -> str:
        return f"{self.distribution} {self.version}".strip()

    def describe(self) -> str:
        return f"{self.target} ({'built-in' if self.builtin else self.dist_id})"

    def where(self, kind: str) -> str:
        if self.builtin:
            return f"built-in {kind} {self.name!r} ({self.target})"
        return (f"{kind} {self.name!r} from distribution {self.dist_id!r} "
                f"(entry point {self.name} = {self.target})")

    def load(self, kind: str) -> Any:
        try:
            if self.entry_point is not None:
                return self.entry_point.load()
            import importlib

            module, _, attribute = self.target.partition(":")
            obj: Any = importlib.import_module(module)
            for part in attribute.split(".") if attribute else ():
                obj = getattr(obj, part)
            return obj
        except Exception as e:  # import errors, missing attributes
            raise ExtensionError(f"cannot load {self.where(kind)}: {type(e).__name__}: "
                                 f"{one_line(e)}") from e


def one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or "(no message)"


def _dist(ep: EntryPoint) -> tuple[str, str]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "unknown distribution", ""
    name = getattr(dist, "name", None) or dist.metadata["Name"]
    return str(name), str(dist.version)


@functools.lru_cache(maxsize=32)
def _group_entries(group: str, path: tuple[str, ...]) -> tuple[EntryPoint, ...]:
    """The entry points of ``group`` for this ``sys.path``: reading every installed
    distribution's metadata costs ~20 ms, and a run looked its benchmark and provider up three
    times. A package installed in a new path entry is seen (the key changes)."""
    return tuple(entry_points(group=group))


@functools.lru_cache(maxsize=32)
def _scanned(group: str, path: tuple[str, ...]
             ) -> tuple[dict[str, list[Extension]], list[Extension]]:
    """A group's extensions by name, and those a built-in name shadows, for this ``sys.path``
    (read-only to callers). Cached: each distribution's name is read from its METADATA file
    (an e-mail header parse), which cost ~0.15 s a run when done per lookup."""
    found: dict[str, list[Extension]] = {}
    seen: set[tuple[str, str, str]] = set()
    for ep in _group_entries(group, path):
        dist, version = _dist(ep)
        key = (ep.name, ep.value, dist)
        if key in seen:  # the same distribution visible twice on sys.path
            continue
        seen.add(key)
        found.setdefault(ep.name, []).append(Extension(ep.name, ep.value, dist, version, ep))
    shadowed: list[Extension] = []
    for name, items in found.items():
        own = [x for x in items if x.builtin]
        if own:
            shadowed += [x for x in items if not x.builtin]
            found[name] = own[:1]
    return found, shadowed


class Registry:
    """The entries of one group (``kind`` names it in messages: "benchmark", "provider"...).

    ``extra`` adds entries registered at run time (``register``), e.g. by a test or a notebook
    that defines a benchmark without packaging it.
    """

    def __init__(self, group: str, kind: str) -> None:
        self.group = group
        self.kind = kind
        self.extra: dict[str, Any] = {}

    def register(self, name: str, obj: Any) -> None:
        self.extra[name] = obj

    def unregister(self, name: str) -> None:
        self.extra.pop(name, None)

    def _scan(self) -> tuple[dict[str, list[Extension]], list[Extension]]:
        return _scanned(self.group, tuple(sys.path))

    def names(self) -> list[str]:
        return sorted(set(self._scan()[0]) | set(self.extra))

    def listing(self) -> dict[str, str]:
        """name -> "target (distribution)"; nothing is imported."""
        found, shadowed = self._scan()
        out = {n: " | ".join(x.describe() for x in xs) for n, xs in sorted(found.items())}
        for name in self.extra:
            out[name] = "registered at run time"
        for x in shadowed:
            out[x.name] += f"; ignored, the name is built-in: {x.describe()}"
        return dict(sorted(out.items()))

    def extension(self, name: str) -> Extension:
        found, _ = self._scan()
        if name not in found:
            known = ", ".join(self.names()) or "none"
            raise ExtensionError(f"unknown {self.kind} {name!r}; known: {known}")
        items = found[name]
        if len(items) > 1:
            dists = ", ".join(repr(x.dist_id) for x in items)
            raise ExtensionError(f"{self.kind} {name!r} is declared by several distributions: "
                                 f"{dists}; uninstall all but one")
        return items[0]

    def load(self, name: str) -> Any:
        if name in self.extra:
            return self.extra[name]
        return self.extension(name).load(self.kind)


BENCHMARKS = Registry(GROUPS["benchmarks"], "benchmark")
PROVIDERS = Registry(GROUPS["providers"], "model provider")
JUDGES = Registry(GROUPS["judges"], "judge")
PLUGINS = Registry(GROUPS["plugins"], "plugin set")
EXPORTS = Registry(GROUPS["exports"], "export format")
