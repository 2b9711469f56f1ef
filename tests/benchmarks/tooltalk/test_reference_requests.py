"""The requests ToolTalk's own runner sends a model (``tests/fixtures/tooltalk_requests``, made
by ``make_fixtures.py`` there), and the parts of them toolscore's reference protocol already
sends alike.

The first group checks that the fixtures are what they claim: every evaluated turn of the
released data, the reference's own tool documents and system prompt (as ``openai_docs.json``
holds them), requests placed where the policy's replies put them. The second runs toolscore's
default mode against the same scripted replies and compares (``perf/tooltalk_requests.py``
prints the whole table): every request of the reference's is sent, none other, and they are
alike in every category: API shape, system prompt, documents, sampling fields, ground truth,
the echo of the model's own calls, and the tool results it is shown, whatever arguments the
model sends.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.data import dataset, needs
from support.testing.openai_server import FakeOpenAIServer
from support.testing.request_diff import CATEGORIES, compare
from support.testing.tooltalk_requests import (
    LOOP_CALLS,
    POLICIES,
    PolicyResponder,
    decode_requests,
    group_requests,
    is_call,
    load_turns,
    loop_subset,
    optional_arguments,
    where,
)

from toolscore.runs.api import evaluate

pytestmark = needs("tooltalk", "tooltalk-reference")
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tooltalk_requests"


def _load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def turns() -> dict[str, dict[str, Any]]:
    return load_turns(dataset("tooltalk"))


@pytest.fixture(scope="module")
def docs() -> dict[str, Any]:
    return json.loads((dataset("tooltalk-reference") / "openai_docs.json").read_text())


def test_fixtures_are_small() -> None:
    assert sum(p.stat().st_size for p in FIXTURES.glob("*.json")) < 5_000_000
    assert {p.stem for p in FIXTURES.glob("*.json")} == set(POLICIES)


@pytest.mark.parametrize("policy", POLICIES)
def test_fixture_is_well_formed(policy: str, turns: dict[str, Any], docs: dict[str, Any]) -> None:
    fixture = _load(f"{policy}.json")
    assert fixture["policy"] == policy
    assert fixture["made_with"]["client"] == "openai==0.28.1"
    # every evaluated turn (a subset of the conversations for "loop")
    expected = {t["conversation"] for t in turns.values()
                if policy != "loop" or loop_subset(t)}
    requests = decode_requests(fixture)
    assert set(requests) == expected
    by_turn: dict[tuple[str, int], list[int]] = {}
    for name, items in requests.items():
        conv = next(t for t in turns.values() if t["conversation"] == name)
        meta = json.loads((dataset("tooltalk") / ("easy" if conv["split"] == "easy"
                                                  else "tooltalk") / name).read_text())
        for item in items:
            body = item["body"]
            # the reference sends the model, the messages and the legacy functions: nothing else
            assert set(body) == {"model", "messages", "functions"}
            assert body["functions"] == docs["docs"]  # its own documents, in its own order
            system = docs["system_prompt"].format(
                location=meta["metadata"]["location"], timestamp=meta["metadata"]["timestamp"],
                username=meta["metadata"].get("username"))
            assert body["messages"][0] == {"role": "system", "content": system}
            turn, step = where(body, turns)
            assert (turn["conversation"], turn["turn"], step) == (name, item["turn"],
                                                                  item["step"])
            by_turn.setdefault((name, item["turn"]), []).append(step)
            for m in body["messages"][1:]:
                if is_call(m):  # one legacy call per message, its text dropped
                    assert set(m) == {"role", "content", "function_call"}
                    assert m["content"] is None
                    json.loads(m["function_call"]["arguments"])  # always JSON ("null" if bad)
                elif m["role"] == "function":
                    assert set(m) == {"role", "name", "content"}
                    assert set(json.loads(m["content"])) == {"response", "exception"}
                else:
                    assert set(m) == {"role", "content"} and isinstance(m["content"], str)
    gt = {(t["conversation"], t["turn"]): len(t["apis"]) for t in turns.values()}
    for key, steps in by_turn.items():
        assert steps == list(range(len(steps)))  # one request per call, then the answer
        calls = {"text": 0, "truth": gt[key], "notoken": gt[key], "wrong": 2,
                 "malformed": gt[key] + 1, "loop": LOOP_CALLS}.get(policy, gt[key])
        assert len(steps) == calls + 1


@pytest.mark.parametrize("policy", POLICIES)
def test_toolscore_sends_what_the_reference_sends(policy: str, turns: dict[str, Any],
                                                  docs: dict[str, Any], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "fake")
    responder = PolicyResponder(policy, turns, optional_arguments(docs["docs"]))
    with FakeOpenAIServer(responder, model="fake-model") as server:
        evaluate("tooltalk", "openai/fake-model", base_url=server.base_url, cache=None,
                 out=tmp_path / "run", split="all", tools="all", embedder="hashing",
                 max_concurrency=4, call_api="functions")  # the fake stands in for OpenAI
        received = list(server.received)
    assert responder.unknown == 0
    ours = group_requests(received, turns, loop_subset if policy == "loop" else None)
    reference = decode_requests(_load(f"{policy}.json"))
    counts = compare(reference, ours, {}, 0)
    assert counts["only reference"] == counts["only toolscore"] == 0
    assert counts["paired"] == counts["reference"] == counts["toolscore"] > 0
    for category in CATEGORIES:
        assert counts[category] == 0, category
