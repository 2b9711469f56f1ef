"""``toolscore report RUN_DIR --html FILE``: one self-contained page to read a run in a browser.

The terminal report answers "how good?"; this page also answers "why?": headline metrics with
bootstrap intervals, where the misses are (split, tool, plugin, error type, which tool was
called instead of which) and every sample's calls, matches, verdicts and transcript, with a
small filter bar. The file has no external references, so it can be mailed or archived with the
run. Numbers come from :mod:`toolscore.report.html_data`, plots from
:mod:`toolscore.report.html_svg`, samples from :mod:`toolscore.report.html_samples`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from toolscore.report import html_data as data
from toolscore.report.html_samples import esc, render_sample, sample_tools
from toolscore.report.html_svg import confusion_matrix, histograms, interval_bars
from toolscore.report.html_template import FILTER_BAR, page
from toolscore.report.overview import run_overview
from toolscore.records import RunStore


def _pct(value: Any) -> str:
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return "-"
    return f"{100 * value:.1f}%"


def _table(columns: list[str], rows: list[list[str]], left: int = 1,
           text_cols: frozenset[int] = frozenset()) -> str:
    """``rows`` hold already-escaped cells; the first ``left`` columns and ``text_cols`` are
    left-aligned."""
    def cls(i: int) -> str:
        return " class=l" if i < left or i in text_cols else ""

    head = "".join(f"<th{cls(i)}>{esc(c)}</th>" for i, c in enumerate(columns))
    body = "".join("<tr>" + "".join(f"<td{cls(i)}>{c}</td>" for i, c in enumerate(r))
                   + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _header(doc: dict[str, Any]) -> str:
    mode = "strict" if doc["strict"] else "reference"
    seeds = ", ".join(f"{k}={v}" for k, v in (doc["seeds"] or {}).items()) or "-"
    items = [("benchmark", doc["benchmark"]), ("model", doc["model"]),
             ("embedder", doc["embedder"]), ("judge", doc.get("judge")),
             ("scoring", f"{mode} mode"), ("epochs", doc["epochs"]), ("seeds", seeds),
             ("created", doc.get("created"))]
    meta = " · ".join(f"{esc(k)} <b>{esc(v)}</b>" for k, v in items if v is not None)
    counts = doc["counts"].get("all", {"samples": 0, "records": 0, "errors": 0})
    u = doc["usage"]
    return (f"<h1>toolscore report: {esc(doc['benchmark'])} · {esc(doc['model'])}</h1>"
            f'<p class="meta">{meta}</p>'
            f'<p class="meta">samples <b>{counts["samples"]}</b> · (sample, epoch) records '
            f'<b>{counts["records"]}</b> · errors (excluded from scores) '
            f'<b>{counts["errors"]}</b> · tokens <b>{u["tokens"]}</b> (in {u["input_tokens"]}, '
            f'out {u["output_tokens"]}) · model calls <b>{u["calls"]}</b> (cached '
            f'{u["cached_calls"]})</p>{_roles_line(doc)}'
            f'<p class="meta">run directory {esc(doc["run_dir"])}</p>')


def _roles_line(doc: dict[str, Any]) -> str:
    """Tokens per model role and, with a price table, cost per role and in total."""
    from toolscore.report.usage import format_cost

    cost = doc.get("cost")
    parts = []
    for role, u in (doc.get("usage_by_role") or {}).items():
        text = (f"{esc(role)} ({esc(u.get('model') or '-')}) <b>{u['tokens']}</b> tokens "
                f"(in {u['input_tokens']}, out {u['output_tokens']}; "
                f"{u['tokens_per_run']:.0f} per run)")
        if cost is not None:
            c = cost["by_role"].get(role) or {}
            text += (f" · cost <b>{format_cost(c['cost'])}</b>" if c.get("priced")
                     else " · <b>unpriced</b>")
        parts.append(text)
    line = '<p class="meta">per model role: ' + " · ".join(parts) + "</p>" if parts else ""
    if cost is not None:
        line += (f'<p class="meta">cost total <b>{format_cost(cost["total"])}</b> · per run '
                 f'{format_cost(cost["total_per_run"])} (all tokens, cached replies included)'
                 + ("" if cost["complete"] else " · not in the price table: " + esc(", ".join(
                     f"{x['role']} {x['model']}" for x in cost["unpriced"])))
                 + "</p>")
    return line


def _headline(head: dict[str, list[dict[str, Any]]], counts: dict[str, Any],
              unit: str = "records") -> str:
    labels = list(dict.fromkeys(m["label"] for rows in head.values() for m in rows))
    rows = []
    for split, metrics in head.items():
        by = {m["label"]: m for m in metrics}
        c = counts.get(split, {})
        cells = [esc(split), str(c.get("samples", "-")), str(c.get("errors", "-"))]
        for label in labels:
            m = by.get(label)
            cells.append("-" if m is None else
                         f'{_pct(m["value"])} <span class="ci">[{_pct(m["low"])}, '
                         f'{_pct(m["high"])}]</span>')
        rows.append(cells)
    what = ("samples, each with all its epochs (epochs of one sample are not independent)"
            if unit == "samples" else "(sample, epoch) records")
    return ("<h2>Headline metrics</h2><p class=\"muted\">value as published by the benchmark's "
            f"scorer; in brackets the 95% percentile bootstrap interval, resampling {what} "
            "(ratios of sums resampled as such).</p>"
            + _table(["split", "samples", "errors", *labels], rows))


def _tool_tables(tools: list[dict[str, Any]], plugins: list[dict[str, Any]]) -> str:
    if not tools:
        return "<h2>Per plugin and per tool</h2><p class=\"muted\">no tool calls recorded.</p>"
    tool_rows = [[esc(t["tool"]), esc(t["plugin"]), str(t["expected"]), str(t["found"]),
                  _pct(t["recall"]), str(t["called"]), str(t["correct"]), _pct(t["precision"]),
                  str(t["bad_actions"]), str(t["failed_samples"])] for t in tools]
    plugin_rows = [[esc(p["plugin"]), str(p["tools"]), str(p["expected"]), str(p["found"]),
                    _pct(p["recall"]), str(p["called"]), str(p["correct"]),
                    _pct(p["precision"]), str(p["bad_actions"])] for p in plugins]
    return ("<h2>Per plugin</h2>"
            + _table(["plugin", "tools", "expected", "found", "recall", "called", "correct",
                      "precision", "bad actions"], plugin_rows)
            + "<h2>Per tool</h2><p class=\"muted\">expected = ground-truth calls, found = "
              "those matched by a prediction; called = predictions, correct = those matching "
              "a ground truth; failed samples = failed samples expecting this tool.</p>"
            + _table(["tool", "plugin", "expected", "found", "recall", "called", "correct",
                      "precision", "bad actions", "failed samples"], tool_rows, left=2))


def _error_table(errors: list[dict[str, Any]]) -> str:
    if not errors:
        return "<h2>Error types</h2><p class=\"muted\">no errors recorded.</p>"
    rows = [[esc(e["error_type"]), str(e["turns"]), str(e["samples"]),
             esc(", ".join(f"{k} {v}" for k, v in e["splits"].items())),
             esc(", ".join(e["examples"]))] for e in errors]
    return ("<h2>Error types</h2>"
            + _table(["error type", "turns", "samples", "samples per split", "examples"], rows,
                     text_cols=frozenset({3, 4})))


def render_html(run_dir: str | Path, *, seed: int = 0, n_resamples: int = 2000,
                prices: dict[str, dict[str, float]] | None = None) -> str:
    """The report page of one run directory, as a string."""
    doc = run_overview(run_dir, seed=seed, prices=prices)
    store = RunStore(run_dir)
    config = store.read_config()
    records = sorted(store.latest().values(), key=lambda r: (str(r["id"]), int(r.get("epoch", 0))))
    metric = data.primary_metric(records)
    head = data.headline(records, doc["metrics"], n_resamples=n_resamples, seed=seed)
    plugin_of = data.plugin_lookup(doc["benchmark"],
                                   list((config.get("benchmark_config") or {}).get("plugins")
                                        or []))
    tools = data.tool_breakdown(records, plugin_of)
    errors = data.error_breakdown(records)
    samples_index = []
    rendered = []
    for idx, r in enumerate(records):
        samples_index.append({
            "idx": idx, "id": str(r.get("id")), "epoch": int(r.get("epoch", 0)),
            "split": data.split_of(r), "failed": data.failed(r, metric),
            "tools": sample_tools(r),
            "errors": sorted({str(e) for e in ((r.get("scores") or {}).get("error_types")
                                               or {}).values()}
                             | ({"infrastructure error"} if r.get("status") != "ok" else set())),
        })
        rendered.append(render_sample(idx, r, metric))
    n_failed = sum(s["failed"] for s in samples_index)
    plots = [interval_bars(head, "headline metrics with 95% bootstrap CIs"),
             confusion_matrix(data.confusion(records),
                              "unmatched calls: expected tool vs tool called"),
             histograms(data.distributions(records), "per-sample score distribution")]
    body = [
        _header(doc), _headline(head, doc["counts"], data.resampled_unit(records)),
        '<h2>Plots</h2><div class="plots">' + "".join(plots) + "</div>",
        _tool_tables(tools, data.plugin_breakdown(tools)), _error_table(errors),
        f"<h2>Samples</h2><p class=\"muted\">{len(records)} (sample, epoch) records, "
        f"{n_failed} failed (primary score: {esc(metric or 'status')}).</p>",
        FILTER_BAR, '<div id="samples">', *rendered, "</div>",
    ]
    page_data = {
        "samples": samples_index,
        "tools": sorted({t for s in samples_index for t in s["tools"]}),
        "error_types": sorted({e for s in samples_index for e in s["errors"]}),
        "splits": sorted({s["split"] for s in samples_index}),
    }
    title = f"toolscore · {doc['benchmark']} · {doc['model']}"
    return page(title, "\n".join(body), page_data)


def write_html(run_dir: str | Path, out: str | Path, *, seed: int = 0,
               n_resamples: int = 2000,
               prices: dict[str, dict[str, float]] | None = None) -> Path:
    """Write the report page to ``out`` (parents created); returns its path."""
    target = Path(out)
    text = render_html(run_dir, seed=seed, n_resamples=n_resamples, prices=prices)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target
