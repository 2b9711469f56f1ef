"""Inline SVG plots for the HTML report: no plotting library, no network, nothing to execute.

Every label that can come from a run (tool names, split names, score keys) goes through
:func:`html.escape`, so a plot is as safe to embed as the escaped tables around it.
"""

from __future__ import annotations

import html
import math
from typing import Any

from toolscore.report.export.table import printable

PALETTE = ["#3b6ea8", "#e07b39", "#5a9e4b", "#b8474b", "#7d5fa6", "#8c6d46", "#c561a6"]


def _e(value: Any) -> str:
    return html.escape(printable(str(value)), quote=True)


def _ok(x: Any) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def _wrap(text: str, width: float) -> list[str]:
    """Words of ``text`` in lines of at most ``width`` characters (a long word stays whole)."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


def interval_bars(groups: dict[str, list[dict[str, Any]]], title: str) -> str:
    """Grouped bars (one group per metric, one bar per split) with 95% CI whiskers, 0-100%."""
    splits = list(groups)
    labels = list(dict.fromkeys(m["label"] for rows in groups.values() for m in rows))
    if not labels:
        return ""
    bar, gap, left, top, height = 16, 18, 44, 28, 170
    longest = max(len(w) for label in labels for w in str(label).split()) if labels else 0
    group_w = max(bar * len(splits) + gap, 70, int(6.5 * longest) + 8)
    wrapped = {label: _wrap(str(label), max(group_w // 6.5, longest)) for label in labels}
    width = left + group_w * len(labels) + 10
    legend_y = top + height + 24 + 12 * max(len(w) for w in wrapped.values())
    out = [f'<svg class="plot" role="img" width="{width}" height="{legend_y + 18}" '
           f'viewBox="0 0 {width} {legend_y + 18}" xmlns="http://www.w3.org/2000/svg">',
           f'<title>{_e(title)}</title>',
           f'<text x="4" y="16" class="ptitle">{_e(title)}</text>']
    for tick in (0, 25, 50, 75, 100):
        y = top + height - height * tick / 100
        out.append(f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" '
                   f'class="grid"/><text x="{left - 4}" y="{y + 4:.1f}" class="tick" '
                   f'text-anchor="end">{tick}%</text>')
    for gi, label in enumerate(labels):
        x0 = left + gi * group_w + gap / 2
        for si, split in enumerate(splits):
            m = next((r for r in groups[split] if r["label"] == label), None)
            if m is None or not _ok(m["value"]):
                continue
            x = x0 + si * bar
            h = height * max(0.0, min(1.0, m["value"]))
            color = PALETTE[si % len(PALETTE)]
            tip = (f'{split} · {label}: {100 * m["value"]:.1f}% [{100 * m["low"]:.1f}, '
                   f'{100 * m["high"]:.1f}] (n {m["n"]})' if _ok(m["low"]) and _ok(m["high"])
                   else f'{split} · {label}: {100 * m["value"]:.1f}%')
            out.append(f'<rect x="{x:.1f}" y="{top + height - h:.1f}" width="{bar - 2}" '
                       f'height="{h:.1f}" fill="{color}"><title>{_e(tip)}</title></rect>')
            if _ok(m["low"]) and _ok(m["high"]):
                y1 = top + height - height * m["low"]
                y2 = top + height - height * m["high"]
                cx = x + (bar - 2) / 2
                out.append(f'<path d="M{cx:.1f} {y1:.1f}V{y2:.1f}M{cx - 4:.1f} {y1:.1f}'
                           f'h8M{cx - 4:.1f} {y2:.1f}h8" class="whisker"/>')
        cx = x0 + bar * len(splits) / 2
        lines = "".join(f'<tspan x="{cx:.1f}" dy="{0 if k == 0 else 12}">{_e(line)}</tspan>'
                        for k, line in enumerate(wrapped[label]))
        out.append(f'<text x="{cx:.1f}" y="{top + height + 16}" class="tick" '
                   f'text-anchor="middle">{lines}</text>')
    for si, split in enumerate(splits):
        x = left + si * 90
        out.append(f'<rect x="{x}" y="{legend_y - 10}" width="10" height="10" '
                   f'fill="{PALETTE[si % len(PALETTE)]}"/><text x="{x + 14}" y="{legend_y}" '
                   f'class="tick">{_e(split)}</text>')
    out.append("</svg>")
    return "".join(out)


def heat_map(counts: dict[tuple[str, str], int], title: str, row_label: str,
             col_label: str, limit: int = 24) -> str:
    """Heat map of counts per (row, column) label, e.g. expected tool vs tool called."""
    if not counts:
        return f'<p class="muted">{_e(title)}: nothing to show.</p>'
    row_tot: dict[str, int] = {}
    col_tot: dict[str, int] = {}
    for (r, c), n in counts.items():
        row_tot[r] = row_tot.get(r, 0) + n
        col_tot[c] = col_tot.get(c, 0) + n
    rows = sorted(row_tot, key=lambda k: -row_tot[k])[:limit]
    cols = sorted(col_tot, key=lambda k: -col_tot[k])[:limit]
    cell, left = 22, 170
    top = 40 + int(5.5 * 0.87 * max(len(c[:26]) for c in cols))  # room for rotated names
    width = max(left + cell * len(cols) + 90, 8 * len(title) + 10)
    height = top + cell * len(rows) + 10
    peak = max(counts.values())
    out = [f'<svg class="plot" role="img" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
           f'<title>{_e(title)}</title>',
           f'<text x="4" y="16" class="ptitle">{_e(title)}</text>',
           f'<text x="4" y="{top - 6}" class="tick">{_e(row_label)} ↓ / {_e(col_label)} →</text>']
    for j, c in enumerate(cols):
        x = left + j * cell + cell / 2
        out.append(f'<text transform="translate({x + 4:.1f},{top - 6}) rotate(-60)" '
                   f'class="tick">{_e(c[:26])}</text>')
    for i, r in enumerate(rows):
        y = top + i * cell
        out.append(f'<text x="{left - 6}" y="{y + cell / 2 + 4:.1f}" class="tick" '
                   f'text-anchor="end">{_e(r[:26])}</text>')
        for j, c in enumerate(cols):
            n = counts.get((r, c), 0)
            if not n:
                out.append(f'<rect x="{left + j * cell}" y="{y}" width="{cell - 1}" '
                           f'height="{cell - 1}" class="empty"/>')
                continue
            alpha = 0.15 + 0.85 * n / peak
            out.append(f'<rect x="{left + j * cell}" y="{y}" width="{cell - 1}" '
                       f'height="{cell - 1}" fill="#b8474b" fill-opacity="{alpha:.2f}">'
                       f'<title>{_e(f"{row_label} {r}, {col_label} {c}: {n}")}</title></rect>'
                       f'<text x="{left + j * cell + cell / 2:.1f}" y="{y + cell / 2 + 4:.1f}" '
                       f'class="cellnum" text-anchor="middle">{n}</text>')
    out.append("</svg>")
    return "".join(out)


def histograms(hists: dict[str, list[int]], title: str) -> str:
    """Small multiples: one histogram over [0, 1] per per-sample score."""
    if not hists:
        return ""
    pw, ph, pad = 180, 90, 30
    width = (pw + pad) * min(len(hists), 4) + 10
    rows = math.ceil(len(hists) / 4)
    height = 24 + rows * (ph + 44)
    out = [f'<svg class="plot" role="img" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
           f'<title>{_e(title)}</title>',
           f'<text x="4" y="16" class="ptitle">{_e(title)}</text>']
    for k, (key, counts) in enumerate(hists.items()):
        ox = 10 + (k % 4) * (pw + pad)
        oy = 30 + (k // 4) * (ph + 44)
        peak = max(counts) or 1
        bw = pw / len(counts)
        out.append(f'<text x="{ox}" y="{oy + 8}" class="tick">{_e(key)} '
                   f'(n {sum(counts)})</text>')
        base = oy + 14 + ph
        for i, n in enumerate(counts):
            h = ph * n / peak
            lo, hi = i / len(counts), (i + 1) / len(counts)
            out.append(f'<rect x="{ox + i * bw:.1f}" y="{base - h:.1f}" width="{bw - 1:.1f}" '
                       f'height="{h:.1f}" fill="{PALETTE[0]}"><title>{_e(key)} in '
                       f'[{lo:.1f}, {hi:.1f}{"]" if hi >= 1 else ")"}: {n}</title></rect>')
        out.append(f'<line x1="{ox}" x2="{ox + pw}" y1="{base}" y2="{base}" class="axis"/>'
                   f'<text x="{ox}" y="{base + 12}" class="tick">0</text>'
                   f'<text x="{ox + pw}" y="{base + 12}" class="tick" text-anchor="end">1</text>')
    out.append("</svg>")
    return "".join(out)
