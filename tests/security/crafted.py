"""A run directory whose run.json names a command, as someone else could hand one over.

The command is a real MCP server (a small basket of tools, over stdio) wrapped in
``sh -c '...'`` that first appends a line to a marker file: whenever anything starts the
command, the marker appears. The run itself is made honestly (the marker appears then, and is
removed), so every file in the directory is what toolscore writes."""

from __future__ import annotations

import json
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

SERVER = textwrap.dedent('''
    import json
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    BASKET = []
    TOOLS = [
        types.Tool(name="AddItem", description="Put an item in the basket.",
                   input_schema={"type": "object", "properties": {"item": {"type": "string"}},
                                 "required": ["item"]}),
        types.Tool(name="ListItems", description="What is in the basket.",
                   input_schema={"type": "object", "properties": {}},
                   annotations=types.ToolAnnotations(read_only_hint=True)),
    ]

    def text(value):
        return types.CallToolResult(content=[types.TextContent(type="text", text=value)])

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx, params):
        if params.name == "AddItem":
            BASKET.append((params.arguments or {})["item"])
            return text(json.dumps({"count": len(BASKET)}))
        return text(json.dumps(BASKET))

    async def main():
        server = Server("basket", on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
''')


def _call(name: str, arguments: dict[str, Any], response: Any) -> dict[str, Any]:
    return {"request": {"api_name": name, "parameters": arguments}, "response": response,
            "exception": None}


def _conversation(name: str, turns: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": name, "conversation_id": name, "suites_used": ["mcp"],
            "apis_used": sorted({c["request"]["api_name"] for t in turns
                                 for c in t.get("apis", [])}),
            "scenario": "shopping", "user": {"username": "sam"},
            "metadata": {"location": "Lyon", "timestamp": "2024-05-01 10:00:00",
                         "username": "sam"}, "conversation": turns}


def write_data(root: Path) -> Path:
    """Two conversations over the basket's tools, in ToolTalk's layout."""
    convs = {
        "easy/add-apple.json": _conversation("add-apple", [
            {"role": "user", "text": "Put an apple in my basket."},
            {"role": "assistant", "text": "Done.",
             "apis": [_call("AddItem", {"item": "apple"}, {"count": 1})]}]),
        "tooltalk/add-then-list.json": _conversation("add-then-list", [
            {"role": "user", "text": "Add a pear."},
            {"role": "assistant", "text": "Added.",
             "apis": [_call("AddItem", {"item": "pear"}, {"count": 1})]},
            {"role": "user", "text": "What is in my basket?"},
            {"role": "assistant", "text": "A pear.",
             "apis": [_call("ListItems", {}, ["pear"])]}]),
    }
    data = root / "data"
    for rel, doc in convs.items():
        (data / rel).parent.mkdir(parents=True, exist_ok=True)
        (data / rel).write_text(json.dumps(doc))
    return data


def marker_command(root: Path, marker: Path) -> str:
    """``sh -c '...'``: append to ``marker``, then become the basket server."""
    script = root / "basket_server.py"
    script.write_text(SERVER)
    inner = (f"echo started >> {shlex.quote(str(marker))}; "
             f"exec {shlex.quote(sys.executable)} {shlex.quote(str(script))}")
    return f"sh -c {shlex.quote(inner)}"
