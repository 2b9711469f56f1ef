"""The free-running protocol end to end, without a network: toolscore serves each ToolTalk easy
conversation over MCP on loopback, the reference agent (examples/mcp_agent, a separate process)
discovers the tools over MCP and runs its OpenAI-SDK tool loop against the fake OpenAI server,
whose scripted replies are the ground truth; the call log is scored and the final state checked.
Also: a scripted wrong action is caught by both checks, the protocol's label reaches run.json,
the terminal report, the HTML report's header and compare, and a failing agent endpoint is an
error, never a score."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from serve.agent_script import GroundTruthResponder
from support.data import dataset
from support.loopback_app import serving

pytest.importorskip("mcp")

from support.testing.openai_server import FakeOpenAIServer  # noqa: E402

from toolscore.benchmarks.registry import make_benchmark  # noqa: E402
from toolscore.runs.api import evaluate, load_run  # noqa: E402

AGENT = Path(__file__).resolve().parents[2] / "examples" / "mcp_agent" / "agent.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(port: int, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc is None or proc.poll() is None, "the agent exited"
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("the agent did not start")


@contextmanager
def reference_agent(base_url: str) -> Iterator[str]:
    """examples/mcp_agent/agent.py in its own process; yields its agent-http model name."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(AGENT), "--port", str(port), "--base-url",
                             base_url, "--model", "fake-model", "--api-key", "test"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(port, proc)
        yield f"agent-http:http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def easy() -> Any:
    return make_benchmark("tooltalk", dataset("tooltalk"), split="easy", embedder="hashing")


def run_agent(responder: Any, out: Path, **options: Any) -> Any:
    with FakeOpenAIServer(responder) as server, reference_agent(server.base_url) as agent:
        return evaluate("tooltalk", agent, data=dataset("tooltalk"), split="easy",
                        embedder="hashing", protocol="free-running", out=out, cache=None,
                        max_concurrency=4, **options)


def test_reference_agent_replaying_the_ground_truth_passes_everything(easy: Any,
                                                                      tmp_path: Path) -> None:
    run = run_agent(GroundTruthResponder(easy.samples(), easy.tools), tmp_path / "run")
    easy_metrics = run.metrics["easy"]
    assert run.metrics["errors"] == 0 and easy_metrics["conversations"] == 28
    assert easy_metrics["success_rate"] == 1.0 and easy_metrics["precision"] == 1.0
    assert easy_metrics["final_state_success_rate"] == 1.0
    assert easy_metrics["final_state_conversations"] == 28
    assert run.metrics["protocol"] == "free-running"
    record = next(r for r in run.records if r["id"] == "AddAlarm-easy")
    assert record["output"]["protocol"] == "free-running"
    assert record["output"]["final_state"]["rule"] == "end of conversation"
    sample = next(s for s in easy.samples() if s.id == "AddAlarm-easy")
    turn = record["output"]["turns"][0]
    assert turn["user"] == [sample.data.turns[0].text]
    assert turn["text"] == sample.data.turns[1].text and turn["stop"] == "answer"
    assert [c["tool"] for c in record["output"]["calls"]] == ["AddAlarm"]
    assert run.config.benchmark_config["protocol"] == "free-running"
    assert run.config.options["protocol"] == "free-running"
    assert run.config.model.startswith("agent-http:http://127.0.0.1:")

    # the label in every report: terminal title and notes, the HTML overview, compare
    from toolscore.report.overview import run_overview
    from toolscore.report.tables import run_title, summary_lines
    from toolscore.report.view import run_view

    config = load_run(run.path).config.to_dict()
    assert run_view(config).mode() == "free-running"
    assert "free-running mode" in run_title(config)
    assert any("not comparable" in line for line in summary_lines("tooltalk", run.metrics))
    assert run_overview(run.path, n_resamples=50)["mode"] == "free-running"
    reference = evaluate("tooltalk", "oracle", data=dataset("tooltalk"), split="easy",
                         embedder="hashing", out=tmp_path / "oracle", cache=None)
    from toolscore.report.compare import compare_runs

    compared = compare_runs(reference.path, run.path)
    assert any(w.startswith("protocol differs: reference vs free-running") and
               "not comparable" in w for w in compared["warnings"])
    assert compared["run_b"]["mode"] == "free-running"


def test_a_scripted_wrong_action_is_caught_by_both(easy: Any, tmp_path: Path) -> None:
    responder = GroundTruthResponder(easy.samples(), easy.tools)
    first = easy.samples()[0]
    turn = next(i for i, t in enumerate(first.data.turns) if t.apis)
    call = first.data.turns[turn].apis[0]
    assert easy.tools[call.name].action
    wrong = {k: v for k, v in call.arguments.items() if k not in easy.tools[call.name].hidden}
    key = next(k for k, v in wrong.items() if isinstance(v, str) and k != "session_token")
    wrong[key] = "07:30:00" if "time" in key else wrong[key] + " (changed)"
    responder.wrong[(first.id, turn, 0)] = wrong
    run = run_agent(responder, tmp_path / "run", limit=2)
    record = next(r for r in run.records if r["id"] == first.id)
    other = next(r for r in run.records if r["id"] != first.id)
    assert record["scores"]["success"] is False and record["scores"]["bad_actions"] == 1
    assert record["scores"]["final_state_success"] is False
    diff = record["output"]["final_state"]["diff"]["entries"]
    assert diff and {e["database"] for e in diff} == {"Alarm"}
    assert other["scores"]["success"] and other["scores"]["final_state_success"]


class FlakyAgent:
    """An agent endpoint (aiohttp, in a thread) that answers without calling any tool, after
    failing the first ``failures`` messages with a 503; ``down`` makes every message fail."""

    def __init__(self, failures: int = 0, down: bool = False) -> None:
        self.failures, self.down = failures, down
        self.sessions = 0
        self.port = free_port()

    def app(self) -> Any:
        from aiohttp import web

        async def create(request: web.Request) -> web.Response:
            body = await request.json()
            assert body["mcp_url"].startswith("http://127.0.0.1:") and body["system_prompt"]
            self.sessions += 1
            return web.json_response({"session": str(self.sessions)})

        async def message(request: web.Request) -> web.Response:
            if self.down or self.failures > 0:
                self.failures -= 1
                return web.json_response({"error": "overloaded"}, status=503)
            return web.json_response({"content": "I cannot do that."})

        async def delete(request: web.Request) -> web.Response:
            return web.Response(status=204)

        app = web.Application()
        app.add_routes([web.post("/episodes", create),
                        web.post("/episodes/{s}/messages", message),
                        web.delete("/episodes/{s}", delete)])
        return app

    @contextmanager
    def running(self) -> Iterator[str]:
        with serving(self.app(), self.port) as url:
            yield f"agent-http:{url}"


def test_infrastructure_failures_are_retried_then_recorded_never_scored(
        tmp_path: Path) -> None:
    flaky = FlakyAgent(failures=1)
    with flaky.running() as agent:
        run = evaluate("tooltalk", agent, data=dataset("tooltalk"), split="easy",
                       embedder="hashing", protocol="free-running", out=tmp_path / "a",
                       cache=None, limit=1, max_concurrency=1)
    (record,) = run.records
    assert record["status"] == "ok" and flaky.sessions == 2  # the episode was played again
    assert record["scores"]["success"] is False and record["scores"]["predictions"] == 0
    assert record["output"]["calls"] == [] and record["output"]["turns"][0]["text"]

    with FlakyAgent(down=True).running() as agent:
        run = evaluate("tooltalk", agent, data=dataset("tooltalk"), split="easy",
                       embedder="hashing", protocol="free-running", out=tmp_path / "b",
                       cache=None, limit=1, max_concurrency=1)
    (record,) = run.records
    assert record["status"] == "error" and "HTTP 503" in record["error"]
    assert run.metrics["errors"] == 1 and "easy" not in run.metrics

    gone = f"agent-http:http://127.0.0.1:{free_port()}"
    from toolscore.models.providers import get_model

    model = get_model(gone, retry_budget_s=0.5)
    assert model.name == gone
    with pytest.raises(Exception, match="free-running"):
        asyncio.run(model.generate([], [], None))  # type: ignore[arg-type]


def test_the_cli_asks_for_an_explicit_protocol(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from toolscore.cli import app as main

    runner = CliRunner()
    done = runner.invoke(main, ["run", "demo", "--model", "agent-http:http://127.0.0.1:9",
                                "--out", str(tmp_path / "x")])
    assert done.exit_code == 2 and "--protocol free-running" in done.output
    done = runner.invoke(main, ["run", "demo", "--model", "oracle", "--protocol",
                                "free-running", "--out", str(tmp_path / "y")])
    assert done.exit_code == 2 and "agent-http:URL" in done.output


def test_the_demo_runs_free_running_through_the_cli(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from toolscore.cli import app as main

    demo = make_benchmark("demo")
    responder = GroundTruthResponder(demo.samples(), demo.tools)
    with FakeOpenAIServer(responder) as server, reference_agent(server.base_url) as agent:
        done = CliRunner().invoke(main, ["run", "demo", "--model", agent, "--protocol",
                                         "free-running", "--embedder", "hashing",
                                         "--out", str(tmp_path / "run"),
                                         "--no-cache", "--json"])
    assert done.exit_code == 0, done.output
    doc = json.loads(done.output)
    assert doc["metrics"]["protocol"] == "free-running"
    for split in ("easy", "hard"):
        assert doc["metrics"][split]["success_rate"] == 1.0
        assert doc["metrics"][split]["final_state_success_rate"] == 1.0
