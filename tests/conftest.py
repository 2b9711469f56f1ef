"""Suite-wide setup: dataset availability (see support/data.py) and a private cache folder, so
no test writes into the user's real ~/.cache/toolscore."""

from __future__ import annotations

import pytest
from support import data


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs_data(*names): the test reads these datasets")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("needs_data"):
        for name in mark.args:
            data.dataset(name)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory,
                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))
