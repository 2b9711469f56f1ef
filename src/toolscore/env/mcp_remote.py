"""The tools of an external MCP server as a toolscore Plugin, so a benchmark's protocol offers
them to the model under test, forwards its calls and scores them like its own tools.

This lives in ``env`` (not in ``serve``) because the benchmark that uses it sits below
``serve``: to the protocol, a remote tool is an ordinary :class:`~toolscore.env.tool.Tool`
whose implementation happens to be a ``tools/call`` on the server. The MCP SDK is imported
lazily, so the core never needs it.

Why a background event loop: ``Environment.call`` is synchronous (every simulator is), while
the protocol that calls it runs on the run's event loop. The connections live on one daemon
thread with its own loop, and a forwarded call waits for its result there; the run's loop is
held for the length of one tool call, which is what an in-process simulator costs it too.

State: toolscore cannot snapshot an external server. A server started from a command line is
restarted whenever the world is reset (before every evaluated turn, as ToolTalk's protocol
does), so every turn starts from the server's initial state and the ground-truth replay is
exact. A server reached by URL keeps its state across turns and samples: the benchmark then
runs one sample at a time, and ``describe()`` says ``reset: none`` so the report can tell.

A tool mapped from MCP: its ``inputSchema`` is the parameters shown to the model; it is an
action unless the server marks it ``readOnlyHint``; a result with ``isError`` is the call's
exception (its text), otherwise the response is the structured content, else the text content
parsed as JSON when it is JSON, else the text. Two calls are equivalent when they name the same
tool with equal arguments (a remote response may hold fresh ids or times, so it is not
compared). A server that cannot be reached, dies or times out is an infrastructure failure
(:class:`~toolscore.models.base.InfraError`), never the model's mistake.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import threading
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import datetime
from typing import Any

from toolscore.env.environment import Environment
from toolscore.env.plugin import Plugin
from toolscore.env.tool import CallRecord, MatchContext, Tool
from toolscore.models.base import InfraError

PLUGIN_NAME = "mcp"
CALL_TIMEOUT = 60.0
LOOP_THREAD = "toolscore-mcp-client"
MISSING_SDK = "the MCP client needs the mcp package: pip install 'toolscore[mcp]'"


class RemoteToolError(Exception):
    """The server answered the call with ``isError``: the model's mistake, scored."""


def is_url(target: str) -> bool:
    return target.startswith(("http://", "https://"))


# -- the background loop ---------------------------------------------------------------------
_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _background_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name=LOOP_THREAD,
                             daemon=True).start()
        return _loop


def _run(coro: Any, timeout: float, what: str) -> Any:
    """Run ``coro`` on the background loop and wait; a transport failure is an InfraError."""
    future = asyncio.run_coroutine_threadsafe(coro, _background_loop())
    try:
        return future.result(timeout)
    except FutureTimeout:
        future.cancel()
        raise InfraError(f"MCP server: {what} timed out after {timeout:g}s") from None
    except (InfraError, RemoteToolError):
        raise
    except Exception as e:
        raise InfraError(f"MCP server: {what} failed: {type(e).__name__}: {e}") from None


class Connection:
    """One open client session to the server; the task that opened it also closes it (the
    SDK's task groups must be left by the task that entered them)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.client: Any = None
        self._close: asyncio.Event | None = None
        self._done: asyncio.Future[None] | None = None

    @classmethod
    def open(cls, target: str, timeout: float = CALL_TIMEOUT) -> Connection:
        conn = cls(target)
        _run(conn._start(), timeout, f"connecting to {target!r}")
        return conn

    async def _start(self) -> None:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._close = asyncio.Event()
        self._done = asyncio.ensure_future(self._hold(ready))
        await ready

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        try:
            from mcp import Client
        except ImportError:
            ready.set_exception(InfraError(MISSING_SDK))
            return
        try:
            async with Client(_server_argument(self.target), mode="legacy") as client:
                self.client = client
                ready.set_result(None)
                assert self._close is not None
                await self._close.wait()
        except Exception as e:  # noqa: BLE001 - reported to whoever waits for the connection
            if not ready.done():
                ready.set_exception(e)

    async def _stop(self) -> None:
        if self._close is not None and self._done is not None:
            self._close.set()
            await asyncio.wait([self._done], timeout=10)

    def close(self, wait: bool = True) -> None:
        if self._done is not None and not self._done.done():
            if not wait or threading.current_thread().name == LOOP_THREAD:
                # a garbage collection (maybe on the loop itself, maybe at exit): no waiting
                _background_loop().call_soon_threadsafe(lambda: asyncio.ensure_future(
                    self._stop()))
                return
            with contextlib.suppress(InfraError):
                _run(self._stop(), 15, "closing the connection")
        self.client = None

    def list_tools(self) -> list[dict[str, Any]]:
        async def listing() -> list[dict[str, Any]]:
            tools, cursor = [], None
            while True:
                page = await self.client.list_tools(cursor=cursor)
                tools += [t.model_dump(by_alias=True, exclude_none=True, mode="json")
                          for t in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    return tools

        return _run(listing(), CALL_TIMEOUT, "tools/list")  # type: ignore[no-any-return]

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        async def call() -> Any:
            result = await self.client.call_tool(name, arguments)
            return result.model_dump(by_alias=True, exclude_none=True, mode="json")

        return response_of(_run(call(), CALL_TIMEOUT, f"tools/call {name!r}"))


def _server_argument(target: str) -> Any:
    if is_url(target):
        return target
    from mcp import StdioServerParameters

    argv = shlex.split(target)
    if not argv:
        raise InfraError("MCP server: empty command line")
    return StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))


def response_of(result: dict[str, Any]) -> Any:
    """A ``CallToolResult`` (wire shape) as a simulator response, or RemoteToolError."""
    texts = [c.get("text", "") for c in result.get("content", []) if c.get("type") == "text"]
    if result.get("isError"):
        raise RemoteToolError("\n".join(texts) or "tool error")
    if "structuredContent" in result:
        return result["structuredContent"]
    values = [_json_or_text(t) for t in texts]
    return values[0] if len(values) == 1 else values


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


# -- tools -----------------------------------------------------------------------------------
def same_arguments(prediction: CallRecord, truth: CallRecord, ctx: MatchContext) -> bool:
    return prediction.arguments == truth.arguments


def remote_tool(listed: dict[str, Any]) -> Tool:
    """A toolscore Tool for one listed MCP tool (wire shape: name, description, inputSchema,
    annotations); calling it forwards to the environment's connection."""
    name = listed["name"]
    annotations = listed.get("annotations") or {}

    def forward(env: Any, **arguments: Any) -> Any:
        return env.forward(name, arguments)

    return Tool(name=name, description=listed.get("description") or "",
                parameters=listed.get("inputSchema") or {"type": "object", "properties": {}},
                fn=forward, action=not annotations.get("readOnlyHint", False),
                equivalence=same_arguments, extra={"mcp_annotations": annotations})


class RemoteTools:
    """The tool set of one MCP server (listed once, when the benchmark is built).

    ``recorded`` is the tool set as a run recorded it (run.json), with no server behind it:
    enough to read and rescore the run (scoring needs each tool's name and whether it is an
    action, never a call), while calling a tool is an error instead of starting the server
    a run directory names."""

    def __init__(self, target: str, listed: list[dict[str, Any]], *,
                 recorded: bool = False) -> None:
        self.target = target
        self.listed = listed
        self.recorded = recorded
        self.plugin = Plugin.from_tools(PLUGIN_NAME, [remote_tool(t) for t in listed])

    @classmethod
    def from_record(cls, target: str, described: Any, *, exact: bool,
                    where: str = "run.json: benchmark_config.mcp_server") -> RemoteTools:
        """The tool set a run recorded (its ``describe()``), without connecting. ``exact``:
        the listing must be complete (to score); otherwise the tool names alone do (to
        read), every tool then counted as an action. One-line ValueError when neither is
        there or their shape is wrong."""
        described = described if isinstance(described, dict) else {}
        listed = described.get("listing")
        if listed is None:
            if exact:
                raise ValueError(f"{where}: the server's tool listing is not recorded (a run "
                                 "made before listings were kept), so scoring this run needs "
                                 "the server itself")
            names = described.get("tools")
            listed = [{"name": n} for n in names] if isinstance(names, list) else []
        if not isinstance(listed, list):
            raise ValueError(f"{where}.listing: expected a list of tools")
        for i, tool in enumerate(listed):
            if not (isinstance(tool, dict) and isinstance(tool.get("name"), str)
                    and isinstance(tool.get("annotations") or {}, dict)
                    and isinstance(tool.get("inputSchema") or {}, dict)
                    and isinstance(tool.get("description") or "", str)):
                raise ValueError(f"{where}.listing[{i}]: expected a tool (name, description, "
                                 "inputSchema, annotations)")
        return cls(target, listed, recorded=True)

    @classmethod
    def connect(cls, target: str) -> RemoteTools:
        conn = Connection.open(target)
        try:
            return cls(target, conn.list_tools())
        finally:
            conn.close()

    @property
    def restartable(self) -> bool:
        return not is_url(self.target)

    def describe(self) -> dict[str, Any]:
        return {"target": self.target, "transport": "http" if is_url(self.target) else "stdio",
                "tools": [t["name"] for t in self.listed],
                "reset": "restart" if self.restartable else "none",
                # what a rescoring reads instead of starting the server again
                "listing": self.listed}

    def max_concurrency(self) -> int | None:
        return None if self.restartable else 1

    def environment(self, now: datetime | None = None) -> RemoteEnvironment:
        return RemoteEnvironment(self, now)


class RemoteEnvironment(Environment):
    """An Environment whose tools run on the MCP server; ``reset()`` restarts a server started
    from a command line (lazily: the next call starts it)."""

    def __init__(self, remote: RemoteTools, now: datetime | None = None) -> None:
        self.remote = remote
        self._conn: Connection | None = None
        self._infra: InfraError | None = None
        super().__init__([remote.plugin], now=now)

    def reset(self) -> None:
        super().reset()
        if self.remote.restartable:
            self.close()

    def close(self, wait: bool = True) -> None:
        if self._conn is not None:
            self._conn.close(wait)
            self._conn = None

    def forward(self, name: str, arguments: dict[str, Any]) -> Any:
        if self.remote.recorded:
            raise InfraError(f"MCP server {self.remote.target!r} not started: these tools were "
                             "read from a run directory, which is not trusted to start "
                             "processes", retryable=False)
        try:
            if self._conn is None:
                self._conn = Connection.open(self.remote.target)
            return self._conn.call(name, arguments)
        except InfraError as e:
            self._infra = e
            self.close()
            raise

    def call(self, name: str, arguments: dict[str, Any] | None) -> CallRecord:
        self._infra = None
        record = super().call(name, arguments)
        if self._infra is not None:
            raise self._infra
        return record

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown
            self.close(wait=False)
