"""Every sweep test talks to the fake OpenAI server through the real openai/ provider, which
wants a key."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
