"""The Model protocol names everything the client reads from a model: the providers implement
it, redaction asks a model for its secrets (whatever the attribute it keeps them in), and a
provider written against the protocol's first three members still runs with its defaults."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from toolscore.models import Model, ModelClient, get_model
from toolscore.models.agent_http import AgentHTTP
from toolscore.models.base import InfraError, Reachable, model_secrets
from toolscore.models.limits.retry import RetryPolicy
from toolscore.types import GenerateConfig, Message, Reply, ToolSpec

KEY = "sk-kept-under-any-name-0123"


class Keyed(Model):
    """Keeps its key under a name of its own and echoes it in an error."""

    name = "test/keyed"

    def __init__(self) -> None:
        self.credential = KEY
        self.calls = 0

    def secrets(self) -> list[str]:
        return [self.credential]

    def cache_identity(self) -> dict[str, object]:
        return {"provider": "test"}

    async def generate(self, messages: list[Message], tools: list[ToolSpec],
                       config: GenerateConfig) -> Reply:
        self.calls += 1
        raise InfraError(f"HTTP 401: bad key {self.credential}", retryable=False, status=401)


class FirstMembersOnly:
    """A provider written before the protocol named more than these three members."""

    name = "test/first"

    def cache_identity(self) -> dict[str, object]:
        return {"provider": "first"}

    async def generate(self, messages: list[Message], tools: list[ToolSpec],
                       config: GenerateConfig) -> Reply:
        return Reply(Message(role="assistant", content=""))


def test_redaction_uses_the_secrets_the_model_declares() -> None:
    model = Keyed()
    client = ModelClient(model, retry=RetryPolicy(max_attempts=1))
    with pytest.raises(InfraError) as err:
        asyncio.run(client.generate([Message(role="user", content="hi")]))
    assert KEY not in str(err.value) and "***" in str(err.value) and model.calls == 1
    assert model_secrets(model) == [KEY] and model_secrets(None) == []


def test_the_defaults_a_subclass_gets() -> None:
    model = Keyed()
    assert (model.cacheable, model.empty_is_error, model.max_concurrency, model.base_url) == (
        True, True, None, None)
    assert isinstance(model, Model) and not isinstance(model, Reachable)
    model.base_url = "https://user:hunter2-secret@example.test/v1"
    assert Model.secrets(model) == ["hunter2-secret", "user"]


def test_every_built_in_provider_declares_its_secrets(tmp_path: Path) -> None:
    openai = get_model("openai/gpt-x", base_url="http://u:pw-in-url-9@127.0.0.1:9/v1",
                       api_key="sk-openai-key-0123")
    assert set(model_secrets(openai)) == {"sk-openai-key-0123", "pw-in-url-9", "u"}
    assert isinstance(openai, Reachable)
    agent = AgentHTTP("http://agent:agent-pass-77@127.0.0.1:9/chat")
    assert set(model_secrets(agent)) == {"agent-pass-77", "agent"}
    assert "agent-pass-77" not in agent.name
    (tmp_path / "recording.jsonl").write_text("")
    for name in ("oracle", f"replay:{tmp_path / 'recording.jsonl'}"):
        assert model_secrets(get_model(name)) == []


def test_a_provider_with_the_first_members_only_gets_the_defaults() -> None:
    model = FirstMembersOnly()
    client = ModelClient(model, retry=RetryPolicy(max_attempts=3, base_delay=0))
    reply = asyncio.run(client.generate([Message(role="user", content="hi")]))
    # empty_is_error defaults to True: the empty reply was retried, then kept as the answer
    assert reply.finish_reason == "empty" and client.calls == 3
    assert model_secrets(model) == []
    asyncio.run(client.preflight())  # nothing to check: no error

