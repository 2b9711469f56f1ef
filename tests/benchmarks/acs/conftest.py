"""ACS's judge kinds (``toolscore.judges`` entry points acs-verify and acs-llm) for these
tests; where the installed metadata predates them, the same targets are registered at run time
(in-process only: a subprocess sees the installed entry points)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolscore.entrypoints import JUDGES, Extension, ExtensionError

TARGETS = {"acs-llm": "toolscore.benchmarks.acs.prompt:JUDGE",
           "acs-verify": "toolscore.benchmarks.acs.verify:JUDGE"}


@pytest.fixture(autouse=True)
def acs_judges() -> Iterator[None]:
    added = []
    for name, target in TARGETS.items():
        try:
            JUDGES.extension(name)
        except ExtensionError:
            JUDGES.register(name, Extension(name, target, "toolscore", "").load("judge"))
            added.append(name)
    yield
    for name in added:
        JUDGES.unregister(name)
