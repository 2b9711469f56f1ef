"""Plugin sets by name, through the ``toolscore.plugins`` entry-point group (toolscore's own
sets are declared there too; see :mod:`toolscore.entrypoints`).

The object an entry point names may be a Plugin, a list of Plugins, or a zero-argument callable
returning either (so a package can build its plugins lazily).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolscore.entrypoints import PLUGINS, ExtensionError, one_line
from toolscore.env.plugin import Plugin


class PluginError(ExtensionError):
    """A plugin set is unknown, or its code failed to load or returned the wrong thing."""


def available_plugin_sets() -> dict[str, str]:
    """Every plugin set that ``load_plugins`` accepts: name -> "target (distribution)".
    Nothing is imported; a set listed here can still fail to load."""
    return PLUGINS.listing()


def load_plugins(name: str) -> list[Plugin]:
    """The plugins of the set called ``name`` (one-line PluginError if it cannot be had)."""
    try:
        ext = PLUGINS.extension(name) if name not in PLUGINS.extra else None
        obj = PLUGINS.load(name)
    except ExtensionError as e:
        raise PluginError(_capital(str(e))) from e.__cause__
    where = ext.where("plugin set") if ext else f"plugin set {name!r}"
    if callable(obj) and not isinstance(obj, Plugin):
        try:
            obj = obj()
        except Exception as e:
            raise PluginError(f"Cannot load {where}: its factory raised {type(e).__name__}: "
                              f"{one_line(e)}") from e
    if isinstance(obj, Plugin):
        return [obj]
    if isinstance(obj, Iterable) and not isinstance(obj, (str, bytes, dict)):
        items = list(obj)
        if items and all(isinstance(p, Plugin) for p in items):
            return items
    raise PluginError(f"Cannot load {where}: it gave {_kind(obj)}, expected a Plugin, a "
                      "non-empty list of Plugins, or a callable returning either")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _kind(obj: Any) -> str:
    if isinstance(obj, (list, tuple)):
        return f"a {type(obj).__name__} of {len(obj)} item(s) that are not all Plugins"
    return f"a {type(obj).__name__}"
