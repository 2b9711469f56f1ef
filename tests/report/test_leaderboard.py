"""The leaderboard from real runs: the oracle and scripted models behind the fake OpenAI server.

On ``demo`` (3 epochs, one request at a time so each epoch meets the script in order):
``openai/fake`` never finishes one conversation, fails another in epochs 1 and 3 and a third
in epoch 2 (6 of 18 (sample, epoch) records lost, all where the oracle passes: exact McNemar
p = 2 / 2**6 = 0.031, significant); ``openai/near`` fails one conversation once (p = 1: tied
with the best). A strict oracle run makes a second demo board, and ``tooltalk`` easy a third.
Every figure must be the one ``toolscore report`` and ``toolscore compare`` give for that run.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support import data
from support.browser import CHROMIUM, Browser
from support.testing.openai_server import FakeOpenAIServer, prompt_tokens, reply_to_completion
from support.testing.oracle_replies import oracle_recording

from toolscore.cli import app
from toolscore.records import RunStore
from toolscore.report.compare import compare_runs
from toolscore.report.leaderboard.build import LeaderboardError, build_leaderboard
from toolscore.report.leaderboard.html import render_leaderboard_html, write_leaderboard_html
from toolscore.report.leaderboard.text import to_csv, to_markdown
from toolscore.report.overview import run_overview
from toolscore.runs.api import evaluate
from toolscore.stats.repeats import repeat_summary
from toolscore.types import Message

N = 300  # resamples: enough to be stable, quick on two cores
HOSTILE = "<script>window.__pwned=1</script>"
# first user message -> epochs (1-based occurrences) in which the model answers wrongly
SCRIPTS = {"openai/fake": {"Find my note about the gym locker.": {1, 2, 3},
                           "I bought 12 tickets at 7.5 dollars each.": {1, 3},
                           "Add a dozen eggs to my shopping list.": {2}},
           "openai/near": {"How many kilometers is 26.2 miles?": {2}}}
TOOLTALK_WRONG = 2  # the first two tooltalk conversations are answered with a refusal


def scripted(oracle: Any, scripts: dict[str, dict[str, set[int]]]) -> Any:
    seen: Counter[tuple[str, str]] = Counter()

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        msgs = request["messages"]
        users = [m["content"] for m in msgs if m["role"] == "user"]
        script = scripts.get("openai/" + request["model"], {})
        key = next((k for k in script if users[0].startswith(k)), None)
        if key is None:
            return oracle(request)
        if len(users) == 1 and msgs[-1]["role"] == "user":
            seen[(request["model"], key)] += 1
        if seen[(request["model"], key)] in script[key]:
            return reply_to_completion(Message(role="assistant", content="I cannot help."),
                                       prompt_tokens=prompt_tokens(request))
        return oracle(request)
    return respond


def refusing(oracle: Any, firsts: set[str]) -> Any:
    def respond(request: dict[str, Any]) -> dict[str, Any]:
        first = next(m["content"] for m in request["messages"] if m["role"] == "user")
        if first in firsts:
            return reply_to_completion(Message(role="assistant", content="I cannot help."),
                                       prompt_tokens=prompt_tokens(request))
        return oracle(request)
    return respond


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("board")
    demo = {"embedder": "hashing", "cache": None, "epochs": 3}
    evaluate("demo", "oracle", out=root / "demo-oracle", **demo)
    evaluate("demo", "oracle", out=root / "demo-oracle-strict", strict=True, **demo)
    recording = oracle_recording("demo", embedder="hashing")
    with FakeOpenAIServer(scripted(recording.responder, SCRIPTS)) as srv:
        for model in SCRIPTS:
            evaluate("demo", model, base_url=srv.base_url, max_concurrency=1,
                     out=root / f"demo-{model.split('/')[1]}", **demo)
    if data.present("tooltalk"):
        tt = {"data": data.path("tooltalk"), "split": "easy", "embedder": "hashing",
              "limit": 4, "epochs": 2, "cache": None, "download": False}
        evaluate("tooltalk", "oracle", out=root / "tt" / "oracle", **tt)
        rec = oracle_recording("tooltalk", data.path("tooltalk"), split="easy",
                               embedder="hashing")
        ids = sorted({i for i, _ in RunStore(root / "tt" / "oracle").latest()})
        firsts = {rec.records[i]["output"]["turns"][0]["user"][0]
                  for i in ids[:TOOLTALK_WRONG]}
        with FakeOpenAIServer(refusing(rec.responder, firsts)) as srv:
            evaluate("tooltalk", "openai/fake", base_url=srv.base_url,
                     out=root / "tt" / "fake", **tt)
    return root


@pytest.fixture(scope="module")
def doc(root: Path) -> dict[str, Any]:
    return build_leaderboard([root], n_resamples=N)


def board(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(b for b in doc["boards"] if b["name"] == name)


def cell(b: dict[str, Any], model: str) -> dict[str, Any]:
    return next(c for c in b["cells"] if c["model_label"] == model)


# -- the table ---------------------------------------------------------------------------------
def test_boards_split_by_benchmark_and_mode(doc: dict[str, Any]) -> None:
    names = [b["name"] for b in doc["boards"]]
    assert names[:2] == ["demo (strict=false)", "demo (strict=true)"]
    strict = board(doc, "demo (strict=true)")
    assert [c["model_label"] for c in strict["cells"]] == ["oracle"]
    assert strict["cells"][0]["mode"] == "strict"
    ref = board(doc, "demo (strict=false)")
    assert {c["mode"] for c in ref["cells"]} == {"reference"}
    assert ref["metric"]["label"] == "success"
    assert [c["model_label"] for c in ref["cells"]] == ["oracle", "openai/near", "openai/fake"]
    assert [c["rank"] for c in ref["cells"]] == [1, 2, 3]
    assert not any("different modes" in w for w in doc["warnings"])


def test_values_are_the_reports_and_ties_are_the_paired_tests(root: Path,
                                                             doc: dict[str, Any]) -> None:
    ref = board(doc, "demo (strict=false)")
    for c in ref["cells"]:
        shown = run_overview(c["run_dir"], n_resamples=N)["intervals"]["splits"]["all"]
        row = next(r for r in shown if r["label"] == "success")
        assert (c["value"], c["low"], c["high"], c["n"]) == (
            row["value"], row["low"], row["high"], row["n"])
    fake, near = cell(ref, "openai/fake"), cell(ref, "openai/near")
    assert fake["value"] == pytest.approx(12 / 18) and near["value"] == pytest.approx(17 / 18)
    assert fake["vs_best"]["test"] == "mcnemar-exact"
    assert fake["vs_best"]["p_value"] == pytest.approx(2 / 2 ** 6)
    assert fake["vs_best"]["significant"] is True and fake["tied_with_best"] is False
    assert near["vs_best"]["p_value"] == pytest.approx(1.0) and near["tied_with_best"] is True
    compared = compare_runs(root / "demo-fake", root / "demo-oracle", n_resamples=N)
    success = next(h for h in compared["headline"] if h["metric"] == "success")
    assert fake["vs_best"]["p_value"] == success["p_value"]
    assert fake["vs_best"]["diff"] == pytest.approx(success["diff"])
    assert fake["vs_above"]["against"] == near["run_dir"]
    assert doc["significance"]["alpha"] == 0.05 and "McNemar" in doc["significance"]["test"]


def test_pass_hat_k_and_noise_floor_by_hand(root: Path, doc: dict[str, Any]) -> None:
    ref = board(doc, "demo (strict=false)")
    fake = cell(ref, "openai/fake")
    # successes per conversation over 3 epochs: 3, 1 (calculate), 0 (note), 2 (eggs), 3, 3
    assert fake["pass_hat_k"] == {"k": 3, "value": pytest.approx(3 / 6), "metric": "success",
                                  "samples": 6}
    outcomes: dict[str, list[bool]] = {}
    for r in sorted(RunStore(root / "demo-fake").latest().values(), key=lambda r: r["epoch"]):
        outcomes.setdefault(r["id"], []).append(r["scores"]["success"])
    summary = repeat_summary(outcomes)
    assert fake["noise_floor"] == pytest.approx(summary["noise_floor_k_epochs"])
    assert fake["noise_floor"] > 0
    assert cell(ref, "oracle")["noise_floor"] == 0.0
    assert cell(ref, "oracle")["tokens"] == 0 and fake["tokens"] > 0


@pytest.mark.skipif(not data.present("tooltalk"), reason="tooltalk data absent")
def test_tooltalk_board_and_split(root: Path) -> None:
    doc = build_leaderboard([root / "tt"], split="easy", metric="recall", n_resamples=N)
    (tt,) = doc["boards"]
    assert tt["name"] == "tooltalk [easy]" and tt["metric"]["label"] == "recall"
    oracle, fake = tt["cells"]
    assert (oracle["model_label"], oracle["value"]) == ("oracle", 1.0)
    assert fake["value"] < 1.0 and fake["pass_hat_k"]["k"] == 2
    published = RunStore(root / "tt" / "fake").read_scores()
    assert published is not None and fake["value"] == published["easy"]["recall"]
    assert fake["vs_best"]["test"] == "permutation"  # recall is a ratio of sums


def test_markdown_and_csv(doc: dict[str, Any]) -> None:
    md = to_markdown(doc)
    lines = md.splitlines()
    near = next(x for x in lines if x.startswith("| 2 | openai/near"))
    fake = next(x for x in lines if x.startswith("| 3 | openai/fake"))
    assert "94.4% [" in near and "≈" in near and "≈" not in fake
    assert "mcnemar-exact" in fake and "50.0% (k=3)" in fake
    assert "alpha 0.05" in md and "| **100.0% [100.0, 100.0%]** |" in md
    rows = list(csv.DictReader(io.StringIO(to_csv(doc))))
    assert len(rows) == sum(len(b["cells"]) for b in doc["boards"])
    by_model = {r["model_label"]: r for r in rows if r["board"] == "demo (strict=false)"}
    assert by_model["openai/fake"]["tied_with_best"] == "False"
    assert float(by_model["openai/fake"]["p_vs_best"]) == pytest.approx(0.03125)


def test_prices_give_cost(root: Path) -> None:
    prices = {"openai/fake": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}
    doc = build_leaderboard([root / "demo-fake", root / "demo-oracle"], prices=prices,
                            n_resamples=N)
    fake = cell(doc["boards"][0], "openai/fake")
    assert fake["cost"] > 0 and fake["cost"] == pytest.approx(
        run_overview(root / "demo-fake", prices=prices, n_resamples=N)["cost"]["total"])
    assert fake["cost_complete"] is True


def test_a_sweep_plan_shows_pending_units(tmp_path: Path) -> None:
    from toolscore.sweeps.local import run_one
    from toolscore.sweeps.plan import load_plan

    plan = tmp_path / "sweep.json"
    plan.write_text(json.dumps({
        "out": "runs", "models": ["oracle", {"model": "openai/never",
                                             "base_url": "http://127.0.0.1:9/v1"}],
        "benchmarks": {"demo": {"embedder": "hashing"}}, "epochs": 2, "cache": "none"}))
    assert run_one(load_plan(plan), 0)["state"] == "done"
    doc = build_leaderboard([plan], n_resamples=N)
    (b,) = doc["boards"]
    done, pending = b["cells"]
    assert (done["model_label"], done["state"], done["rank"]) == ("oracle", "done", 1)
    assert (pending["model_label"], pending["state"], pending["value"]) == (
        "openai/never", "pending", None)
    assert "| openai/never | pending |" in to_markdown(doc)


def test_bad_inputs_are_one_line(tmp_path: Path, root: Path) -> None:
    with pytest.raises(LeaderboardError, match="not a run directory"):
        build_leaderboard([tmp_path / "nothing"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(LeaderboardError, match="no run directories"):
        build_leaderboard([tmp_path / "empty"])
    runner = CliRunner()
    done = runner.invoke(app, ["leaderboard", str(root / "demo-oracle"), "--metric", "nope"])
    assert done.exit_code == 2 and "run.json: --metric 'nope'" in done.output
    done = runner.invoke(app, ["leaderboard", str(root / "demo-oracle"), "--metric", "tt=x"])
    assert done.exit_code == 2 and "no run of benchmark 'tt'" in done.output


def test_cli_formats(root: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["leaderboard", str(root / "demo-oracle"), str(root / "demo-fake"),
            "--resamples", str(N)]
    md = runner.invoke(app, args)
    assert md.exit_code == 0, md.output
    assert md.output.startswith("# Leaderboard") and "openai/fake" in md.output
    as_json = runner.invoke(app, [*args, "--json", "--metric", "demo=recall"])
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.output)["boards"][0]["metric"]["label"] == "recall"
    as_csv = runner.invoke(app, [*args, "--format", "csv", "--html", str(tmp_path / "lb.html"),
                                 "--html-reports"])
    assert as_csv.exit_code == 0, as_csv.output
    assert as_csv.stdout.splitlines()[0].startswith("board,benchmark,split,metric,rank")
    assert (tmp_path / "lb.html").is_file() and (root / "demo-fake" / "report.html").is_file()


# -- the page --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def hostile(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the fake run whose model is called ``<script>...``."""
    src = RunStore(root / "demo-fake")
    dst = RunStore(tmp_path_factory.mktemp("hostile") / "run")
    dst.write_config({**src.read_config(), "model": f"openai/{HOSTILE}"})
    for r in src.latest().values():
        dst.append(r)
    (dst.path / "scores.json").write_text((src.path / "scores.json").read_text())
    return dst.path


def test_page_escapes_model_names(root: Path, hostile: Path, tmp_path: Path) -> None:
    doc = build_leaderboard([root / "demo-oracle", hostile], n_resamples=N)
    page = render_leaderboard_html(doc, tmp_path)
    assert HOSTILE not in page and "&lt;script&gt;window.__pwned" in page
    assert page.count("<script") == 2
    assert "http://" not in page and "https://" not in page


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_page_sorts_links_and_never_runs_names(browser: Browser, root: Path, hostile: Path,
                                               doc: dict[str, Any], tmp_path: Path) -> None:
    runs = [root / "demo-oracle", root / "demo-near", root / "demo-fake", hostile]
    board_doc = build_leaderboard(runs, n_resamples=N)
    page = write_leaderboard_html(board_doc, tmp_path / "site" / "leaderboard.html",
                                  html_reports=True)
    browser.open(page)
    assert browser.js("document.body.dataset.ready") == "1"
    assert browser.errors() == []
    assert browser.js("typeof window.__pwned") == "undefined"
    assert browser.js("document.scripts.length") == 2
    assert HOSTILE in browser.js("document.body.innerText")

    models = "Array.from(document.querySelectorAll('#board-0 tbody tr'))" \
             ".map(r => r.cells[1].textContent)"
    assert browser.js(models)[:2] == ["oracle", "openai/near"]
    browser.js("document.querySelectorAll('#board-0 thead th')[2].click()")  # value: descending
    browser.js("document.querySelectorAll('#board-0 thead th')[2].click()")  # and ascending
    order = browser.js(models)
    assert order[-1] == "oracle" and order[0] in ("openai/fake", f"openai/{HOSTILE}")
    assert browser.js("document.querySelectorAll('#board-0 thead th')[2]"
                      ".getAttribute('aria-sort')") == "ascending"
    browser.js("document.querySelectorAll('#board-0 thead th')[1].click()")  # model: text
    assert browser.js(models) == sorted(browser.js(models), reverse=True, key=str.lower)

    href = browser.js("Array.from(document.querySelectorAll('#summary a'))"
                      ".find(a => a.closest('tr').cells[0].textContent === 'openai/near')"
                      ".getAttribute('href')")
    assert (page.parent / href).resolve() == (root / "demo-near" / "report.html").resolve()
    assert (root / "demo-near" / "report.html").is_file()
    assert browser.errors() == []


def test_a_metric_of_mistakes_ranks_the_fewest_first(tmp_path: Path) -> None:
    """Incorrect actions: the model that makes none is ranked first, not last."""
    from support.testing.openai_server import FakeOpenAIServer as Server
    from support.testing.openai_server import reply_to_completion as completion

    from toolscore.types import Message as Msg
    from toolscore.types import ToolCall

    def careless(request: dict[str, Any]) -> dict[str, Any]:
        """Adds junk to the shopping list at the start of every turn, then says it is done."""
        if request["messages"][-1]["role"] == "user":
            call = ToolCall("c1", "AddItem", json.dumps({"name": "junk", "quantity": 99}))
            return completion(Msg(role="assistant", tool_calls=[call]))
        return completion(Msg(role="assistant", content="Done."))

    demo = {"embedder": "hashing", "cache": None}
    evaluate("demo", "oracle", out=tmp_path / "oracle", **demo)
    with Server(careless) as srv:
        evaluate("demo", "openai/careless", base_url=srv.base_url, out=tmp_path / "careless",
                 **demo)
    doc = build_leaderboard([tmp_path], metric="incorrect actions", n_resamples=N)
    ranked = doc["boards"][0]
    assert ranked["metric"]["higher_is_better"] is False
    values = {c["model_label"]: c["value"] for c in ranked["cells"]}
    assert values["oracle"] == 0.0 and values["openai/careless"] > 0.0
    assert [c["model_label"] for c in ranked["cells"]] == ["oracle", "openai/careless"]
    assert [c["rank"] for c in ranked["cells"]] == [1, 2]
