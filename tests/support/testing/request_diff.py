"""Two runners' requests to a model, compared by category: does toolscore ask a model what
ToolTalk's own runner asks it? (The requests come from :mod:`support.testing.tooltalk_requests`'
policies and fixtures.) Each category is one way two requests can differ, so a fidelity gap is
counted where it is, and a fix shows as its column falling to zero."""

from __future__ import annotations

import json
from typing import Any

from support.testing.tooltalk_requests import is_call

CATEGORIES = ("system", "documents", "sampling", "api shape", "ground truth", "echo", "results")
API_FIELDS = ("model", "messages", "functions", "tools")


def legacy(message: dict[str, Any]) -> dict[str, Any]:
    """A message as the legacy ``functions`` API would carry it (one call per message)."""
    if message.get("role") == "tool":
        return {"role": "function", "name": message.get("name"),
                "content": message.get("content")}
    if message.get("tool_calls"):
        calls = message["tool_calls"]
        out = {"role": "assistant", "content": message.get("content"),
               "function_call": {"name": calls[0]["function"]["name"],
                                 "arguments": calls[0]["function"]["arguments"]}}
        if len(calls) > 1:
            out["more_calls"] = [c["function"] for c in calls[1:]]
        return out
    return {k: v for k, v in message.items() if k in ("role", "content", "name", "function_call")}


def _raw_documents(body: dict[str, Any]) -> list[Any]:
    if "functions" in body:
        return list(body["functions"])
    return [t.get("function", t) for t in body.get("tools") or []]


def documents(body: dict[str, Any]) -> Any:
    """The tool documents, with ``required`` inside ``parameters`` wherever the API put it:
    where it sits is the API's framing (the legacy ``functions`` API took it beside
    ``parameters``, the ``tools`` API takes it inside), counted in :func:`api_shape`."""
    out = []
    for doc in _raw_documents(body):
        if isinstance(doc, dict) and "required" in doc:
            doc = dict(doc)
            doc["parameters"] = {**doc.get("parameters", {}), "required": doc.pop("required")}
        out.append(doc)
    return out


def api_shape(body: dict[str, Any]) -> list[Any]:
    """Which API carries the request, and the framing of each message: the roles, the empty
    content of a call (null or ""), the name on a result."""
    framing = []
    for m in body["messages"]:
        legacy_m = legacy(m)
        if is_call(m):
            framing.append([m["role"], sorted(k for k in m if k.endswith("call")
                                              or k == "tool_calls"), legacy_m.get("content")
                            if legacy_m.get("content") in (None, "") else "text"])
        elif m.get("role") in ("tool", "function"):
            framing.append([m["role"], sorted(k for k in m if k in ("name", "tool_call_id")),
                            legacy_m.get("name")])
        else:
            framing.append([m.get("role")])
    beside = any(isinstance(d, dict) and "required" in d for d in _raw_documents(body))
    return [sorted(k for k in body if k in ("functions", "tools")),
            "required beside parameters" if beside else "required inside", framing]


def substance(message: dict[str, Any]) -> dict[str, Any]:
    """A message in legacy form without its framing (see :func:`api_shape`)."""
    out = legacy(message)
    if is_call(out):
        out["content"] = out.get("content") or None
    if out["role"] == "function":
        out.pop("name", None)
    return out


def segments(body: dict[str, Any]) -> dict[str, Any]:
    """The parts of a request that are compared, each in legacy form."""
    messages = [substance(m) for m in body["messages"]]
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else None
    rest = messages[1:] if system is not None else messages
    last = max((i for i, m in enumerate(rest)
                if m["role"] == "user" or (m["role"] == "assistant" and not is_call(m))),
               default=-1)
    current = rest[last + 1:]
    return {
        "system": system,
        "documents": json.dumps(documents(body)),
        "sampling": {k: v for k, v in body.items() if k not in API_FIELDS},
        "ground truth": rest[:last + 1],
        "echo": [m for m in current if m["role"] == "assistant"],
        "results": [m for m in current if m["role"] == "function"],
    }


def compare(reference: dict[str, list[dict[str, Any]]], ours: dict[str, list[dict[str, Any]]],
            examples: dict[str, list[Any]], show: int) -> dict[str, int]:
    counts = dict.fromkeys(("reference", "toolscore", "paired", *CATEGORIES,
                            "only reference", "only toolscore"), 0)
    for name in sorted(set(reference) | set(ours)):
        ref = {(r["turn"], r["step"]): r["body"] for r in reference.get(name, [])}
        got = {(r["turn"], r["step"]): r["body"] for r in ours.get(name, [])}
        counts["reference"] += len(ref)
        counts["toolscore"] += len(got)
        counts["only reference"] += len(ref.keys() - got.keys())
        counts["only toolscore"] += len(got.keys() - ref.keys())
        for where in sorted(ref.keys() & got.keys()):
            counts["paired"] += 1
            a, b = segments(ref[where]), segments(got[where])
            for category in CATEGORIES:
                if category == "api shape":
                    differs = api_shape(ref[where]) != api_shape(got[where])
                    pair = (api_shape(ref[where]), api_shape(got[where]))
                else:
                    differs = a[category] != b[category]
                    pair = (a[category], b[category])
                if differs:
                    counts[category] += 1
                    if len(examples.setdefault(category, [])) < show:
                        examples[category].append((name, where, *pair))
    return counts
