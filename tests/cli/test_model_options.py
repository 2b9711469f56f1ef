"""`toolscore run` model arguments: --temperature, --max-tokens, --seed, --reasoning-effort and
-M KEY=VALUE reach the endpoint and run.json; a benchmark's own option of the same name keeps
its flag; bad ones are one-line usage errors (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from support.testing.openai_server import FakeOpenAIServer

from toolscore.cli import app


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_flags_and_model_args_reach_the_endpoint_and_run_json(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer() as srv:
        done = invoke("run", "demo", "-m", "openai/fake", "--base-url", srv.base_url,
                      "--no-cache", "--limit", "1", "--embedder", "hashing", "--out", str(out),
                      "--temperature", "0.5", "--reasoning-effort", "low",
                      "--max-tokens", "700", "-M", "top_p=0.9", "-M", 'extra_body={"x": 1}',
                      "-M", "max-completion-tokens=900", "--json")
        assert done.exit_code == 0, done.output
        assert srv.received
        for sent in srv.received:
            assert (sent["temperature"], sent["reasoning_effort"], sent["top_p"],
                    sent["x"]) == (0.5, "low", 0.9, 1)
            # demo's own --max-tokens is the benchmark's; -M overrides it on every call
            assert sent["max_tokens"] == 900
    stored = json.loads((out / "run.json").read_text())
    assert stored["model_args"] == {"temperature": 0.5, "max_tokens": 900, "top_p": 0.9,
                                    "reasoning_effort": "low", "extra_body": {"x": 1}}
    assert stored["options"]["max_tokens"] == 700


def test_a_benchmark_option_of_the_same_name_keeps_its_flag() -> None:
    tooltalk = invoke("run", "tooltalk", "--help").output
    autode = invoke("run", "autode", "--help").output
    assert "Sampling temperature of every model call" in tooltalk  # generic
    assert "Token limit of each model reply (default:" in tooltalk  # ToolTalk's own
    assert "Assistant sampling temperature" in autode  # AutoDE's own
    assert "Sampling temperature of every model call" not in autode
    for text in (tooltalk, autode):
        assert "--reasoning-effort" in text and "--model-arg" in text


def _one_line_error(done, message: str) -> None:
    assert done.exit_code == 2, done.output
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.output


def test_bad_model_arguments_are_usage_errors(tmp_path: Path) -> None:
    base = ("run", "demo", "-m", "oracle", "--no-cache", "--embedder", "hashing",
            "--out", str(tmp_path / "never"))
    _one_line_error(invoke(*base, "-M", "top_p"), "-M 'top_p': expected KEY=VALUE")
    _one_line_error(invoke(*base, "-M", "messages=[]"), "'messages': set by the benchmark")
    _one_line_error(invoke(*base, "-M", "top_p=2"), "'top_p': 2 must be between")
    _one_line_error(invoke(*base, "--temperature", "1", "-M", "temperature=1"),
                    "--temperature and -M temperature: given twice")
    assert not (tmp_path / "never").exists()


def test_resume_takes_model_arguments_from_run_json(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = invoke("run", "demo", "-m", "oracle", "--no-cache", "--embedder", "hashing",
                  "--limit", "1", "--out", str(out), "-M", "seed=4")
    assert done.exit_code == 0, done.output
    assert json.loads((out / "run.json").read_text())["model_args"] == {"seed": 4}
    again = invoke("run", "demo", "--resume", str(out), "--temperature", "1")
    _one_line_error(again, "model arguments come from the run's run.json on --resume")
