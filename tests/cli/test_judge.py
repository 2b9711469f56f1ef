"""``toolscore judge RUN_DIR``: ToolEval's pass-rate judge applied to a demo oracle run, its
judgements a nested run that re-runs from cache, with one-line errors for what cannot be."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.testing.openai_server import FakeOpenAIServer, reply_to_completion
from support.tooleval import judge_server

import toolscore
from toolscore.types import Message


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["XDG_CACHE_HOME"] = str(cwd / "xdg-cache")
    return subprocess.run([sys.executable, "-m", "toolscore.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "run"
    toolscore.evaluate("demo", "oracle", embedder="hashing", cache=None, out=out)
    return out




def test_judge_a_demo_run_then_again_from_cache(demo_run: Path, tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    with FakeOpenAIServer(judge_server(seen)) as srv:
        args = ("judge", str(demo_run), "--model", "openai/fake", "--base-url", srv.base_url,
                "--votes", "3", "--mode", "stable", "--json")
        first = cli(*args, cwd=tmp_path)
        assert first.returncode == 0, first.stderr[-2000:]
        asked = len(seen)
        again = cli(*args, cwd=tmp_path)
        assert again.returncode == 0, again.stderr[-2000:]
        assert len(seen) == asked > 0  # finished judgements are kept: nothing asked again
        shown = cli("judge", str(demo_run), "--model", "openai/fake", "--base-url",
                    srv.base_url, "--votes", "3", "--mode", "stable", cwd=tmp_path)
    doc = json.loads(first.stdout)
    out = demo_run / "judgements" / "tooleval-pass"
    assert Path(doc["run_dir"]) == out and (out / "run.json").is_file()
    metrics = doc["metrics"]
    assert metrics["overall"]["queries"] == 6 and metrics["overall"]["passed"] == 5
    assert metrics["overall"]["pass_rate"] == pytest.approx(5 / 6)
    assert json.loads(again.stdout)["metrics"] == metrics
    assert doc["config"]["options"]["answers"] == str(demo_run.resolve())
    records = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    assert {r["id"] for r in records} == {f"demo/{r['id']}" for r in toolscore.load_run(
        demo_run).records}
    assert all(v["raw"] for r in records for j in r["output"]["judgements"]
               for v in j["verdicts"])
    # the judged run is untouched and its judgements read as a run
    assert toolscore.load_run(demo_run).metrics == json.loads(
        (demo_run / "scores.json").read_text())
    assert toolscore.load_run(out).metrics == metrics
    assert shown.returncode == 0 and "83.3%" in shown.stdout and str(out) in shown.stdout


def test_judge_errors_are_one_line_exit_2(demo_run: Path, tmp_path: Path) -> None:
    done = cli("judge", str(tmp_path / "nope"), "--model", "openai/fake", cwd=tmp_path)
    assert done.returncode == 2 and "not a run directory" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    done = cli("judge", str(demo_run), "--judge", "acs-verify", "--model", "openai/fake",
               cwd=tmp_path)
    assert done.returncode == 2 and "cannot be applied" in done.stderr
    done = cli("judge", str(demo_run), cwd=tmp_path)
    assert done.returncode == 2 and "--model" in done.stderr
    seen: list[dict[str, Any]] = []
    with FakeOpenAIServer(judge_server(seen)) as srv:
        # stable mode: what this server answers (the reference mode's function calls are not,
        # and each unanswered judgement was retried for the whole 120 s budget)
        base = ("judge", str(demo_run), "--model", "openai/fake", "--base-url", srv.base_url,
                "--name", "twice", "--mode", "stable")
        assert cli(*base, "--votes", "1", cwd=tmp_path).returncode == 0
        other = cli(*base, "--votes", "2", cwd=tmp_path)
    assert other.returncode == 2 and "other settings (votes)" in other.stderr


def test_judgements_that_fail_exit_3_and_the_same_command_retries_them(
        demo_run: Path, tmp_path: Path) -> None:
    """A judge endpoint refusing every request (HTTP 400, not retried): each judgement is an
    error, kept and left out of the pass rate, and the command says so with exit code 3, as
    `run` does; once the endpoint answers, the same command judges exactly those. Another
    endpoint for the same judgements is refused rather than silently replaced by the stored
    one."""
    args = ("judge", str(demo_run), "--model", "openai/fake", "--mode", "stable", "--name",
            "flaky", "--json")
    with FakeOpenAIServer(judge_server([]), fault_plan=dict.fromkeys(range(9), "400")) as srv:
        url = srv.base_url
        failed = cli(*args, "--base-url", url, cwd=tmp_path)
    assert failed.returncode == 3, failed.stderr[-2000:]
    doc = json.loads(failed.stdout)
    assert doc["summary"]["errors_now"] == 6 and doc["metrics"]["overall"]["evaluated"] == 0
    assert "6 of 6 judgements ended in an infrastructure error" in failed.stderr
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    with FakeOpenAIServer(judge_server([]), port=port) as srv:  # the same endpoint, healed
        assert srv.base_url == url
        again = cli(*args, "--base-url", url, cwd=tmp_path)
        elsewhere = cli(*args, "--base-url", url + "/other", cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    doc = json.loads(again.stdout)
    assert doc["summary"]["run_now"] == 6
    assert doc["metrics"]["overall"]["pass_rate"] == pytest.approx(5 / 6)
    assert elsewhere.returncode == 2 and "other settings (base_url)" in elsewhere.stderr


def test_judge_config_names_the_judgements(demo_run: Path, tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    with FakeOpenAIServer(judge_server(seen)) as srv:
        (tmp_path / "j.yaml").write_text(f"name: strict-pass\nkind: tooleval-pass\nmodel: "
                                         f"openai/fake\nbase_url: {srv.base_url}\nvotes: 1\n"
                                         "template: Grade strictly.\n")
        done = cli("judge", str(demo_run), "--judge-config", "j.yaml", "--mode", "stable",
                   "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    assert Path(doc["run_dir"]) == demo_run / "judgements" / "strict-pass"
    assert doc["metrics"]["judge"].startswith("strict-pass (tooleval-pass, openai/fake")
    assert doc["metrics"]["votes"] == 1 and len(seen) > 0
    assert {r["messages"][0]["content"] for r in seen} == {"Grade strictly."}


def test_judge_a_demo_run_in_the_reference_mode(demo_run: Path, tmp_path: Path) -> None:
    """The default mode asks ToolBench's questions by function calls at temperature 0.2, shown
    the raw Finish arguments: the same 5 of 6 pass as with the stable prompts above."""
    from toolscore.types import ToolCall

    seen: list[dict[str, Any]] = []

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        function = request["tools"][0]["function"]["name"]
        shown = request["messages"][-1]["content"]  # the question (no system prompt)
        args = ({"task_status": "Solvable"} if function == "check_task_solvable" else
                {"answer_status": "Unsolved" if "Deleted" in shown else "Solved"})
        call = ToolCall("c", function, json.dumps({"reason": "r", **args}))
        return reply_to_completion(Message(role="assistant", tool_calls=[call]))

    with FakeOpenAIServer(respond) as srv:
        done = cli("judge", str(demo_run), "--model", "openai/fake", "--base-url", srv.base_url,
                   "--votes", "2", "--name", "ref", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    metrics = json.loads(done.stdout)["metrics"]
    assert metrics["mode"] == "reference" and metrics["overall"]["pass_rate"] == pytest.approx(
        5 / 6)
    assert {r["temperature"] for r in seen} == {0.2}
    first = next(r for r in seen if r["tools"][0]["function"]["name"] == "check_answer_status")
    assert '"return_type": "give_answer"' in first["messages"][-1]["content"]


def test_tooleval_passrate_with_failed_judgements_exits_3(demo_run: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer(judge_server([]), fault_plan=dict.fromkeys(range(9), "400")) as srv:
        done = cli("tooleval", "passrate", str(demo_run), "--judge", "openai/fake",
                   "--base-url", srv.base_url, "--mode", "stable", "--votes", "1", "--no-cache",
                   "--out", str(tmp_path / "judged"), "--json", cwd=tmp_path)
    assert done.returncode == 3, done.stderr[-2000:]
    assert json.loads(done.stdout)["overall"]["errors"] == 6
    assert "6 of 6 judgements ended in an infrastructure error" in done.stderr
    assert "the same command again retries exactly those" in done.stderr
