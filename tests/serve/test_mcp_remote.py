"""Your own tools over MCP: ``toolscore run tooltalk --mcp-server CMD|URL --data DIR`` lists an
external server's tools, offers them to the model under test, forwards its calls and scores
them against conversations in ToolTalk's format. The server here is a small one written in the
test (a shopping basket), started as a subprocess over stdio, or reached by URL."""

from __future__ import annotations

import json
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from support.testing.openai_server import FakeOpenAIServer, reply_to_completion  # noqa: E402

import toolscore  # noqa: E402
from toolscore.benchmarks.base import OptionError  # noqa: E402
from toolscore.env.mcp_remote import RemoteTools, response_of  # noqa: E402
from toolscore.types import Message, ToolCall  # noqa: E402

SERVER = textwrap.dedent('''
    """A basket: AddItem (changes it), ListItems (reads it), Price (fails on unknown items)."""
    import json
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    BASKET = []
    PRICES = {"apple": 0.5, "pear": 0.75}
    TOOLS = [
        types.Tool(name="AddItem", description="Put an item in the basket.",
                   input_schema={"type": "object", "properties": {"item": {"type": "string"}},
                                 "required": ["item"]}),
        types.Tool(name="ListItems", description="What is in the basket.",
                   input_schema={"type": "object", "properties": {}},
                   annotations=types.ToolAnnotations(read_only_hint=True)),
        types.Tool(name="Price", description="The price of an item.",
                   input_schema={"type": "object", "properties": {"item": {"type": "string"}},
                                 "required": ["item"]},
                   annotations=types.ToolAnnotations(read_only_hint=True)),
    ]

    def text(value, error=False):
        return types.CallToolResult(content=[types.TextContent(type="text", text=value)],
                                    is_error=error)

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx, params):
        args = params.arguments or {}
        if params.name == "AddItem":
            BASKET.append(args["item"])
            return text(json.dumps({"count": len(BASKET)}))
        if params.name == "ListItems":
            return text(json.dumps(BASKET))
        if args.get("item") not in PRICES:
            return text(f"no price for {args.get('item')!r}", error=True)
        return text(json.dumps(PRICES[args["item"]]))

    async def main():
        server = Server("basket", on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
''')


def call(name: str, arguments: dict[str, Any], response: Any = None,
         exception: str | None = None) -> dict[str, Any]:
    return {"request": {"api_name": name, "parameters": arguments}, "response": response,
            "exception": exception}


def conversation(name: str, turns: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": name, "conversation_id": name, "suites_used": ["mcp"],
            "apis_used": sorted({c["request"]["api_name"] for t in turns
                                 for c in t.get("apis", [])}),
            "scenario": "shopping", "user": {"username": "sam"},
            "metadata": {"location": "Lyon", "timestamp": "2024-05-01 10:00:00",
                         "username": "sam"}, "conversation": turns}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "text": text}


def assistant(text: str, *apis: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "text": text, "apis": list(apis)}


@pytest.fixture
def setup(tmp_path: Path) -> tuple[str, Path]:
    """The server's command line and a data folder of conversations over its tools."""
    script = tmp_path / "basket_server.py"
    script.write_text(SERVER)
    data = tmp_path / "data"
    convs = {
        "easy/add-apple.json": conversation("add-apple", [
            user("Put an apple in my basket."),
            assistant("Done.", call("AddItem", {"item": "apple"}, {"count": 1}))]),
        "easy/price-kiwi.json": conversation("price-kiwi", [
            user("How much is a kiwi?"),
            assistant("There is no price for kiwis.",
                      call("Price", {"item": "kiwi"}, None, "no price for 'kiwi'"))]),
        "tooltalk/two-turns.json": conversation("two-turns", [
            user("Add a pear."),
            assistant("Added.", call("AddItem", {"item": "pear"}, {"count": 1})),
            user("Now an apple, then show me the basket."),
            assistant("Pear and apple.", call("AddItem", {"item": "apple"}, {"count": 2}),
                      call("ListItems", {}, ["pear", "apple"]))]),
    }
    for rel, doc in convs.items():
        (data / rel).parent.mkdir(parents=True, exist_ok=True)
        (data / rel).write_text(json.dumps(doc))
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}", data


def predictions(run: Any) -> dict[str, list[dict[str, Any]]]:
    return {r["id"]: [p for t in r["output"]["turns"] for p in t["predictions"]]
            for r in run.records}


def test_the_servers_tools_become_toolscore_tools(setup: tuple[str, Path]) -> None:
    command, _ = setup
    remote = RemoteTools.connect(command)
    tools = {t.name: t for t in remote.plugin.tools}
    assert list(tools) == ["AddItem", "ListItems", "Price"]
    assert tools["AddItem"].action and not tools["ListItems"].action
    assert tools["Price"].parameters["required"] == ["item"]
    env = remote.environment()
    assert env.call("AddItem", {"item": "fig"}).response == {"count": 1}
    assert env.call("Price", {"item": "fig"}).exception == "no price for 'fig'"
    env.reset()  # a fresh server process: the basket is empty again
    assert env.call("ListItems", {}).response == []
    env.close()
    assert remote.describe()["reset"] == "restart"


def test_oracle_scores_perfectly_on_the_external_server(setup: tuple[str, Path],
                                                        tmp_path: Path) -> None:
    command, data = setup
    run = toolscore.evaluate("tooltalk", "oracle", data=data, mcp_server=command,
                             embedder="hashing", out=tmp_path / "run", cache=None)
    assert run.metrics["easy"]["success_rate"] == 1.0
    assert run.metrics["hard"]["success_rate"] == 1.0
    got = predictions(run)
    # every turn starts from a restarted server with the earlier ground truth replayed
    assert [p["response"] for p in got["two-turns"]] == [{"count": 1}, {"count": 2},
                                                          ["pear", "apple"]]
    assert got["price-kiwi"][0]["exception"] == "no price for 'kiwi'"
    assert run.config.benchmark_config["mcp_server"]["tools"] == ["AddItem", "ListItems",
                                                                  "Price"]


def test_a_wrong_action_through_the_server_is_caught(setup: tuple[str, Path],
                                                     tmp_path: Path) -> None:
    """The model under test is the fake OpenAI server: it adds a banana whatever is asked."""
    command, data = setup

    def responder(request: dict[str, Any]) -> dict[str, Any]:
        last = request["messages"][-1]
        message = (Message(role="assistant", tool_calls=[ToolCall(
            "call_1", "AddItem", json.dumps({"item": "banana"}))])
            if last["role"] == "user" else Message(role="assistant", content="Done."))
        return reply_to_completion(message)

    with FakeOpenAIServer(responder) as srv:
        run = toolscore.evaluate("tooltalk", "openai/fake-model", base_url=srv.base_url,
                                 data=data, mcp_server=command, embedder="hashing",
                                 split="easy", out=tmp_path / "run", cache=None)
    assert run.metrics["easy"]["success_rate"] == 0.0
    assert run.metrics["easy"]["bad_actions"] == 2
    assert {p["response"]["count"] for ps in predictions(run).values() for p in ps} == {1}


def test_a_url_server_runs_one_sample_at_a_time_and_data_is_required(
        setup: tuple[str, Path]) -> None:
    with pytest.raises(OptionError, match="--mcp-server needs --data"):
        toolscore.evaluate("tooltalk", "oracle", mcp_server="http://127.0.0.1:9/mcp")
    assert response_of({"content": [{"type": "text", "text": "plain"}]}) == "plain"
    assert response_of({"content": [], "structuredContent": {"a": 1}}) == {"a": 1}
