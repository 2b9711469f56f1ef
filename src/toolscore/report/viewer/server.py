"""``toolscore view``'s web server: the standard library's threading HTTP server, on the loopback
interface unless asked otherwise, answering only GET.

Routes (a run is named by ``id``, its path under the folder; see :mod:`.catalog`)::

    /                      the list of runs (its script polls /api/runs)
    /run?id=ID             one run: a bar with its live state around its report page
    /report?id=ID          the run's report page (toolscore report --html's, records fetched)
    /api/runs              every run's row, JSON
    /api/state?id=ID       one run's row, JSON (the run page polls it: stat and new lines only)
    /api/record?id=ID&n=N  record N of the run as its page shows it when opened, JSON

Anything else, an unknown run or record, is 404. With a loopback address a request must name
the server by a loopback host too (a page elsewhere cannot reach it through a DNS name that
points here).
"""

from __future__ import annotations

import errno
import secrets
import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from toolscore.report.html.samples import dumps, esc
from toolscore.report.html.template import CSS
from toolscore.report.viewer.catalog import Catalog

DEFAULT_PORT = 7878
LOOPBACK = ("127.0.0.1", "localhost", "::1")
JS = (resources.files("toolscore.report.viewer") / "viewer.js").read_text(encoding="utf-8")
VIEW_CSS = """
body.viewer{max-width:none}
#runs td,#runs th{white-space:nowrap}#runs th{cursor:pointer;user-select:none}
#runs td.path{white-space:normal;word-break:break-all}
.status{font-size:11px;font-weight:700;padding:1px 6px;border-radius:3px;color:#fff}
.status.finished{background:var(--pass)}.status.running{background:#1565c0}
.status.stopped{background:#8d6e63}
#bar{display:flex;gap:14px;align-items:baseline;flex-wrap:wrap;padding:0 0 8px;
 border-bottom:1px solid var(--line)}
#report{width:100%;height:calc(100vh - 90px);border:0;display:block}
"""


def _shell(title: str, body: str, kind: str) -> bytes:
    nonce = secrets.token_urlsafe(16)
    csp = (f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; "
           f"frame-src 'self'; script-src 'nonce-{nonce}'")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{esc(title)}</title><style>{CSS}{VIEW_CSS}</style></head>"
        f'<body class="viewer" data-page="{kind}">\n{body}\n'
        f'<script nonce="{nonce}">{JS}</script>\n</body></html>\n').encode()


LIST_BODY = """<h1>toolscore runs</h1>
<p class="meta" id="root"></p>
<div id="filters">
<label>benchmark <select id="f-benchmark"><option value="">any</option></select></label>
<label>model <select id="f-model"><option value="">any</option></select></label>
<label>status <select id="f-status"><option value="">any</option>
<option>finished</option><option>running</option><option>stopped</option></select></label>
<label>search <input type="search" id="f-text" placeholder="path, model, mode..."></label>
<span id="f-count" class="muted"></span>
</div>
<table id="runs"><thead><tr>
<th data-key="benchmark" class="l">benchmark</th><th data-key="model" class="l">model</th>
<th data-key="mode" class="l">mode</th><th data-key="status" class="l">status</th>
<th data-key="done">samples</th><th data-key="value">headline</th>
<th data-key="created" class="l">started</th><th data-key="id" class="l">run</th>
</tr></thead><tbody></tbody></table>"""

RUN_BODY = """<div id="bar"><a href="/">all runs</a><b id="title"></b>
<span id="state" class="muted"></span>
<label><input type="checkbox" id="live" checked> follow new records</label>
<button type="button" id="newer" hidden>show the new records</button>
<span id="busy" class="muted" hidden>reading the run…</span></div>
<iframe id="report" title="report"></iframe>"""


class Handler(BaseHTTPRequestHandler):
    server: ViewerServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet by design
        pass

    def _send(self, code: int, body: bytes, kind: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, doc: Any, code: int = 200) -> None:
        self._send(code, dumps(doc).encode("ascii"), "application/json")

    def _error(self, code: int, message: str) -> None:
        self._json({"error": message}, code)

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        if not self.server.host_ok(self.headers.get("Host")):
            return self._error(403, "unexpected Host header")
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        catalog = self.server.catalog
        route = url.path
        try:
            if route == "/":
                return self._send(200, _shell("toolscore runs", LIST_BODY, "list"),
                                  "text/html; charset=utf-8")
            if route == "/api/runs":
                return self._json({"root": str(catalog.root), "runs": catalog.runs()})
            if route not in ("/run", "/report", "/api/state", "/api/record"):
                return self._error(404, "not found")
            entry = catalog.get(query.get("id", ""))
            if entry is None:
                return self._error(404, "no such run")
            if route == "/run":
                return self._send(200, _shell(f"toolscore · {entry.name}", RUN_BODY, "run"),
                                  "text/html; charset=utf-8")
            if route == "/report":
                try:
                    page = catalog.page(entry)
                except Exception as e:  # shown in the run's frame as one line of text
                    return self._send(500, f"{entry.name}: the report cannot be built: "
                                      f"{e}\n".encode(), "text/plain; charset=utf-8")
                return self._send(200, page, "text/html; charset=utf-8")
            if route == "/api/state":
                return self._json(catalog.summary(entry))
            n = query.get("n", "")
            if not n.isdigit():
                return self._error(404, "no such record")
            try:
                return self._json(catalog.record(entry, int(n)))
            except IndexError:
                return self._error(404, "no such record")
        except (BrokenPipeError, ConnectionResetError):
            return None
        except Exception as e:  # one line to the page; the server keeps serving
            return self._error(500, f"{type(e).__name__}: {e}")


class ViewerServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], catalog: Catalog, *,
                 check_host: bool = True) -> None:
        self.catalog = catalog
        self.check_host = check_host
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = str(host)
        return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"

    def host_ok(self, header: str | None) -> bool:
        if not self.check_host:
            return True
        if not header:
            return False
        host = header.rsplit(":", 1)[0] if not header.endswith("]") else header
        return host.strip("[]") in LOOPBACK


def make_server(root: str, host: str = "127.0.0.1", port: int = DEFAULT_PORT, *,
                allow_remote: bool = False, apart: bool = True) -> ViewerServer:
    """A server for the runs under ``root`` on ``host``: ``port``, or a free port when that
    one is taken (0: a free port). A host other than the loopback needs ``allow_remote``.
    ``apart``: report pages built in child processes (:mod:`.apart`), so that the server
    keeps none of a large run's peak memory."""
    if host not in LOOPBACK and not allow_remote:
        raise ValueError(f"--host {host!r}: the viewer serves run transcripts; it listens on "
                         "127.0.0.1 or localhost unless --allow-remote is given")
    address = "127.0.0.1" if host == "localhost" else host
    catalog = Catalog(root, apart=apart)
    check = host in LOOPBACK
    try:
        return ViewerServer((address, port), catalog, check_host=check)
    except OSError as e:
        if e.errno != errno.EADDRINUSE or port == 0:
            raise
        return ViewerServer((address, 0), catalog, check_host=check)
