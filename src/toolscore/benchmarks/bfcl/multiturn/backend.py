"""The base of BFCL's stateful APIs in toolscore, and where each one is found.

A backend is a plain object whose public methods are the API a model may call (each returns
what BFCL's backend of the same name returns, raising what it raises) and whose public
attributes are its state, the state BFCL's checker compares between the model's world and the
ground truth's. Everything else is private (a leading ``_``): a public helper would be a
function the model could call. Class, method and parameter names are BFCL's: Python's own
error messages for a bad call (``GorillaFileSystem.cd() got an unexpected keyword argument``)
are part of what the model is sent back.
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar

#: BFCL's class names -> "module:attribute" of toolscore's implementation
_PACKAGE = "toolscore.benchmarks.bfcl.multiturn.backends"
BACKENDS: dict[str, str] = {
    "GorillaFileSystem": f"{_PACKAGE}.file_system:GorillaFileSystem",
    "MathAPI": f"{_PACKAGE}.math:MathAPI",
    "MessageAPI": f"{_PACKAGE}.message:MessageAPI",
    "TwitterAPI": f"{_PACKAGE}.posting:TwitterAPI",
    "TicketAPI": f"{_PACKAGE}.ticket:TicketAPI",
    "TradingBot": f"{_PACKAGE}.trading:TradingBot",
    "TravelAPI": f"{_PACKAGE}.travel:TravelAPI",
    "VehicleControlAPI": f"{_PACKAGE}.vehicle:VehicleControlAPI",
    "MemoryAPI_kv": f"{_PACKAGE}.memory_kv:MemoryAPI_kv",
    "MemoryAPI_vector": f"{_PACKAGE}.memory_vector:MemoryAPI_vector",
    "MemoryAPI_rec_sum": f"{_PACKAGE}.memory_rec_sum:MemoryAPI_rec_sum",
    "WebSearchAPI": f"{_PACKAGE}.web_search:WebSearchAPI",
}


class Backend:
    """One of BFCL's stateful APIs. Subclasses keep BFCL's class name."""

    #: True for an API without state (BFCL loads no scenario into it)
    _stateless: ClassVar[bool] = False

    def _load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
        """Set the state from an entry's ``initial_config`` for this class (missing fields
        take BFCL's defaults, read from the release by :mod:`toolscore.benchmarks.bfcl.release`);
        ``long_context`` adds BFCL's long-context filler where its backend does."""


    def _share_filler(self, other: Backend) -> None:
        """Make ``other`` hold the same long-context filler objects as this instance, where
        BFCL's backend puts its module-level filler records themselves into every instance
        (so a change one instance makes to them shows in all). Default: nothing is shared."""


def backend_class(name: str) -> type[Backend]:
    """The implementation of BFCL's class ``name``; KeyError when BFCL has no such class."""
    module, _, attr = BACKENDS[name].partition(":")
    cls = getattr(importlib.import_module(module), attr)
    assert issubclass(cls, Backend)
    return cls
