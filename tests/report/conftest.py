"""What the report tests share: one headless Chromium per test module (started on first use;
the tests that need it skip where Chromium is not installed)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.browser import Browser


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    b = Browser(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield b
    finally:
        b.close()
