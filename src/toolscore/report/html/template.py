"""The fixed parts of the HTML report: style, the page's script, and the page around a body.

The page is one file that works offline. A Content-Security-Policy allows only the report's own
script (by nonce) and inline styles. Everything from a run is either escaped before it reaches
the page (the tables and plots) or carried as JSON that the page's script (``report.js``)
puts into the document through ``textContent`` and ``dataset`` only (the records, see
:mod:`toolscore.report.html.samples`), so the policy is a second line of defence, not the
first. Decompressing a record block needs no policy change: ``DecompressionStream``, ``Blob``
and ``Response`` read bytes already in the page and fetch nothing.
"""

from __future__ import annotations

import html
import json
import secrets
from collections.abc import Callable, Iterable, Iterator
from importlib import resources
from typing import Any

from toolscore.report.export.table import printable

CSS = """
:root{--fg:#1d2430;--muted:#68707d;--line:#d9dde3;--pass:#2e7d32;--fail:#b3261e;--bg2:#f5f7fa}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);margin:0 auto;
 max-width:1200px;padding:16px 20px 60px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid
 var(--line);padding-bottom:4px}h3{font-size:15px;margin:16px 0 6px}
.meta{color:var(--muted);margin:0 0 12px}.meta b{color:var(--fg);font-weight:600}
table{border-collapse:collapse;margin:6px 0 14px;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid var(--line);padding:3px 10px;text-align:right;vertical-align:top}
th:first-child,td:first-child,td.l,th.l{text-align:left}th{background:var(--bg2);font-weight:600}
.ci{color:var(--muted);font-size:12px}.muted{color:var(--muted)}
.plots{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}
.plot{background:#fff;border:1px solid var(--line);border-radius:4px}
.plot .ptitle{font-size:13px;font-weight:600;fill:var(--fg)}
.plot .tick{font-size:11px;fill:var(--muted)}.plot .grid{stroke:#eceff3}
.plot .axis{stroke:#9aa1ab}.plot .whisker{stroke:#1d2430;stroke-width:1.3;fill:none}
.plot .empty{fill:#f4f5f7}.plot .cellnum{font-size:10px;fill:#fff;pointer-events:none}
#filters{position:sticky;top:0;background:#fffffff0;border-bottom:1px solid var(--line);
 padding:8px 0;display:flex;gap:14px;align-items:center;flex-wrap:wrap;z-index:2}
#filters select,#filters input[type=search]{font:inherit;padding:2px 4px;max-width:240px}
details.sample{border:1px solid var(--line);border-left:5px solid var(--pass);border-radius:4px;
 margin:8px 0;padding:4px 10px}
details.sample.failed{border-left-color:var(--fail)}
details.sample>summary{cursor:pointer;display:flex;gap:10px;flex-wrap:wrap;align-items:baseline}
.badge{font-size:11px;font-weight:700;padding:1px 6px;border-radius:3px;color:#fff}
.badge.pass{background:var(--pass)}.badge.fail{background:var(--fail)}
.badge.err{background:#6d4c41}.tag{font-size:12px;background:var(--bg2);border:1px solid
 var(--line);border-radius:3px;padding:0 5px}
.turn{border-top:1px dashed var(--line);margin-top:8px;padding-top:6px}
.msg{margin:4px 0;padding:4px 8px;border-radius:4px;background:var(--bg2)}
.msg.assistant{background:#eef3fb}.msg.tool{background:#f3f6ee}.msg.user{background:#fbf6ea}
.role{font-size:11px;font-weight:700;text-transform:uppercase;color:var(--muted);margin-right:6px}
pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;font:12px/1.4 ui-monospace,
 SFMono-Regular,Menlo,monospace}
.calls td{font-size:12.5px}.ok{color:var(--pass);font-weight:600}.bad{color:var(--fail);
 font-weight:600}.strong{font-weight:700}.note{color:var(--fail)}
#f-facets{display:contents}#f-facets label{white-space:nowrap}
"""

# The page's own script: a .js file beside this module (package data), read once.
JS = (resources.files("toolscore.report.html") / "report.js").read_text(encoding="utf-8")

FILTER_BAR = """<div id="filters">
<label><input type="checkbox" id="f-failed"> failed only</label>
<span id="f-facets"></span>
<label>split <select id="f-split"><option value="">any</option></select></label>
<label>id <input type="search" id="f-text" placeholder="sample id"></label>
<button type="button" id="f-expand">expand shown</button>
<button type="button" id="f-collapse">collapse all</button>
<span id="f-count" class="muted"></span>
<button type="button" id="f-prev">previous</button>
<span id="f-page" class="muted"></span>
<button type="button" id="f-next">next</button>
</div>"""


def json_for_script(data: Any) -> str:
    """JSON that cannot end its ``<script>`` element: ``<``, ``>`` and ``&`` become escapes."""
    text = json.dumps(data, sort_keys=True, default=str, allow_nan=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def page(title: str, body: str, data: Callable[[], Any], blocks: Iterable[str] = (),
         connect: bool = False) -> Iterator[str]:
    """The whole document, in parts (written one after the other, never joined in memory by
    :func:`~toolscore.report.html.page.write_html`): ``body`` is already-escaped HTML, ``blocks``
    the records' compressed ``<script type="application/octet-stream">`` blocks (inert: the
    policy runs only the nonce'd script), ``data()`` the index the page's script reads, called
    once the blocks are out so that the index can be gathered while they are written.
    ``connect``: the page may fetch from its own origin (records served one at a time)."""
    nonce = secrets.token_urlsafe(16)
    csp = (f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
           f"script-src 'nonce-{nonce}'" + ("; connect-src 'self'" if connect else ""))
    yield (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{html.escape(printable(title))}</title><style>{CSS}</style></head><body>\n"
        f"{body}\n"
    )
    for block in blocks:
        yield block + "\n"
    yield (f'<script type="application/json" id="report-data">{json_for_script(data())}'
           f'</script>\n<script nonce="{nonce}">{JS}</script>\n</body></html>\n')
