"""Judge kinds for these tests: toolscore's own kinds are ``toolscore.judges`` entry points
(declared in pyproject.toml); where the installed metadata predates them, the same targets are
registered at run time, so the tests exercise the objects the entry points name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolscore.entrypoints import JUDGES, Extension, ExtensionError

#: The entry points toolscore declares for its judge kinds (name -> module:attribute).
BUILTIN_TARGETS = {
    "acs-llm": "toolscore.benchmarks.acs.prompt:JUDGE",
    "acs-verify": "toolscore.benchmarks.acs.verify:JUDGE",
    "tooleval-pass": "toolscore.judges.kinds:TOOLEVAL_PASS",
    "tooleval-pref": "toolscore.judges.kinds:TOOLEVAL_PREF",
}


@pytest.fixture(autouse=True)
def builtin_judges() -> Iterator[dict[str, str]]:
    added = []
    for name, target in BUILTIN_TARGETS.items():
        try:
            JUDGES.extension(name)
        except ExtensionError:
            JUDGES.register(name, Extension(name, target, "toolscore", "").load("judge"))
            added.append(name)
    yield BUILTIN_TARGETS
    for name in added:
        JUDGES.unregister(name)
