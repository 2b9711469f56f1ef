"""The typed run artefact: what ``run.json`` and each line of ``samples.jsonl`` hold.

A run directory outlives the code that wrote it: it is resumed, rescored, compared and shared.
So its files have a version (:data:`FORMAT_VERSION`), a published JSON Schema
(:func:`json_schema`) and typed readers that turn a file of an older version into the current
shape or say in one line why they cannot. Per-sample ``output`` and ``scores`` are the
benchmark's own (a ToolTalk transcript is not an AutoDE dialogue); everything around them is
common to every benchmark, which is what lets one runner, store, report and compare serve all.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

# 1: toolscore 0.1.0 (everything needed to rebuild the run under run.json's "request").
# 2: flat fields below, "format_version" written.
FORMAT_VERSION = 2

Status = Literal["ok", "error"]


class RecordError(ValueError):
    """A run file that does not have the expected shape (the message names file and field)."""


@dataclass
class RunConfig:
    """``run.json``: everything that determines a run's results besides the model's replies.

    ``options`` are the benchmark's declared options as given (defaults filled in), so a run
    can be rebuilt (resume, rescore) from this file alone; ``benchmark_config`` is what the
    benchmark reports about itself (resolved paths, embedder id, seeds, mode).
    """

    benchmark: str
    model: str
    options: dict[str, Any] = field(default_factory=dict)
    benchmark_config: dict[str, Any] = field(default_factory=dict)
    data: str | None = None
    model_identity: dict[str, Any] = field(default_factory=dict)
    # Run-level model arguments (temperature, max_tokens, seed, top_p, reasoning_effort and
    # provider parameters), flat; they replace the benchmark's value on every call of the
    # model (toolscore.models.modelargs). Empty: the benchmark's settings as they are.
    model_args: dict[str, Any] = field(default_factory=dict)
    base_url: str | None = None
    epochs: int = 1
    limit: int | list[int] | None = None  # N, or [A, B]: samples A to B counted from 1
    sample_ids: list[str] | None = None  # only these samples (--sample-id)
    max_concurrency: int = 8
    timeout: float = 120.0
    cache: str | None = None  # the response cache file the run used (None: no cache)
    created: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    command: list[str] = field(default_factory=list)
    format_version: int = FORMAT_VERSION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, doc: Any, source: str = "run.json") -> RunConfig:
        if not isinstance(doc, dict):
            raise RecordError(f"{source}: expected a JSON object, got {type(doc).__name__}")
        version = doc.get("format_version")
        if version is None:
            doc = _from_v1(doc, source)
        elif not isinstance(version, int) or version > FORMAT_VERSION:
            raise RecordError(f"{source}: field 'format_version': {version!r} is newer than "
                              f"this toolscore reads ({FORMAT_VERSION}); upgrade toolscore")
        for key in ("benchmark", "model"):
            if not isinstance(doc.get(key), str) or not doc[key]:
                raise RecordError(f"{source}: field {key!r}: missing or not a string")
        _check_types(doc, source, _RUN_TYPES)
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in doc.items() if k in known})


def _from_v1(doc: dict[str, Any], source: str) -> dict[str, Any]:
    """A 0.1.0 run.json: the run was described by its ``request``."""
    request = doc.get("request")
    if not isinstance(request, dict):
        raise RecordError(f"{source}: field 'request': missing; this run.json was not written "
                          "by toolscore >= 0.1.0 and cannot be read")
    out = {k: v for k, v in doc.items() if k != "request"}
    for key in ("data", "base_url", "epochs", "limit", "max_concurrency", "timeout"):
        if key in request:
            out[key] = request[key]
    out["benchmark"] = request.get("benchmark") or doc.get("benchmark")
    out["model"] = request.get("model") or doc.get("model")
    options = dict(request.get("options") or {})
    if "tools_mode" in options:  # 0.1.0's name of ToolTalk's --tools
        options["tools"] = options.pop("tools_mode")
    out["options"] = options
    out["format_version"] = 1
    return out


@dataclass
class SampleRecord:
    """One line of ``samples.jsonl``: one finished (sample, epoch).

    ``status`` "error" means an infrastructure or harness failure: the record is kept (visible,
    counted, retried on resume) but never scored. A model mistake is ``status`` "ok" with the
    mistake in ``output`` and its cost in ``scores``.
    """

    id: str
    epoch: int = 0
    status: Status = "ok"
    meta: dict[str, Any] = field(default_factory=dict)
    output: Any = None
    scores: dict[str, Any] | None = None
    error: str | None = None
    traceback: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    usage_by_role: dict[str, Any] = field(default_factory=dict)
    time_s: float = 0.0

    @property
    def key(self) -> tuple[str, int]:
        return self.id, self.epoch

    def to_dict(self) -> dict[str, Any]:
        """The stored line; empty optional fields are left out to keep lines short."""
        out = asdict(self)
        for key in ("scores", "error", "traceback", "output"):
            if out[key] is None:
                del out[key]
        return out

    @classmethod
    def from_dict(cls, doc: Any, source: str = "samples.jsonl") -> SampleRecord:
        if not isinstance(doc, dict):
            raise RecordError(f"{source}: expected a JSON object, got {type(doc).__name__}")
        if "id" not in doc:
            raise RecordError(f"{source}: field 'id': missing")
        status = doc.get("status", "ok")
        if status not in ("ok", "error"):
            raise RecordError(f"{source}: field 'status': {status!r} is not 'ok' or 'error'")
        try:
            epoch = int(doc.get("epoch", 0))
        except (TypeError, ValueError):
            raise RecordError(f"{source}: field 'epoch': {doc.get('epoch')!r} is not an "
                              "integer") from None
        if isinstance(doc["id"], (dict, list)) or doc["id"] is None:
            raise RecordError(f"{source}: field 'id': expected a string, got "
                              f"{type(doc['id']).__name__}")
        _check_types(doc, source, _SAMPLE_TYPES)
        known = {f.name for f in fields(cls)}
        return cls(**{**{k: v for k, v in doc.items() if k in known}, "id": str(doc["id"]),
                      "epoch": epoch, "status": status})


# What every reader of a run file relies on, checked where the file is read so that a
# hand-edited or foreign file is one line naming the field, not a traceback in a report.
_NUMBER = (int, float)
_SAMPLE_TYPES: dict[str, tuple[type, ...]] = {
    "meta": (dict,), "scores": (dict, type(None)), "usage": (dict,),
    "usage_by_role": (dict,), "time_s": _NUMBER, "error": (str, type(None)),
    "traceback": (str, type(None))}
_RUN_TYPES: dict[str, tuple[type, ...]] = {
    "options": (dict,), "benchmark_config": (dict,), "model_identity": (dict,),
    "model_args": (dict,), "data": (str, type(None)), "base_url": (str, type(None)),
    "epochs": (int,), "limit": (int, list, type(None)),
    "sample_ids": (list, type(None)), "max_concurrency": (int,),
    "timeout": _NUMBER, "cache": (str, type(None)), "created": (str,), "versions": (dict,),
    "command": (list,)}


def _check_types(doc: dict[str, Any], source: str, types: dict[str, tuple[type, ...]]) -> None:
    for key, allowed in types.items():
        if key in doc and (not isinstance(doc[key], allowed) or isinstance(doc[key], bool)
                           and bool not in allowed):
            names = " or ".join("null" if t is type(None) else
                                {"dict": "an object", "list": "a list", "str": "a string",
                                 "int": "an integer", "float": "a number"}[t.__name__]
                                for t in allowed if not (t is float and int in allowed))
            raise RecordError(f"{source}: field {key!r}: expected {names}, got "
                              f"{type(doc[key]).__name__}")


def json_schema() -> dict[str, Any]:
    """JSON Schema (2020-12) of ``run.json`` and of one ``samples.jsonl`` line."""
    from pydantic import TypeAdapter

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"toolscore run directory, format version {FORMAT_VERSION}",
        "run.json": TypeAdapter(RunConfig).json_schema(),
        "samples.jsonl (one line)": TypeAdapter(SampleRecord).json_schema(),
        "scores.json": {"type": "object", "description": "the benchmark's aggregate metrics"},
    }
