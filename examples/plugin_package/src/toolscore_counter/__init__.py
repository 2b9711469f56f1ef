"""An example external toolscore plugin: named counters.

It shows everything a plugin package needs: tools written with ``@tool`` (the JSON schema shown
to the model comes from the type hints and the docstring), a Plugin naming the database the tools
share, an equivalence rule, and one entry point in pyproject.toml.
"""

from __future__ import annotations

from typing import Any

from toolscore.env import CallRecord, Environment, MatchContext, Plugin, tool


def _same_counter(pred: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
    """Counter names are free text typed by the model: compare them loosely, amounts exactly."""
    p, t = pred.arguments or {}, truth.arguments or {}
    return (pred.exception == truth.exception
            and ctx.similarity(p.get("name"), t.get("name")) >= 0.8
            and p.get("by", 1) == t.get("by", 1))


@tool("Increment", action=True, equivalence=_same_counter)
def increment(env: Environment, name: str, by: int = 1) -> dict[str, Any]:
    """Add to a named counter, creating it at zero if needed.

    Args:
        name: Counter name, e.g. "cups of coffee".
        by: Amount to add (default 1).
    """
    if isinstance(by, bool) or not isinstance(by, int):
        raise ValueError("by must be a whole number")
    counters = env.db("Counters")
    counters[name] = counters.get(name, 0) + by
    return {"name": name, "value": counters[name]}


@tool("GetCount")
def get_count(env: Environment, name: str) -> dict[str, Any]:
    """Read a named counter (0 if it was never incremented).

    Args:
        name: Counter name.
    """
    return {"name": name, "value": env.db("Counters").get(name, 0)}


# The entry point `counter = "toolscore_counter:PLUGINS"` names this list. A Plugin, or a
# zero-argument function returning a Plugin or a list of them, works too.
PLUGINS = [Plugin("Counter", [increment, get_count], databases=("Counters",),
                  description="Named counters.")]
