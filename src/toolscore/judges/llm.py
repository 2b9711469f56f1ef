"""The one LLM judge: a model, a prompt template and a JSON verdict, with its evidence kept.

Every method that asks a model for a label (ToolEval's pass and preference questions, ACS's
"is this constraint satisfied?") goes through :class:`LLMJudge`, so the reading of replies, the
re-ask, the votes and the bookkeeping exist once. What differs between methods is data on the
:class:`PromptTemplate`: the labels, the field that carries them, other spellings a model may
use for them (ACS answers with JSON booleans), whether a bare ``"key": value`` outside a whole
JSON object still counts, and the text of the re-ask. Few-shot examples are extra messages
passed per call, since they vary from one judged item to the next.

A judge's label is only as trustworthy as the record behind it, so every verdict keeps the raw
text of every attempt, the tokens it cost and, when it could not be read, why. Output that is
not a valid verdict (no JSON, unknown label) is asked for again with a short correction, and if
it stays unreadable the verdict is an *error*: it is never mapped to a label, so it can never be
silently scored. Infrastructure failures (after :class:`ModelClient`'s own retries) are errors
too, flagged ``infra`` so a caller can keep them out of its scores. Repeated votes use distinct
``epoch`` values, so a response cache keeps them apart and a re-run from cache reproduces every
vote exactly.

A template may instead ask for its verdict as a *function call* (``function``): the judge is
offered one function whose label argument is an enum, and must call it. That is how some
reference evaluators (ToolEval's) ask, and the way a verdict is asked changes the verdicts a
model gives, so a method reproducing such an evaluator needs it. A call that is missing or
holds a value outside the enum is asked for again afresh (the same request, a new attempt),
as those evaluators retry, and then recorded as an error like an unreadable JSON reply.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from toolscore.models.base import InfraError
from toolscore.models.client import ModelClient
from toolscore.types import GenerateConfig, Message, ToolSpec, Usage

CORRECTION = ("Your reply could not be read. Reply with one JSON object only, exactly of the form "
              '{{"reason": "<one or two sentences>", "{key}": "<one of: {labels}>"}}.')
INFRA = "infrastructure: "


@dataclass(frozen=True)
class PromptTemplate:
    """System and user text with ``{name}`` placeholders, and how to read the reply.

    The reply must hold a JSON object whose ``key`` field (or one of ``other_keys``) is one of
    ``labels``, or one of the spellings ``aliases`` lists for a label; values are matched
    without regard to case, spaces, hyphens or underscores, and JSON ``true``/``false``/numbers
    count as their text ("true", "1"), so a label may be a JSON boolean. A free-text ``reason``
    (or ``reasoning``) field is kept. With ``loose``, a reply whose JSON is broken (e.g. cut
    off) still counts if it spells ``"key": value`` literally. ``correction`` is the re-ask sent
    after an unreadable reply; it may use ``{key}``, ``{labels}`` and ``{error}`` (why the reply
    could not be read).

    With ``function`` set, the verdict is a call of that function (described by
    ``function_doc``) whose ``key`` argument is an enum of ``labels`` (matched exactly) and
    whose ``reason`` argument is free text; ``aliases``, ``other_keys``, ``loose`` and
    ``correction`` do not apply, and an unusable call is retried as a fresh request.
    """

    name: str
    system: str
    user: str
    labels: tuple[str, ...]
    key: str = "label"
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    other_keys: tuple[str, ...] = ()
    loose: bool = False
    correction: str = CORRECTION
    function: str | None = None
    function_doc: str = ""

    def function_spec(self) -> ToolSpec:
        """The one function a function-calling template offers: ``reason`` then the label."""
        assert self.function is not None
        return ToolSpec(self.function, self.function_doc, {
            "type": "object",
            "properties": {"reason": {"type": "string",
                                      "description": "Why, in one or two sentences."},
                           self.key: {"type": "string", "enum": list(self.labels)}},
            "required": ["reason", self.key]})

    def parse_call(self, calls: Sequence[Any]) -> tuple[tuple[str, str] | str, str]:
        """``((label, reason) or why not, raw text)`` from the tool calls of a reply."""
        call = next((c for c in calls if c.name == self.function), None)
        if call is None:
            named = ", ".join(c.name for c in calls) or "none"
            return f"no call of {self.function} (calls: {named})", ""
        raw = call.arguments or ""
        try:
            args = json.loads(raw)
        except ValueError:
            return f"arguments of {self.function} are not JSON", raw
        if not isinstance(args, dict) or self.key not in args:
            return f"{self.function} was called without {self.key!r}", raw
        value, reason = args[self.key], args.get("reason", "")
        if not isinstance(value, str) or value not in self.labels:
            return f"{self.key}={value!r} is not one of {list(self.labels)}", raw
        return (value, reason if isinstance(reason, str) else json.dumps(reason)), raw

    def render(self, variables: dict[str, Any],
               shots: Sequence[Message] = ()) -> list[Message]:
        """System prompt, then ``shots`` (few-shot example turns), then the question."""
        return [Message(role="system", content=self.system.format(**variables)), *shots,
                Message(role="user", content=self.user.format(**variables))]

    def example(self, variables: dict[str, Any], answer: str) -> list[Message]:
        """One few-shot example: the question about ``variables`` and the answer to show."""
        return [Message(role="user", content=self.user.format(**variables)),
                Message(role="assistant", content=answer)]

    def parse(self, text: str | None) -> tuple[str, str] | str:
        """``(label, reason)`` from a reply, or why it is not a verdict."""
        return parse_verdict(text or "", self.labels, self.key, aliases=self.aliases,
                             other_keys=self.other_keys, loose=self.loose)

    def reask(self, error: str) -> str:
        return self.correction.format(key=self.key, labels=", ".join(self.labels), error=error)


@dataclass
class Verdict:
    """One judgement: ``label`` is None exactly when ``error`` says why; ``infra`` marks an
    error of the infrastructure (not the model's answer)."""

    template: str
    label: str | None
    reason: str = ""
    raw: list[str] = field(default_factory=list)  # every attempt's text, in order
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    vote: int = 0
    judge: str | None = None  # the configured judge's id (registry), when there is one
    infra: bool = False

    @property
    def ok(self) -> bool:
        return self.label is not None

    def to_dict(self) -> dict[str, Any]:
        return {"template": self.template, "label": self.label, "reason": self.reason,
                "raw": self.raw, "error": self.error, "usage": self.usage.to_dict(),
                "vote": self.vote, **({"judge": self.judge} if self.judge else {})}


def _norm(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", text).lower()


def _text(value: Any) -> str | None:
    """A field value as the text it is matched by: JSON booleans and integers count."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return value if isinstance(value, str) else None


def _json_objects(text: str) -> list[Any]:
    """JSON objects in ``text`` (every ``{`` that parses, nested ones too), ordered by where
    they end, so the last one is the reply's final word and an object comes after the ones
    inside it."""
    found: list[tuple[int, int, Any]] = []
    decoder = json.JSONDecoder(strict=False)
    for i, ch in enumerate(text):
        if ch != "{":
            continue
        try:
            obj, end = decoder.raw_decode(text, i)
        except ValueError:
            continue
        if isinstance(obj, dict):
            found.append((end, -i, obj))
    return [obj for _, _, obj in sorted(found, key=lambda t: (t[0], t[1]))]


def parse_verdict(text: str, labels: tuple[str, ...], key: str = "label", *,
                  aliases: dict[str, tuple[str, ...]] | None = None,
                  other_keys: tuple[str, ...] = (), loose: bool = False
                  ) -> tuple[str, str] | str:
    """``(label, reason)`` from a reply, or an error message saying why it is not a verdict.

    The last JSON object whose verdict field holds a known value wins (reasoning that quotes
    other JSON first does not confuse it); see :class:`PromptTemplate` for the other options.
    """
    if not text or not text.strip():
        return "empty reply"
    wanted = {_norm(label): label for label in labels}
    for label, spellings in (aliases or {}).items():
        wanted.update({_norm(s): label for s in spellings})
    keys = [_norm(k) for k in (key, *other_keys)]
    objects = _json_objects(text)
    values: list[Any] = []
    for obj in reversed(objects):
        fields = {_norm(k): v for k, v in obj.items() if isinstance(k, str)}
        for k in keys:
            if k not in fields:
                continue
            values.append(fields[k])
            value = _text(fields[k])
            if value is not None and _norm(value) in wanted:
                reason = fields.get("reason", fields.get("reasoning", ""))
                return wanted[_norm(value)], reason if isinstance(reason, str) else json.dumps(
                    reason)
    if loose:
        forms = [*labels, *(s for group in (aliases or {}).values() for s in group)]
        forms.sort(key=len, reverse=True)
        pattern = (rf'"?{re.escape(key)}"?\s*[:=]\s*"?('
                   + "|".join(re.escape(s) for s in forms) + r")\b")
        found = re.findall(pattern, text, re.I)
        if found:
            return wanted[_norm(found[-1])], ""
    if values:
        return f"{key}={values[0]!r} is not one of {list(labels)}"
    if not objects:
        return "no JSON object in reply"
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
                    vote: int = 0, shots: Sequence[Message] = ()) -> Verdict:
        """One verdict; never raises for bad model output or persistent infra failures.
        ``shots`` (few-shot example turns) go between the system prompt and the question."""
        if self.system is not None:
            # literal text: braces in a user's prompt are not placeholders
            template = replace(template, system=self.system.replace("{", "{{").replace("}", "}}"))
        messages = template.render(variables, shots)
        verdict = Verdict(template.name, None, vote=vote, judge=self.judge_id)
        if template.function is not None:
            return await self._judge_call(template, messages, verdict)
        for attempt in range(self.parse_retries + 1):
            # distinct epochs: each vote and each retry is its own cache entry
            seed = None if self.config.seed is None else self.config.seed + vote
            config = replace(self.config, epoch=vote * 100 + attempt, seed=seed)
            try:
                reply = await self.client.generate(messages, None, config)
            except InfraError as e:
                verdict.error, verdict.infra = f"{INFRA}{e}", True
                return verdict
            verdict.usage.add(reply.usage)
            self.usage.add(reply.usage)
            text = reply.text or ""
            verdict.raw.append(text)
            parsed = template.parse(text)
            if isinstance(parsed, tuple):
                verdict.label, verdict.reason = parsed
                verdict.error = None
                return verdict
            verdict.error = f"unparseable verdict after {attempt + 1} attempt(s): {parsed}"
            messages = [*template.render(variables, shots),
                        Message(role="assistant", content=text),
                        Message(role="user", content=template.reask(parsed))]
        return verdict

    async def _judge_call(self, template: PromptTemplate, messages: list[Message],
                          verdict: Verdict) -> Verdict:
        """A function-calling verdict: the same request, afresh, until the call is usable."""
        tools = [template.function_spec()]
        vote = verdict.vote
        for attempt in range(self.parse_retries + 1):
            seed = None if self.config.seed is None else self.config.seed + vote
            config = replace(self.config, epoch=vote * 100 + attempt, seed=seed,
                             tool_choice=str(template.function))
            try:
                reply = await self.client.generate(messages, tools, config)
            except InfraError as e:
                verdict.error, verdict.infra = f"{INFRA}{e}", True
                return verdict
            verdict.usage.add(reply.usage)
            self.usage.add(reply.usage)
            parsed, raw = template.parse_call(reply.tool_calls)
            verdict.raw.append(raw or reply.text or "")
            if isinstance(parsed, tuple):
                verdict.label, verdict.reason = parsed
                verdict.error = None
                return verdict
            verdict.error = f"unparseable verdict after {attempt + 1} attempt(s): {parsed}"
        return verdict

    async def votes(self, template: PromptTemplate, variables: dict[str, Any], n: int,
                    shots: Sequence[Message] = (), first: int = 0) -> list[Verdict]:
        """``n`` independent verdicts (votes ``first``..``first+n-1``), sequentially so the
        cache stays ordered; they stop at the first infrastructure failure."""
        out: list[Verdict] = []
        for v in range(first, first + n):
            out.append(await self.judge(template, variables, vote=v, shots=shots))
            if out[-1].infra:
                break
        return out


def majority(labels: list[str | None]) -> str | None:
    """The most common label among the readable ones; None on a tie or when none is readable."""
    counts = Counter(label for label in labels if label is not None).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def decide(verdicts: Sequence[Verdict]) -> tuple[str | None, str]:
    """The majority label of ``verdicts`` and a reason saying how it was reached: the tally
    (with several votes) and the first majority vote's reason; None (an abstention) when no
    vote was readable or the readable votes tie."""
    readable = [v for v in verdicts if v.label is not None]
    if not readable:
        last = verdicts[-1].error if verdicts else None
        return None, f"abstained: {last or 'no votes'}"
    label = majority([v.label for v in verdicts])
    counts = Counter(v.label for v in readable)
    if label is None:
        tally = ", ".join(f"{lab} {n}" for lab, n in sorted(counts.items()))
        return None, f"abstained: votes tie ({tally})"
    first = next(v for v in readable if v.label == label)
    tally = f"{counts[label]}/{len(verdicts)} votes" if len(verdicts) > 1 else ""
    return label, "; ".join(x for x in (tally, first.reason) if x)


def make_judge(model: str, *, base_url: str | None = None, cache: Any = None,
               timeout: float = 120.0, max_concurrency: int = 8,
               config: GenerateConfig | None = None) -> LLMJudge:
    """A judge for ``provider/model`` (``base_url`` for any OpenAI-compatible endpoint), built
    by the one client factory with its usage counted under the role "judge"."""
    from toolscore.models.factory import make_client

    client = make_client(model, role="judge", base_url=base_url, cache=cache, timeout=timeout,
                         max_concurrency=max_concurrency)
    return LLMJudge(client, config=config)
