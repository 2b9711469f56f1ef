"""An LLM judge: a model, a prompt template and a JSON verdict, with its evidence kept.

A judge's label is only as trustworthy as the record behind it, so every verdict keeps the raw
text of every attempt, the tokens it cost and, when it could not be read, why. Output that is
not a valid verdict (no JSON, unknown label) is asked for again with a short correction, and if
it stays unreadable the verdict is an *error*: it is never mapped to a label, so it can never be
silently scored. Infrastructure failures (after :class:`ModelClient`'s own retries) are errors
too. Repeated votes use distinct ``epoch`` values, so a response cache keeps them apart and a
re-run from cache reproduces every vote exactly.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from toolscore.models.base import InfraError
from toolscore.models.client import ModelClient
from toolscore.types import GenerateConfig, Message, Usage

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)
CORRECTION = ("Your reply could not be read. Reply with one JSON object only, exactly of the form "
              '{{"reason": "<one or two sentences>", "{key}": "<one of: {labels}>"}}.')


@dataclass(frozen=True)
class PromptTemplate:
    """System and user text with ``{name}`` placeholders, and the labels the reply may give.

    The reply must be a JSON object with ``key`` set to one of ``labels`` (matched without
    regard to case, spaces or underscores) and a free-text ``reason``.
    """

    name: str
    system: str
    user: str
    labels: tuple[str, ...]
    key: str = "label"

    def render(self, variables: dict[str, Any]) -> list[Message]:
        return [Message(role="system", content=self.system.format(**variables)),
                Message(role="user", content=self.user.format(**variables))]


@dataclass
class Verdict:
    """One judgement: ``label`` is None exactly when ``error`` says why."""

    template: str
    label: str | None
    reason: str = ""
    raw: list[str] = field(default_factory=list)  # every attempt's text, in order
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    vote: int = 0
    judge: str | None = None  # the configured judge's id (registry), when there is one

    @property
    def ok(self) -> bool:
        return self.label is not None

    def to_dict(self) -> dict[str, Any]:
        return {"template": self.template, "label": self.label, "reason": self.reason,
                "raw": self.raw, "error": self.error, "usage": self.usage.to_dict(),
                "vote": self.vote, **({"judge": self.judge} if self.judge else {})}


def _norm(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", text).lower()


def _json_objects(text: str) -> list[Any]:
    """JSON objects found in ``text``: fenced blocks first, then every ``{`` that parses."""
    found: list[Any] = []
    decoder = json.JSONDecoder(strict=False)
    for chunk in [*_FENCE.findall(text), text]:
        for i, ch in enumerate(chunk):
            if ch != "{":
                continue
            try:
                obj, _ = decoder.raw_decode(chunk, i)
            except ValueError:
                continue
            if isinstance(obj, dict):
                found.append(obj)
    return found


def parse_verdict(text: str, labels: tuple[str, ...], key: str = "label"
                  ) -> tuple[str, str] | str:
    """``(label, reason)`` from a reply, or an error message saying why it is not a verdict."""
    if not text or not text.strip():
        return "empty reply"
    wanted = {_norm(label): label for label in labels}
    objects = _json_objects(text)
    if not objects:
        return "no JSON object in reply"
    for obj in reversed(objects):  # the last object is the model's final word
        fields = {_norm(k): v for k, v in obj.items() if isinstance(k, str)}
        value = fields.get(_norm(key))
        if isinstance(value, str) and _norm(value) in wanted:
            reason = fields.get("reason", "")
            return wanted[_norm(value)], reason if isinstance(reason, str) else json.dumps(reason)
    values = [obj.get(key) for obj in objects if key in obj]
    if values:
        return f"{key}={values[-1]!r} is not one of {list(labels)}"
    return f"JSON object has no {key!r} field"


class LLMJudge:
    """Asks a model (any provider, through one :class:`ModelClient`) for JSON verdicts.

    ``parse_retries`` extra attempts are made when a reply is not a verdict; ``usage`` totals
    every call this judge made (cached replies included, as the client counts them).
    """

    def __init__(self, client: ModelClient, *, config: GenerateConfig | None = None,
                 parse_retries: int = 2):
        self.client = client
        self.config = config or GenerateConfig(temperature=0.0, max_tokens=512)
        self.parse_retries = parse_retries
        self.usage = Usage()
        self.system: str | None = None  # replaces every template's system prompt when set
        self.judge_id: str | None = None  # recorded in every verdict when set

    @property
    def name(self) -> str:
        return self.judge_id or self.client.name

    async def judge(self, template: PromptTemplate, variables: dict[str, Any],
                    vote: int = 0) -> Verdict:
        """One verdict; never raises for bad model output or persistent infra failures."""
        if self.system is not None:
            # literal text: braces in a user's prompt are not placeholders
            template = replace(template, system=self.system.replace("{", "{{").replace("}", "}}"))
        messages = template.render(variables)
        verdict = Verdict(template.name, None, vote=vote, judge=self.judge_id)
        for attempt in range(self.parse_retries + 1):
            # distinct epochs: each vote and each retry is its own cache entry
            seed = None if self.config.seed is None else self.config.seed + vote
            config = replace(self.config, epoch=vote * 100 + attempt, seed=seed)
            try:
                reply = await self.client.generate(messages, None, config)
            except InfraError as e:
                verdict.error = f"infrastructure: {e}"
                return verdict
            verdict.usage.add(reply.usage)
            self.usage.add(reply.usage)
            text = reply.text or ""
            verdict.raw.append(text)
            parsed = parse_verdict(text, template.labels, template.key)
            if isinstance(parsed, tuple):
                verdict.label, verdict.reason = parsed
                verdict.error = None
                return verdict
            verdict.error = f"unparseable verdict after {attempt + 1} attempt(s): {parsed}"
            messages = [*template.render(variables), Message(role="assistant", content=text),
                        Message(role="user", content=CORRECTION.format(
                            key=template.key, labels=", ".join(template.labels)))]
        return verdict

    async def votes(self, template: PromptTemplate, variables: dict[str, Any],
                    n: int) -> list[Verdict]:
        """``n`` independent verdicts (votes 0..n-1), sequentially so the cache stays ordered."""
        return [await self.judge(template, variables, vote=v) for v in range(n)]


def majority(labels: list[str | None]) -> str | None:
    """The most common label among the readable ones; None on a tie or when none is readable."""
    counts = Counter(label for label in labels if label is not None).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def make_judge(model: str, *, base_url: str | None = None, cache: Any = None,
               timeout: float = 120.0, max_concurrency: int = 8,
               config: GenerateConfig | None = None) -> LLMJudge:
    """A judge for ``provider/model`` (``base_url`` for any OpenAI-compatible endpoint)."""
    from toolscore.models import get_model

    options: dict[str, Any] = {"base_url": base_url} if base_url else {}
    client = ModelClient(get_model(model, **options), cache=cache, timeout=timeout,
                         max_concurrency=max_concurrency, role="judge")
    return LLMJudge(client, config=config)
