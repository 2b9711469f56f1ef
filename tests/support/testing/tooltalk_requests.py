"""Scripted reply policies for ToolTalk, and the requests a runner sends under them.

Used to compare what two runners of ToolTalk (ToolTalk's own ``evaluate_openai.py`` and
``toolscore run tooltalk``) send a model, request by request: both are driven by the same
fake OpenAI-compatible server (:class:`~support.testing.openai_server.FakeOpenAIServer`)
whose replies come from a :class:`PolicyResponder`. A reply depends only on *where* the
request stands (which conversation and assistant turn, how many calls the model already made
in this turn), read from the request's messages in a way that does not depend on the runner's
own wording or message shapes, so both runners are given the same replies.

Policies (``k`` = calls the model made so far in the turn; ``gt`` = the turn's ground-truth
calls; a turn ends with the turn's ground-truth text):

==========  ================================================================================
text        answers in text at once
truth       the ground-truth calls, one per reply (arguments as recorded: ``session_token``
            included where the call needs one)
notoken     the ground-truth calls without ``session_token`` (which the tool documents do
            not show), as a model that leaves it to the runner sends them
wrong       a tool that does not exist, then a real action tool the turn does not use
malformed   the first ground-truth tool (QueryUser without one) with arguments that are not
            JSON, then the ground-truth calls
int         the ground-truth calls, a digits-only string argument sent as a JSON number
case        the ground-truth calls, the first string argument in swapped case
empty       the ground-truth calls, the first string argument empty
missing     the ground-truth calls without their first optional argument
beside      the ground-truth calls, each with text beside it in the same reply
loop        the ground-truth calls over and over (``LOOP_CALLS`` calls), on a fixed subset of
            the conversations (:func:`loop_subset`); the others as ``truth``
==========  ================================================================================

Fixtures store each conversation's requests compactly (:func:`encode_requests`): the tool
documents once per file, and each request as the messages it adds to the previous request of
the same conversation (the length of the shared prefix, then the rest). :func:`compare` counts,
per category, the paired requests of two runners that differ (``perf/tooltalk_requests.py``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

POLICIES = ("text", "truth", "notoken", "wrong", "malformed", "int", "case", "empty",
            "missing", "beside", "loop")
#: Calls the ``loop`` policy makes in a turn before answering: more than the default cap of
#: toolscore (30), so that a cap shows.
LOOP_CALLS = 32
#: The ``loop`` policy loops in every LOOP_EVERY-th conversation of a split (sorted by file name).
LOOP_EVERY = 7
MALFORMED = '{"oops": '
BESIDE_TEXT = "Let me do that for you."
UNKNOWN_TOOL = "LookUpEverything"
SPLITS = {"easy": "easy", "hard": "tooltalk"}  # split -> folder of the released data


# -- the data: where a request stands --------------------------------------------------------
def load_turns(data_dir: Path) -> dict[str, dict[str, Any]]:
    """Every evaluated assistant turn of the released data, keyed by :func:`dialogue_key` of
    the dialogue before it: its conversation, split, index, ground-truth calls and text."""
    turns: dict[str, dict[str, Any]] = {}
    for split, folder in SPLITS.items():
        files = sorted((Path(data_dir) / folder).glob("*.json"))
        for position, path in enumerate(files):
            conv = json.loads(path.read_text(encoding="utf-8"))
            dialogue: list[list[str]] = []
            for index, turn in enumerate(conv["conversation"]):
                if turn["role"] == "assistant":
                    turns[json.dumps(dialogue)] = {
                        "conversation": path.name, "split": split, "turn": index,
                        "position": position, "apis": turn.get("apis", []),
                        "text": turn["text"]}
                dialogue.append([turn["role"], turn["text"]])
    return turns


def loop_subset(turn: dict[str, Any]) -> bool:
    return turn["position"] % LOOP_EVERY == 0


def is_call(message: dict[str, Any]) -> bool:
    return bool(message.get("function_call") or message.get("tool_calls"))


def dialogue_key(messages: list[dict[str, Any]]) -> str:
    """The user texts and the assistant's texts of a request, in order (system prompt, calls
    and results left out): the same for every runner of the same turn."""
    return json.dumps([[m["role"], m.get("content")] for m in messages
                       if m.get("role") == "user"
                       or (m.get("role") == "assistant" and not is_call(m))])


def calls_in_turn(messages: list[dict[str, Any]]) -> int:
    """Calls the model made since the last user or assistant text: the current turn's."""
    k = 0
    for m in reversed(messages):
        if m.get("role") == "user" or (m.get("role") == "assistant" and not is_call(m)):
            break
        if m.get("role") == "assistant":
            k += len(m.get("tool_calls") or []) or 1
    return k


def where(request: dict[str, Any], turns: dict[str, dict[str, Any]]) -> tuple[Any, int]:
    """(the turn this request belongs to or None, calls already made in it)."""
    messages = request.get("messages") or []
    return turns.get(dialogue_key(messages)), calls_in_turn(messages)


# -- the policies ----------------------------------------------------------------------------
def optional_arguments(docs: Iterable[dict[str, Any]]) -> dict[str, list[str]]:
    """Tool name -> its optional arguments, from ToolTalk's documents (``openai_docs.json``)."""
    out = {}
    for doc in docs:
        required = doc.get("required", doc["parameters"].get("required", []))
        out[doc["name"]] = [p for p in doc["parameters"]["properties"] if p not in required]
    return out


def _first_string(args: dict[str, Any]) -> str | None:
    return next((k for k, v in args.items() if isinstance(v, str) and k != "session_token"),
                None)


def variant(policy: str, name: str, args: dict[str, Any],
            optional: dict[str, list[str]]) -> dict[str, Any]:
    """The ground-truth arguments as the variant policy changes them (unchanged when the
    variant does not apply)."""
    args = dict(args)
    if policy == "int":
        key = next((k for k, v in args.items() if isinstance(v, str) and v.isdigit()), None)
        if key is not None:
            args[key] = int(args[key])
    elif policy in ("case", "empty"):
        key = _first_string(args)
        if key is not None:
            args[key] = args[key].swapcase() if policy == "case" else ""
    elif policy == "missing":
        key = next((k for k in args if k in optional.get(name, [])), None)
        if key is not None:
            del args[key]
    return args


def decide(policy: str, turn: dict[str, Any], k: int,
           optional: dict[str, list[str]]) -> dict[str, Any]:
    """The reply for call ``k`` of ``turn``: ``{"content": str|None, "call": None or
    {"name", "arguments" (text)}}``."""
    gt = [(a["request"]["api_name"], a["request"]["parameters"]) for a in turn["apis"]]
    text = {"content": turn["text"], "call": None}

    def call(name: str, args: Any, content: str | None = None) -> dict[str, Any]:
        arguments = args if isinstance(args, str) else json.dumps(args)
        return {"content": content, "call": {"name": name, "arguments": arguments}}

    if policy == "loop" and not loop_subset(turn):
        policy = "truth"
    if policy == "text":
        return text
    if policy == "wrong":
        used = {name for name, _ in gt}
        other = "DeleteAlarm" if "DeleteAlarm" not in used else "DeleteReminder"
        key = "alarm_id" if other == "DeleteAlarm" else "reminder_id"
        steps = [call(UNKNOWN_TOOL, {}), call(other, {key: "0000-0000"})]
        return steps[k] if k < len(steps) else text
    if policy == "malformed":
        if k == 0:
            return call(gt[0][0] if gt else "QueryUser", MALFORMED)
        k -= 1
    if policy == "loop":
        if k >= LOOP_CALLS:
            return text
        name, args = gt[k % len(gt)] if gt else ("GetReminders", {})
        return call(name, args)
    if k >= len(gt):
        return text
    name, args = gt[k]
    if policy in ("int", "case", "empty", "missing"):
        args = variant(policy, name, args, optional)
    elif policy == "notoken":
        args = {key: value for key, value in args.items() if key != "session_token"}
    return call(name, args, BESIDE_TEXT if policy == "beside" else None)


class PolicyResponder:
    """A fake server's responder: answers each request as ``policy`` decides, in the API the
    request uses (legacy ``functions`` -> ``function_call``; ``tools`` -> ``tool_calls``).
    A request that belongs to no known turn is answered in text (and counted)."""

    def __init__(self, policy: str, turns: dict[str, dict[str, Any]],
                 optional: dict[str, list[str]]):
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}; known: {', '.join(POLICIES)}")
        self.policy = policy
        self.turns = turns
        self.optional = optional
        self.unknown = 0

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        turn, k = where(request, self.turns)
        if turn is None:
            self.unknown += 1
            step: dict[str, Any] = {"content": "I do not know this conversation.", "call": None}
        else:
            step = decide(self.policy, turn, k, self.optional)
        message: dict[str, Any] = {"role": "assistant", "content": step["content"]}
        finish = "stop"
        if step["call"] is not None:
            if "functions" in request:
                message["function_call"] = dict(step["call"])
                finish = "function_call"
            else:
                message["tool_calls"] = [{"id": f"call_{k}", "type": "function",
                                          "function": dict(step["call"])}]
                finish = "tool_calls"
        return {"id": "chatcmpl-policy", "object": "chat.completion", "created": 0,
                "model": request.get("model", "fake-model"),
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


# -- compact storage of recorded requests ----------------------------------------------------
def docs_id(docs: Any) -> str:
    return hashlib.sha256(json.dumps(docs).encode("utf-8")).hexdigest()[:12]


def group_requests(requests: list[dict[str, Any]], turns: dict[str, dict[str, Any]],
                   keep: Any = None) -> dict[str, list[dict[str, Any]]]:
    """Recorded requests per conversation file name, in (turn, call) order, each as
    ``{"turn", "step", "body"}``; ``keep(turn)`` filters the turns kept. Requests of no known
    turn go under ``""``."""
    out: dict[str, list[dict[str, Any]]] = {}
    for body in requests:
        turn, k = where(body, turns)
        if turn is not None and keep is not None and not keep(turn):
            continue
        name = "" if turn is None else turn["conversation"]
        out.setdefault(name, []).append(
            {"turn": -1 if turn is None else turn["turn"], "step": k, "body": body})
    for items in out.values():
        items.sort(key=lambda r: (r["turn"], r["step"]))
    return out


def encode_requests(grouped: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """``{"documents": {id: docs}, "conversations": {name: [request, ...]}}``: each request
    ``{"turn", "step", "fields" (the body without messages; tool documents as their id),
    "common" (messages shared with the previous request), "messages" (the rest)}``."""
    documents: dict[str, Any] = {}
    conversations: dict[str, list[dict[str, Any]]] = {}
    for name in sorted(grouped):
        previous: list[dict[str, Any]] = []
        rows = []
        for item in grouped[name]:
            body = dict(item["body"])
            messages = body.pop("messages", [])
            for field in ("functions", "tools"):
                if field in body:
                    documents[docs_id(body[field])] = body[field]
                    body[field] = "@" + docs_id(body[field])
            common = 0
            while (common < len(previous) and common < len(messages)
                   and previous[common] == messages[common]):
                common += 1
            rows.append({"turn": item["turn"], "step": item["step"], "fields": body,
                         "common": common, "messages": messages[common:]})
            previous = messages
        conversations[name] = rows
    return {"documents": documents, "conversations": conversations}


def decode_requests(encoded: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The inverse of :func:`encode_requests`: full request bodies per conversation."""
    documents = encoded["documents"]
    out: dict[str, list[dict[str, Any]]] = {}
    for name, rows in encoded["conversations"].items():
        previous: list[dict[str, Any]] = []
        items = []
        for row in rows:
            body = {}
            for key, value in row["fields"].items():
                if isinstance(value, str) and value.startswith("@") and value[1:] in documents:
                    value = documents[value[1:]]
                body[key] = value
            messages = previous[:row["common"]] + row["messages"]
            body["messages"] = messages
            items.append({"turn": row["turn"], "step": row["step"], "body": body})
            previous = messages
        out[name] = items
    return out


# -- comparing two runners' requests ----------------------------------------------------------
