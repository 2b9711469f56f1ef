"""User simulators without a model: the script text, the LLM agent's view of the dialogue, and a
human driven through injected streams."""

from __future__ import annotations

import asyncio
import io
from typing import Any

from toolscore.types import GenerateConfig, Message, Reply, ToolSpec, Usage
from toolscore.users import HumanUser, LLMUser, UserScript, user_agent_messages
from toolscore.users.llm import clean_reply

SCRIPT = UserScript(profile={"Character": "Bella", "Purpose": "turn Bluetooth on"},
                    facts={"deviceType": "watch", "silent": True}, goal="TurnOnBluetooth",
                    first_message="Turn on Bluetooth please.")
DIALOGUE = [Message(role="user", content="Turn on Bluetooth please."),
            Message(role="assistant", content="Which device?")]


def test_script_renders_profile_goal_and_facts() -> None:
    text = SCRIPT.render()
    assert text.splitlines()[:3] == ["Character: Bella", "Purpose: turn Bluetooth on",
                                     "Task: TurnOnBluetooth"]
    assert "- deviceType: watch" in text and "- silent: yes" in text
    assert "none beyond" in UserScript(profile={"Character": "x"}).render()


class Echo:
    """A model stub that records the request and answers with a labelled reply."""

    name = "stub"

    def __init__(self) -> None:
        self.seen: list[Message] = []

    async def generate(self, messages: list[Message], tools: list[ToolSpec],
                       config: GenerateConfig) -> Reply:
        self.seen = messages
        assert tools == []
        return Reply(Message(role="assistant", content="User: my watch"), Usage(output_tokens=3))


def test_llm_user_sees_the_dialogue_from_its_side() -> None:
    messages = user_agent_messages(SCRIPT, DIALOGUE)
    assert [m.role for m in messages] == ["system", "assistant", "user"]
    assert "- deviceType: watch" in (messages[0].content or "")
    stub = Echo()
    user: Any = LLMUser(stub)
    turn = asyncio.run(user.reply(SCRIPT, DIALOGUE))
    assert turn.text == "my watch" and user.usage.output_tokens == 3
    assert user.identity()["model"] == "stub"
    assert clean_reply("  You: user: fine ") == "fine"


def test_human_user_reads_lines_and_quits() -> None:
    shown = io.StringIO()
    user = HumanUser(io.StringIO("\n  my watch \n/quit\n"), shown)
    assert asyncio.run(user.reply(SCRIPT, DIALOGUE)).text == "my watch"
    assert asyncio.run(user.reply(SCRIPT, DIALOGUE)).done
    assert asyncio.run(user.reply(SCRIPT, DIALOGUE)).done  # end of input
    out = shown.getvalue()
    assert out.count("Character: Bella") == 1 and "assistant> Which device?" in out
