"""An LLM judge of arithmetic constraints (ACS), to be measured against the human labels.

The ACS paper asks an LLM whether a response satisfies one constraint, zero-shot or with a few
labelled examples, and finds most judges skewed towards "satisfied" and few-shot prompting
often harmful. This module is our own version of that protocol: the prompt is written from the
paper's description and the dataset's labelling conventions (exact arithmetic, zero tolerance,
the response's own claims are not evidence), not copied from any released template.

Guarantees the measurement depends on:

- Few-shot examples never come from the request being judged: :func:`few_shot_plan` splits the
  requests into two folds and each fold's examples come from the other fold, so every row can
  be judged and none sees its own response; :meth:`AcsLLMJudge.judge` refuses a row whose
  request is among its examples.
- An answer without a readable verdict is asked for again (with the parse error) and, if it
  stays unreadable, recorded as an abstention with the raw text, never guessed.
- An infrastructure failure that outlives the client's retries is recorded as an error (not an
  abstention), so callers can leave it out of the scores.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from toolscore.benchmarks.acs.data import AcsRow
from toolscore.models.base import InfraError
from toolscore.models.client import ModelClient
from toolscore.types import GenerateConfig, Message

SYSTEM_PROMPT = """\
You check whether an AI agent's response satisfies one constraint from a user's request.

The constraints are arithmetic: verifying one means finding the relevant numbers in the \
response and counting, adding, multiplying or computing durations between times. Work as \
follows:
1. Read the constraint and decide its scope (each day, each session, each meal, or the whole \
plan) from its wording; where the wording is ambiguous, use the user's request.
2. Extract every value the constraint depends on from the response itself, item by item.
3. Do the arithmetic exactly and show it. There is no tolerance: "exactly 2000 calories" is \
violated by 1990, "at least 150 g" is violated by 149 g.
4. Ignore the response's own claims about meeting the targets (e.g. "this plan meets your \
goals"); only the listed items count as evidence.
5. The constraint is satisfied only if it holds everywhere in its scope.

End your answer with one JSON object on its own line:
{"reasoning": "<short summary of the figures>", "satisfied": true or false}"""

USER_TEMPLATE = """\
## User request
{request}

## Agent response
{response}

## Constraint
{constraint}

Is the constraint satisfied by the agent response?"""

RETRY_PROMPT = ("I could not read a verdict from your answer ({error}). Reply with only the JSON "
                'object {{"reasoning": "...", "satisfied": true or false}}.')


@dataclass
class Vote:
    """One sampled answer: its verdict (``None`` if unreadable) and every raw text it took."""

    label: bool | None
    raw: list[str] = field(default_factory=list)
    reason: str = ""
    error: str = ""


@dataclass
class JudgeVerdict:
    """The judge's decision on one row.

    ``label`` is the majority of the readable votes, or ``None`` (abstention) when no vote was
    readable or the votes tie. ``error`` is set (and ``label`` is ``None``) when the
    infrastructure failed; such rows are errors, not abstentions.
    """

    row_id: str
    label: bool | None
    votes: list[Vote]
    reason: str = ""
    error: str = ""

    @property
    def abstained(self) -> bool:
        return self.label is None and not self.error

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- parsing ----------------------------------------------------------------------------------
_TRUE = {"true", "yes", "satisfied", "1"}
_FALSE = {"false", "no", "unsatisfied", "not satisfied", "not_satisfied", "0"}
_LOOSE = re.compile(r'"?satisfied"?\s*[:=]\s*"?(true|false|yes|no)\b', re.I)


def _objects(text: str) -> list[str]:
    """Balanced ``{...}`` substrings (string-aware), in order of appearance."""
    found: list[str] = []
    depth, start, in_str, esc = 0, -1, False, False
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"' and depth > 0:
            in_str = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                found.append(text[start:i + 1])
    return found


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        v = value.strip().lower()
        if v in _TRUE:
            return True
        if v in _FALSE:
            return False
    return None


def parse_verdict(text: str | None) -> tuple[bool | None, str, str]:
    """``(label, reasoning, error)`` from a judge answer; label ``None`` when unreadable.

    The last JSON object with a ``satisfied`` (or ``verdict``) field wins, so reasoning that
    quotes other JSON before the verdict does not confuse it. Failing that, a literal
    ``"satisfied": true|false`` is accepted (e.g. inside a truncated object).
    """
    if not text or not text.strip():
        return None, "", "empty answer"
    for blob in reversed(_objects(text)):
        try:
            obj = json.loads(blob)
        except json.JSONDecodeError:
            continue
        if not isinstance(obj, dict):
            continue
        for key in ("satisfied", "is_constraint_satisfied", "verdict"):
            if key in obj:
                label = _as_bool(obj[key])
                if label is not None:
                    return label, str(obj.get("reasoning", "")), ""
                return None, "", f"{key!r} is {obj[key]!r}, not true/false"
    loose = _LOOSE.findall(text)
    if loose:
        return _as_bool(loose[-1]), "", ""
    return None, "", "no JSON object with a 'satisfied' field"


# -- few-shot examples --------------------------------------------------------------------------
def requests_of(rows: Sequence[AcsRow]) -> list[str]:
    """Distinct requests (request + response text), in order of first appearance."""
    return list(dict.fromkeys(_request_key(r) for r in rows))


def _request_key(row: AcsRow) -> str:
    return row.request + "\x00" + row.response


def pick_shots(pool: Sequence[AcsRow], k: int, seed: int = 0) -> list[AcsRow]:
    """``k`` examples from ``pool``, alternating satisfied / unsatisfied, seeded, each from a
    different request where possible (so the examples show varied responses)."""
    if k <= 0:
        return []
    rng = random.Random(seed)
    by_label = {lab: [r for r in pool if r.label == lab] for lab in (False, True)}
    for rows in by_label.values():
        rng.shuffle(rows)
    chosen: list[AcsRow] = []
    used: set[str] = set()
    want = True
    while len(chosen) < k and (by_label[True] or by_label[False]):
        side = by_label[want] or by_label[not want]
        fresh = [r for r in side if _request_key(r) not in used]
        r = (fresh or side)[0]
        side.remove(r)
        chosen.append(r)
        used.add(_request_key(r))
        want = not want
    return chosen


def few_shot_plan(rows: Sequence[AcsRow], k: int, seed: int = 0
                  ) -> list[tuple[AcsRow, list[AcsRow]]]:
    """Each row with its ``k`` examples, drawn from the other half of the requests.

    Requests are split in two folds (seeded); fold A is judged with examples from fold B and
    vice versa, so every row is judged and no row shares a request with its examples.
    """
    if k <= 0:
        return [(r, []) for r in rows]
    keys = requests_of(rows)
    random.Random(seed).shuffle(keys)
    fold = {key: i % 2 for i, key in enumerate(keys)}
    shots = [pick_shots([r for r in rows if fold[_request_key(r)] != f], k, seed + f)
             for f in (0, 1)]
    if len(keys) < 2 or any(len(s) < k for s in shots):
        raise ValueError(f"too few rows for {k} few-shot examples from the other half of "
                         f"{len(keys)} request(s)")
    return [(r, shots[fold[_request_key(r)]]) for r in rows]


def example_answer(row: AcsRow, explain: str = "") -> str:
    """The assistant turn of a few-shot example: the human label, with an optional summary."""
    doc: dict[str, Any] = {"reasoning": explain} if explain else {}
    return json.dumps({**doc, "satisfied": row.label})


# -- the judge ----------------------------------------------------------------------------------
class AcsLLMJudge:
    """Asks a model whether each row's constraint is satisfied; ``votes`` samples per row.

    ``shots`` are few-shot examples (rows with human labels); ``explanations`` optionally maps
    an example's ``row_id`` to the reasoning shown with its label. ``parse_retries`` is how many
    times an unreadable answer is asked for again before the vote counts as unreadable.
    """

    def __init__(
        self,
        client: ModelClient,
        shots: Sequence[AcsRow] = (),
        *,
        votes: int = 1,
        temperature: float = 0.0,
        max_tokens: int = 2048,
        parse_retries: int = 2,
        seed: int = 0,
        explanations: dict[str, str] | None = None,
    ):
        if votes < 1:
            raise ValueError(f"votes must be >= 1, got {votes}")
        self.client = client
        self.shots = list(shots)
        self.votes = votes
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.parse_retries = max(0, parse_retries)
        self.seed = seed
        self.explanations = dict(explanations or {})

    def messages(self, row: AcsRow, shots: Sequence[AcsRow] | None = None) -> list[Message]:
        """The conversation sent for ``row``: system prompt, examples, then the row."""
        msgs = [Message(role="system", content=SYSTEM_PROMPT)]
        for s in self.shots if shots is None else shots:
            msgs.append(Message(role="user", content=_user(s)))
            msgs.append(Message(role="assistant",
                                content=example_answer(s, self.explanations.get(s.row_id, ""))))
        msgs.append(Message(role="user", content=_user(row)))
        return msgs

    async def judge(self, row: AcsRow, shots: Sequence[AcsRow] | None = None) -> JudgeVerdict:
        """Judge one row (with ``shots`` instead of the judge's own examples, if given)."""
        examples = self.shots if shots is None else list(shots)
        if any(_request_key(s) == _request_key(row) for s in examples):
            raise ValueError(f"row {row.row_id}: a few-shot example shares its request")
        base = self.messages(row, examples)
        votes: list[Vote] = []
        for v in range(self.votes):
            try:
                votes.append(await self._vote(base, v))
            except InfraError as exc:
                return JudgeVerdict(row.row_id, None, votes, error=f"infrastructure: {exc}")
        label, reason = majority(votes)
        return JudgeVerdict(row.row_id, label, votes, reason=reason)

    async def _vote(self, base: list[Message], index: int) -> Vote:
        messages = list(base)
        vote = Vote(None)
        for attempt in range(self.parse_retries + 1):
            config = GenerateConfig(temperature=self.temperature, max_tokens=self.max_tokens,
                                    seed=self.seed + index, epoch=index)
            reply = await self.client.generate(messages, [], config)
            text = reply.text or ""
            vote.raw.append(text)
            label, reasoning, error = parse_verdict(text)
            if label is not None:
                vote.label, vote.reason, vote.error = label, reasoning, ""
                return vote
            vote.error = f"unreadable after {attempt + 1} attempt(s): {error}"
            messages = [*messages, Message(role="assistant", content=text),
                        Message(role="user", content=RETRY_PROMPT.format(error=error))]
        return vote

    async def judge_all(self, plan: Sequence[tuple[AcsRow, Sequence[AcsRow]]]
                        ) -> list[JudgeVerdict]:
        """Judge every (row, examples) pair concurrently (the client limits concurrency)."""
        return list(await asyncio.gather(*(self.judge(r, s) for r, s in plan)))


def majority(votes: Sequence[Vote]) -> tuple[bool | None, str]:
    """Majority label of the readable votes and a reason; ``None`` on a tie or no votes."""
    readable = [v for v in votes if v.label is not None]
    if not readable:
        return None, "abstained: " + (votes[-1].error if votes else "no votes")
    yes = sum(v.label is True for v in readable)
    no = len(readable) - yes
    if yes == no:
        return None, f"abstained: votes tie {yes}-{no}"
    label = yes > no
    first = next(v for v in readable if v.label == label)
    tally = f"{max(yes, no)}/{len(votes)} votes" if len(votes) > 1 else ""
    return label, "; ".join(x for x in (tally, first.reason) if x)


def _user(row: AcsRow) -> str:
    return USER_TEMPLATE.format(request=row.request.strip(), response=row.response.strip(),
                                constraint=row.constraint.strip())
