"""The leaderboard as Markdown (to paste in a paper or a README) and CSV (to load elsewhere).

Both are views of :func:`toolscore.report.leaderboard.build.build_leaderboard`'s document and say
what a reader must know to trust the table: the interval, the test and its alpha. Model names
and options are run data, so Markdown cells are escaped: a model called ``a|b`` or
``<script>`` must neither break the table nor become markup in a renderer.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from toolscore.report.export.table import printable

TIED = "≈"


def number(value: Any, kind: str | None) -> str:
    """A metric value: rates in percent, other numbers to 3 significant digits."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if kind == "rate":
        return f"{100 * float(value):.1f}%"
    return f"{float(value):.3g}"


def interval(cell: dict[str, Any]) -> str:
    kind = (cell.get("metric") or {}).get("kind")
    if cell.get("low") is None:
        return "-"
    low, high = number(cell["low"], kind), number(cell["high"], kind)
    return f"[{low.rstrip('%')}, {high}]" if kind == "rate" else f"[{low}, {high}]"


def pass_k(cell: dict[str, Any]) -> str:
    p = cell.get("pass_hat_k")
    if not p:
        return "-"
    return f"{number(p['value'], 'rate')} (k={p['k']})"


def p_value(test: dict[str, Any] | None) -> str:
    if not test or test.get("p_value") is None:
        return "-"
    p = float(test["p_value"])
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def cost(cell: dict[str, Any]) -> str:
    """The run's cost; "unpriced" (never $0) when none of its models has a price, "(partial)"
    when some role's tokens are left out."""
    if cell.get("cost") is None:
        return "unpriced" if cell.get("cost_complete") is False else "-"
    text = f"{cell['cost']:.4f}" if cell["cost"] < 1 else f"{cell['cost']:.2f}"
    return text if cell.get("cost_complete") else text + " (partial)"


def value_text(cell: dict[str, Any]) -> str:
    """The value and its interval, with ≈ when not significantly below the best."""
    if cell.get("value") is None:
        return str(cell.get("state") or "missing")
    kind = (cell.get("metric") or {}).get("kind")
    mark = f" {TIED}" if cell.get("tied_with_best") and cell.get("rank", 1) > 1 else ""
    return f"{number(cell['value'], kind)} {interval(cell)}{mark}"


def legend(doc: dict[str, Any]) -> str:
    sig = doc["significance"]
    return (f"Values: the benchmark's headline metric with its {doc['intervals']}. "
            f"{TIED}: not significantly different from the board's best at alpha "
            f"{sig['alpha']:g} ({sig['test']}). pass^k: all k epochs of a sample pass; noise "
            "floor: the smallest difference between two runs of this many epochs that is real "
            "at 95%. Tokens and cost cover every model role, cached replies included"
            + prices_note(doc) + ".")


def prices_note(doc: dict[str, Any]) -> str:
    """Where a board's costs come from (and their date), or how to get the table."""
    prices = doc.get("prices") or {}
    if not prices:
        return ""
    return (f"; prices: {prices['source']}"
            + (f" ({prices['missing']})" if prices.get("missing") else ""))


def _md(text: Any) -> str:
    s = printable(str(text)).replace("\\", "\\\\").replace("|", "\\|")
    return (s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("\n", " "))


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


DETAIL = ("rank", "model", "value [95% CI]", "n", "p vs best", "test", "pass^k",
          "noise floor", "tokens", "cost", "mode", "errors", "state")


def column_text(value: Any) -> str:
    """A benchmark's own board column: text as it prints it, a number to 3 digits."""
    if value is None:
        return "-"
    return value if isinstance(value, str) else number(value, None)


def detail_names(board: dict[str, Any]) -> list[str]:
    """The columns of a board's table: the benchmark's own (``board_columns``) after n."""
    return [*DETAIL[:4], *board.get("columns", []), *DETAIL[4:]]


def _detail(cell: dict[str, Any], columns: list[str]) -> list[str]:
    vs = cell.get("vs_best")
    own = cell.get("columns") or {}
    return [str(cell.get("rank") or "-"), cell["model_label"], value_text(cell),
            str(cell.get("n") or "-"), *(column_text(own.get(c)) for c in columns),
            p_value(vs), (vs or {}).get("test") or "-",
            pass_k(cell), number(cell.get("noise_floor"), "rate"),
            str(cell.get("tokens", "-")), cost(cell), str(cell.get("mode") or "-"),
            str(cell.get("errors", "-")), str(cell.get("state") or "-")]


def to_markdown(doc: dict[str, Any]) -> str:
    """A summary (model x board) and one ranked table per board."""
    boards = doc["boards"]
    out = ["# Leaderboard", "", legend(doc), ""]
    if boards:
        out += ["## Summary", "", _row(["model", *(_md(b["name"]) for b in boards)]),
                _row(["---"] * (len(boards) + 1))]
        for model in doc["models"]:
            row = [_md(model)]
            for b in boards:
                cell = next((c for c in b["cells"] if c["model_label"] == model), None)
                text = "" if cell is None else _md(value_text(cell))
                row.append(f"**{text}**" if cell and cell.get("rank") == 1 else text)
            out.append(_row(row))
        out.append("")
    for b in boards:
        metric = (b.get("metric") or {}).get("label", "-")
        names = detail_names(b)
        out += [f"## {_md(b['name'])}: {_md(metric)}", "", _row([_md(n) for n in names]),
                _row(["---"] * len(names))]
        out += [_row([_md(x) for x in _detail(c, b.get("columns", []))]) for c in b["cells"]]
        out.append("")
    if doc["warnings"]:
        out += ["Warnings:", "", *(f"- {_md(w)}" for w in doc["warnings"]), ""]
    return "\n".join(out)


CSV_COLUMNS = ("board", "benchmark", "split", "metric", "rank", "model", "model_label",
               "mode", "value", "ci_low", "ci_high", "n", "tied_with_best", "p_vs_best",
               "test_vs_best", "p_vs_above", "epochs", "pass_hat_k", "k", "noise_floor",
               "tokens", "calls", "cost", "errors", "state", "run_dir", "columns")


def to_csv(doc: dict[str, Any]) -> str:
    """One line per run (board, rank, value, interval, tests, repeats, usage, run folder)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for b in doc["boards"]:
        for c in b["cells"]:
            p = c.get("pass_hat_k") or {}
            vs, above = c.get("vs_best") or {}, c.get("vs_above") or {}
            writer.writerow([
                b["name"], c.get("benchmark"), c.get("split"), (c.get("metric") or {}).get(
                    "label"), c.get("rank"), c.get("model"), c.get("model_label"),
                c.get("mode"), c.get("value"), c.get("low"), c.get("high"), c.get("n"),
                c.get("tied_with_best"), vs.get("p_value"), vs.get("test"),
                above.get("p_value"), c.get("epochs"), p.get("value"), p.get("k"),
                c.get("noise_floor"), c.get("tokens"), c.get("calls"), c.get("cost"),
                c.get("errors"), c.get("state"), c.get("run_dir"),
                json.dumps(c.get("columns") or {}, sort_keys=False) if c.get("columns") else ""])
    return buf.getvalue()
