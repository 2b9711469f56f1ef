"""One sample of the HTML report: verdict, scores, and per turn the calls, matches and transcript.

Everything here is model or dataset text, so every value goes through :func:`esc` (html.escape
with quotes) before it is placed in the page; nothing is ever marked safe.
"""

from __future__ import annotations

import html
import json
from typing import Any

from toolscore.report.html_data import failed, split_of

MAX_TEXT = 4000  # characters of one message or tool result shown; the rest is elided


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


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


def _message(m: dict[str, Any]) -> str:
    role = str(m.get("role") or "?")
    parts = [f'<div class="msg {esc(role)}"><span class="role">{esc(role)}</span>']
    if role == "tool" and m.get("name"):
        parts.append(f'<span class="tag">{esc(m["name"])}</span>')
    if m.get("content") not in (None, ""):
        parts.append(_pre(m["content"]))
    for call in m.get("tool_calls") or []:
        fn = call.get("function") or {}
        parts.append(f'<div>→ call <b>{esc(fn.get("name"))}</b>'
                     f'{_pre(fn.get("arguments"))}</div>')
    parts.append("</div>")
    return "".join(parts)


def _call_rows(turn: dict[str, Any], outcomes: list[dict[str, Any]]) -> str:
    """Ground truth next to predictions, each with its verdict."""
    number = int(turn.get("turn", 0))
    mine = {int(o.get("index", -1)): o for o in outcomes if int(o.get("turn", -1)) == number}
    matched_gt = {int(o["match"][1]): i for i, o in mine.items()
                  if o.get("match") and int(o["match"][0]) == number}
    rows = []
    for i, g in enumerate(turn.get("ground_truth") or []):
        req = g.get("request") or {}
        verdict = (f'<span class="ok">found (prediction {matched_gt[i] + 1})</span>'
                   if i in matched_gt else '<span class="bad">missed</span>')
        rows.append(f'<tr><td class="l">expected {i + 1}</td><td class="l"><b>'
                    f'{esc(req.get("api_name"))}</b></td><td class="l">'
                    f'{_pre(req.get("parameters"))}</td><td class="l">'
                    f'{_pre(g.get("exception") or g.get("response"))}</td>'
                    f'<td class="l">{verdict}</td></tr>')
    for i, p in enumerate(turn.get("predictions") or []):
        req = p.get("request") or {}
        o = mine.get(i) or {}
        if o.get("match"):
            verdict = f'<span class="ok">matches expected {int(o["match"][1]) + 1}</span>'
        else:
            verdict = '<span class="bad">unmatched</span>'
        if o.get("bad_action"):
            verdict += ' <span class="bad">bad action</span>'
        elif o.get("action"):
            verdict += ' <span class="tag">action</span>'
        args = req.get("parameters")
        if args is None:
            args = p.get("raw_arguments")
        rows.append(f'<tr><td class="l">predicted {i + 1}</td><td class="l"><b>'
                    f'{esc(req.get("api_name"))}</b></td><td class="l">{_pre(args)}</td>'
                    f'<td class="l">{_pre(p.get("exception") or p.get("response"))}</td>'
                    f'<td class="l">{verdict}</td></tr>')
    if not rows:
        return '<p class="muted">no calls expected, none made</p>'
    return ('<table class="calls"><tr><th class="l"></th><th class="l">tool</th>'
            '<th class="l">arguments</th><th class="l">result</th><th class="l">verdict</th>'
            f'</tr>{"".join(rows)}</table>')


SCORE_KEYS_SKIPPED = {"outcomes", "error_types"}


def _score_line(scores: dict[str, Any]) -> str:
    parts = []
    for key, v in scores.items():
        if key in SCORE_KEYS_SKIPPED or isinstance(v, (dict, list)):
            continue
        shown = f"{v:.3g}" if isinstance(v, float) else str(v)
        parts.append(f"{esc(key)} <b>{esc(shown)}</b>")
    return " · ".join(parts)


def sample_tools(record: dict[str, Any]) -> list[str]:
    """Tools expected or called in the sample (for the tool filter)."""
    names: dict[str, None] = {}
    for t in (record.get("output") or {}).get("turns") or []:
        for c in (t.get("ground_truth") or []) + (t.get("predictions") or []):
            names.setdefault(str((c.get("request") or {}).get("api_name")), None)
    return list(names)


def render_sample(idx: int, record: dict[str, Any], metric: str | None) -> str:
    scores = record.get("scores") or {}
    output = record.get("output") or {}
    bad = failed(record, metric)
    if record.get("status") != "ok":
        badge = '<span class="badge err">ERROR</span>'
    else:
        badge = f'<span class="badge {"fail" if bad else "pass"}">{"FAIL" if bad else "PASS"}'
        badge += "</span>"
    errors = scores.get("error_types") or {}
    tags = "".join(f'<span class="tag">turn {esc(t)}: {esc(e)}</span>'
                   for t, e in errors.items())
    head = (f'<summary>{badge}<b>{esc(record.get("id"))}</b><span class="muted">epoch '
            f'{esc(record.get("epoch", 0))} · split {esc(split_of(record))}</span>{tags}'
            "</summary>")
    body = [f'<p class="muted">{_score_line(scores)}</p>']
    if record.get("error"):
        body.append(f'<p class="bad">error: {esc(record["error"])}</p>')
    if output.get("system_prompt"):
        body.append(f'<details><summary class="muted">system prompt</summary>'
                    f'{_pre(output["system_prompt"])}</details>')
    if output.get("tools_offered"):
        body.append(f'<p class="muted">tools offered: '
                    f'{esc(", ".join(map(str, output["tools_offered"])))}</p>')
    outcomes = list(scores.get("outcomes") or [])
    for turn in output.get("turns") or []:
        n = turn.get("turn")
        etype = errors.get(str(n))
        body.append(f'<div class="turn"><h3>turn {esc(n)}'
                    + (f' <span class="bad">{esc(etype)}</span>' if etype else "")
                    + (f' <span class="tag">stop: {esc(turn["stop"])}</span>'
                       if turn.get("stop") else "") + "</h3>")
        body.append(_call_rows(turn, outcomes))
        transcript = turn.get("transcript") or []
        if transcript:
            body.append("<details><summary>transcript</summary>"
                        + "".join(_message(m) for m in transcript if isinstance(m, dict))
                        + "</details>")
        said = [m.get("content") for m in transcript
                if isinstance(m, dict) and m.get("role") == "assistant"]
        if turn.get("text") and (not said or said[-1] != turn["text"]):
            body.append(f'<div class="msg assistant"><span class="role">final answer</span>'
                        f'{_pre(turn["text"])}</div>')
        body.append("</div>")
    cls = "sample failed" if bad else "sample"
    return f'<details class="{cls}" id="s-{idx}">{head}{"".join(body)}</details>'
