"""Who may talk to the episodes' HTTP server: checks made before any request is served.

The server listens on loopback, which stops other machines, not other programs of this one
nor the web pages its browser shows. Three lines of defence:

* **Host**: only the names the server was bound under (``127.0.0.1:PORT``, ``localhost:PORT``,
  ``[::1]:PORT`` on loopback, ``HOST:PORT`` on a named address) or the ones configured. A page
  that rebinds its own domain's DNS to 127.0.0.1 sends its domain as Host (421).
* **Origin**: a browser names the page behind every cross-site request; none is allowed unless
  configured (403). Programs (agents, harnesses, curl) send no Origin.
* **Content-Type**: a control POST must be ``application/json``: a page may POST
  ``text/plain`` cross-site without the browser asking the server first, never JSON (415).

And who may do what: the control API (create, advance, reset, end episodes) needs
``Authorization: Bearer <control token>``, a secret the agent is never given; an agent reaches
only its episode's tools, at an MCP address holding a secret of that episode's own. With a
network token (``--token``, needed beyond loopback) every MCP request carries it too.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Callable, Iterable
from typing import Any

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARD_HOSTS = ("0.0.0.0", "::", "")


def host_name(host: str) -> str:
    """``host`` as a Host header writes it (an IPv6 address in brackets)."""
    try:
        return f"[{host.strip('[]')}]" if ipaddress.ip_address(host.strip("[]")).version == 6 \
            else host
    except ValueError:
        return host


def allowed_hosts(host: str, port: int | None, extra: Iterable[str] = (), *,
                  loopback: bool) -> frozenset[str] | None:
    """The Host header values to accept; None: any (a wildcard bind with none configured,
    where the network token is the guard). ``port`` None: any port of those names. A
    configured name without a port accepts that name with any port or none (a reverse proxy
    in front forwards its own)."""
    configured = {h.strip().lower() for h in extra if h.strip()}
    if loopback:
        names = {*LOOPBACK_NAMES, host_name(host)}
    elif host in WILDCARD_HOSTS:
        if not configured:
            return None
        names = set()
    else:
        names = {host_name(host)}
    suffix = f":{port}" if port is not None else ":*"
    allowed = {f"{n.lower()}{suffix}" for n in names} | configured
    if port == 80:  # a client leaves the default port out
        allowed |= {n.lower() for n in names}
    return frozenset(allowed)


def host_allowed(given: str, allowed: frozenset[str] | None) -> bool:
    if allowed is None:
        return True
    given = given.strip().lower()
    if given in allowed:
        return True
    name, _, port = given.rpartition(":")
    return port.isdigit() and (name in allowed or f"{name}:*" in allowed)


class RequestGuard:
    """ASGI middleware: Host, Origin, the bearer tokens and a control POST's Content-Type.

    ``is_tool_path(path)``: whether a request is an agent's (an episode's MCP endpoint) rather
    than the control API's. ``control_token`` None: there is no control API to guard (the
    server offers only tools)."""

    def __init__(self, app: Any, is_tool_path: Callable[[str], bool], *,
                 hosts: frozenset[str] | None, origins: Iterable[str] = (),
                 token: str | None = None, control_token: str | None = None) -> None:
        self.app = app
        self.is_tool_path = is_tool_path
        self.hosts = hosts
        self.origins = frozenset(o.rstrip("/").lower() for o in origins)
        self.token = f"Bearer {token}".encode() if token else None
        self.control = f"Bearer {control_token}".encode() if control_token else None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            refused = self.refusal(scope)
            if refused is not None:
                status, message, headers = refused
                await _answer(send, status, message, headers)
                return
        await self.app(scope, receive, send)

    def refusal(self, scope: Any) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
        headers = dict(scope.get("headers") or [])
        host = headers.get(b"host", b"").decode("latin-1")
        if not host_allowed(host, self.hosts):
            return 421, f"Host {host!r} is not a name this server answers to", []
        origin = headers.get(b"origin")
        if origin is not None and origin.decode("latin-1").rstrip("/").lower() \
                not in self.origins:
            return 403, "cross-origin requests are refused (Origin not allowed)", []
        given = headers.get(b"authorization", b"")
        path, root = scope.get("path", ""), scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root):]
        if self.is_tool_path(path):
            if self.token is not None and not hmac.compare_digest(given, self.token):
                return 401, "missing or wrong bearer token", [(b"www-authenticate", b"Bearer")]
            return None
        if self.control is not None:
            if not hmac.compare_digest(given, self.control):
                return 401, "the control API needs its bearer token", [
                    (b"www-authenticate", b"Bearer")]
            if scope.get("method") == "POST":
                kind = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
                if kind != b"application/json":
                    return 415, "a control request's body must be application/json", []
        return None


async def _answer(send: Any, status: int, message: str,
                  headers: list[tuple[bytes, bytes]]) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), *headers]})
    await send({"type": "http.response.body", "body": body})
