"""The served ToolTalk world the serve tests share."""

from __future__ import annotations

from typing import Any

import pytest
from support.data import dataset


@pytest.fixture(scope="module")
def world() -> Any:
    pytest.importorskip("mcp")
    from toolscore.benchmarks.serve.world import ServedWorld

    return ServedWorld.create("tooltalk", data=dataset("tooltalk"), embedder="hashing")
