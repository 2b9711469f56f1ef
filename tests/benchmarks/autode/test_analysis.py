"""AutoDE analyses between runs: redundant questions (the heuristic and its documented edges),
the static-vs-dynamic F1 gap from released files and run directories, and ``autode gap``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import data
from support.cli import toolscore
from support.data import dataset, needs

from toolscore.benchmarks.autode.analysis import (
    gap,
    load_run_dialogues,
    redundant_questions,
    slot_keywords,
)
from toolscore.benchmarks.autode.apidocs import ApiDoc
from toolscore.benchmarks.autode.asking import asking_sentences
from toolscore.benchmarks.autode.data import Turn, UserScript
from toolscore.records import RunStore
from toolscore.types import ToolSpec

RESULTS = data.path("autode") / "results"
PROPS = {
    "deviceType": {"type": "string", "description": "the device, including phone or watch"},
    "roomType": {"type": "string", "description": "the room where the device is"},
    "appName": {"type": "string", "description": "the app that plays the media"},
    "startDate": {"type": "string", "description": "first day"},
    "endDate": {"type": "string", "description": "last day"},
}
DOC = ApiDoc("d", "s", "f", ToolSpec("PlayMedia", "Play media.",
                                     {"type": "object", "properties": PROPS}))
SLOTS = {"deviceType": "TV", "roomType": "bedroom", "appName": "Netflix"}


def turns(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"role": role, "message": text} for role, text in pairs]


def test_keywords_are_distinctive_and_skip_example_values() -> None:
    assert slot_keywords("deviceType", PROPS) == {"device"}  # not "phone", "watch"
    assert "device" not in slot_keywords("roomType", PROPS)  # shared with deviceType
    assert slot_keywords("startDate", PROPS) == {"start", "first"}  # "date" is shared


def test_asking_sentences() -> None:
    text = "Thanks for the room type. Which device is it? Please provide the app name."
    assert asking_sentences(text) == ["Which device is it?", "Please provide the app name."]
    assert asking_sentences("I will turn it on now.") == []


def test_redundant_question_detected() -> None:
    dialogue = turns(("User", "Play something on the TV in my bedroom."),
                     ("Assistant", "Sure. What type of device should I use?"),
                     ("User", "The TV."),
                     ("Assistant", "Which app should play it?"))
    assert redundant_questions(dialogue, SLOTS, DOC) == (2, 1)


def test_fair_questions_confirmations_and_statements_are_not_redundant() -> None:
    dialogue = turns(("User", "Play something in my bedroom."),
                     ("Assistant", "Which device should I use?"),  # not given yet
                     ("User", "TV"),
                     ("Assistant", "Got the device type. Do you mean the device TV?"),  # confirms
                     ("Assistant", "I have the device and room. Which app?"))  # not given
    assert redundant_questions(dialogue, SLOTS, DOC) == (3, 0)


def test_booleans_and_one_character_values_are_never_checked() -> None:
    props = {"loud": {"type": "boolean", "description": "loud sound"},
             "level": {"type": "string", "description": "volume level"}}
    doc = ApiDoc("d", "s", "f", ToolSpec("Vol", "v", {"type": "object", "properties": props}))
    dialogue = turns(("User", "Level 2, loud, true"), ("Assistant", "Which level? Loud?"))
    assert redundant_questions(dialogue, {"loud": True, "level": "2"}, doc) == (1, 0)


def script(uuid: str, slots: dict[str, Any]) -> UserScript:
    return UserScript(uuid, "c", "b", "p", (Turn("User", "q"),), "PlayMedia", slots)


def fake_run(path: Path, mode: str, f1: dict[str, float]) -> Path:
    store = RunStore(path)
    store.write_config({"benchmark": "autode", "model": "openai/x",
                        "benchmark_config": {"mode": mode}, "request": {}})
    for uuid, value in f1.items():
        store.append({"id": uuid, "epoch": 0, "status": "ok", "scores": {"f1": value},
                      "output": {"content": turns(("User", "TV please"),
                                                  ("Assistant", "Which device?"))}})
    return path


def test_gap_between_two_run_directories(tmp_path: Path) -> None:
    scripts = [script("a", SLOTS), script("b", SLOTS), script("c", SLOTS)]
    static = load_run_dialogues(fake_run(tmp_path / "s", "static", {"a": 1.0, "b": 1.0}), [])
    dynamic = load_run_dialogues(fake_run(tmp_path / "d", "dynamic",
                                          {"a": 0.5, "b": 1.0, "c": 0.0}), [])
    result = gap(static, dynamic, scripts, [DOC], n_resamples=100)
    assert result["n_cases"] == 2 and result["gap"] == pytest.approx(25.0)
    assert [c["gap"] for c in result["cases"]] == [50.0, 0.0]
    assert result["a_better"] == 1 and result["ties"] == 1
    assert result["a"]["label"] == "openai/x (static)"
    assert result["a"]["redundant_questions"] == 2 and result["a"]["redundant_rate"] == 1.0
    low, high = result["gap_ci"]
    assert low <= result["gap"] <= high


@needs("autode")
def test_gap_cli_on_released_static_and_dynamic_runs(tmp_path: Path) -> None:
    static = RESULTS / "a_gpt35_static_v2.jsonl"
    dynamic = RESULTS / "u_llama7b_a_gpt35_complementary.jsonl"
    done = toolscore("autode", "gap", str(static), str(dynamic), "--resamples", "100",
                     "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    # The overall gap is the difference of the published Table 1 F1s (93.86 - 75.47).
    assert round(doc["a"]["f1"], 2) == 93.86 and round(doc["b"]["f1"], 2) == 75.47
    assert doc["gap"] == pytest.approx(doc["a"]["f1"] - doc["b"]["f1"])
    assert doc["n_cases"] == 276 and len(doc["cases"]) == 276
    assert 0 < doc["b"]["redundant_questions"] < doc["b"]["questions"]
    text = toolscore("autode", "gap", str(static), str(dynamic), "--resamples", "50",
                     "--top", "3", cwd=tmp_path)
    assert text.returncode == 0 and "gap A - B over 276 cases: +18.39" in text.stdout
    missing = toolscore("autode", "gap", str(static), str(tmp_path / "nope.jsonl"),
                        cwd=tmp_path)
    assert missing.returncode == 2 and "nope.jsonl: file not found" in missing.stderr


def bluetooth(request: dict[str, Any]) -> dict[str, Any]:
    """Assistant: asks which device (already said in the query), then calls. User: "watch"."""
    from support.testing.openai_server import prompt_tokens, reply_to_completion

    from toolscore.types import Message, ToolCall
    from toolscore.users.llm import USER_AGENT_PROMPT

    messages = request["messages"]
    if messages[0]["content"].startswith(USER_AGENT_PROMPT.split("\n")[0]):
        msg = Message(role="assistant", content="My watch.")
    elif len(messages) == 2:
        msg = Message(role="assistant", content="Which device should I turn Bluetooth on for?")
    else:
        msg = Message(role="assistant", tool_calls=[ToolCall("c", "TurnOnBluetooth",
                                                             '{"deviceType": "watch"}')])
    return reply_to_completion(msg, prompt_tokens=prompt_tokens(request))


@needs("autode")
def test_score_run_dir_reports_redundant_questions(tmp_path: Path) -> None:
    from support.testing.openai_server import FakeOpenAIServer

    from toolscore.runs.api import evaluate

    with FakeOpenAIServer(bluetooth) as srv:
        result = evaluate("autode", "openai/fake", data=dataset("autode"), limit=1, cache=None,
                          base_url=srv.base_url, out=tmp_path / "run", mode="dynamic",
                          strict=True, tools="all").to_dict()
    analyses = result["metrics"]["analyses"]
    assert analyses["questions"] == 1 and analyses["redundant_questions"] == 1
    assert analyses["redundant_question_rate"] == 1.0
    done = toolscore("score", str(tmp_path / "run"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "redundant questions (asked for a value already given): 1 of 1 questions" in (
        " ".join(done.stdout.split()))


@needs("autode")
def test_released_file_rescore_reports_redundant_questions(tmp_path: Path) -> None:
    done = toolscore("score", "autode", "--predictions",
                     str(RESULTS / "u_llama7b_a_gpt35_complementary.jsonl"), "--json",
                     cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    stats = json.loads(done.stdout)["results"][0]["analysis"]["redundant_questions"]
    assert 0 < stats["redundant_questions"] < stats["questions"]
    assert stats["redundant_rate"] == stats["redundant_questions"] / stats["questions"]
