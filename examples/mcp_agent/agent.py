"""A reference agent for toolscore's free-running protocol: an OpenAI-SDK tool loop whose tools
are discovered over MCP, served behind the ``agent-http`` contract.

It is deliberately small and self-contained (it imports nothing from toolscore), so it reads as
what it is: the agent under test, as a vendor would write one. toolscore plays the user::

    python examples/mcp_agent/agent.py --port 8900 --model gpt-4o-mini     # OPENAI_API_KEY
    toolscore run tooltalk --split easy --model agent-http:http://127.0.0.1:8900 \\
        --protocol free-running

Any OpenAI-compatible server works (``--base-url``), e.g. llama.cpp's
``python -m llama_cpp.server --model smollm2.gguf``.

The contract (see ``toolscore.models.agent_http``)::

    POST   /episodes                 {"mcp_url", "system_prompt", "episode"} -> {"session"}
    POST   /episodes/<s>/messages    {"content"} -> {"content": reply}
    DELETE /episodes/<s>

Per session the agent keeps its own message history. Per user message it connects to the
episode's MCP endpoint, lists the tools, and loops: ask the model; run every tool call it makes
over MCP and feed the result back; stop at the first reply without tool calls (or after
``--max-steps`` model calls).
"""

from __future__ import annotations

import argparse
import json
import os
import uuid
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from mcp import Client
from openai import AsyncOpenAI


@dataclass
class Session:
    mcp_url: str
    messages: list[dict[str, Any]] = field(default_factory=list)


def openai_tool(tool: Any) -> dict[str, Any]:
    """An MCP tool as an OpenAI function tool (same name, description and JSON schema)."""
    return {"type": "function", "function": {
        "name": tool.name, "description": tool.description or "",
        "parameters": tool.input_schema or {"type": "object", "properties": {}}}}


def result_text(result: Any) -> str:
    """An MCP tool result as the text the model reads (an error says so)."""
    text = "\n".join(getattr(c, "text", "") for c in result.content)
    return json.dumps({"error": text}) if result.is_error else text


class Agent:
    def __init__(self, llm: AsyncOpenAI, model: str, max_steps: int = 20) -> None:
        self.llm = llm
        self.model = model
        self.max_steps = max_steps
        self.sessions: dict[str, Session] = {}

    async def reply(self, session: Session, content: str) -> str:
        session.messages.append({"role": "user", "content": content})
        async with Client(session.mcp_url) as mcp:
            tools = [openai_tool(t) for t in (await mcp.list_tools()).tools]
            for _ in range(self.max_steps):
                completion = await self.llm.chat.completions.create(
                    model=self.model, messages=session.messages, tools=tools, temperature=0)
                message = completion.choices[0].message
                calls = list(message.tool_calls or [])
                session.messages.append({
                    "role": "assistant", "content": message.content,
                    **({"tool_calls": [{"id": c.id, "type": "function", "function": {
                        "name": c.function.name, "arguments": c.function.arguments}}
                        for c in calls]} if calls else {})})
                if not calls:
                    return message.content or ""
                for call in calls:
                    try:
                        arguments = json.loads(call.function.arguments or "{}")
                    except ValueError:
                        text = json.dumps({"error": "arguments are not valid JSON"})
                    else:
                        text = result_text(await mcp.call_tool(call.function.name, arguments))
                    session.messages.append({"role": "tool", "tool_call_id": call.id,
                                             "content": text})
        return ""  # out of steps: an empty answer

    # -- the agent-http contract ----------------------------------------------------------
    async def create(self, request: web.Request) -> web.Response:
        body = await request.json()
        session_id = uuid.uuid4().hex[:12]
        messages = ([{"role": "system", "content": body["system_prompt"]}]
                    if body.get("system_prompt") else [])
        self.sessions[session_id] = Session(body["mcp_url"], messages)
        return web.json_response({"session": session_id})

    async def message(self, request: web.Request) -> web.Response:
        session = self.sessions.get(request.match_info["session"])
        if session is None:
            return web.json_response({"error": "no such session"}, status=404)
        body = await request.json()
        return web.json_response({"content": await self.reply(session, body["content"])})

    async def delete(self, request: web.Request) -> web.Response:
        self.sessions.pop(request.match_info["session"], None)
        return web.json_response({})

    def app(self) -> web.Application:
        app = web.Application()
        app.add_routes([web.post("/episodes", self.create),
                        web.post("/episodes/{session}/messages", self.message),
                        web.delete("/episodes/{session}", self.delete)])
        return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8900)
    parser.add_argument("--model", default=os.environ.get("AGENT_MODEL", "gpt-4o-mini"))
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL"))
    parser.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY", "none"))
    parser.add_argument("--max-steps", type=int, default=20)
    args = parser.parse_args(argv)
    agent = Agent(AsyncOpenAI(base_url=args.base_url, api_key=args.api_key), args.model,
                  args.max_steps)
    print(f"agent-http on http://{args.host}:{args.port} (model {args.model})", flush=True)
    web.run_app(agent.app(), host=args.host, port=args.port, print=None)


if __name__ == "__main__":
    main()
