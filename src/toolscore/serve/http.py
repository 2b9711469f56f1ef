"""Episodes over HTTP: a small control API beside one MCP endpoint per episode.

In the current MCP transport an HTTP request carries no notion of "which simulated world", so
the episode is named in the URL: ``/episodes/<id>/mcp`` is a streamable-HTTP MCP endpoint whose
tool calls run in that episode's environment. Whoever drives the evaluation (a harness playing
the user, or a person) uses the control API:

=========================================  =================================================
``POST /episodes`` {"conversation": ID}     a new episode -> {id, mcp_url, conversation,
                                            system_prompt, turn}
``GET  /episodes/<id>``                     its state: turn, calls so far, ended
``GET  /episodes/<id>/calls``               its call log (episode, turn, time, tool,
                                            arguments, response, exception per call)
``POST /episodes/<id>/turn`` {"turn": N}    advance the turn counter (default: next turn)
``POST /episodes/<id>/reset``               back to the initial state, log cleared
``POST /episodes/<id>/end``                 end it: its record (written to the run directory)
=========================================  =================================================

Security: the server binds loopback by default. Bound anywhere else it refuses to start
without a bearer token, since the control API can read and end every episode. With a token,
every request (control and MCP) must carry ``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from typing import Any

from toolscore.serve.episodes import EpisodeError, Episodes
from toolscore.serve.mcp_tools import build_server

LOOPBACK_NAMES = ("localhost",)
MCP_PATH = re.compile(r"/episodes/([^/]+)/mcp")
MCP_METHODS = frozenset({"GET", "POST", "DELETE"})


class ServeError(ValueError):
    """A serving configuration that is refused (one line)."""


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_host(host: str, token: str | None) -> None:
    """Refuse to expose the episodes beyond this machine without a token."""
    if not is_loopback(host) and not token:
        raise ServeError(f"--host {host}: binding beyond loopback needs --token (anyone who "
                         "can reach the port could read and end every episode)")


class BearerToken:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>``."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                from starlette.responses import JSONResponse

                response = JSONResponse({"error": "missing or wrong bearer token"},
                                        status_code=401,
                                        headers={"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class EpisodeEndpoints:
    """ASGI front: a tool call (``/episodes/<id>/mcp``) goes straight to the SDK's
    streamable-HTTP handler, everything else (control API, lifespan) to the Starlette app.

    Why not a Starlette route: every request would first cross Starlette's two exception
    middlewares and a regex per route before reaching the SDK (profiled: about 7% of the
    served app's time per tool call) for a path that needs none of them. The episode id is
    put where the route would have put it (``path_params``), which is where the tool handler
    reads it.
    """

    def __init__(self, app: Any, mcp: Any) -> None:
        self.app = app
        self.mcp = mcp

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] in MCP_METHODS:
            path, root = scope["path"], scope.get("root_path", "")
            if root and path.startswith(root):
                path = path[len(root):]
            found = MCP_PATH.fullmatch(path)
            if found is not None:
                scope["path_params"] = {"episode": found.group(1)}
                await self.mcp(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(episodes: Episodes, *, host: str = "127.0.0.1", token: str | None = None) -> Any:
    """The ASGI app: the control API (Starlette) + per-episode MCP endpoints (the SDK's
    streamable-HTTP handler, reached directly by :class:`EpisodeEndpoints`)."""
    check_host(host, token)
    from mcp.server.streamable_http_manager import (
        StreamableHTTPASGIApp,
        StreamableHTTPSessionManager,
    )
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    def episode_of(ctx: Any) -> Any:
        request = ctx.request
        episode_id = request.path_params.get("episode") if request is not None else None
        return episodes.get(str(episode_id))

    server = build_server(episodes.world, episode_of)
    security = (TransportSecuritySettings(
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"])
        if is_loopback(host) else TransportSecuritySettings(enable_dns_rebinding_protection=False))
    # Stateful sessions (the SDK's default) for handshake-era clients (mode="legacy"): the
    # stateless transport builds a transport and a server task per request, about a third
    # more CPU per call (measured side by side in one process). A 2026-07-28 client is served
    # one self-contained request at a time whichever is chosen.
    manager = StreamableHTTPSessionManager(app=server, json_response=True,
                                           security_settings=security)
    mcp_endpoint = StreamableHTTPASGIApp(manager)  # here only to answer 405 to other methods

    async def body(request: Request) -> dict[str, Any]:
        raw = await request.body()
        if not raw.strip():
            return {}
        try:
            import json

            data = json.loads(raw)
        except ValueError:
            raise EpisodeError("request body: not JSON") from None
        if not isinstance(data, dict):
            raise EpisodeError("request body: expected a JSON object")
        return data

    def fail(e: Exception) -> JSONResponse:
        status = 404 if "no episode" in str(e) else 409 if "ended" in str(e) else 400
        return JSONResponse({"error": str(e)}, status_code=status)

    def describe(request: Request, episode: Any) -> dict[str, Any]:
        sample = episode.world.sample
        return {"id": episode.id, "mcp_url": f"{str(request.base_url).rstrip('/')}"
                f"/episodes/{episode.id}/mcp",
                "conversation": sample.id if sample else None, "epoch": episode.epoch,
                "system_prompt": episode.world.system_prompt, "turn": episode.turn,
                "calls": len(episode.calls), "ended": episode.ended,
                "tools": list(episode.world.specs)}

    async def create(request: Request) -> JSONResponse:
        try:
            data = await body(request)
            conversation = data.get("conversation")
            episode = episodes.create(None if conversation is None else str(conversation))
        except (EpisodeError, ValueError) as e:
            return fail(e)
        return JSONResponse(describe(request, episode), status_code=201)

    def action(name: str) -> Any:
        async def endpoint(request: Request) -> JSONResponse:
            try:
                episode = episodes.get(request.path_params["episode"])
                if name == "show":
                    return JSONResponse(describe(request, episode))
                if name == "calls":
                    return JSONResponse({"id": episode.id, "turn": episode.turn,
                                         "calls": [c.to_dict() for c in episode.calls]})
                if episode.ended:
                    raise EpisodeError(f"episode {episode.id} has ended")
                if name == "turn":
                    turn = (await body(request)).get("turn")
                    return JSONResponse({"id": episode.id, "turn": episode.advance(
                        None if turn is None else int(turn))})
                if name == "reset":
                    episode.reset()
                    return JSONResponse(describe(request, episode))
                record = episodes.end(episode.id)
                return JSONResponse({"id": episode.id, "record": record.to_dict()})
            except (EpisodeError, ValueError, TypeError) as e:
                return fail(e)
        return endpoint

    routes = [
        Route("/episodes", create, methods=["POST"]),
        Route("/episodes/{episode}", action("show"), methods=["GET"]),
        Route("/episodes/{episode}/calls", action("calls"), methods=["GET"]),
        Route("/episodes/{episode}/turn", action("turn"), methods=["POST"]),
        Route("/episodes/{episode}/reset", action("reset"), methods=["POST"]),
        Route("/episodes/{episode}/end", action("end"), methods=["POST"]),
        Route("/episodes/{episode}/mcp", mcp_endpoint, methods=["GET", "POST", "DELETE"]),
    ]
    control = Starlette(routes=routes, lifespan=lambda app: manager.run())
    app: Any = EpisodeEndpoints(control, manager.asgi_app)
    return BearerToken(app, token) if token else app


def server_config(app: Any, *, host: str = "127.0.0.1", port: int = 8765,
                  log_level: str = "warning", **options: Any) -> Any:
    """uvicorn's configuration for the episodes' app, without per-request work nobody reads:
    no access log line per tool call and no proxy-header rewriting (the client address is
    not used). The HTTP parser and event loop are uvicorn's choice ("auto": httptools and
    uvloop when installed, else h11 and asyncio)."""
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, log_level=log_level, access_log=False,
                          proxy_headers=False, **options)


def serve_http(episodes: Episodes, *, host: str = "127.0.0.1", port: int = 8765,
               token: str | None = None) -> None:
    """Serve until interrupted (uvicorn)."""
    import uvicorn

    app = create_app(episodes, host=host, token=token)
    uvicorn.Server(server_config(app, host=host, port=port)).run()
