"""Episodes over HTTP: a small control API beside one MCP endpoint per episode.

In the current MCP transport an HTTP request carries no notion of "which simulated world", so
the episode is named in the URL: ``/mcp/<key>`` is a streamable-HTTP MCP endpoint whose tool
calls run in that episode's world, ``<key>`` a secret of the episode's own (the agent is given
that URL and can do nothing else with it). Whoever drives the evaluation (a harness playing
the user, or a person) uses the control API, with ``Authorization: Bearer <control token>``
(see :mod:`toolscore.benchmarks.serve.guard`; the bodies of POSTs are ``application/json``):

=========================================  =================================================
``POST /episodes`` {"conversation": ID}     a new episode -> {id, mcp_url, conversation,
                                            system_prompt, turn}
``GET  /episodes/<id>``                     its state: turn, calls so far, ended
``GET  /episodes/<id>/calls``               its call log (episode, turn, time, tool,
                                            arguments, response, exception per call)
``POST /episodes/<id>/turn`` {"turn": N}    advance the turn counter (default: next turn)
``POST /episodes/<id>/reset``               back to the initial state, log cleared (the
                                            attempt discarded stays in the record)
``POST /episodes/<id>/end``                 end it: its record (written to the run directory)
=========================================  =================================================

Without a control token the app serves the tools only (the free-running protocol drives its
episodes in-process and offers the agent nothing else). The server binds loopback by default;
bound anywhere else it refuses to start without a network token (``--token``), which every
MCP request must then carry.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from typing import Any

from toolscore.benchmarks.serve.episodes import Episodes
from toolscore.benchmarks.serve.guard import RequestGuard, allowed_hosts
from toolscore.benchmarks.serve.mcp_tools import build_server

LOOPBACK_NAMES = ("localhost",)
MCP_PATH = re.compile(r"/mcp/([A-Za-z0-9_-]+)")
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


def check_host(host: str, token: str | None, control_token: str | None = None) -> None:
    """Refuse to expose the episodes beyond this machine without a token, and a control
    token that is the agents' token too (an agent could then drive its own episode)."""
    if not is_loopback(host) and not token:
        raise ServeError(f"--host {host}: binding beyond loopback needs --token (anyone who "
                         "can reach the port could call every episode's tools)")
    if token and control_token and token == control_token:
        raise ServeError("--control-token must differ from --token: agents are given the "
                         "token, and the control token must stay out of their reach")


def is_tool_path(path: str) -> bool:
    return MCP_PATH.fullmatch(path) is not None


class EpisodeEndpoints:
    """ASGI front: a tool call (``/mcp/<key>``) goes straight to the SDK's streamable-HTTP
    handler, everything else (control API, lifespan) to the Starlette app.

    Why not a Starlette route: every request would first cross Starlette's two exception
    middlewares and a regex per route before reaching the SDK (profiled: about 7% of the
    served app's time per tool call) for a path that needs none of them. The episode's key
    is put where the route would have put it (``path_params``), which is where the tool
    handler reads it.
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
                scope["path_params"] = {"key": found.group(1)}
                await self.mcp(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(episodes: Episodes, *, host: str = "127.0.0.1", port: int | None = None,
               token: str | None = None, control_token: str | None = None,
               hosts: Iterable[str] = (), origins: Iterable[str] = ()) -> Any:
    """The ASGI app: per-episode MCP endpoints (the SDK's streamable-HTTP handler, reached
    directly by :class:`EpisodeEndpoints`) and, given a ``control_token``, the control API
    (Starlette), all behind :class:`~.guard.RequestGuard`. ``port``: the bound
    port (the Host header must name it; None: any); ``hosts`` and ``origins``: further Host
    names and browser origins to accept."""
    check_host(host, token, control_token)
    from mcp.server.streamable_http_manager import (
        StreamableHTTPASGIApp,
        StreamableHTTPSessionManager,
    )
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Route

    def episode_of(ctx: Any) -> Any:
        request = ctx.request
        key = request.path_params.get("key") if request is not None else None
        return episodes.at(str(key))

    server = build_server(episodes.world, episode_of)
    # Host and Origin are checked in front of everything (RequestGuard), the same way for
    # the tools and the control API; the SDK still checks a POST's Content-Type.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    # Stateful sessions (the SDK's default) for handshake-era clients (mode="legacy"): the
    # stateless transport builds a transport and a server task per request, about a third
    # more CPU per call (measured side by side in one process). A 2026-07-28 client is served
    # one self-contained request at a time whichever is chosen.
    manager = StreamableHTTPSessionManager(app=server, json_response=True,
                                           security_settings=security)
    mcp_endpoint = StreamableHTTPASGIApp(manager)  # here only to answer 405 to other methods
    routes = [Route("/mcp/{key}", mcp_endpoint, methods=["GET", "POST", "DELETE"])]
    if control_token:
        from toolscore.benchmarks.serve.control import control_routes

        routes += control_routes(episodes)
    control = Starlette(routes=routes, lifespan=lambda app: manager.run())
    app: Any = EpisodeEndpoints(control, manager.asgi_app)
    return RequestGuard(app, is_tool_path,
                        hosts=allowed_hosts(host, port, hosts, loopback=is_loopback(host)),
                        origins=origins, token=token, control_token=control_token)


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
               token: str | None = None, control_token: str | None = None,
               hosts: Iterable[str] = (), origins: Iterable[str] = ()) -> None:
    """Serve until interrupted (uvicorn). On SIGTERM or SIGINT the open episodes are recorded
    as unfinished before the process exits (uvicorn re-raises the signal once its shutdown,
    this included, is done); one killed outright is recovered from the journal on the next
    start."""
    import uvicorn

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            try:
                await super().shutdown(sockets)
            finally:
                episodes.stop()

    app = create_app(episodes, host=host, port=port, token=token,
                     control_token=control_token, hosts=hosts, origins=origins)
    # a client holding a stream open must not keep a stopping server (and its records) waiting
    server = Server(server_config(app, host=host, port=port, timeout_graceful_shutdown=5))
    try:
        server.run()
    finally:
        episodes.stop()
