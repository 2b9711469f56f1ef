"""The built-in demo: its data loads in ToolTalk's format, every ground-truth call reproduces
exactly under the ToolTalk protocol, its tools are documented, and its text is our own."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from support.data import dataset, needs

from toolscore.benchmarks import demo
from toolscore.benchmarks.demo.plugins import ALL_TOOLS, PLUGINS
from toolscore.benchmarks.tooltalk.data import (
    Conversation,
    load_conversations,
    load_databases,
    make_environment,
)
from toolscore.env.environment import Environment
from toolscore.env.tool import CallRecord, MatchContext

ROOT = demo.data_dir()
CONVERSATION_KEYS = {"name", "conversation_id", "suites_used", "apis_used", "scenario", "user",
                     "metadata", "conversation"}
TOOLS = {t.name: t for t in ALL_TOOLS}


def _words_similarity(a: Any, b: Any) -> float:
    """A stand-in embedder: word-set overlap, enough to tell a paraphrase from a different text."""
    if not isinstance(a, str) or not isinstance(b, str):
        return 0.0
    x, y = set(a.lower().split()), set(b.lower().split())
    return len(x & y) / len(x | y) if x | y else 1.0


CTX = MatchContext(similarity=_words_similarity)


def conversations(split: str = "all") -> list[Conversation]:
    """The demo conversations, read by ToolTalk's own loader (the demo ships no loader)."""
    return load_conversations(ROOT, split)  # type: ignore[arg-type]


def environment(conversation: Conversation) -> Environment:
    return make_environment(conversation, load_databases(ROOT), PLUGINS)


def ground_truth(conversation: Conversation) -> list[list[CallRecord]]:
    """The ground-truth calls of each assistant turn, in order."""
    return [turn.apis for turn in conversation.turns if turn.role == "assistant"]


def by_name(name: str) -> Conversation:
    return next(c for c in conversations() if c.name == name)


# -- data ------------------------------------------------------------------------------------------
def test_files_are_in_tooltalk_format() -> None:
    files = sorted(ROOT.glob("easy/*.json")) + sorted(ROOT.glob("tooltalk/*.json"))
    assert len(files) == 6
    for path in files:
        raw = json.loads(path.read_text())
        assert set(raw) == CONVERSATION_KEYS, path.name
        assert raw["name"] == path.stem
        for turn in raw["conversation"]:
            assert turn["role"] in ("user", "assistant") and turn["text"]
            assert ("apis" in turn) == (turn["role"] == "assistant")
            for api in turn.get("apis", []):
                assert set(api) == {"request", "response", "exception"}
                assert set(api["request"]) == {"api_name", "parameters"}


def test_tooltalk_loader_reads_the_demo_folder() -> None:
    easy, hard = conversations("easy"), conversations("hard")
    assert len(easy) == 4 and len(hard) == 2
    assert [c.name for c in conversations()] == [c.name for c in easy + hard]
    for conv in easy + hard:
        assert conv.name.startswith("demo-")
        assert set(conv.metadata) >= {"location", "timestamp"}
        datetime.strptime(conv.metadata["timestamp"], "%Y-%m-%d %H:%M:%S")
        assert {"username", "email", "phone", "name", "password"} <= set(conv.user)
        assert "session_token" not in conv.user  # nothing in the demo needs a login
        assert conv.apis_used == list(dict.fromkeys(c.name for c in conv.calls))
        assert set(conv.suites_used) == {TOOLS[c.name].plugin for c in conv.calls}
    assert all(len(c.calls) == 1 for c in easy)
    assert all(len(c.calls) == 2 for c in hard)
    ids = [c.conversation_id for c in conversations()]
    assert len(set(ids)) == len(ids)


def test_databases_belong_to_plugins() -> None:
    dbs = load_databases(ROOT)
    assert set(dbs) == {"Notes", "Shopping"}
    assert {d for p in PLUGINS for d in p.databases} == set(dbs)
    for key, note in dbs["Notes"].items():
        assert note["note_id"] == key
    for key, item in dbs["Shopping"].items():
        assert item["item_id"] == key


# -- ground truth reproduces exactly ---------------------------------------------------------------
@pytest.mark.parametrize("conversation", conversations(), ids=lambda c: c.name)
def test_every_ground_truth_call_reproduces(conversation: Conversation) -> None:
    """The ToolTalk protocol: reset before each assistant turn, replay earlier turns' calls, then
    this turn's calls in order; each must return exactly what the file recorded."""
    env = environment(conversation)
    turns = ground_truth(conversation)
    for k, calls in enumerate(turns):
        env.reset()
        for earlier in turns[:k]:
            for call in earlier:
                env.call(call.name, call.arguments)
        for truth in calls:
            got = env.call(truth.name, truth.arguments)
            assert (got.response, got.exception) == (truth.response, truth.exception), truth.name
            assert got.arguments == truth.arguments
            # a ground-truth call matches itself under its tool's equivalence rule
            assert TOOLS[truth.name].equivalent(got, truth, CTX)


def test_make_environment_uses_the_conversation_clock() -> None:
    conv = by_name("demo-create-note")
    env = environment(conv)
    note_id = env.call("CreateNote", {"title": "t", "text": "x"}).response["note_id"]
    assert env.db("Notes")[note_id]["created"] == conv.metadata["timestamp"]


# -- tools -----------------------------------------------------------------------------------------
def test_tools_are_small_documented_and_used() -> None:
    assert 6 <= len(ALL_TOOLS) <= 8 and len(TOOLS) == len(ALL_TOOLS)
    used = {c.name for conv in conversations() for c in conv.calls}
    assert used == set(TOOLS)
    for t in ALL_TOOLS:
        assert t.description and not t.auth and t.equivalence is not None
        assert t.parameters["type"] == "object"
        for name, prop in t.parameters["properties"].items():
            assert prop.get("description"), f"{t.name}.{name}"
            assert "type" in prop
    assert {t.name for t in ALL_TOOLS if t.action} == {"CreateNote", "DeleteNote", "AddItem"}
    # every token of the prompt costs time on a small CPU model
    assert len(json.dumps([t.spec.to_openai() for t in ALL_TOOLS])) < 2500


def test_tool_errors_are_messages() -> None:
    env = environment(conversations()[0])
    cases = {
        ("DeleteNote", "note_id", "n-0000"): "Note n-0000 not found",
        ("ConvertUnits", "to_unit", "kg"): "Cannot convert length to mass",
        ("ConvertUnits", "to_unit", "parsecs"): "Unknown unit: parsecs",
        ("Calculate", "expression", "1 / 0"): "Division by zero",
        ("Calculate", "expression", "__import__('os')"): "Only numbers",
        ("Calculate", "expression", "9 ** 9 ** 9"): "Number too large",
        ("Calculate", "expression", "2 +"): "Invalid expression",
        ("AddItem", "quantity", 0): "quantity must be",
        ("CreateNote", "title", ""): "title must be",
    }
    base = {"DeleteNote": {}, "ConvertUnits": {"value": 1, "from_unit": "mi"},
            "Calculate": {}, "AddItem": {"name": "tea"}, "CreateNote": {"text": "x"}}
    for (name, key, value), message in cases.items():
        record = env.call(name, {**base[name], key: value})
        assert record.response is None and record.exception.startswith(message), record


def test_tools_compute_what_they_say() -> None:
    env = environment(conversations()[0])
    assert env.call("ConvertUnits", {"value": 100, "from_unit": "Celsius",
                                     "to_unit": "degrees fahrenheit"}).response == \
        {"value": 212.0, "unit": "F"}
    assert env.call("ConvertUnits", {"value": "2", "from_unit": "pounds", "to_unit": "grams"}
                    ).response == {"value": 907.18, "unit": "g"}
    assert env.call("Calculate", {"expression": "(2 + 3) ^ 2 / 4"}).response == {"result": 6.25}
    assert env.call("Calculate", {"expression": "1,200 - 0.5"}).response == {"result": 1199.5}
    first = env.call("AddItem", {"name": "Apples", "quantity": 2})  # already listed: merged
    assert first.response == {"item_id": "i-0b22"} and env.db("Shopping")["i-0b22"]["quantity"] == 8
    hits = env.call("SearchNotes", {"query": "GYM"}).response["notes"]
    assert [n["note_id"] for n in hits] == ["n-7a8b", "n-3c4d"]  # newest first


# -- equivalence -----------------------------------------------------------------------------------
def _record(conv_name: str, tool_name: str) -> CallRecord:
    return next(c for c in by_name(conv_name).calls if c.name == tool_name)


def _predict(conv_name: str, tool_name: str, arguments: dict[str, Any]) -> CallRecord:
    """Run a would-be prediction in the state the ground-truth call of that tool ran in."""
    conv = by_name(conv_name)
    env = environment(conv)
    for call in conv.calls:
        if call.name == tool_name:
            return env.call(tool_name, arguments)
        env.call(call.name, call.arguments)
    raise AssertionError(tool_name)


@pytest.mark.parametrize(("conv", "tool", "arguments", "matches"), [
    ("demo-calculate", "Calculate", {"expression": "7.5*12"}, True),
    ("demo-calculate", "Calculate", {"expression": "12 + 7.5"}, False),
    ("demo-convert-units", "ConvertUnits",
     {"value": 26.2, "from_unit": "miles", "to_unit": "kilometers"}, True),
    ("demo-convert-units", "ConvertUnits", {"value": 26, "from_unit": "mi", "to_unit": "km"},
     False),
    ("demo-delete-note", "SearchNotes", {"query": "gym"}, True),  # more hits, the right one in
    ("demo-delete-note", "SearchNotes", {"query": "wifi"}, False),
    ("demo-delete-note", "DeleteNote", {"note_id": "n-3c4d"}, True),
    ("demo-delete-note", "DeleteNote", {"note_id": "n-7a8b"}, False),
    ("demo-add-item", "AddItem", {"name": "Oat milk", "quantity": 2}, True),
    ("demo-add-item", "AddItem", {"name": "oat milk"}, False),  # quantity 1 is not 2
    ("demo-add-item", "AddItem", {"name": "soy milk", "quantity": 2}, False),
    ("demo-shopping-list", "ListItems", {}, True),
    ("demo-create-note", "CreateNote", {"title": "bike lock", "text": "the code is 4071."}, True),
    ("demo-create-note", "CreateNote", {"title": "Bike lock", "text": "Buy a new lock."}, False),
    ("demo-create-note", "CreateNote", {"title": "Bike lock"}, False),
])
def test_equivalence_rules(conv: str, tool: str, arguments: dict[str, Any],
                           matches: bool) -> None:
    prediction = _predict(conv, tool, arguments)
    assert TOOLS[tool].equivalent(prediction, _record(conv, tool), CTX) is matches


def test_add_item_omitted_quantity_means_one() -> None:
    truth = CallRecord("AddItem", {"name": "tea", "quantity": 1}, {"item_id": "i-5bff"})
    prediction = CallRecord("AddItem", {"name": "tea"}, {"item_id": "i-5bff"})
    assert TOOLS["AddItem"].equivalent(prediction, truth, CTX)


# -- provenance ------------------------------------------------------------------------------------
def _texts(conv: dict[str, Any]) -> list[str]:
    return [conv.get("scenario") or "", *(t["text"] for t in conv["conversation"])]


@needs("tooltalk")
def test_demo_text_is_our_own() -> None:
    """No sentence, id, user or tool of the demo comes from the ToolTalk release."""
    release = dataset("tooltalk")
    theirs = [json.loads(p.read_text()) for p in sorted(release.glob("*/*.json"))
              if p.parent.name in ("easy", "tooltalk")]
    assert theirs
    their_text = "\n".join(t for c in theirs for t in _texts(c) if t).lower()
    their_tools = {a for c in theirs for a in c["apis_used"]}
    their_users = {c["user"]["username"] for c in theirs} | {c["user"]["name"] for c in theirs}
    their_ids = {c["conversation_id"] for c in theirs}
    ours = [json.loads(p.read_text()) for p in sorted(ROOT.glob("*/*.json"))
            if p.parent.name in ("easy", "tooltalk")]
    assert len(ours) == 6
    for conv in ours:
        for text in _texts(conv):
            if len(text.split()) < 4:  # "Thanks!" belongs to nobody
                continue
            assert text.lower() not in their_text, text
        assert conv["conversation_id"] not in their_ids
        assert conv["user"]["username"] not in their_users
        assert conv["user"]["name"] not in their_users
    assert not set(TOOLS) & their_tools
    assert not {p.name for p in PLUGINS} & {s for c in theirs for s in c["suites_used"]}


def test_every_turn_shows_the_users_request_beside_the_reply(tmp_path: Any) -> None:
    """The transcript of a turn holds the model's messages only; the user's request that the
    turn answers is stored beside it and shown first in the report (issue 11)."""
    from toolscore.benchmarks.registry import make_benchmark
    from toolscore.report.html.page import render_html
    from toolscore.report.html.samples import page_bodies
    from toolscore.runs.api import evaluate

    run = evaluate("demo", "oracle", out=tmp_path / "run", cache=None, embedder="hashing")
    conversations = {c.name: c for c in load_conversations(ROOT)}
    bench = make_benchmark("demo", None, embedder="hashing")
    for record in run.records:
        turns = conversations[record["id"]].turns
        for turn in record["output"]["turns"]:
            asked = turn["user"]
            assert asked and asked[-1] == turns[turn["turn"] - 1].text
            first = bench.record_view(record)["sections"][0]["messages"][0]
            assert first["role"] == "user"
    page = render_html(run.path)
    some_request = conversations[run.records[0]["id"]].turns[0].text
    assert json.dumps(some_request)[1:-1][:40] in json.dumps(page_bodies(page))
