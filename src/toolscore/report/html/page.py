"""``toolscore report RUN_DIR --html FILE``: one self-contained page to read a run in a browser.

The terminal report answers "how good?"; this page also answers "why?": the benchmark's
headline table, its metrics with bootstrap intervals, where the misses are (the benchmark's
breakdowns: per tool, per error type, per API...) and every record as the benchmark shows it
(calls and verdicts, a dialogue, a judge's verdict), with a small filter bar whose filters are
the benchmark's facets. Nothing here names a benchmark's keys: it all comes through
:mod:`toolscore.report.view`. The file has no external references, so it can be mailed or
archived with the run. Plots come from :mod:`toolscore.report.html.svg`, records from
:mod:`toolscore.report.html.samples`: compressed, and unpacked by the page when opened, so
the page stays small and opens fast however many records the run has.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolscore.models.prices import Prices
from toolscore.records import RunStore, sample_key
from toolscore.records.store import project_record
from toolscore.report.html.data import distributions, failed, sample_index
from toolscore.report.html.samples import CHUNK, blocks, esc, record_body, record_head
from toolscore.report.html.svg import heat_map, histograms, interval_bars
from toolscore.report.html.template import FILTER_BAR, page
from toolscore.report.overview import overview_of, paused_collector
from toolscore.report.tables import fmt, headline
from toolscore.report.usage import reasoning_note
from toolscore.report.view import RunView, run_view

PAGE = 100  # records listed at a time: the page opens at the same speed for any run size


def _value(value: Any, kind: str = "rate") -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(
            value):
        return "-" if value is None else esc(value)
    return f"{100 * value:.1f}%" if kind == "rate" else f"{value:.4g}"


def _table(columns: list[str], rows: list[list[str]], left: frozenset[int] = frozenset({0})
           ) -> str:
    """``rows`` hold already-escaped cells; columns in ``left`` are left-aligned."""
    def cls(i: int) -> str:
        return " class=l" if i in left else ""

    head = "".join(f"<th{cls(i)}>{esc(c)}</th>" for i, c in enumerate(columns))
    body = "".join("<tr>" + "".join(f"<td{cls(i)}>{c}</td>" for i, c in enumerate(r))
                   + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _header(doc: dict[str, Any]) -> str:
    seeds = ", ".join(f"{k}={v}" for k, v in (doc["seeds"] or {}).items()) or "-"
    items = [("benchmark", doc["benchmark"]), ("model", doc["model"]),
             ("mode", doc.get("mode")), ("judge", doc.get("judge")), ("user", doc.get("user")),
             ("embedder", doc.get("embedder")), ("epochs", doc["epochs"]), ("seeds", seeds),
             ("created", doc.get("created") or None)]
    meta = " · ".join(f"{esc(k)} <b>{esc(v)}</b>" for k, v in items if v is not None)
    counts = doc["counts"].get("all", {"samples": 0, "records": 0, "errors": 0})
    u = doc["usage"]
    note = f'<p class="meta note">{esc(doc["note"])}</p>' if doc.get("note") else ""
    return (f"<h1>toolscore report: {esc(doc['benchmark'])} · {esc(doc['model'])}</h1>"
            f'<p class="meta">{meta}</p>{note}'
            f'<p class="meta">samples <b>{counts["samples"]}</b> · (sample, epoch) records '
            f'<b>{counts["records"]}</b> · errors (excluded from scores) '
            f'<b>{counts["errors"]}</b> · tokens <b>{u["tokens"]}</b> (in {u["input_tokens"]}, '
            f'out {u["output_tokens"]}{reasoning_note(u)}) · model calls <b>{u["calls"]}</b> '
            f'(cached {u["cached_calls"]})</p>{_roles_line(doc)}'
            f'<p class="meta">run directory {esc(doc["run_dir"])}</p>')


def _roles_line(doc: dict[str, Any]) -> str:
    """Tokens and cost per model role, and in total, with where the prices come from."""
    from toolscore.report.usage import format_cost

    cost = doc.get("cost")
    parts = []
    for role, u in (doc.get("usage_by_role") or {}).items():
        text = (f"{esc(role)} ({esc(u.get('model') or '-')}) <b>{u['tokens']}</b> tokens "
                f"(in {u['input_tokens']}, out {u['output_tokens']}{reasoning_note(u)}; "
                f"{u['tokens_per_run']:.0f} per run)")
        if cost is not None:
            c = cost["by_role"].get(role) or {}
            text += ((f" · cost <b>{format_cost(c['cost'])}</b>"
                      + (" (partial)" if c.get("partial") else "")) if c.get("priced")
                     else " · <b>unpriced</b>")
        parts.append(text)
    line = '<p class="meta">per model role: ' + " · ".join(parts) + "</p>" if parts else ""
    if cost is not None:
        prices = cost.get("prices") or {}
        total = ("<b>unpriced</b>" if cost.get("total") is None else
                 f'<b>{format_cost(cost["total"])}</b> · per run '
                 f'{format_cost(cost["total_per_run"])} (all tokens, cached replies included)')
        line += (f'<p class="meta">cost total {total}'
                 + ("" if cost["complete"] else " · partial, not in the price table: "
                    + esc(", ".join(f"{x['role']} {x['model']}" for x in cost["unpriced"])))
                 + (f" · prices: {esc(prices['source'])}" if prices.get("source") else "")
                 + (f" · {esc(prices['missing'])}" if prices.get("missing") else "")
                 + "</p>")
    return line


def _published(benchmark: str, metrics: dict[str, Any] | None) -> str:
    """The benchmark's own headline table, exactly as the terminal report prints it."""
    if not metrics:
        return ("<h2>Benchmark metrics</h2><p class=\"muted\">no scores.json (run `toolscore "
                "score` on this run).</p>")
    columns, rows = headline(benchmark, metrics)
    body = [[esc(group), *(esc(fmt(m.get(c.key), c.kind)) for c in columns)]
            for group, m in rows.items()]
    return ("<h2>Benchmark metrics</h2><p class=\"muted\">as the benchmark aggregates them "
            "(scores.json).</p>" + _table(["group", *(c.title for c in columns)], body))


def _intervals(intervals: dict[str, Any], counts: dict[str, Any]) -> str:
    """One row per headline metric, one column per split, and the metric's definition."""
    head = intervals["splits"]
    labels = list(dict.fromkeys(m["label"] for rows in head.values() for m in rows))
    if not labels:
        return ""
    defs = {m["label"]: m["definition"] for rows in head.values() for m in rows}
    columns = ["metric"]
    for split in head:
        c = counts.get(split, {})
        columns.append(f"{split} ({c.get('samples', '-')} samples, {c.get('errors', '-')} "
                       "errors)")
    rows = []
    for label in labels:
        cells = [esc(label)]
        for metrics in head.values():
            m = next((x for x in metrics if x["label"] == label), None)
            cells.append("-" if m is None else
                         f'{_value(m["value"], m["kind"])} <span class="ci">['
                         f'{_value(m["low"], m["kind"])}, {_value(m["high"], m["kind"])}]'
                         "</span>")
        rows.append([*cells, f'<span class="muted">{esc(defs[label])}</span>'])
    what = ("samples, each with all its epochs (epochs of one sample are not independent)"
            if intervals["resampled"] == "samples" else "(sample, epoch) records")
    return ("<h2>Headline metrics with intervals</h2><p class=\"muted\">each metric as the "
            "benchmark defines it over per-record scores; in brackets the 95% percentile "
            f"bootstrap interval, resampling {what} (ratios of sums resampled as such).</p>"
            + _table([*columns, "definition"], rows,
                     frozenset({0, len(columns)})))


def _breakdown(b: dict[str, Any]) -> str:
    columns = b["columns"]
    rows = [[_value(r.get(c["key"]), c["kind"]) if c["kind"] == "rate"
             else esc(fmt(r.get(c["key"]), c["kind"])) for c in columns] for r in b["rows"]]
    left = frozenset(i for i, c in enumerate(columns)
                     if any(isinstance(r.get(c["key"]), str) for r in b["rows"])) | {0}
    note = f'<p class="muted">{esc(b["note"])}</p>' if b.get("note") else ""
    if not rows:
        return f'<h2>{esc(b["title"])}</h2>{note}<p class="muted">nothing recorded.</p>'
    return f'<h2>{esc(b["title"])}</h2>{note}' + _table([c["title"] for c in columns], rows,
                                                          left)


def _matrix(b: dict[str, Any]) -> str:
    r_key, c_key, n_key = b["matrix"]
    titles = {c["key"]: c["title"] for c in b["columns"]}
    counts = {(str(r.get(r_key)), str(r.get(c_key))): int(r.get(n_key) or 0) for r in b["rows"]}
    return heat_map({k: n for k, n in counts.items() if n}, b["title"],
                    titles.get(r_key, r_key), titles.get(c_key, c_key))


def _read(store: RunStore, view: RunView, chunk: int, pack: bool = True
          ) -> tuple[list[str], list[dict[str, Any]], list[dict[str, Any]]]:
    """One pass over samples.jsonl in file order: each record's view is made, its body packed
    into the current compressed block, and only its head and its summary (the benchmark's
    ``summary_output``) are kept. Returns (blocks, heads, summaries) with heads and summaries
    of the latest record of each key, sorted by (id, epoch); a head's ``idx`` is the record's
    position in the blocks. A superseded record (an error later re-run) stays in its block
    unlisted: a few bytes, and no second pass over a large file. Heads are marked failed once
    the primary metric is known (see :func:`build_page`). Without ``pack`` no body is made
    (the page fetches each record when it is opened) and no block is returned."""
    latest: dict[tuple[str, int], tuple[dict[str, Any], dict[str, Any]]] = {}

    def bodies() -> Iterator[dict[str, Any]]:
        for idx, record in enumerate(store.records()):
            shown = view.record_view(record)
            if pack:
                yield record_body(record, shown)
            head = record_head(idx, record, None, shown, view.record_facets(record))
            latest[sample_key(record)] = (head, project_record(record, view.cls.summary_output))

    packed = list(blocks(bodies(), chunk))  # compressed: small even for 10,000 records
    # (without pack the generator yields nothing: the list is empty once it has run)
    keys = sorted(latest, key=lambda k: (str(k[0]), int(k[1])))
    return packed, [latest[k][0] for k in keys], [latest[k][1] for k in keys]


def build_page(run_dir: str | Path, *, seed: int = 0, n_resamples: int = 2000,
               prices: Prices = None, page_size: int = PAGE,
               chunk: int = CHUNK, overview: dict[str, Any] | None = None,
               record_url: str | None = None) -> tuple[dict[str, Any], Iterator[str]]:
    """The run's overview and its report page as consecutive pieces of text: ``page_size``
    records listed at a time, ``chunk`` records per compressed block. The records are read
    (and any error in the run directory raised) before this returns.

    ``overview`` is the run's :func:`~toolscore.report.overview.run_overview` (same seed,
    prices and resamples) when the caller already has it; otherwise it is computed from the
    records read for the page, and returned, so that a caller printing the terminal report
    too (``toolscore report --html``) reads the run once.

    With ``record_url`` (a page served by ``toolscore view``) the page carries no record
    bodies: opening record ``idx`` fetches ``record_url + idx`` (JSON, a record body) from the
    page's own server, which the page's policy then allows."""
    store = RunStore(run_dir)
    config = store.read_config()
    view = run_view(config)
    with paused_collector():
        packed, heads, records = _read(store, view, chunk, pack=record_url is None)
        doc = overview or overview_of(store.path, config, records, store.read_scores(), view,
                                      seed=seed, prices=prices, n_resamples=n_resamples)
        metric = doc["primary_metric"]
        for head, record in zip(heads, records, strict=True):
            head["failed"] = failed(record, metric)
        n_failed = sum(h["failed"] for h in heads)
        rates = {split: [m for m in rows if m["kind"] == "rate"]
                 for split, rows in doc["intervals"]["splits"].items()}
        plots = [interval_bars(rates, "headline metrics with 95% bootstrap CIs"),
                 *(_matrix(b) for b in doc["breakdowns"] if b.get("matrix")),
                 histograms(distributions(records), "per-sample score distribution")]
        n_records = len(records)
        del records  # freed before the collector is back, which then has less to walk
    body = [
        _header(doc), _published(str(doc["benchmark"]), doc["metrics"]),
        _intervals(doc["intervals"], doc["counts"]),
        '<h2>Plots</h2><div class="plots">' + "".join(plots) + "</div>",
        *(_breakdown(b) for b in doc["breakdowns"]),
        f"<h2>Samples</h2><p class=\"muted\">{n_records} (sample, epoch) records, "
        f"{n_failed} failed (pass/fail score: {esc(metric or 'status only')}); a record's "
        "transcript is unpacked when it is opened.</p>",
        FILTER_BAR, '<div id="samples"></div>',
    ]
    title = f"toolscore · {doc['benchmark']} · {doc['model']}"
    fetched = {} if record_url is None else {"record_url": record_url}
    return doc, page(title, "\n".join(body),
                     lambda: {**sample_index(heads), "chunk": chunk, "page": page_size,
                              **fetched}, packed, connect=record_url is not None)


def page_parts(run_dir: str | Path, *, seed: int = 0, n_resamples: int = 2000,
               prices: Prices = None, page_size: int = PAGE,
               chunk: int = CHUNK, overview: dict[str, Any] | None = None) -> Iterator[str]:
    """The report page of one run directory, as consecutive pieces of text (see
    :func:`build_page`)."""
    yield from build_page(run_dir, seed=seed, n_resamples=n_resamples, prices=prices,
                          page_size=page_size, chunk=chunk, overview=overview)[1]


def render_html(run_dir: str | Path, *, seed: int = 0, n_resamples: int = 2000,
                prices: Prices = None, page_size: int = PAGE,
                chunk: int = CHUNK, overview: dict[str, Any] | None = None) -> str:
    """The report page of one run directory, as a string (see :func:`build_page`)."""
    return "".join(page_parts(run_dir, seed=seed, n_resamples=n_resamples, prices=prices,
                              page_size=page_size, chunk=chunk, overview=overview))


def write_html(run_dir: str | Path, out: str | Path, *, seed: int = 0,
               n_resamples: int = 2000, prices: Prices = None,
               page_size: int = PAGE, chunk: int = CHUNK,
               overview: dict[str, Any] | None = None) -> Path:
    """Write the report page to ``out`` (parents created; written whole or not at all);
    returns its path."""
    return write_report(run_dir, out, seed=seed, n_resamples=n_resamples, prices=prices,
                        page_size=page_size, chunk=chunk, overview=overview)[0]


def write_report(run_dir: str | Path, out: str | Path, *, seed: int = 0,
                 n_resamples: int = 2000, prices: Prices = None,
                 page_size: int = PAGE, chunk: int = CHUNK,
                 overview: dict[str, Any] | None = None) -> tuple[Path, dict[str, Any]]:
    """:func:`write_html`, also returning the run's overview (the one the page shows, equal to
    :func:`~toolscore.report.overview.run_overview` with the same arguments)."""
    target = Path(out)
    # paused to the end: the page's index (a head per record) is then freed before the
    # collector comes back, instead of being walked once more by its first pass
    with paused_collector():
        # a run directory that cannot be read fails here, before any file is made
        doc, parts = build_page(run_dir, seed=seed, n_resamples=n_resamples, prices=prices,
                                page_size=page_size, chunk=chunk, overview=overview)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                for part in parts:
                    fh.write(part)
                del parts
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    return target, doc
