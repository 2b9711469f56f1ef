"""Which request parameters an OpenAI model family takes, and the settings part of a request.

OpenAI's reasoning models reject, with a non-retryable HTTP 400, parameters that chat models
take: the token limit must be sent as ``max_completion_tokens``, and the sampling parameters
(``temperature``, ``top_p``, penalties, log-probabilities) are refused, only their default
being allowed. A benchmark asks for temperature 0 whatever the model, so without this table a
run of such a model fails on its first call. The table is small and matched on the model name
(the part after the last ``/``, so ``openai/o3-mini`` behind a router matches too):

=====================  ========================  ==========================================
family (first match)   token limit sent as       parameters dropped
=====================  ========================  ==========================================
o1-mini, o1-preview    ``max_completion_tokens``  sampling parameters, ``reasoning_effort``
o1, o3, o4, gpt-5      ``max_completion_tokens``  sampling parameters
(anything else)        ``max_tokens``             none
=====================  ========================  ==========================================

``gpt-5-chat…`` is a chat model and is not in the reasoning row. A dropped parameter is said
once per model (logged), naming it. Parameters a user puts in ``extra_body`` are sent as given:
that is the escape hatch for an endpoint the table gets wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from toolscore.types import GenerateConfig

#: What reasoning models refuse (they take only the default of each).
SAMPLING = frozenset({"temperature", "top_p", "presence_penalty", "frequency_penalty",
                      "logprobs", "top_logprobs", "logit_bias"})


@dataclass(frozen=True)
class Family:
    name: str
    pattern: str | None
    max_tokens_param: str
    drops: frozenset[str]


FAMILIES = (
    Family("o1-mini/o1-preview", r"o1-(mini|preview)(-.*)?", "max_completion_tokens",
           SAMPLING | {"reasoning_effort"}),
    Family("reasoning (o1, o3, o4, gpt-5)", r"(o1|o3|o4)(-.*)?|gpt-5(?!-chat)(-.*|\.\d.*)?",
           "max_completion_tokens", SAMPLING),
)
CHAT = Family("chat", None, "max_tokens", frozenset())


def model_family(model: str) -> Family:
    """The family of an OpenAI model name (``CHAT`` when no row matches)."""
    base = model.rsplit("/", 1)[-1].lower()
    for family in FAMILIES:
        if family.pattern is not None and re.fullmatch(family.pattern, base):
            return family
    return CHAT


def tool_choice_param(choice: str) -> str | dict[str, Any]:
    if choice in ("auto", "required", "none"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def settings_and_drops(config: GenerateConfig, has_tools: bool, family: Family = CHAT,
                       max_tokens_param: str | None = None
                       ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the generation settings of a request, the parameters dropped for ``family``).

    The order of the settings is the one requests always had, so a chat model's request body
    is unchanged byte for byte when no model argument is set.
    """
    out: dict[str, Any] = {}
    if has_tools and config.tool_choice is not None:  # None: not sent (the API's "auto")
        out["tool_choice"] = tool_choice_param(config.tool_choice)
    if config.temperature is not None:
        out["temperature"] = config.temperature
    if config.max_tokens is not None:
        out[max_tokens_param or family.max_tokens_param] = config.max_tokens
    if config.seed is not None:
        out["seed"] = config.seed
    if config.top_p is not None:
        out["top_p"] = config.top_p
    if config.reasoning_effort is not None:
        out["reasoning_effort"] = config.reasoning_effort
    body: dict[str, Any] = {}
    for key, value in config.extra.items():
        if key == "extra_body" and isinstance(value, dict):
            body = value
        else:
            out[key] = value
    dropped = {k: out.pop(k) for k in [k for k in out if k in family.drops]}
    out.update(body)  # extra_body last and never dropped, as the SDK sends it
    return out, dropped

