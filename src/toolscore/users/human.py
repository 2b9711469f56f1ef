"""A person plays the user at the terminal: the script is shown once, then each assistant turn
is printed and the person types the user's reply.

Input and output are plain text streams (stdin and stderr by default: stdout stays free for
the results, e.g. ``--json``), so a session can be driven by a file or a test. Reading blocks,
so it happens in a worker thread and the event loop stays free. Typing ``/quit`` (or closing
the input) ends the dialogue, as a human annotator does when the assistant is going nowhere.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from toolscore.types import Message
from toolscore.users.base import UserScript, UserTurn

QUIT = "/quit"
ENDED = "User ended the dialogue"


class HumanUser:
    """Reads user turns from ``input`` and shows the dialogue on ``output``."""

    name = "human"

    def __init__(self, input: TextIO | None = None, output: TextIO | None = None) -> None:
        self.input = input
        self.output = output
        self._shown: set[int] = set()

    def _out(self) -> TextIO:
        return self.output or sys.stderr

    def _write(self, text: str) -> None:
        out = self._out()
        out.write(text + "\n")
        out.flush()

    def show_script(self, script: UserScript, header: str = "") -> None:
        """Print the user script (once per script object)."""
        if id(script) in self._shown:
            return
        self._shown.add(id(script))
        self._write(f"\n=== {header or 'user script'} ===\n{script.render()}")
        if script.first_message:
            self._write(f"(your first message was: {script.first_message})")
        self._write(f"Reply as this user; give a detail only when asked. {QUIT} ends.\n")

    async def reply(self, script: UserScript, dialogue: Sequence[Message]) -> UserTurn:
        self.show_script(script)
        if dialogue and dialogue[-1].role == "assistant":
            self._write(f"assistant> {dialogue[-1].content or ''}")
        while True:  # an empty line asks again
            self._out().write("you> ")
            self._out().flush()
            line = await asyncio.to_thread((self.input or sys.stdin).readline)
            text = line.strip()
            if not line or text == QUIT:
                return UserTurn("", done=True, reason=ENDED)
            if text:
                return UserTurn(text)

    def identity(self) -> dict[str, Any]:
        return {"kind": "human"}
