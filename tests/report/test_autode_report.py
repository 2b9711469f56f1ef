"""report, HTML report and compare on AutoDE runs (real runner, fake OpenAI server, no network).

Run A asks for details and then calls with everything the user said (F1 100); run B calls the
first API offered at once, with no arguments. The report must name
the protocol mode and the user model, give AutoDE's own figures with intervals, show each
dialogue with the call it ended in, and compare must test F1 as AutoDE computes it.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pytest
from support.autode import asking_assistant, responder
from support.browser import CHROMIUM, VISIBLE, Browser
from support.data import path as data_path
from support.testing.openai_server import FakeOpenAIServer

from toolscore.records import RunStore
from toolscore.report.compare import compare_runs
from toolscore.report.export.table import run_rows
from toolscore.report.html.page import render_html, write_html
from toolscore.report.html.samples import page_bodies
from toolscore.report.overview import run_overview
from toolscore.runs.api import evaluate
from toolscore.types import Message, ToolCall

pytestmark = pytest.mark.needs_data("autode")
DATA = data_path("autode")
CASES = 4
STRICT_DYNAMIC = "dynamic, strict (toolscore's own prompts)"  # the report's mode label


def hasty_assistant(request: dict[str, Any]) -> Message:
    """Calls the first API offered straight away, with no arguments."""
    name = request["tools"][0]["function"]["name"]
    return Message(role="assistant", tool_calls=[ToolCall(id="c", name=name, arguments="{}")])


def autode_run(path: Path, assistant: Any) -> Path:
    with FakeOpenAIServer(responder(assistant)) as srv:
        return evaluate("autode", "openai/fake", data=DATA, limit=CASES, epochs=2, cache=None,
                        base_url=srv.base_url, out=path, mode="dynamic", strict=True).path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("autode-report")
    return autode_run(root / "asking", asking_assistant), autode_run(root / "hasty",
                                                                      hasty_assistant)


def test_report_names_mode_and_user_and_gives_autode_figures(runs: tuple[Path, Path]) -> None:
    doc = run_overview(runs[0], n_resamples=300)
    assert (doc["mode"], doc["user"], doc["judge"], doc["note"]) == (
        STRICT_DYNAMIC, "openai/fake", None, None)
    assert doc["primary_metric"] == "exact_match"
    assert doc["intervals"]["resampled"] == "samples"  # two trials of each script
    (rows,) = doc["intervals"]["splits"].values()
    by = {m["label"]: m for m in rows}
    published = doc["metrics"]["exact"]
    for label, key in (("precision", "precision"), ("recall", "recall"), ("F1", "f1")):
        assert 100 * by[label]["value"] == pytest.approx(published[key])
    assert by["exact match (supplementary)"]["value"] == pytest.approx(
        doc["metrics"]["supplementary"]["exact_match_rate"])
    tables = {b["title"]: b for b in doc["breakdowns"]}
    assert sum(r["records"] for r in tables["Per API"]["rows"]) == 2 * CASES
    assert tables["Endings"]["rows"][0]["ending"] == "API call"
    assert doc["repeats"]["metric"] == "exact_match"
    columns, rows = run_rows(runs[0])  # export: every scalar score, nested views left out
    assert {"f1", "exact_match", "ending"} <= set(columns) and "normalised" not in columns
    assert len(rows) == 2 * CASES


def test_html_shows_each_dialogue_and_its_call(runs: tuple[Path, Path]) -> None:
    page = render_html(runs[0], n_resamples=200)
    views = [b["view"] for b in page_bodies(page)]  # what the page shows when a record opens
    assert len(views) == 2 * CASES
    assert all(v["messages"] and not any(s.get("messages") for s in v["sections"])
               for v in views)  # shown as one dialogue
    assert json.dumps(views).count("Could you tell me the details I need?") == 2 * CASES
    assert all([(s["title"], s["tags"]) for s in v["sections"]] ==
               [("call", [{"text": "API call", "tone": "ok"}])] for v in views)
    assert all("user script background" in v["details"] for v in views)
    assert f"<b>{html.escape(STRICT_DYNAMIC)}</b>" in page
    data = json.loads(page.split('id="report-data">', 1)[1].split("</script>", 1)[0])
    assert len(data["samples"]) == 2 * CASES
    assert [f["name"] for f in data["facets"]] == ["API", "ending"]
    assert "Benchmark metrics" in page and "F1 ×100" in page


def test_compare_tests_autode_f1(runs: tuple[Path, Path]) -> None:
    result = compare_runs(*runs, n_resamples=300)
    head = {m["metric"]: m for m in result["headline"]}
    b = RunStore(runs[1]).read_scores()
    assert b is not None
    assert head["F1"]["value_a"] == pytest.approx(1.0)
    assert 100 * head["F1"]["value_b"] == pytest.approx(b["exact"]["f1"])
    assert head["F1"]["resampled"] == "samples" and head["F1"]["n_samples"] == CASES
    assert head["F1"]["ci_low"] <= head["F1"]["diff"] <= head["F1"]["ci_high"]
    assert result["primary_metric"] == "exact_match"
    assert result["run_a"]["mode"] == STRICT_DYNAMIC and result["run_a"]["user"] == "openai/fake"
    flipped = {f["id"] for f in result["flips"]["pass_a_fail_b"]}
    assert flipped and flipped <= {r["id"] for r in RunStore(runs[0]).latest().values()}


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_page_filters_by_the_benchmarks_facets(runs: tuple[Path, Path], tmp_path: Path) -> None:
    browser = Browser(tmp_path / "profile")
    try:
        browser.open(write_html(runs[1], tmp_path / "hasty.html", n_resamples=100))
        assert browser.js("document.body.dataset.ready") == "1" and browser.errors() == []
        select = "document.querySelector('#f-facets select[data-facet=\"API\"]')"
        assert browser.js(f"{select}.options[0].textContent") == "any"
        api = browser.js(f"{select}.options[1].value")
        browser.js(f"var s = {select}; s.selectedIndex = 1; s.dispatchEvent(new Event('change'))")
        shown = browser.js(f"{VISIBLE}.map(d => d.id)")
        # a record's element id is its position in samples.jsonl; the list is in (id, epoch)
        stored = list(RunStore(runs[1]).records())
        order = sorted(range(len(stored)),
                       key=lambda i: (str(stored[i]["id"]), int(stored[i].get("epoch", 0))))
        assert shown == [f"s-{i}" for i in order if stored[i]["meta"]["api"] == api]
        browser.js("document.getElementById('f-failed').click()")
        failed = [x for x in shown if not stored[int(x[2:])]["scores"]["exact_match"]]
        assert browser.js(f"{VISIBLE}.map(d => d.id)") == failed
        assert browser.errors() == []
    finally:
        browser.close()
