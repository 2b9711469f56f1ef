"""AutoDE through the ``toolscore`` command: rescoring released files, agreement between
methods, and a human-mode run driven through stdin (subprocess, fake OpenAI server)."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
from pathlib import Path
from typing import Any

from support import data
from support.cli import json_doc
from support.cli import toolscore as _toolscore
from support.data import dataset, needs
from support.testing.openai_server import FakeOpenAIServer, prompt_tokens, reply_to_completion

from toolscore.benchmarks.autode.benchmark import AutoDEBenchmark
from toolscore.benchmarks.autode.rescore import TABLE1_RUNS
from toolscore.models import ModelClient, get_model
from toolscore.records import RunStore
from toolscore.runs.runner import RunOptions, execute_run
from toolscore.types import Message, ToolCall
from toolscore.users import HumanUser

RESULTS = data.path("autode") / "results"
pytestmark = needs("autode")
ASK = "Which device should I turn Bluetooth on for?"


def toolscore(*args: str, cwd: Path, stdin: str | None = None
              ) -> subprocess.CompletedProcess[str]:
    return _toolscore(*args, cwd=cwd, stdin=stdin, env={"OPENAI_API_KEY": "test-key"})


def test_score_predictions_reproduces_table1_cell(tmp_path: Path) -> None:
    path = RESULTS / f"{TABLE1_RUNS['llama7b']['claude_instant_1_2']}.jsonl"
    doc = json_doc(toolscore("score", "autode", "--predictions", str(path), "--json",
                             cwd=tmp_path))
    (result,) = doc["results"]
    exact = result["exact"]
    got = [f"{exact[k]:.2f}" for k in ("precision", "recall", "f1", "f1_std")]
    assert got == ["86.32", "83.69", "84.38", "0.64"]
    text = toolscore("score", "autode", "--predictions", str(path), cwd=tmp_path)
    assert text.returncode == 0 and "84.38" in text.stdout and "0.64" in text.stdout
    # --out keeps each file's scores beside the printed document
    written = json_doc(toolscore("score", "autode", "--predictions", str(path), "--out",
                                 str(tmp_path / "scored"), "--json", cwd=tmp_path))
    (target,) = written["out"]
    assert Path(target) == tmp_path / "scored" / f"{path.name}.scores.json"
    assert json.loads(Path(target).read_text()) == result


def test_agree_static_vs_human_reproduces_table2(tmp_path: Path) -> None:
    static = [str(RESULTS / f"{stem}.jsonl") for stem in TABLE1_RUNS["static"].values()]
    human = [str(RESULTS / f"{TABLE1_RUNS['human'][a]}.jsonl") for a in TABLE1_RUNS["static"]]
    against = [arg for path in human for arg in ("--against", path)]
    doc = json_doc(toolscore("agree", *static, *against, "--resamples", "200", "--json",
                             cwd=tmp_path))
    system = doc["system"]
    assert round(system["pearson"], 4) == 0.8813 and round(system["icc3"], 4) == 0.8813
    low, high = system["pearson_ci"]
    assert low <= system["pearson"] <= high
    assert [row["assistant"] for row in doc["sample"]] == list(TABLE1_RUNS["static"])
    assert doc["n_cases"] == 276


def test_agree_rejects_unpaired_runs(tmp_path: Path) -> None:
    path = str(RESULTS / f"{TABLE1_RUNS['static']['gpt35']}.jsonl")
    done = toolscore("agree", path, path, "--against", path, cwd=tmp_path)
    assert done.returncode == 2 and "pair them" in done.stderr


def human_mode_responder(request: dict[str, Any]) -> dict[str, Any]:
    """The assistant asks once, then turns Bluetooth on for whatever the person answered."""
    messages = request["messages"]
    if len(messages) == 2:
        msg = Message(role="assistant", content=ASK)
    else:
        args = json.dumps({"deviceType": messages[-1]["content"]})
        msg = Message(role="assistant", tool_calls=[ToolCall("c", "TurnOnBluetooth", args)])
    return reply_to_completion(msg, prompt_tokens=prompt_tokens(request))


def test_human_mode_through_stdin(tmp_path: Path) -> None:
    with FakeOpenAIServer(human_mode_responder) as srv:
        done = toolscore("run", "autode", "--mode", "human", "--strict", "--model", "openai/fake",
                         "--base-url", srv.base_url, "--limit", "1", "--no-cache", "--json",
                         "--out", str(tmp_path / "run"), cwd=tmp_path, stdin="\nwatch\n")
    doc = json_doc(done)
    assert "Character: Bella" in done.stderr and f"assistant> {ASK}" in done.stderr
    assert doc["metrics"]["exact"]["f1"] == 100.0 and doc["metrics"]["mode"] == "human"
    (record,) = RunStore(tmp_path / "run").latest().values()
    assert record["output"]["content"][-1] == {"role": "User", "message": "watch"}
    assert record["output"]["user"] == {"kind": "human"}


def test_human_quits_from_an_injected_stream(tmp_path: Path) -> None:
    shown = io.StringIO()
    bench = AutoDEBenchmark(dataset("autode"), mode="human", strict=True,
                            human=HumanUser(io.StringIO("/quit\n"), shown))
    with FakeOpenAIServer(human_mode_responder) as srv:
        client = ModelClient(get_model("openai/fake", base_url=srv.base_url, api_key="k"))
        store = RunStore(tmp_path / "run")
        summary = asyncio.run(execute_run(bench, client, store,
                                          RunOptions(limit=1, max_concurrency=1,
                                                     progress=False)))
    assert summary.errors == 0
    (record,) = store.latest().values()
    assert record["output"]["reason"] == "User ended the dialogue"
    assert record["scores"]["f1"] == 0.0 and ASK in shown.getvalue()

