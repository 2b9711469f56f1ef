"""Provider ``agent-http:<url>``: a self-driving agent behind a small HTTP/JSON contract.

Most deployed assistants are agents that own their loop and call tools themselves, usually over
the Model Context Protocol. toolscore cannot drive such an agent call by call, so it plays only
the user: it serves the conversation's tool world over MCP, hands the agent the MCP URL, sends
the user's messages and reads the agent's replies; the calls the agent makes are logged by the
server and scored afterwards (the ``free-running`` protocol,
:mod:`toolscore.benchmarks.serve.freerun`).

The contract an agent implements (all bodies JSON, ``Content-Type: application/json``)::

    POST   {url}/episodes                    {"mcp_url": "http://127.0.0.1:P/mcp/K",
                                              "system_prompt": "...", "episode": "E"}
                                          -> {"session": "S"}            (any 2xx)
    POST   {url}/episodes/S/messages         {"content": "the user's message"}
                                          -> {"content": "the agent's reply text"}
    DELETE {url}/episodes/S                  (the episode is over; any 2xx, body ignored)

The agent keeps its own history within a session; it discovers the tools with the MCP
``tools/list`` of ``mcp_url`` (streamable HTTP) and calls them there before it replies.
``mcp_url`` reaches the episode's tools and nothing else (``K`` is a secret of that episode;
``E`` only names the episode in logs and records): the agent cannot reset, end or replay its
episode, and an attempt it makes fail is kept in the record (see
:mod:`toolscore.benchmarks.serve.freerun`).

Failures of the endpoint itself (connection refused or reset, timeouts, 429 and 5xx, a body
that is not the JSON above) are infrastructure errors (:class:`InfraError`), never the agent's
mistakes: creating and deleting a session are retried here; a failed message is not (the agent
may have acted on it), the protocol restarts the whole episode instead, and a failure that
persists is recorded on the sample as an error, excluded from the scores. A reply whose
``content`` is empty or null is the agent's answer, scored like any other.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from toolscore.models.base import InfraError, Model, strip_credentials, url_secrets
from toolscore.models.limits.retry import RetryPolicy, call_with_retry
from toolscore.models.providers import Provider
from toolscore.types import GenerateConfig, Message, Reply, ToolSpec

RETRYABLE_STATUS = (408, 409, 425, 429)
NOT_A_MODEL = ("{name} is a self-driving agent (it runs its own tool loop): run it with the "
               "free-running protocol (--protocol free-running)")


class AgentHTTP(Model):
    """The agent at ``url`` (the provider's ``model`` part). ``timeout``: seconds for one
    request; a message may run a whole tool loop, hence the generous default."""

    def __init__(self, url: str, *, timeout: float = 300.0, retry_budget_s: float = 60.0,
                 **_: Any) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"agent-http:{url}: expected agent-http:http(s)://host:port[/path]")
        self.url = url.rstrip("/")
        self.name = f"agent-http:{strip_credentials(self.url)}"
        self.timeout = timeout
        self.policy = RetryPolicy(max_attempts=4, base_delay=0.2, budget_s=retry_budget_s)

    def secrets(self) -> list[str]:
        """The credentials written into the agent's URL (its name shows it without them)."""
        return url_secrets(self.url)

    def cache_identity(self) -> dict[str, object]:
        return {"provider": "agent-http", "url": strip_credentials(self.url)}

    async def generate(self, messages: list[Message], tools: list[ToolSpec],
                       config: GenerateConfig) -> Reply:
        """An agent is not called turn by turn; the reference protocol cannot use it."""
        raise InfraError(NOT_A_MODEL.format(name=self.name), retryable=False)

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[AgentConnection]:
        """One HTTP connection pool for the sessions of one sample."""
        import aiohttp

        async with aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.timeout)) as http:
            yield AgentConnection(self, http)


class AgentConnection:
    """The contract's three requests over one ``aiohttp`` session."""

    def __init__(self, agent: AgentHTTP, http: Any) -> None:
        self.agent = agent
        self.http = http

    async def start(self, mcp_url: str, system_prompt: str, episode: str) -> str:
        body = {"mcp_url": mcp_url, "system_prompt": system_prompt, "episode": episode}
        reply = await self._retried("POST", "/episodes", body)
        session = reply.get("session") if isinstance(reply, dict) else None
        if not isinstance(session, (str, int)) or isinstance(session, bool) or session == "":
            raise InfraError(f"{self.agent.name}: POST /episodes: no 'session' in the reply "
                             f"{_short(reply)}", retryable=False)
        return str(session)

    async def send(self, session: str, content: str) -> str:
        """The agent's reply to one user message (not retried: see the module docstring)."""
        reply = await self._request("POST", f"/episodes/{session}/messages",
                                    {"content": content})
        if not isinstance(reply, dict) or "content" not in reply:
            raise InfraError(f"{self.agent.name}: POST /episodes/{session}/messages: no "
                             f"'content' in the reply {_short(reply)}", retryable=False)
        text = reply["content"]
        return "" if text is None else text if isinstance(text, str) else json.dumps(text)

    async def end(self, session: str) -> None:
        await self._retried("DELETE", f"/episodes/{session}", None)

    async def _retried(self, method: str, path: str, body: Any) -> Any:
        return await call_with_retry(lambda _attempt: self._request(method, path, body),
                                     self.agent.policy, timeout=self.agent.timeout)

    async def _request(self, method: str, path: str, body: Any) -> Any:
        import asyncio

        import aiohttp

        where = f"{self.agent.name}: {method} {path}"
        try:
            async with self.http.request(method, self.agent.url + path, json=body) as resp:
                raw = await resp.read()
                status = resp.status
        except asyncio.TimeoutError:
            raise InfraError(f"{where}: timed out after {self.agent.timeout:.0f}s",
                             retryable=True, status=408) from None
        except aiohttp.ClientError as e:
            raise InfraError(f"{where}: connection error: {type(e).__name__}: {e}",
                             retryable=True) from None
        if status >= 400:
            raise InfraError(f"{where}: HTTP {status}: {_short(raw.decode(errors='replace'))}",
                             retryable=status >= 500 or status in RETRYABLE_STATUS,
                             status=status)
        if method == "DELETE" or not raw.strip():
            return None
        try:
            return json.loads(raw)
        except ValueError:
            text = _short(raw.decode("utf-8", "replace"))
            raise InfraError(f"{where}: the reply is not JSON: {text}", retryable=False) from None


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


PROVIDER = Provider("agent-http", "toolscore.models.agent_http:AgentHTTP",
                    "agent-http:http://127.0.0.1:8000",
                    "an agent serving the agent-http contract (toolscore.models.agent_http); "
                    "run with --protocol free-running", ("aiohttp",))
