"""The leaderboard as one self-contained HTML page: sortable tables, each cell a link to its run.

The page works offline and from any folder: no external resource, links to each run's own
HTML report are relative to where the page is written (``RUN_DIR/report.html``, written by
``toolscore report RUN --html`` or ``toolscore leaderboard --html-reports``), so the page and
the runs can be copied together. Model names and options are run data: everything is escaped
before it reaches the page, the leaderboard document is embedded as JSON that cannot close its
element, and a Content-Security-Policy allows only this page's own sorting script (by nonce),
as the run report does. The script reads only ``data-v`` attributes and moves rows; it never
turns text into markup.
"""

from __future__ import annotations

import contextlib
import html
import json
import math
import os
import secrets
from pathlib import Path
from typing import Any

from toolscore.models.prices import Prices
from toolscore.report.export.table import printable
from toolscore.report.leaderboard.text import (
    TIED,
    column_text,
    cost,
    detail_names,
    legend,
    number,
    p_value,
    pass_k,
    value_text,
)

REPORT = "report.html"

CSS = """
:root{--fg:#1d2430;--muted:#68707d;--line:#d9dde3;--bg2:#f5f7fa;--best:#e8f3e9}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);margin:0 auto;
 max-width:1300px;padding:16px 20px 60px}
h1{font-size:20px;margin:0 0 6px}h2{font-size:16px;margin:26px 0 6px}
.muted{color:var(--muted)}.legend{color:var(--muted);max-width:950px}
table{border-collapse:collapse;margin:6px 0 14px;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid var(--line);padding:3px 10px;text-align:right}
th:nth-child(-n+2),td:nth-child(-n+2){text-align:left}th{background:var(--bg2)}
table.sortable th{cursor:pointer;user-select:none}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
tr.best td{background:var(--best)}td.missing{color:var(--muted);font-style:italic}
a{color:#1f57b8;text-decoration:none}a:hover{text-decoration:underline}
"""

JS = """
(function () {
  "use strict";
  function key(cell) {
    var v = cell.getAttribute("data-v");
    if (v !== null && v !== "" && !isNaN(Number(v))) { return [0, Number(v)]; }
    return [1, (v !== null ? v : cell.textContent).toLowerCase()];
  }
  function compare(a, b) {
    if (a[0] !== b[0]) { return a[0] - b[0]; }
    return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.querySelectorAll("thead th");
    heads.forEach(function (th, col) {
      th.addEventListener("click", function () {
        var down = th.getAttribute("aria-sort") !== "descending";
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", down ? "descending" : "ascending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (x, y) {
          var c = compare(key(x.cells[col]), key(y.cells[col]));
          return down ? -c : c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  document.body.dataset.ready = "1";
})();
"""


def esc(value: Any) -> str:
    return html.escape(printable(str(value)), quote=True)


def json_for_script(data: Any) -> str:
    """JSON that cannot end its ``<script>`` element (``<``, ``>``, ``&`` escaped)."""
    text = json.dumps(data, sort_keys=True, default=str, allow_nan=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def report_link(run_dir: str, page_dir: Path) -> str | None:
    """The run's report, relative to the page's folder; None when it has not been written."""
    target = Path(run_dir) / REPORT
    if not target.is_file():
        return None
    return Path(os.path.relpath(target.resolve(), page_dir.resolve())).as_posix()


def _td(text: str, sort: Any = None, link: str | None = None, cls: str = "") -> str:
    inner = esc(text)
    if link is not None:
        inner = f'<a href="{esc(link)}">{inner}</a>'
    attrs = f' class="{cls}"' if cls else ""
    if sort is not None:
        attrs += f' data-v="{esc(sort)}"'
    return f"<td{attrs}>{inner}</td>"


def _head(names: list[str]) -> str:
    return "<thead><tr>" + "".join(f"<th>{esc(n)}</th>" for n in names) + "</tr></thead>"


def _matrix(doc: dict[str, Any], page_dir: Path) -> str:
    boards = doc["boards"]
    rows = []
    for model in doc["models"]:
        cells = [_td(model)]
        for b in boards:
            c = next((x for x in b["cells"] if x["model_label"] == model), None)
            if c is None:
                cells.append(_td("", sort=""))
            elif c.get("value") is None:
                cells.append(_td(value_text(c), sort="", cls="missing"))
            else:
                cells.append(_td(value_text(c), sort=c["value"],
                                 link=report_link(c["run_dir"], page_dir)))
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<table class="sortable" id="summary">{_head(["model", *(b["name"] for b in boards)])}'
            f"<tbody>{''.join(rows)}</tbody></table>")


def _own(cell: dict[str, Any], name: str) -> str:
    """A benchmark's own column; sorted by its number ("8.33%" sorts as 8.33)."""
    value = (cell.get("columns") or {}).get(name)
    sort: Any = ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        sort = value
    elif isinstance(value, str):
        with contextlib.suppress(ValueError):
            sort = float(value.rstrip("%"))
    return _td(column_text(value), sort=sort)


def _board(b: dict[str, Any], i: int, page_dir: Path) -> str:
    metric = (b.get("metric") or {}).get("label", "-")
    rows = []
    for c in b["cells"]:
        vs = c.get("vs_best") or {}
        p = c.get("pass_hat_k") or {}
        link = report_link(c["run_dir"], page_dir) if c.get("value") is not None else None
        cells = [_td(str(c.get("rank") or "-"), sort=c.get("rank") or ""),
                 _td(c["model_label"], link=link),
                 _td(value_text(c), sort=c.get("value") if c.get("value") is not None else "",
                     link=link, cls="" if c.get("value") is not None else "missing"),
                 _td(str(c.get("n") or "-"), sort=c.get("n") or ""),
                 *(_own(c, name) for name in b.get("columns", [])),
                 _td(p_value(vs or None), sort=vs.get("p_value") if vs else ""),
                 _td(vs.get("test") or "-"),
                 _td(pass_k(c), sort="" if p.get("value") is None else p["value"]),
                 _td(number(c.get("noise_floor"), "rate"),
                     sort="" if c.get("noise_floor") is None else c["noise_floor"]),
                 _td(str(c.get("tokens", "-")), sort=c.get("tokens", "")),
                 _td(cost(c), sort=c.get("cost") if c.get("cost") is not None else ""),
                 _td(str(c.get("mode") or "-")),
                 _td(str(c.get("errors", "-")), sort=c.get("errors", "")),
                 _td(str(c.get("state") or "-"))]
        best = ' class="best"' if c.get("rank") == 1 else ""
        rows.append(f"<tr{best}>" + "".join(cells) + "</tr>")
    return (f"<h2>{esc(b['name'])}: {esc(metric)}</h2>"
            f'<table class="sortable board" id="board-{i}">{_head(detail_names(b))}'
            f"<tbody>{''.join(rows)}</tbody></table>")


def render_leaderboard_html(doc: dict[str, Any], page_dir: str | Path) -> str:
    """The page of a leaderboard document; links are relative to ``page_dir``."""
    where = Path(page_dir)
    missing = sum(1 for b in doc["boards"] for c in b["cells"]
                  if c.get("value") is not None and report_link(c["run_dir"], where) is None)
    note = (f"<p class=\"muted\">{missing} run(s) have no {REPORT} yet, so their cells are not "
            "links: rerun with <code>--html-reports</code>.</p>") if missing else ""
    warnings = "".join(f"<li>{esc(w)}</li>" for w in doc["warnings"])
    body = [
        "<h1>Leaderboard</h1>",
        f'<p class="legend">{esc(legend(doc))} Click a column header to sort; click a value '
        f"to open that run's report. {esc(TIED)} marks a model tied with the best.</p>", note,
        "<h2>Summary: model × board</h2>", _matrix(doc, where),
        *(_board(b, i, where) for i, b in enumerate(doc["boards"])),
        f"<h2>Warnings</h2><ul>{warnings}</ul>" if warnings else "",
    ]
    nonce = secrets.token_urlsafe(16)
    csp = (f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
           f"script-src 'nonce-{nonce}'")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,"><title>toolscore leaderboard</title>'
        f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n"
        f'<script type="application/json" id="leaderboard-data">'
        f"{json_for_script(_clean(doc))}</script>\n"
        f'<script nonce="{nonce}">{JS}</script>\n</body></html>\n')


def write_leaderboard_html(doc: dict[str, Any], out: str | Path, *,
                           html_reports: bool = False, seed: int = 0,
                           prices: Prices = None) -> Path:
    """Write the page to ``out``; with ``html_reports`` first write every finished run's
    ``report.html`` that is missing (:func:`toolscore.report.html.page.write_html`)."""
    target = Path(out)
    if html_reports:
        from toolscore.report.html.page import write_html

        for b in doc["boards"]:
            for c in b["cells"]:
                if c.get("value") is not None and not (Path(c["run_dir"]) / REPORT).is_file():
                    write_html(c["run_dir"], Path(c["run_dir"]) / REPORT, seed=seed,
                               prices=prices)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_leaderboard_html(doc, target.parent), encoding="utf-8")
    return target
