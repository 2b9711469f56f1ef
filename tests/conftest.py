"""Suite-wide setup: dataset availability (see support/data.py), a private cache folder, so
no test writes into the user's real ~/.cache/toolscore, and a check that native model code
never runs in the test process."""

from __future__ import annotations

import sys

import pytest
from support import data

_NATIVE = "llama_cpp"  # the embedded model's native library
_native_reported: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs_data(*names): the test reads these datasets")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("needs_data"):
        for name in mark.args:
            data.dataset(name)


# variables toolscore reads as defaults of the common run options
SETTINGS = ("TOOLSCORE_MODEL", "TOOLSCORE_OUT", "TOOLSCORE_MAX_CONCURRENCY", "TOOLSCORE_CACHE")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory,
                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))
    for name in SETTINGS:  # the developer's own defaults never reach a test
        monkeypatch.delenv(name, raising=False)
    if data.ROOT.is_dir():  # the library finds the datasets the suite found (../shared/...)
        monkeypatch.setenv("TOOLSCORE_DATA", str(data.ROOT))


def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Native model code runs in a child process, in toolscore as in its tests: a crash there
    fails one test, while in the test process it would end the whole suite without a word.
    The test that first loads it into this process fails, by name."""
    if _NATIVE in sys.modules and not _native_reported:
        _native_reported.append(item.nodeid)
        pytest.fail(f"{item.nodeid} loaded {_NATIVE} into the test process: run native model "
                    "code in a child process (see tests/support/child.py)", pytrace=False)
