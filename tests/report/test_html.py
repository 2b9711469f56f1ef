"""The HTML report in a real browser: headless Chromium driven over the DevTools protocol.

Two run directories are built from a real oracle run of the demo benchmark: one with a few
samples turned into failures, one with model text (answer, transcript, tool name, error type,
sample id) that tries to break out of the page. The page must load without console errors,
take a screenshot, filter to the failed samples when the test ticks "failed only", list long
runs a page at a time, unpack a record's compressed block when the record is opened, and show
the hostile text (which reaches the page inside a compressed block) as text without ever
running it. Skipped when Chromium is not installed
(``make test`` installs it).
"""

from __future__ import annotations

import base64
import copy
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.browser import CHROMIUM, LOADED, VISIBLE, Browser

from toolscore.records import SCORES_FILE, RunStore
from toolscore.report.html.page import render_html, write_html
from toolscore.report.html.samples import page_bodies
from toolscore.report.html.template import json_for_script
from toolscore.runs.api import evaluate

PAYLOADS = ["<script>window.__pwned=1</script>",
            "</script><img src=x onerror=\"window.__pwned=1\">",
            "</SCRIPT><svg onload=window.__pwned=1>&amp;<!--"]
HOSTILE = " ".join(PAYLOADS)
CONTROLS = "\x1b[31m red \u202egnp.exe"  # a terminal escape and a bidi override

browser_only = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                  "(apt-get install chromium, or `make test`)")


# -- run directories ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("runs") / "oracle"
    evaluate("demo", "oracle", cache=None, out=path, embedder="hashing")
    return path


def _derive(source: Path, target: Path, change: Any) -> Path:
    """A copy of ``source`` whose records went through ``change(records) -> records``."""
    src, dst = RunStore(source), RunStore(target)
    dst.write_config(src.read_config())
    for record in change([copy.deepcopy(r) for r in src.latest().values()]):
        dst.append(record)
    shutil.copy(source / SCORES_FILE, target / SCORES_FILE)
    return target


def _fail(record: dict[str, Any], error_type: str = "bad planning") -> dict[str, Any]:
    """The record as if the model had missed its first expected call."""
    scores = record["scores"]
    scores["success"] = False
    if scores.get("outcomes"):
        first = scores["outcomes"][0]
        first["match"] = None
        scores["matches"] = max(0, scores.get("matches", 1) - 1)
        scores["error_types"] = {str(first["turn"]): error_type}
    return record


def _with_failures(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [_fail(r) if i % 2 == 0 else r for i, r in enumerate(records)]


def _with_hostile_text(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    bad = _fail(copy.deepcopy(records[0]), error_type=HOSTILE)
    bad["id"] = "pwn-" + PAYLOADS[1]
    turn = bad["output"]["turns"][-1]
    turn["text"] = HOSTILE
    turn["transcript"].append({"role": "assistant", "content": HOSTILE + CONTROLS})
    turn["transcript"].append({"role": "tool", "name": PAYLOADS[0], "tool_call_id": "x",
                               "content": json.dumps({"response": HOSTILE})})
    turn["predictions"].append({"request": {"api_name": PAYLOADS[1], "parameters": {"q": HOSTILE}},
                                "response": HOSTILE, "exception": None,
                                "raw_arguments": HOSTILE})
    bad["output"]["system_prompt"] = HOSTILE
    return [*records, bad]


@pytest.fixture(scope="module")
def mixed_run(oracle_run: Path) -> Path:
    return _derive(oracle_run, oracle_run.parent / "mixed", _with_failures)


@pytest.fixture(scope="module")
def hostile_run(oracle_run: Path) -> Path:
    return _derive(oracle_run, oracle_run.parent / "hostile", _with_hostile_text)


# -- in the browser (the `browser` fixture: tests/report/conftest.py) ---------------------------
TOOL_SELECT = "document.querySelector('#f-facets select[data-facet=\"tool\"]')"
ERROR_SELECT = "document.querySelector('#f-facets select[data-facet=\"error type\"]')"


def _listed(run: Path) -> list[str]:
    """The element ids of the page's records in the order it lists them, by (id, epoch): an
    element is named after its record's line in samples.jsonl, which is in completion order."""
    line: dict[tuple[str, int], int] = {}
    for i, record in enumerate(RunStore(run).records()):
        line[(str(record["id"]), int(record.get("epoch", 0)))] = i
    return [f"s-{line[key]}" for key in sorted(line)]


# -- tests ------------------------------------------------------------------------------------
def test_json_for_script_cannot_close_the_element() -> None:
    text = json_for_script({"x": HOSTILE})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"x": HOSTILE}


def _strings(value: Any) -> list[str]:
    """Every string inside ``value`` (keys and values)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    return [s for v in value for s in _strings(v)] if isinstance(value, list) else []


def _scripts(page: str) -> list[str]:
    """The opening tag of every ``<script`` in the page."""
    return [page[i:page.index(">", i) + 1] for i in range(len(page))
            if page.startswith("<script", i)]


def test_page_is_self_contained_and_escaped(hostile_run: Path) -> None:
    page = render_html(hostile_run, chunk=4)
    for needle in ("<script>window.__pwned", "</script><img", "<img src=x", "<svg onload"):
        assert needle not in page
    tags = _scripts(page)  # the index, the records' blocks and the report's own script
    blocks = [t for t in tags if t == '<script type="application/octet-stream" class="chunk">']
    n = len(RunStore(hostile_run).latest())
    assert len(blocks) == -(-n // 4) > 1
    assert tags[len(blocks):] == ['<script type="application/json" id="report-data">',
                                  tags[-1]] and tags[-1].startswith("<script nonce=")
    for ref in ("http://", "https://", "src=\"//", "@import"):
        assert ref not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page  # the error-type table
    bodies = page_bodies(page)
    assert len(bodies) == n and HOSTILE in _strings(bodies)
    assert all(b["view"]["sections"] for b in bodies)


def _open(browser: Browser, selector: str = "details.sample") -> None:
    """Open the records ``selector`` matches, as a reader does, and wait until they show."""
    browser.js(f"document.querySelectorAll({json.dumps(selector)})"
               ".forEach(d => d.querySelector('summary').click())")
    browser.wait(LOADED)


@browser_only
def test_report_renders_and_filters_failed(browser: Browser, mixed_run: Path,
                                           tmp_path: Path) -> None:
    page = write_html(mixed_run, tmp_path / "report.html", chunk=5)
    browser.open(page)
    assert browser.js("document.body.dataset.ready") == "1"
    assert browser.errors() == []
    total = browser.js("document.querySelectorAll('details.sample').length")
    failed = browser.js("document.querySelectorAll('details.sample.failed').length")
    assert total == len(RunStore(mixed_run).latest()) and 0 < failed < total
    assert browser.js(f"{VISIBLE}.length") == total
    assert browser.js("document.querySelectorAll('svg.plot').length") >= 3
    assert browser.js("document.querySelectorAll('.turn').length") == 0  # nothing unpacked yet

    shot = base64.b64decode(browser.call("Page.captureScreenshot", format="png")["data"])
    (tmp_path / "report.png").write_bytes(shot)
    assert shot.startswith(b"\x89PNG\r\n\x1a\n") and len(shot) > 20_000

    # opening a record unpacks its block: the turn's user request comes first in its transcript
    listed = _listed(mixed_run)
    records = sorted(RunStore(mixed_run).latest().values(),
                     key=lambda r: (str(r["id"]), int(r.get("epoch", 0))))
    last = listed[-1]  # the page's last record (the samples file is in completion order)
    _open(browser, f"#{last}")
    turn = records[-1]["output"]["turns"][0]
    first = f"document.querySelector('#{last} .turn details .msg')"
    assert browser.js(f"{first}.className") == "msg user"
    assert browser.js(f"{first}.querySelector('.role').textContent") == "user"
    assert browser.js(f"{first}.querySelector('pre').textContent") == turn["user"][-1]
    assert browser.js(f"document.querySelectorAll('#{last} table.calls tr').length") > 1
    assert browser.js(f"document.querySelector('#{last} .turn h3').textContent").startswith(
        "turn 1")

    browser.js("document.getElementById('f-failed').click()")  # what a reader does
    assert browser.js(f"{VISIBLE}.length") == failed
    assert browser.js(f"{VISIBLE}.every(d => d.classList.contains('failed'))") is True
    assert f"showing {failed} of {total}" in browser.js(
        "document.getElementById('f-count').textContent")

    browser.js("document.getElementById('f-failed').click()")
    tool = browser.js(f"{TOOL_SELECT}.options[1].value")  # the benchmark's "tool" facet
    browser.js(f"var s = {TOOL_SELECT}; s.selectedIndex = 1;"
               "s.dispatchEvent(new Event('change'))")
    shown = browser.js(f"{VISIBLE}.map(d => d.id)")
    assert 0 < len(shown) < total
    data = json.loads(browser.js("document.getElementById('report-data').textContent"))
    heads = {f"s-{h['idx']}": h for h in data["samples"]}  # listed by (id, epoch)
    assert all(tool in heads[i]["facets"]["tool"] for i in shown)
    _open(browser)  # every record the filter keeps, from several blocks
    assert browser.js("document.querySelectorAll('details.sample .turn').length") >= len(shown)
    assert browser.errors() == []


@browser_only
def test_pages_of_records(browser: Browser, mixed_run: Path, tmp_path: Path) -> None:
    """A long run is listed a page at a time; the filters count every record and go back to the
    first page."""
    browser.open(write_html(mixed_run, tmp_path / "paged.html", page_size=3, chunk=2))
    total = len(RunStore(mixed_run).latest())
    ids = "Array.from(document.querySelectorAll('details.sample')).map(d => d.id)"
    listed = _listed(mixed_run)
    assert browser.js(ids) == listed[:3]
    assert browser.js("document.getElementById('f-prev').disabled") is True
    pages = -(-total // 3)
    assert browser.js("document.getElementById('f-page').textContent").startswith(
        f"page 1 of {pages}")
    browser.js("document.getElementById('f-next').click()")
    assert browser.js(ids) == listed[3:6]
    _open(browser)
    assert browser.js("document.querySelectorAll('details.sample .turn').length") >= 3
    browser.js("document.getElementById('f-failed').click()")
    assert browser.js("document.getElementById('f-page').textContent").startswith("page 1 of")
    assert browser.js(f"{VISIBLE}.every(d => d.classList.contains('failed'))") is True
    assert f"of {total}" in browser.js("document.getElementById('f-count').textContent")
    assert browser.errors() == []


@browser_only
def test_model_text_is_shown_never_run(browser: Browser, hostile_run: Path,
                                       tmp_path: Path) -> None:
    browser.open(write_html(hostile_run, tmp_path / "hostile.html", chunk=3))
    assert browser.js("document.body.dataset.ready") == "1"  # the page's script still ran
    blocks = browser.js("document.querySelectorAll('script.chunk').length")
    assert blocks > 1 and browser.js("document.scripts.length") == 2 + blocks
    _open(browser)  # unpacks every block, the hostile record's included
    browser.js("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert browser.js("typeof window.__pwned") == "undefined"
    assert browser.js("document.images.length") == 0
    assert browser.js("document.querySelectorAll('[onerror], [onload], svg script').length") == 0
    text = browser.js("document.body.innerText")
    for payload in PAYLOADS:
        assert payload in text
    assert "\x1b" not in text and "\u202e" not in text  # shown as escapes, never obeyed
    assert "\\x1b[31m" in text and "\\u202e" in text
    options = browser.js("Array.from(document.querySelectorAll('#f-facets option'))"
                         ".map(o => o.textContent)")
    assert PAYLOADS[1] in options and HOSTILE in options
    browser.js(f"var s = {ERROR_SELECT};"
               "s.value = Array.from(s.options).map(o => o.value).find(v => v.includes('pwned'));"
               "s.dispatchEvent(new Event('change'))")
    assert browser.js(f"{VISIBLE}.length") == 1
    _open(browser)  # the list was rebuilt: this opens the hostile record from its block again
    assert HOSTILE in browser.js("document.getElementById('samples').innerText")
    assert browser.js("typeof window.__pwned") == "undefined"
    assert browser.js("document.images.length") == 0
    assert browser.errors() == []


def test_a_given_overview_gives_the_same_page(mixed_run: Path) -> None:
    """The CLI computes the overview for the terminal anyway; handing it over changes
    nothing on the page (blocks are deterministic: gzip without a timestamp)."""
    from toolscore.report.overview import run_overview

    def strip(page: str) -> str:
        return re.sub(r'nonce(-|=")[A-Za-z0-9_-]+', "nonce", page)

    given = render_html(mixed_run, n_resamples=300, overview=run_overview(mixed_run,
                                                                          n_resamples=300))
    assert strip(given) == strip(render_html(mixed_run, n_resamples=300))
    assert strip(given) != strip(render_html(mixed_run, n_resamples=300, seed=1))


def test_breakdowns_locate_the_injected_misses(mixed_run: Path) -> None:
    from toolscore.report.intervals import headline
    from toolscore.report.view import run_view

    records = list(RunStore(mixed_run).latest().values())
    view = run_view(RunStore(mixed_run).read_config())
    assert view.rebuilt and view.note is None
    tables = {b.title: b for b in view.breakdowns(records)}
    tools = tables["Per tool"].rows
    assert sum(t["expected"] - t["found"] for t in tools) == sum(
        1 for r in records if r["scores"]["success"] is False)
    assert {t["plugin"] for t in tools} <= {"Notes", "Shopping", "Calculator"}
    confusion = tables["Unmatched calls: expected tool vs tool called"]
    assert confusion.matrix and confusion.rows and all(r["count"] > 0 for r in confusion.rows)
    assert [e["error_type"] for e in tables["Error types"].rows] == ["bad planning"]
    head = headline(records, None, view.interval_metrics(records), n_resamples=200)
    success = {s: next(m for m in rows if m["key"] == "success_rate") for s, rows in head.items()}
    assert all(m["low"] <= m["value"] <= m["high"] for m in success.values())


def test_cli_writes_the_page_next_to_the_terminal_summary(mixed_run: Path,
                                                         tmp_path: Path) -> None:
    from click.testing import CliRunner

    from toolscore.cli import app

    out = tmp_path / "sub" / "report.html"
    done = CliRunner().invoke(app, ["report", str(mixed_run), "--html", str(out)])
    assert done.exit_code == 0, done.output
    assert "oracle" in done.output and out.is_file()
    assert out.read_text().startswith("<!DOCTYPE html>")
