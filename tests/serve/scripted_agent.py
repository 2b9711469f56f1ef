"""A scripted agent behind the agent-http contract (aiohttp, in a thread): per user message it
makes the calls of its script over MCP (bare JSON-RPC POSTs), and where the script says so it
tries to erase its mistakes through every address toolscore gave it (the MCP URL, its base,
the episode id), or fails the message with a 503 to be played again. Every answer it got is
kept, so a test can say what was refused."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from support.loopback_app import serving

MODERN = "2026-07-28"

Call = tuple[str, dict[str, Any]]


@dataclass
class Step:
    """What the agent does for one user message: ``calls``, then (``erase``) try to reset its
    episode, then ``after``; ``fail``: answer 503 once the calls are made."""

    calls: list[Call] = field(default_factory=list)
    erase: bool = False
    after: list[Call] = field(default_factory=list)
    fail: bool = False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def erasures(mcp_url: str, episode: str) -> list[tuple[str, str, str | None]]:
    """(method, url, content type) of every way the agent could try to reset its episode,
    or start afresh, from what it was given (the server's address, its MCP URL and the
    secret in it, the episode id)."""
    base = mcp_url.split("/mcp/")[0] if "/mcp/" in mcp_url else mcp_url.rsplit("/", 3)[0]
    key = mcp_url.rstrip("/").rsplit("/", 1)[1]
    targets = [f"{base}/episodes/{episode}/reset", f"{base}/episodes/{key}/reset",
               f"{mcp_url}/reset", f"{mcp_url}/../reset", f"{base}/mcp/{episode}/reset",
               f"{base}/episodes"]
    return [("POST", url, kind) for url in targets
            for kind in ("application/json", "text/plain")]


class ScriptedAgent:
    """``script(session number, message number) -> Step`` (both from 1)."""

    def __init__(self, script: Any) -> None:
        self.script = script
        self.port = free_port()
        self.sessions: dict[str, dict[str, Any]] = {}
        self.tried: list[tuple[str, int]] = []  # (url, status) of every erasure attempt

    async def _call(self, http: Any, url: str, name: str, arguments: dict[str, Any]) -> Any:
        meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {}}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": name, "arguments": arguments, "_meta": meta}}
        headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
                   "Mcp-Name": name, "Accept": "application/json, text/event-stream"}
        async with http.post(url, json=body, headers=headers) as resp:
            assert resp.status == 200, await resp.text()
            return await resp.json()

    async def _erase(self, http: Any, session: dict[str, Any]) -> None:
        for method, url, kind in erasures(session["mcp_url"], session["episode"]):
            data = json.dumps({"conversation": session["episode"]}).encode()
            async with http.request(method, url, data=data,
                                    headers={"Content-Type": kind}) as resp:
                self.tried.append((url, resp.status))

    def app(self) -> Any:
        import aiohttp
        from aiohttp import web

        async def create(request: web.Request) -> web.Response:
            body = await request.json()
            name = str(len(self.sessions) + 1)
            self.sessions[name] = {"mcp_url": body["mcp_url"], "episode": body["episode"],
                                   "messages": 0}
            return web.json_response({"session": name})

        async def message(request: web.Request) -> web.Response:
            session = self.sessions[request.match_info["s"]]
            session["messages"] += 1
            step = self.script(int(request.match_info["s"]), session["messages"])
            async with aiohttp.ClientSession() as http:
                for name, arguments in step.calls:
                    await self._call(http, session["mcp_url"], name, arguments)
                if step.erase:
                    await self._erase(http, session)
                for name, arguments in step.after:
                    await self._call(http, session["mcp_url"], name, arguments)
            if step.fail:
                return web.json_response({"error": "overloaded"}, status=503)
            return web.json_response({"content": "Done."})

        async def delete(request: web.Request) -> web.Response:
            return web.Response(status=204)

        app = web.Application()
        app.add_routes([web.post("/episodes", create),
                        web.post("/episodes/{s}/messages", message),
                        web.delete("/episodes/{s}", delete)])
        return app

    @contextmanager
    def running(self) -> Iterator[str]:
        """Serving on loopback; yields its ``agent-http:`` model name."""
        with serving(self.app(), self.port) as url:
            yield f"agent-http:{url}"
