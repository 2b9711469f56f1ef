"""``toolscore view`` in headless Chromium (the HTML report's DevTools client): the list of runs
loads, filters and sorts; a run opens with its report, whose headline table is there and whose
records are fetched from the server when opened; a run that grows is reloaded, unless the
reader opened something in it, who is then offered the new records. Skipped when
Chromium is not installed (``make test`` installs it)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.browser import CHROMIUM, LOADED, Browser

from toolscore.records import RunStore
from toolscore.report.viewer import ViewerServer, make_server
from toolscore.runs.api import evaluate

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                "(apt-get install chromium, or `make test`)")

ROWS = "Array.from(document.querySelectorAll('#runs tbody tr'))"
FRAME = "document.getElementById('report').contentDocument"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ViewerServer]:
    root = tmp_path_factory.mktemp("runs")
    evaluate("demo", "oracle", cache=None, out=root / "a" / "demo-oracle", embedder="hashing")
    evaluate("demo", "oracle", cache=None, out=root / "demo-three", embedder="hashing", limit=3)
    source = RunStore(root / "demo-three")
    growing = RunStore(root / "growing")
    growing.write_config(source.read_config())
    growing.append(next(iter(source.records())))
    srv = make_server(str(root), port=0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def goto(browser: Browser, url: str) -> None:
    browser.events.clear()
    browser.call("Page.navigate", url=url)
    browser.wait_for("Page.loadEventFired")


def test_list_filters_and_opens_a_run(browser: Browser, server: ViewerServer) -> None:
    goto(browser, server.url)
    browser.wait("document.body.dataset.ready === '1'")
    assert browser.js(f"{ROWS}.length") == 3
    assert browser.js("document.getElementById('f-count').textContent") == "showing 3 of 3 runs"
    # status: two finished, one stopped (no scores.json)
    browser.js("var s = document.getElementById('f-status'); s.value = 'stopped';"
               "s.dispatchEvent(new Event('change'))")
    assert browser.js(f"{ROWS}.map(r => r.dataset.id)") == ["growing"]
    browser.js("var s = document.getElementById('f-status'); s.value = '';"
               "s.dispatchEvent(new Event('change'))")
    browser.js("var t = document.getElementById('f-text'); t.value = 'demo-o';"
               "t.dispatchEvent(new Event('input'))")
    assert browser.js(f"{ROWS}.map(r => r.dataset.id)") == ["a/demo-oracle"]
    assert browser.js(f"{ROWS}[0].querySelector('.headline').textContent") == "success 100.0%"
    browser.js("var t = document.getElementById('f-text'); t.value = '';"
               "t.dispatchEvent(new Event('input'))")
    browser.js("document.querySelector('#runs th[data-key=\"done\"]').click()")  # ascending
    assert browser.js(f"{ROWS}.map(r => r.dataset.id)") == ["growing", "demo-three",
                                                            "a/demo-oracle"]
    # open a run as a reader does: its report, with the benchmark's headline table
    browser.events.clear()
    browser.js(f"{ROWS}[2].querySelector('a').click()")
    browser.wait_for("Page.loadEventFired")
    browser.wait(f"{FRAME} && {FRAME}.body && {FRAME}.body.dataset.ready === '1'")
    assert browser.js("document.getElementById('title').textContent") == "a/demo-oracle"
    assert browser.js("document.getElementById('busy').hidden") is True  # read: no longer said
    assert browser.js(f"{FRAME}.querySelector('h1').textContent").startswith(
        "toolscore report: demo")
    assert "Benchmark metrics" in browser.js(f"{FRAME}.body.innerText")
    assert browser.js(f"{FRAME}.querySelectorAll('script.chunk').length") == 0
    # a record is fetched when it is opened
    browser.js(f"{FRAME}.querySelector('details.sample').open = true")
    browser.wait(LOADED.replace("document", FRAME))
    assert browser.js(f"{FRAME}.querySelectorAll('details.sample .turn').length") > 0
    assert browser.errors() == []


def test_a_growing_run_is_reloaded(browser: Browser, server: ViewerServer) -> None:
    goto(browser, server.url + "run?id=growing")
    samples = f"{FRAME}.querySelectorAll('details.sample').length"
    browser.wait(f"{FRAME} && {FRAME}.body && {FRAME}.body.dataset.ready === '1' && "
                 f"{samples} === 1")
    assert browser.js("document.body.dataset.records") == "1"
    source = RunStore(Path(str(server.catalog.root)) / "demo-three")
    RunStore(Path(str(server.catalog.root)) / "growing").append(list(source.records())[1])
    browser.wait(f"document.body.dataset.records === '2' && {FRAME}.body && "
                 f"{FRAME}.body.dataset.ready === '1' && {samples} === 2", timeout=20)
    # a reader who opened a record is not interrupted: a button offers the new records
    browser.js(f"{FRAME}.querySelector('details.sample').open = true")
    browser.wait(LOADED.replace("document", FRAME))
    RunStore(Path(str(server.catalog.root)) / "growing").append(list(source.records())[2])
    browser.wait("document.body.dataset.records === '3' && "
                 "!document.getElementById('newer').hidden", timeout=20)
    assert browser.js(samples) == 2
    browser.js("document.getElementById('newer').click()")
    browser.wait(f"{FRAME}.body && {FRAME}.body.dataset.ready === '1' && {samples} === 3",
                 timeout=20)
    assert browser.errors() == []
