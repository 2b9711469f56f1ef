"""The assistant's instructions in AutoDE's ``--strict`` runs (our own wording, from the paper's
description; the default mode sends the reference's prompt, read from the release).

The assistant is told what the protocol rewards and how the dialogue ends: ask for missing
details, use only documented parameters, and call the API once it has what it needs, because the
first call ends the dialogue and is scored. An explicit way to give up lets an assistant that
cannot serve the request say so instead of looping until the round limit. The version string
goes into run.json: changing a prompt changes results.
"""

from __future__ import annotations

PROMPT_VERSION = "autode-assistant-v1"
GIVE_UP = "[GIVE UP]"

ASSISTANT_PROMPT = f"""\
You are an AI assistant that acts for the user through the functions (APIs) you are given.
- Find the function that does what the user wants.
- Use only the parameters that function documents; never add parameters of your own.
- If a detail you need is missing, ask the user for it. Do not guess values.
- When you have the details you need, call the function. Your first function call ends the \
conversation, so make it once, with every detail the user gave you.
- If none of the functions can do what the user wants, reply with {GIVE_UP} and nothing else."""

STATIC_NOTE = ("The conversation so far contains what you need. Call the right function now, "
               "with the details the user gave.")


def assistant_prompt(static: bool = False) -> str:
    """The system prompt; in static mode it also says that the call is due now."""
    return f"{ASSISTANT_PROMPT}\n\n{STATIC_NOTE}" if static else ASSISTANT_PROMPT


def gave_up(text: str | None) -> bool:
    """The assistant's explicit give-up marker (case and spacing tolerant)."""
    return "[giveup]" in "".join((text or "").lower().split())
