"""One run record as one sample of an Inspect log (see :mod:`toolscore.report.export.inspect_log`).

The transcript comes from the benchmark's own ``record_view`` (what the HTML report shows), so
no benchmark's output keys are named here and a third-party benchmark exports as it reports.
Its messages are in toolscore's chat shape (OpenAI's: tool calls with JSON-text arguments,
tool results named ``name``); Inspect's shapes differ in small ways (arguments are an object,
a tool result names its ``function``), and those are all this module translates.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from toolscore.records.table import is_scalar
from toolscore.report.export.inspect_names import inspect_id
from toolscore.report.usage import record_roles
from toolscore.report.view import RunView

ROLES = ("system", "user", "assistant", "tool")


@dataclass
class SampleContext:
    """What every sample of one run shares: the run's view, model names and labels."""

    view: RunView
    model: str
    models: dict[str, str | None]  # role -> model (role_models of run.json)
    mode: str | None
    protocol: str | None

    def model_of(self, role: str) -> str:
        return str(self.models.get(role) or (self.model if role == "assistant"
                                             else f"{role} (unnamed)"))


def finite(value: Any) -> Any:
    """nan and inf (an undefined statistic) become null: Inspect's header reader rejects them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def usage_doc(u: dict[str, Any]) -> dict[str, Any]:
    """toolscore's usage of one role as Inspect's model usage (tokens only: Inspect has no
    count of calls; those stay in the sample's metadata)."""
    inp, out = int(u.get("input_tokens") or 0), int(u.get("output_tokens") or 0)
    return {"input_tokens": inp, "output_tokens": out, "total_tokens": inp + out}


def _text(content: Any) -> str:
    if content is None:
        return ""
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False,
                                                               default=str)


def tool_call(call: Any, index: int) -> dict[str, Any]:
    """A call in Inspect's shape. Arguments that are not a JSON object (the model's malformed
    output, kept as the model gave it) become an empty object and a ``parse_error``."""
    call = call if isinstance(call, dict) else {}
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    name = function.get("name") or call.get("name") or ""
    raw = function.get("arguments", call.get("arguments"))
    doc: dict[str, Any] = {"id": str(call.get("id") or f"call_{index}"), "function": str(name),
                           "arguments": {}, "type": "function"}
    if isinstance(raw, dict):
        doc["arguments"] = raw
    elif raw not in (None, ""):
        try:
            parsed = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError as e:
            parsed, why = None, f"invalid JSON ({e.msg})"
        else:
            why = f"arguments are a JSON {type(parsed).__name__}, not an object"
        if isinstance(parsed, dict):
            doc["arguments"] = parsed
        else:
            doc["parse_error"] = f"{why}: {_text(raw)}"
    return doc


def chat_message(m: dict[str, Any], model: str, metadata: dict[str, Any] | None
                 ) -> dict[str, Any] | None:
    """A transcript message in Inspect's shape; None for a role Inspect has no place for."""
    role = str(m.get("role") or "").lower()
    role = "system" if role == "developer" else role
    if role not in ROLES:
        return None
    doc: dict[str, Any] = {"role": role, "content": _text(m.get("content"))}
    if role == "assistant":
        calls = [tool_call(c, i) for i, c in enumerate(m.get("tool_calls") or [])]
        doc.update(tool_calls=calls or None, model=model)
    elif role == "tool":
        doc.update(tool_call_id=m.get("tool_call_id"),
                   function=m.get("name") or m.get("function"))
    if metadata:
        doc["metadata"] = metadata
    return doc


def view_messages(shown: dict[str, Any], model: str) -> tuple[list[dict[str, Any]], list[str]]:
    """(messages, asides): the view's transcript turn by turn where it has sections with
    messages (each message's metadata names its section), else its flat message list; the
    system prompt first where the view shows one. Asides are messages in other roles (a
    judge's verdicts), as lines of text."""
    sections = [s for s in shown.get("sections") or [] if isinstance(s, dict)
                and isinstance(s.get("messages"), list) and s["messages"]]
    groups: list[tuple[dict[str, Any] | None, list[Any]]] = (
        [({"section": str(s.get("title") or "")}, s["messages"]) for s in sections]
        if sections else [(None, list(shown.get("messages") or []))])
    messages: list[dict[str, Any]] = []
    system = (shown.get("details") or {}).get("system prompt")
    if isinstance(system, str) and system:
        messages.append({"role": "system", "content": system})
    asides: list[str] = []
    seen: set[str] = set()
    for metadata, group in groups:
        renamed: dict[str, str] = {}
        for m in group:
            if not isinstance(m, dict):
                continue
            doc = chat_message(m, model, metadata)
            if doc is None:
                if m.get("content"):
                    asides.append(f"{m.get('role')}: {_text(m.get('content'))}")
                continue
            _unique_ids(doc, seen, renamed)
            messages.append(doc)
    return messages, asides


def _unique_ids(doc: dict[str, Any], seen: set[str], renamed: dict[str, str]) -> None:
    """Call ids unique in the whole conversation: ToolTalk numbers calls per turn, and Inspect's
    viewer pairs a result with its call by id across the conversation. A repeated id gets a
    suffix (``call_0_0#2``), and the results that follow in the same turn point to it."""
    for call in doc.get("tool_calls") or []:
        new, n = call["id"], 1
        while new in seen:
            n += 1
            new = f"{call['id']}#{n}"
        seen.add(new)
        if new != call["id"]:
            renamed[call["id"]] = new
            call["id"] = new
    if doc["role"] == "tool" and doc.get("tool_call_id") in renamed:
        doc["tool_call_id"] = renamed[doc["tool_call_id"]]


def _output(messages: list[dict[str, Any]], model: str, usage: dict[str, Any]) -> dict[str, Any]:
    """Inspect's model output: the assistant's last message."""
    last = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
    if last is None:
        return {"model": model, "choices": [], "completion": "", "usage": usage}
    stop = "tool_calls" if last.get("tool_calls") else "stop"
    return {"model": model, "choices": [{"message": last, "stop_reason": stop}],
            "completion": last["content"], "usage": usage}


def _scores(record: dict[str, Any], shown: dict[str, Any], answer: str, asides: list[str]
            ) -> dict[str, dict[str, Any]]:
    """The benchmark's scores of a scored record as Inspect scores, one per scalar metric
    (named as the metric, so ``inspect_ai.analysis.samples_df`` gives one column each). Every
    score carries the record's answer and explanation; the nested scores (per-turn outcomes,
    error types) are the metadata of each, as Inspect keeps a score's details with it."""
    scores = record.get("scores")
    if record.get("status") != "ok" or not isinstance(scores, dict):
        return {}
    lines = [str(shown["summary"])] if shown.get("summary") else []
    lines += [str(t) for t in shown.get("tags") or [] if isinstance(t, str)]
    explanation = "\n".join(lines + asides) or None
    nested = finite({k: v for k, v in scores.items() if not is_scalar(v)}) or None
    out: dict[str, dict[str, Any]] = {}
    for name, value in scores.items():
        if not is_scalar(value):
            continue
        doc: dict[str, Any] = {"value": finite(value), "explanation": explanation,
                               "metadata": nested}
        if answer:
            doc["answer"] = answer
        out[str(name)] = doc
    return out


def inspect_sample(record: dict[str, Any], ctx: SampleContext) -> dict[str, Any]:
    """One record (the latest of its sample and epoch) as an Inspect sample. Its id is one that
    is safe in a file path (:func:`~toolscore.report.export.inspect_names.inspect_id`: the
    archive names the sample's member after it, and so does Inspect converting a ``.json`` log
    to ``.eval``); the record's own id is in the metadata as ``toolscore_id``."""
    shown = ctx.view.record_view(record)
    messages, asides = view_messages(shown, ctx.model)
    roles = record_roles(record)
    role_usage = {role: usage_doc(u) for role, u in roles.items()}
    model_usage: dict[str, dict[str, Any]] = {}
    for role, u in role_usage.items():
        into = model_usage.setdefault(ctx.model_of(role), usage_doc({}))
        for key in into:
            into[key] += u[key]
    assistant = role_usage.get("assistant") or usage_doc(record.get("usage") or {})
    output = _output(messages, ctx.model, assistant)
    first_user = next((m["content"] for m in messages if m["role"] == "user"), "")
    epoch = int(record.get("epoch") or 0)
    details = {k: v for k, v in (shown.get("details") or {}).items() if k != "system prompt"}
    metadata = {**(record.get("meta") or {}), "toolscore_id": str(record["id"]),
                "toolscore_epoch": epoch, "status": record.get("status"), "mode": ctx.mode,
                "protocol": ctx.protocol, "usage": record.get("usage") or {}}
    if details:
        metadata["details"] = details
    if shown.get("view_error"):
        metadata["view_error"] = shown["view_error"]
    doc: dict[str, Any] = {
        "id": inspect_id(str(record["id"])), "epoch": epoch + 1, "input": first_user, "target": "",
        "messages": messages, "output": output, "metadata": finite(metadata),
        "model_usage": model_usage, "role_usage": role_usage,
        "total_time": record.get("time_s")}
    scores = _scores(record, shown, output["completion"], asides)
    if scores:
        doc["scores"] = scores
    if record.get("status") == "error":
        message = str(record.get("error") or "infrastructure error")
        doc["error"] = {"message": message, "traceback": record.get("traceback") or message,
                        "traceback_ansi": record.get("traceback") or message}
    return doc
