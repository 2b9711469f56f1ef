"""Generating AutoDE user scripts for new APIs with a language model.

The paper built its test cases by having a model write, for each API, a user (character,
background, purpose), the API call that user needs (the gold slots) and an initial query that
leaves some details out. Our prompt (our own wording) asks for the same as one JSON object.
A model's output is untrusted input: every script is parsed and validated against the API
document before it is kept (unknown parameter, missing required one, wrong type, malformed
JSON), and each rejection is counted by kind and reported with a message naming API and field,
so a user sees how much of the generation was usable and why the rest was not.

Valid scripts are written in the released ``data_v1_2.jsonl`` shape (the static history is just
the initial query), so :func:`~toolscore.benchmarks.autode.data.load_scripts` and
``toolscore run autode --scripts FILE`` read them like the released ones.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid as uuidlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.benchmarks.autode.apidocs import ApiDoc, check_arguments
from toolscore.types import GenerateConfig, Message

PROMPT_VERSION = "autode-generate-v1"
GENERATE_PROMPT = """\
You write test cases for an AI assistant that calls APIs for its users. Here is one API:

API name: {name}
Description: {description}
Parameters:
{parameters}

Invent one realistic person who needs this API, and write:
- "character": who they are, in one sentence;
- "background": their situation, in one or two sentences;
- "purpose": what they want the assistant to do, in one sentence;
- "arguments": the API call that fulfils the purpose, as an object from parameter name to \
value. Use only the parameters listed above, include every required one, write values as text \
(true or false for yes/no parameters), and omit optional parameters the person does not care \
about;
- "query": the person's first message to the assistant. It states the request but leaves out \
some of the argument values, so the assistant has to ask for them.

Make this case different from typical ones (variant {index}). Answer with one JSON object with \
exactly the keys character, background, purpose, arguments, query, and nothing else."""
TEXT_FIELDS = ("character", "background", "purpose", "query")


def generation_messages(doc: ApiDoc, index: int) -> list[Message]:
    parameters = doc.parameters_text or "(none)"
    text = GENERATE_PROMPT.format(name=doc.name, description=doc.spec.description,
                                  parameters=parameters, index=index + 1)
    return [Message(role="user", content=text)]


class ScriptRejected(ValueError):
    """A generated script that cannot be used; ``kind`` is what the counts are keyed by."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _json_object(text: str, api: str) -> dict[str, Any]:
    """The JSON object in a reply; code fences and text around the object are tolerated."""
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    body = fenced.group(1) if fenced else text
    start, end = body.find("{"), body.rfind("}")
    if start < 0:
        raise ScriptRejected("malformed_json", f"API {api!r}: the reply holds no JSON object")
    try:
        obj = json.loads(body[start:end + 1] if end > start else body[start:])
    except json.JSONDecodeError as e:
        raise ScriptRejected("malformed_json",
                             f"API {api!r}: the reply is not valid JSON ({e.msg})") from None
    if not isinstance(obj, dict):
        raise ScriptRejected("malformed_json", f"API {api!r}: the reply is not a JSON object")
    return obj


def parse_script(text: str, doc: ApiDoc) -> dict[str, Any]:
    """One model reply as a released-shape script (without ``uuid``), or ScriptRejected."""
    obj = _json_object(text, doc.name)
    for key in TEXT_FIELDS:
        value = obj.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ScriptRejected("missing_field",
                                 f"API {doc.name!r}: field {key!r} must be non-empty text")
        if key != "query" and "\n" in value.strip():
            obj[key] = " ".join(value.split())
    arguments = obj.get("arguments")
    if not isinstance(arguments, dict):
        raise ScriptRejected("missing_field",
                             f"API {doc.name!r}: field 'arguments' must be an object")
    problems = check_arguments(doc, arguments)
    if problems:
        kind, message = problems[0]
        raise ScriptRejected(kind, message)
    return {
        "background": (f"Character: {obj['character'].strip()}\n"
                       f"Background: {obj['background'].strip()}\n"
                       f"Purpose: {obj['purpose'].strip()}"),
        "content": [{"role": "User", "message": obj["query"].strip()}],
        "api": doc.name,
        "slots": {k: v.strip() if isinstance(v, str) else v for k, v in arguments.items()},
    }


def script_uuid(script: dict[str, Any]) -> str:
    """A stable id from the script's content: the same script always gets the same uuid."""
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_URL,
                             "toolscore-autode:" + json.dumps(script, sort_keys=True)))


@dataclass
class GenerationReport:
    """What came of a generation: the valid scripts and every rejection, counted by kind."""

    scripts: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, str]] = field(default_factory=list)
    requested: int = 0

    @property
    def counts(self) -> dict[str, int]:
        return dict(Counter(r["kind"] for r in self.rejected).most_common())

    def to_dict(self) -> dict[str, Any]:
        return {"requested": self.requested, "valid": len(self.scripts),
                "rejected": len(self.rejected), "rejected_by_kind": self.counts,
                "rejections": self.rejected, "prompt": PROMPT_VERSION}


async def generate_scripts(client: Any, docs: Sequence[ApiDoc], *, per_api: int = 1,
                           temperature: float = 0.7, max_tokens: int = 512,
                           seed: int = 0) -> GenerationReport:
    """``per_api`` scripts per API document from ``client`` (a ModelClient); the variant index
    is the cache epoch, so each request is distinct and re-running is free from the cache.
    Infrastructure failures propagate (InfraError); bad outputs are rejections."""
    report = GenerationReport(requested=per_api * len(docs))

    async def one(doc: ApiDoc, index: int) -> tuple[dict[str, Any] | None, dict[str, str] | None]:
        config = GenerateConfig(temperature=temperature, max_tokens=max_tokens, seed=seed,
                                epoch=index, tool_choice="auto")
        reply = await client.generate(generation_messages(doc, index), [], config)
        try:
            script = parse_script(reply.text or "", doc)
        except ScriptRejected as e:
            return None, {"api": doc.name, "variant": str(index + 1), "kind": e.kind,
                          "message": str(e)}
        return {"uuid": script_uuid(script), **script}, None

    results = await asyncio.gather(*(one(d, i) for d in docs for i in range(per_api)))
    seen: set[str] = set()
    for script, rejection in results:
        if rejection is not None:
            report.rejected.append(rejection)
        elif script is not None and script["uuid"] in seen:
            report.rejected.append({"api": script["api"], "variant": "", "kind": "duplicate",
                                    "message": f"API {script['api']!r}: duplicate script"})
        elif script is not None:
            seen.add(script["uuid"])
            report.scripts.append(script)
    return report


def write_scripts(scripts: Sequence[dict[str, Any]], path: Path) -> None:
    """JSONL in the released shape, one script per line."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for script in scripts:
            f.write(json.dumps(script, ensure_ascii=False) + "\n")
