"""Gates for CI: ``--fail-under`` on ``run`` and ``report``, ``compare --fail-on-regression``,
and the JUnit XML of ``--junit``, read back the way CI servers read it.

Synthetic run directories (known outcomes, no model) go through click's runner; one real run
of the demo benchmark against a fake endpoint goes through a subprocess, for the exit code and
the run directory a failed gate leaves complete.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.cli import toolscore
from support.testing.openai_server import FakeOpenAIServer, text_responder

from toolscore.cli import app
from toolscore.records import RunStore

CONFIG: dict[str, Any] = {
    "benchmark": "demo", "model": "openai/new", "epochs": 1,
    "versions": {"toolscore": "0.2.0"},
    "benchmark_config": {"data_dir": "/d", "embedder": "hashing", "strict": False, "seed": 0},
}
IDS = [f"s{i:02d}" for i in range(30)]


def write_run(path: Path, passed: set[str], *, errors: dict[str, str] | None = None,
              epochs: int = 1, model: str = "openai/new",
              scores: dict[str, Any] | None = None) -> Path:
    """A demo run directory: ``passed`` succeed, the rest fail; even ids are split "easy"."""
    store = RunStore(path)
    store.write_config({**CONFIG, "model": model, "epochs": epochs})
    for epoch in range(epochs):
        for i, sid in enumerate(IDS):
            record: dict[str, Any] = {"id": sid, "epoch": epoch, "time_s": 0.25,
                                      "meta": {"split": "easy" if i % 2 == 0 else "hard"}}
            if sid in (errors or {}):
                record.update(status="error", error=(errors or {})[sid])
            else:
                ok = sid in passed
                record.update(status="ok", output={}, scores={
                    "success": ok, "matches": int(ok), "predictions": 1, "ground_truths": 1,
                    "incorrect_action_rate": 0.0})
            store.append(record)
    if scores is not None:
        store.write_scores(scores)
    return path


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args])


def one_error_line(done: Any, *needles: str) -> str:
    assert done.exit_code == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


# -- --fail-under ----------------------------------------------------------------------------
def test_report_fails_under_a_floor_with_one_line_per_failed_gate(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", set(IDS[:12]))  # success 12/30 = 0.40
    done = invoke("report", run, "--fail-under", "success=0.5", "--fail-under", "recall=0.3",
                  "--fail-under", "precision@easy=50%")
    assert done.exit_code == 1, done.stderr
    assert "headline metrics" in done.stdout  # the report is printed in full first
    gates = [ln for ln in done.stderr.splitlines() if ln.startswith("fail-under:")]
    assert gates == ["fail-under: success 0.40 < 0.50", "fail-under: precision@easy 0.40 < 0.50"]
    passing = invoke("report", run, "--fail-under", "success=0.4", "--fail-under",
                     "SUCCESS_RATE=40%")
    assert passing.exit_code == 0, passing.stderr
    assert "fail-under" not in passing.stderr


def test_the_report_names_and_the_scores_json_key_are_one_metric(tmp_path: Path) -> None:
    published = {"overall": {"success_rate": 0.9}, "easy": {"success_rate": 0.8}}
    run = write_run(tmp_path / "run", set(IDS[:12]), scores=published)
    doc = json.loads(invoke("report", run, "--json", "--fail-under", "success=0.85",
                            "--fail-under", "success_rate@easy=0.85").stdout)
    by_name = {g["name"]: g for g in doc["gates"]}
    assert by_name["success"]["value"] == 0.9 and by_name["success"]["status"] == "pass"
    assert by_name["success@easy"]["value"] == 0.8 and by_name["success@easy"]["status"] == "fail"


@pytest.mark.parametrize(("spec", "needles"), [
    ("sucess=0.5", ("no headline metric 'sucess'", "success, precision, recall")),
    ("success=half", ("VALUE 'half' is not a number",)),
    ("success", ("expected METRIC=VALUE",)),
    ("success=nan", ("is not a number",)),
    ("success=50", ("is a rate",)),
    ("success@medium=0.5", ("no split 'medium'", "easy, hard")),
    ("incorrect actions=0.1", ("lower is better", "success")),
])
def test_a_bad_gate_is_one_line_naming_what_there_is(tmp_path: Path, spec: str,
                                                     needles: tuple[str, ...]) -> None:
    run = write_run(tmp_path / "run", set(IDS[:12]))
    one_error_line(invoke("report", run, "--fail-under", spec), *needles)


def test_run_gates_after_the_run_directory_is_complete(tmp_path: Path) -> None:
    """An assistant that never calls a tool: success 0, the gate fails with exit 1, and the run
    directory, its scores and the JUnit file are all written. A bad VALUE stops before any
    model call."""
    with FakeOpenAIServer(text_responder("I cannot do that.")) as srv:
        args = ("run", "demo", "--model", "openai/fake", "--base-url", srv.base_url,
                "--no-cache", "--embedder", "hashing", "--limit", "4")
        env = {"OPENAI_API_KEY": "dummy"}
        bad = toolscore(*args, "--out", "never", "--fail-under", "success=x", cwd=tmp_path,
                        env=env)
        assert bad.returncode == 2 and srv.requests == 0, bad.stderr
        assert not (tmp_path / "never").exists()
        sharded = toolscore(*args, "--out", "never", "--shard", "1/2", "--junit", "j.xml",
                            cwd=tmp_path, env=env)
        assert sharded.returncode == 2 and "once every shard has finished" in sharded.stderr
        assert srv.requests == 0 and not (tmp_path / "never").exists()
        done = toolscore(*args, "--out", "run", "--fail-under", "success=0.5",
                         "--fail-under", "soft success=0", "--junit", "ci/junit.xml",
                         "--json", cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "fail-under: success 0.00 < 0.50"
    doc = json.loads(done.stdout)  # still exactly one document, the gates in it
    assert [g["status"] for g in doc["gates"]] == ["fail", "pass"]
    assert {p.name for p in (tmp_path / "run").iterdir()} >= {"run.json", "samples.jsonl",
                                                              "scores.json"}
    root = ET.parse(tmp_path / "ci" / "junit.xml").getroot()
    assert root.get("tests") == "6" and root.get("failures") == "5"  # 4 samples, 2 gates


# -- JUnit -----------------------------------------------------------------------------------
def check_junit_shape(root: ET.Element) -> None:
    """What GitHub, GitLab and Jenkins readers need: testsuites > testsuite[name, tests,
    failures, errors] > testcase[name, classname], the counts equal to the cases."""
    assert root.tag == "testsuites"
    for suite in root.findall("testsuite"):
        for attr in ("name", "tests", "failures", "errors"):
            assert suite.get(attr) is not None, (suite.attrib, attr)
        cases = suite.findall("testcase")
        assert int(suite.get("tests") or -1) == len(cases)
        assert int(suite.get("failures") or -1) == sum(c.find("failure") is not None
                                                      for c in cases)
        assert int(suite.get("errors") or -1) == sum(c.find("error") is not None for c in cases)
        for case in cases:
            assert case.get("name") and case.get("classname"), case.attrib
    for attr in ("tests", "failures", "errors"):
        assert int(root.get(attr) or -1) == sum(int(s.get(attr) or 0)
                                                for s in root.findall("testsuite"))


def test_junit_has_a_suite_per_split_and_a_case_per_sample_and_epoch(tmp_path: Path) -> None:
    errors = {"s05": "infrastructure: timeout after 120 s \x1b[31m\x00 (status 504)"}
    run = write_run(tmp_path / "run", set(IDS[:20]), errors=errors, epochs=2)
    out = tmp_path / "reports" / "junit.xml"
    done = invoke("report", run, "--junit", out, "--fail-under", "success=0.5")
    assert done.exit_code == 0, done.stderr
    root = ET.parse(out).getroot()
    check_junit_shape(root)
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == ["demo.easy", "demo.hard", "demo.gates"]
    hard = suites["demo.hard"]
    assert (hard.get("tests"), hard.get("failures"), hard.get("errors")) == ("30", "10", "2")
    assert hard.get("time") == f"{30 * 0.25:.3f}"
    props = {p.get("name"): p.get("value") for p in hard.iter("property")}
    assert props["model"] == "openai/new" and props["mode"] == "reference"
    assert props["split"] == "hard" and props["primary_metric"] == "success"
    cases = {c.get("name"): c for c in hard.findall("testcase")}
    assert set(cases) == {f"{s}#{e}" for s in IDS[1::2] for e in (0, 1)}
    assert all(c.get("classname") == "demo.hard" for c in cases.values())
    error = cases["s05#1"].find("error")
    assert error is not None and "timeout after 120 s" in (error.get("message") or "")
    failure = cases["s21#0"].find("failure")
    assert failure is not None and failure.get("message") == "success: false"
    assert cases["s01#0"].find("failure") is None and cases["s01#0"].get("time") == "0.250"
    gate = suites["demo.gates"].find("testcase")
    assert gate is not None and gate.get("name") == "fail-under success"


# -- compare --fail-on-regression ------------------------------------------------------------
def test_compare_fails_on_a_significant_drop_of_the_primary_metric(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", set(IDS[:25]), model="openai/base")
    worse = write_run(tmp_path / "worse", set(IDS[:10]))  # 15 lost, none gained
    done = invoke("compare", base, worse, "--fail-on-regression", "--junit", tmp_path / "c.xml")
    assert done.exit_code == 1, done.stderr
    line = [ln for ln in done.stderr.splitlines() if ln.startswith("fail-on-regression")]
    assert len(line) == 1 and line[0].startswith("fail-on-regression: success 0.8333 -> ")
    assert "mcnemar-exact p <0.001 < 0.05: significantly worse" in line[0]
    root = ET.parse(tmp_path / "c.xml").getroot()
    check_junit_shape(root)
    (suite,) = root.findall("testsuite")
    assert suite.get("failures") == "1" and suite.get("tests") == "1"
    case = suite.find("testcase")
    assert case is not None and case.get("name") == "fail-on-regression success"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["model"] == "openai/new" and props["base_model"] == "openai/base"
    # the other way round is an improvement; a small drop is not significant
    assert invoke("compare", worse, base, "--fail-on-regression").exit_code == 0
    slight = write_run(tmp_path / "slight", set(IDS[:23]))
    done = invoke("compare", base, slight, "--fail-on-regression", "--json")
    assert done.exit_code == 0, done.stderr
    (gate,) = json.loads(done.stdout)["gates"]
    assert gate["status"] == "pass" and gate["p_value"] == pytest.approx(0.5)
    assert "worse, not significant" in gate["line"]
    # at a looser level the same drop fails; a named metric is gated instead
    assert invoke("compare", base, slight, "--fail-on-regression", "--alpha", "0.6"
                  ).exit_code == 1
    named = invoke("compare", base, worse, "--fail-on-regression", "--metric", "precision")
    assert named.exit_code == 1 and "fail-on-regression: precision" in named.stderr


@pytest.mark.parametrize("alpha", ["0", "1", "-0.1"])
def test_a_bad_alpha_is_one_line(tmp_path: Path, alpha: str) -> None:
    base = write_run(tmp_path / "base", set(IDS[:25]))
    one_error_line(invoke("compare", base, base, "--fail-on-regression", "--alpha", alpha),
                   "--alpha")


def test_nothing_shared_to_compare_fails_the_gate(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", set(IDS))
    broken = write_run(tmp_path / "broken", set(), errors={s: "connection refused" for s in IDS})
    done = invoke("compare", base, broken, "--fail-on-regression")
    assert done.exit_code == 1
    assert "fail-on-regression:" in done.stderr and "nothing to compare" in done.stderr


def test_junit_file_cannot_overwrite_a_run_file(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", set(IDS))
    one_error_line(invoke("report", run, "--junit", run / "samples.jsonl"), "--junit")
    assert len((run / "samples.jsonl").read_text().splitlines()) == len(IDS)


def test_a_run_where_nothing_finished_fails_its_floor(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", set(), errors={s: "connection refused" for s in IDS})
    done = invoke("report", run, "--fail-under", "success=0.1", "--json")
    assert done.exit_code == 1
    (gate,) = json.loads(done.stdout)["gates"]
    assert gate["status"] == "error" and gate["value"] is None
    assert done.stderr.strip().splitlines()[-1] == (
        "fail-under: success has no value (no finished sample has it), floor 0.10")


def test_junit_of_a_run_without_splits_is_one_suite(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    store.write_config(CONFIG)
    store.append({"id": "a", "epoch": 0, "status": "ok", "output": {},
                  "scores": {"success": True}})
    store.append({"id": "b", "epoch": 0, "status": "ok", "output": {}, "scores": {"other": 1}})
    store.append({"id": "c", "epoch": 0, "status": "ok", "output": {},
                  "scores": {"success": False}})
    out = tmp_path / "junit.xml"
    assert invoke("report", tmp_path / "run", "--junit", out).exit_code == 0
    root = ET.parse(out).getroot()
    check_junit_shape(root)
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "demo" and suite.get("time") is None  # no time recorded
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases) == ["a", "b", "c"] and cases["a"].get("classname") == "demo"
    assert cases["b"].find("skipped") is not None and cases["c"].find("failure") is not None
    assert (suite.get("skipped"), suite.get("failures")) == ("1", "1")
