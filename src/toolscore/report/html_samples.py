"""One record of the HTML report: verdict, scores, and the benchmark's view of it.

The benchmark says what a record looks like (``Benchmark.record_view``): a ``summary``, the
dialogue as ``messages`` (OpenAI chat shape) and optionally ``tags`` (short labels on the
record's header), ``details`` (label -> long text, folded) and ``sections`` (e.g. one per
turn), each ``{"title", "tags", "columns", "rows", "empty", "messages", "text",
"text_label"}``. A table cell is a string or number, ``{"text": ..., "tone": "ok" | "bad" |
"tag" | "strong"}``, ``{"json": value}`` (shown pretty-printed) or a list of those. A record
the benchmark shows nothing of is shown as its stored output.

Everything here is model or dataset text, so every value goes through :func:`esc` (html.escape
with quotes) before it is placed in the page; nothing is ever marked safe.
"""

from __future__ import annotations

import html
import json
from typing import Any

from toolscore.report.export import printable
from toolscore.report.html_data import failed
from toolscore.report.intervals import split_of

MAX_TEXT = 4000  # characters of one message or tool result shown; the rest is elided
TONES = {"ok": "ok", "bad": "bad", "tag": "tag", "strong": "strong"}


def esc(value: Any) -> str:
    """HTML-escaped text with controls and bidi overrides made visible (:func:`printable`)."""
    return html.escape(printable(str(value)), quote=True)


def _text(value: Any) -> str:
    """Pretty JSON for structures (and JSON strings), the string itself otherwise; trimmed."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except (ValueError, TypeError):
            parsed = None
        value = value if not isinstance(parsed, (dict, list)) else parsed
    if not isinstance(value, str):
        value = json.dumps(value, indent=1, ensure_ascii=False, default=str)
    if len(value) > MAX_TEXT:
        value = value[:MAX_TEXT] + f" … [{len(value) - MAX_TEXT} more characters]"
    return value


def _pre(value: Any) -> str:
    return f"<pre>{esc(_text(value))}</pre>"


def cell(value: Any) -> str:
    """One table cell or tag of a benchmark's view (see the module docstring)."""
    if isinstance(value, list):
        return " ".join(cell(v) for v in value)
    if isinstance(value, dict):
        if "json" in value:
            return _pre(value["json"])
        tone = TONES.get(str(value.get("tone")))
        text = esc(value.get("text"))
        return f'<span class="{tone}">{text}</span>' if tone else text
    return "" if value is None else esc(value)


def _message(m: dict[str, Any]) -> str:
    role = str(m.get("role") or "?")
    parts = [f'<div class="msg {esc(role)}"><span class="role">{esc(role)}</span>']
    if role == "tool" and m.get("name"):
        parts.append(f'<span class="tag">{esc(m["name"])}</span>')
    if m.get("content") not in (None, ""):
        parts.append(_pre(m["content"]))
    for call in m.get("tool_calls") or []:
        fn = (call.get("function") or {}) if isinstance(call, dict) else {}
        parts.append(f'<div>→ call <b>{esc(fn.get("name"))}</b>'
                     f'{_pre(fn.get("arguments"))}</div>')
    parts.append("</div>")
    return "".join(parts)


def _messages(messages: Any) -> str:
    return "".join(_message(m) for m in messages or [] if isinstance(m, dict))


def _section(s: dict[str, Any]) -> str:
    tags = "".join(f" {cell(t) if isinstance(t, dict) else cell({'text': t, 'tone': 'tag'})}"
                   for t in s.get("tags") or [])
    out = [f'<div class="turn"><h3>{esc(s.get("title") or "")}{tags}</h3>']
    rows = [r for r in s.get("rows") or [] if isinstance(r, list)]
    if rows:
        head = "".join(f'<th class="l">{esc(c)}</th>' for c in s.get("columns") or [])
        body = "".join("<tr>" + "".join(f'<td class="l">{cell(c)}</td>' for c in r) + "</tr>"
                       for r in rows)
        out.append(f'<table class="calls"><tr>{head}</tr>{body}</table>')
    elif s.get("empty"):
        out.append(f'<p class="muted">{esc(s["empty"])}</p>')
    if s.get("messages"):
        out.append(f"<details><summary>transcript</summary>{_messages(s['messages'])}"
                   "</details>")
    if s.get("text"):
        out.append(f'<div class="msg assistant"><span class="role">'
                   f'{esc(s.get("text_label") or "text")}</span>{_pre(s["text"])}</div>')
    out.append("</div>")
    return "".join(out)


def _score_line(scores: dict[str, Any]) -> str:
    parts = []
    for key, v in scores.items():
        if isinstance(v, (dict, list)):  # nested scores: the benchmark's view shows them
            continue
        shown = f"{v:.3g}" if isinstance(v, float) else str(v)
        parts.append(f"{esc(key)} <b>{esc(shown)}</b>")
    return " · ".join(parts)


def render_sample(idx: int, record: dict[str, Any], metric: str | None,
                  view: dict[str, Any]) -> str:
    """One record as a folded ``<details>``; ``view`` is the benchmark's view of it."""
    scores = record.get("scores") or {}
    bad = failed(record, metric)
    if record.get("status") != "ok":
        badge = '<span class="badge err">ERROR</span>'
    else:
        badge = f'<span class="badge {"fail" if bad else "pass"}">{"FAIL" if bad else "PASS"}'
        badge += "</span>"
    tags = "".join(f'<span class="tag">{cell(t)}</span>' for t in view.get("tags") or [])
    summary = f'<span class="muted">{esc(view["summary"])}</span>' if view.get("summary") \
        else ""
    head = (f'<summary>{badge}<b>{esc(record.get("id"))}</b><span class="muted">epoch '
            f'{esc(record.get("epoch", 0))} · split {esc(split_of(record))}</span>{summary}'
            f"{tags}</summary>")
    body = [f'<p class="muted">{_score_line(scores)}</p>']
    if record.get("error"):
        body.append(f'<p class="bad">error: {esc(record["error"])}</p>')
    if view.get("view_error"):
        body.append(f'<p class="bad">the benchmark could not show this record: '
                    f'{esc(view["view_error"])}</p>')
    details = view.get("details") or {}
    for label, text in details.items() if isinstance(details, dict) else ():
        body.append(f'<details><summary class="muted">{esc(label)}</summary>{_pre(text)}'
                    "</details>")
    sections = [s for s in view.get("sections") or [] if isinstance(s, dict)]
    if view.get("messages") and not any(s.get("messages") for s in sections):
        body.append(f'<div class="turn"><h3>dialogue</h3>{_messages(view["messages"])}</div>')
    body += [_section(s) for s in sections]
    if not sections and not view.get("messages") and record.get("output") is not None:
        body.append(f"<details><summary>stored output</summary>{_pre(record['output'])}"
                    "</details>")
    cls = "sample failed" if bad else "sample"
    return f'<details class="{cls}" id="s-{idx}">{head}{"".join(body)}</details>'
