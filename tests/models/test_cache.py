"""The response cache: hits cost nothing, every input that shapes a reply is in the key, secrets
never reach the file, and several processes can share one cache."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.testing.openai_server import FakeOpenAIServer

from toolscore.models import (
    InfraError,
    ModelClient,
    ResponseCache,
    RetryPolicy,
    cache_key,
    get_model,
)
from toolscore.types import GenerateConfig, Message, Reply, ToolSpec, Usage

MSGS = [Message(role="system", content="be brief"), Message(role="user", content="weather?")]
TOOLS = [ToolSpec("get_weather", "Weather for a city",
                  {"type": "object", "properties": {"city": {"type": "string"}}})]


class CountingModel:
    """An in-process model that answers with a counter, so cache hits are visible."""

    name = "test/counting"

    def __init__(self, text: str = "hello") -> None:
        self.n = 0
        self.text = text

    def cache_identity(self) -> dict[str, object]:
        return {"provider": "test", "model": "counting"}

    async def generate(self, messages, tools, config) -> Reply:
        self.n += 1
        return Reply(message=Message(role="assistant", content=f"{self.text} {self.n}"),
                     usage=Usage(input_tokens=10, output_tokens=3))


def test_hit_and_miss(tmp_path: Path) -> None:
    model = CountingModel()
    cache = ResponseCache(tmp_path / "cache.sqlite")
    client = ModelClient(model, cache=cache)

    async def go() -> tuple[Reply, Reply, Reply]:
        a = await client.generate(MSGS, TOOLS, GenerateConfig())
        b = await client.generate(MSGS, TOOLS, GenerateConfig())
        c = await client.generate(MSGS, TOOLS, GenerateConfig(epoch=1))
        return a, b, c

    a, b, c = asyncio.run(go())
    assert model.n == 2 and client.calls == 2
    assert a.text == b.text == "hello 1" and c.text == "hello 2"
    assert (a.usage.calls, a.usage.cached_calls) == (1, 0)
    assert (b.usage.calls, b.usage.cached_calls) == (0, 1)
    assert b.usage.input_tokens == 10 and b.usage.latency_s == 0
    assert client.usage.calls == 2 and client.usage.cached_calls == 1
    assert cache.hits == 1 and cache.misses == 2 and len(cache) == 2
    cache.close()
    # A new process (here: a new cache object) sees the same entries.
    with ResponseCache(tmp_path / "cache.sqlite") as again:
        client2 = ModelClient(CountingModel("other"), cache=again)
        hit = asyncio.run(client2.generate(MSGS, TOOLS, GenerateConfig()))
        assert hit.text == "hello 1" and client2.calls == 0


def test_key_sensitivity() -> None:
    ident = {"provider": "openai", "model": "m", "base_url": "http://a/v1"}
    cfg = GenerateConfig()
    base = cache_key(ident, MSGS, TOOLS, cfg)
    assert base == cache_key(dict(reversed(list(ident.items()))), list(MSGS), list(TOOLS),
                             GenerateConfig())
    variants = [
        cache_key({**ident, "provider": "anthropic"}, MSGS, TOOLS, cfg),
        cache_key({**ident, "model": "m2"}, MSGS, TOOLS, cfg),
        cache_key({**ident, "base_url": "http://b/v1"}, MSGS, TOOLS, cfg),
        cache_key(ident, [*MSGS[:1], Message(role="user", content="weather!")], TOOLS, cfg),
        cache_key(ident, MSGS, [], cfg),
        cache_key(ident, MSGS, [ToolSpec("get_weather", "Weather for a town",
                                         TOOLS[0].parameters)], cfg),
        cache_key(ident, MSGS, TOOLS, GenerateConfig(temperature=0.7)),
        cache_key(ident, MSGS, TOOLS, GenerateConfig(max_tokens=100)),
        cache_key(ident, MSGS, TOOLS, GenerateConfig(seed=1)),
        cache_key(ident, MSGS, TOOLS, GenerateConfig(tool_choice="required")),
        cache_key(ident, MSGS, TOOLS, GenerateConfig(epoch=1)),
    ]
    assert base not in variants
    assert len(set(variants)) == len(variants)


def test_openai_identity_excludes_api_key() -> None:
    a = get_model("openai/m", base_url="http://x/v1", api_key="sk-secret-one")
    b = get_model("openai/m", base_url="http://x/v1", api_key="sk-secret-two")
    c = get_model("openai/m", base_url="http://y/v1", api_key="sk-secret-one")
    assert a.cache_identity() == b.cache_identity() != c.cache_identity()
    assert "sk-secret" not in repr(a) + str(a.cache_identity())


def test_api_key_never_written(tmp_path: Path) -> None:
    secret = "sk-test-DO-NOT-STORE-1234567890"
    with FakeOpenAIServer() as srv:
        model = get_model("openai/fake", base_url=srv.base_url, api_key=secret)
        cache = ResponseCache(tmp_path / "c.sqlite")
        client = ModelClient(model, cache=cache, record_path=tmp_path / "rec.jsonl")
        asyncio.run(client.generate(MSGS, TOOLS, GenerateConfig()))
        cache.close()
    for f in tmp_path.iterdir():  # the DB and its WAL/SHM side files, and the recording
        assert secret.encode() not in f.read_bytes(), f.name


def test_a_persistent_empty_reply_is_retried_then_kept_and_cached(tmp_path: Path) -> None:
    """Empty completions are retried like infrastructure failures; when the last attempt is
    empty too, the empty reply is the model's answer (scored, and cached like any answer)."""
    class Empty(CountingModel):
        async def generate(self, messages, tools, config) -> Reply:
            self.n += 1
            return Reply(message=Message(role="assistant", content=""))

    cache = ResponseCache(tmp_path / "c.sqlite")
    client = ModelClient(Empty(), cache=cache, retry=RetryPolicy(max_attempts=2, base_delay=0))
    reply = asyncio.run(client.generate(MSGS, TOOLS, GenerateConfig()))
    assert reply.text == "" and reply.finish_reason == "empty" and client.calls == 2
    assert len(cache) == 1
    again = asyncio.run(client.generate(MSGS, TOOLS, GenerateConfig()))
    assert again.text == "" and client.calls == 2 and again.usage.cached_calls == 1


def test_failures_are_not_cached(tmp_path: Path) -> None:
    class Down(CountingModel):
        async def generate(self, messages, tools, config) -> Reply:
            self.n += 1
            raise InfraError("HTTP 503", retryable=True, status=503)

    cache = ResponseCache(tmp_path / "c.sqlite")
    client = ModelClient(Down(), cache=cache, retry=RetryPolicy(max_attempts=2, base_delay=0))
    with pytest.raises(InfraError, match="gave up after 2 attempt"):
        asyncio.run(client.generate(MSGS, TOOLS, GenerateConfig()))
    assert len(cache) == 0 and client.calls == 2


WRITER = """
import sys
from toolscore.models.cache import ResponseCache
from toolscore.types import Message, Reply
c = ResponseCache(sys.argv[1])
for i in range(40):
    c.put(f"{sys.argv[2]}-{i}", Reply(message=Message(role="assistant", content=str(i))))
"""


def test_several_processes_share_one_cache(tmp_path: Path) -> None:
    db = tmp_path / "shared.sqlite"
    src = str(Path(__file__).resolve().parents[2] / "src")
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), tag],
                              env={**os.environ, "PYTHONPATH": src}) for tag in ("a", "b", "c")]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    with ResponseCache(db) as cache:
        assert len(cache) == 120
        assert cache.get("b-7").text == "7"


def test_cache_spec_none_is_no_cache_never_a_file(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from toolscore.models.factory import cache_path, open_cache

    monkeypatch.chdir(tmp_path)
    assert cache_path(None) is None and cache_path("none") is None
    assert open_cache("none") is None and not (tmp_path / "none").exists()
    assert cache_path(tmp_path / "c.sqlite") == tmp_path / "c.sqlite"
