"""`toolscore run NAME` is built from the benchmark's declared options: its help lists them, an
option it does not take is a one-line usage error (exit 2), and `score -T KEY=VALUE` rescores
under another value of one of them."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from support.data import needs

from toolscore.cli import app


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_run_lists_installed_benchmarks() -> None:
    done = invoke("run", "--help")
    assert done.exit_code == 0
    for name in ("demo", "tooltalk", "autode", "tooleval", "acs"):
        assert name in done.output


def test_each_benchmark_shows_its_own_options() -> None:
    tooltalk = invoke("run", "tooltalk", "--help").output
    autode = invoke("run", "autode", "--help").output
    assert "--split [easy|hard|all]" in tooltalk and "--max-calls-per-turn" in tooltalk
    assert "--user-model" not in tooltalk
    assert "--user-model" in autode and "--mode [dynamic|static|human]" in autode
    assert "--split" not in autode
    for text in (tooltalk, autode):  # the generic ones
        assert "--model" in text and "--epochs" in text and "--resume" in text


def test_an_option_the_benchmark_does_not_take_is_a_usage_error() -> None:
    done = invoke("run", "autode", "--split", "easy", "-m", "oracle")
    assert done.exit_code == 2 and "No such option '--split'" in done.output
    bad = invoke("run", "demo", "--tools", "some", "-m", "oracle")
    assert bad.exit_code == 2 and "'some' is not one of" in bad.output
    unknown = invoke("run", "nope")
    assert unknown.exit_code == 2 and "unknown benchmark 'nope'" in unknown.output


def test_demo_run_then_score_with_an_override(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = invoke("run", "demo", "-m", "oracle", "--embedder", "hashing", "--no-cache",
                  "--out", str(out), "--json")
    doc = json.loads(done.output)
    assert doc["metrics"]["easy"]["success_rate"] == 1.0
    assert doc["config"]["options"]["max_calls_per_turn"] == 4
    text = invoke("score", str(out)).output
    assert "demo · model oracle · reference mode" in text and "100.0%" in text
    strict = json.loads(invoke("score", str(out), "-T", "strict=true", "--json").output)
    assert strict["metrics"]["strict"] is True
    assert json.loads((out / "scores.json").read_text())["strict"] is False
    bad = invoke("score", str(out), "-T", "stric=true")
    assert bad.exit_code == 2 and "unknown option 'stric'" in bad.output
    nokey = invoke("score", str(out), "-T", "strict")
    assert nokey.exit_code == 2 and "expected KEY=VALUE" in nokey.output


def test_task_options_set_what_the_flags_set(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = invoke("run", "demo", "-m", "oracle", "-T", "embedder=hashing", "-T", "split=easy",
                  "-T", "max-calls-per-turn=2", "--no-cache", "--out", str(out), "--json")
    assert done.exit_code == 0, done.output
    options = json.loads((out / "run.json").read_text())["options"]
    assert (options["split"], options["embedder"], options["max_calls_per_turn"]) == (
        "easy", "hashing", 2)
    assert list(json.loads(done.output)["metrics"]) != [] and "hard" not in \
        json.loads(done.output)["metrics"]
    unknown = invoke("run", "demo", "-m", "oracle", "-T", "splat=easy")
    assert unknown.exit_code == 2 and "no option 'splat'" in unknown.output
    twice = invoke("run", "demo", "-m", "oracle", "-T", "split=easy", "--split", "hard")
    assert twice.exit_code == 2 and "given twice" in twice.output
    bad = invoke("run", "demo", "-m", "oracle", "-T", "split=some", "--no-cache",
                 "--out", str(tmp_path / "bad"))
    assert bad.exit_code == 2 and "'some' is not one of" in bad.output
    assert not (tmp_path / "bad").exists()


@needs("tooltalk")
def test_resume_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = invoke("run", "tooltalk", "-m", "oracle", "--split", "easy", "--limit", "4",
                   "--embedder", "hashing", "--no-cache", "--out", str(out), "--json")
    assert first.exit_code == 0
    lines = (out / "samples.jsonl").read_text().splitlines()
    (out / "samples.jsonl").write_text(lines[0] + "\n")
    again = json.loads(invoke("run", "tooltalk", "--resume", str(out), "--json").output)
    assert again["summary"]["skipped"] == 1 and again["summary"]["run_now"] == 3
    assert again["metrics"] == json.loads(first.output)["metrics"]


def test_errored_samples_exit_3_and_say_how_to_resume(tmp_path: Path) -> None:
    """A sample whose model call fails for good (here a 400 on each request's first attempt) is
    kept as an error and left out of the scores; the command exits 3 and names the resume
    command, which then retries exactly those samples."""
    from support.testing.openai_server import FakeOpenAIServer

    out = tmp_path / "run"
    with FakeOpenAIServer(fault_plan={0: "400"}) as srv:
        first = CliRunner().invoke(app, ["run", "demo", "-m", "openai/fake", "--base-url",
                                         srv.base_url, "--embedder", "hashing", "--limit", "2",
                                         "--no-cache", "--out", str(out), "--json"])
        assert first.exit_code == 3, first.output
        assert f"toolscore run demo --resume {out}" in " ".join(first.stderr.split())
        doc = json.loads(first.stdout)
        assert doc["metrics"]["errors"] == 2
        srv.fault_plan = {}  # the endpoint recovers
        again = CliRunner().invoke(app, ["run", "demo", "--resume", str(out), "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["metrics"]["errors"] == 0


@needs("tooltalk")
def test_a_broken_database_fails_before_any_model_call(tmp_path: Path) -> None:
    import shutil

    from support.data import dataset

    data = tmp_path / "tooltalk"
    shutil.copytree(dataset("tooltalk"), data)
    (data / "databases" / "Account.json").write_text("{broken")
    done = invoke("run", "tooltalk", "-m", "oracle", "--data", str(data), "--split", "easy",
                  "--out", str(tmp_path / "run"))
    assert done.exit_code == 2
    assert "databases/Account.json: invalid JSON at line 1" in done.stderr
    assert not (tmp_path / "run").exists()


def test_run_writes_its_html_report_when_asked(tmp_path: Path) -> None:
    """`make demo` ends by saying where the HTML report is (issue 11)."""
    page = tmp_path / "reports" / "demo.html"
    out = invoke("run", "demo", "-m", "oracle", "--embedder", "hashing", "--no-cache", "--out",
                 str(tmp_path / "run"), "--html", str(page))
    assert out.exit_code == 0, out.output
    assert f"HTML report: {page}" in out.output.replace("\n", "")
    assert page.is_file() and "<html" in page.read_text()[:500].lower()
    doc = json.loads(invoke("run", "demo", "-m", "oracle", "--embedder", "hashing", "--no-cache",
                            "--out", str(tmp_path / "run2"), "--html", str(page), "--json").output)
    assert doc["html_report"] == str(page)
