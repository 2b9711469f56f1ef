"""AutoDE runs end to end against the fake OpenAI server (real SDK, real runner, no network).

The scripted assistant and user agent of ``support.autode`` play both parties, so the whole loop
is exercised: initial query -> question -> answer from the script -> call -> scored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.autode import ASK, USER_HEAD, Handler, asking_assistant, responder
from support.data import dataset, needs
from support.testing.openai_server import FakeOpenAIServer

from toolscore.benchmarks.autode.prompts import GIVE_UP
from toolscore.records import RunStore
from toolscore.runs.api import evaluate, resume
from toolscore.types import Message, ToolCall

pytestmark = needs("autode")


def run(tmp_path: Path, assistant: Handler, *, mode: str = "dynamic", limit: int = 3,
        epochs: int = 1, requests: list[dict[str, Any]] | None = None,
        **options: Any) -> dict[str, Any]:
    with FakeOpenAIServer(responder(assistant, requests)) as srv:
        run = evaluate("autode", "openai/fake", data=dataset("autode"), epochs=epochs,
                       limit=limit, max_concurrency=4, cache=None, base_url=srv.base_url,
                       out=tmp_path / "run", mode=mode,
                       **{"strict": True, "tools": "all", **options})
        return run.to_dict()


def outputs(result: dict[str, Any]) -> list[dict[str, Any]]:
    records = RunStore(result["run_dir"]).latest().values()
    assert all(r["status"] == "ok" for r in records), [r.get("error") for r in records]
    return [r["output"] for r in sorted(records, key=lambda r: (r["id"], r["epoch"]))]


def test_dynamic_dialogue_question_answer_call_scored(tmp_path: Path) -> None:
    requests: list[dict[str, Any]] = []
    result = run(tmp_path, asking_assistant, epochs=2, requests=requests)
    metrics = result["metrics"]
    assert metrics["n_cases"] == 3 and metrics["n_trials"] == 2 and metrics["errors"] == 0
    assert metrics["exact"]["f1"] == pytest.approx(100.0)
    assert metrics["exact"]["f1_std"] == pytest.approx(0.0)
    assert metrics["supplementary"]["api_accuracy"] == 1.0
    assert metrics["analyses"]["mean_dialogue_length"] == 3  # query, question, answer
    for out in outputs(result):
        assert out["state"] == "success" and out["reason"] == ""
        assert [t["role"] for t in out["content"]] == ["User", "Assistant", "User"]
        assert out["content"][1]["message"] == ASK
        assert out["assistant_turns"] == 2
    # The user agent saw the dialogue from its side: its own query as "assistant", the
    # assistant's question as "user"; no tools offered to it.
    user_requests = [r for r in requests if r["messages"][0]["content"].startswith(USER_HEAD)]
    assert len(user_requests) == 6
    roles = [m["role"] for m in user_requests[0]["messages"]]
    assert roles == ["system", "assistant", "user"] and not user_requests[0].get("tools")
    assistant_requests = [r for r in requests if r not in user_requests]
    assert all(len(r["tools"]) == 66 and r.get("tool_choice") in (None, "auto")
               for r in assistant_requests)


def test_resume_finishes_missing_trials(tmp_path: Path) -> None:
    """Trials are epochs: a run extended from 1 to 2 trials runs only the new trial."""
    with FakeOpenAIServer(responder(asking_assistant)) as srv:
        first = evaluate("autode", "openai/fake", data=dataset("autode"), limit=2, cache=None,
                         base_url=srv.base_url, out=tmp_path / "run", mode="dynamic",
                         strict=True, tools="all").to_dict()
        assert first["metrics"]["n_trials"] == 1
        store = RunStore(first["run_dir"])
        config = store.config()
        config.epochs = 2
        store.write_config(config)
        second = resume(first["run_dir"]).to_dict()
    assert second["summary"]["skipped"] == 2 and second["summary"]["run_now"] == 2
    assert second["metrics"]["n_trials"] == 2
    assert second["metrics"]["trial_sizes"] == [2, 2]


def test_static_forces_a_call_on_the_recorded_history(tmp_path: Path) -> None:
    requests: list[dict[str, Any]] = []

    def static_assistant(request: dict[str, Any]) -> Message:
        assert request["tool_choice"] == "required"
        return Message(role="assistant", tool_calls=[ToolCall(
            id="c", name="TurnOnBluetooth", arguments='{"deviceType": "watch"}')])

    result = run(tmp_path, static_assistant, mode="static", limit=2, requests=requests)
    assert len(requests) == 2  # one forced call per sample, no user agent
    outs = outputs(result)
    gold = {o["uuid"]: o for o in outs}
    first = gold["2b3a38aa-a19e-4900-bace-1331c86e2aae"]
    assert first["state"] == "success" and first["slots"] == {"deviceType": "watch"}
    assert first["content"] == [{"role": "User",
                                 "message": "Can you turn on the Bluetooth on my watch?"}]
    # Case 2 wants "mobile phone": precision/recall 0 there, 1 on case 1.
    assert result["metrics"]["exact"]["f1"] == pytest.approx(50.0)
    assert result["metrics"]["exact"]["f1_std"] is None  # one trial: no "±"


def test_give_up_ends_the_dialogue(tmp_path: Path) -> None:
    result = run(tmp_path, lambda r: Message(role="assistant", content=GIVE_UP), limit=1)
    (out,) = outputs(result)
    assert out["state"] == "failure" and out["reason"] == "Assistant gave up"
    assert out["slots"] == {} and out["assistant_turns"] == 1
    assert result["metrics"]["exact"]["f1"] == 0.0
    assert result["metrics"]["analyses"]["refusal_rate"] == 0.0


def test_unparseable_call_is_a_parse_failure(tmp_path: Path) -> None:
    bad = '{"deviceType": '
    result = run(tmp_path, lambda r: Message(role="assistant", tool_calls=[ToolCall(
        id="c", name="TurnOnBluetooth", arguments=bad)]), limit=1)
    (out,) = outputs(result)
    assert out["state"] == "failure"
    assert out["reason"] == f"Arguments parse failed: {bad}"
    assert result["metrics"]["endings"] == {"Arguments parse failed": 1}


def test_round_limit_after_eight_assistant_turns(tmp_path: Path) -> None:
    requests: list[dict[str, Any]] = []
    result = run(tmp_path, lambda r: Message(role="assistant", content=ASK), limit=1,
                 requests=requests)
    (out,) = outputs(result)
    assert out["reason"] == "Round limit reached" and out["assistant_turns"] == 8
    assert len(out["content"]) == 16  # query + 8 assistant + 7 user turns
    assert len(requests) == 15
    assert result["metrics"]["analyses"]["refusal_rate"] == 1.0
