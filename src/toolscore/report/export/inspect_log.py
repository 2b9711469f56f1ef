"""A run as an Inspect evaluation log (``.json``): Inspect's viewer and tools read toolscore runs.

Inspect (UK AISI's ``inspect_ai``) has a log viewer, a log API and tools built on both; a run
exported to its format is browsable there sample by sample without toolscore. The log is built
here with the standard library from the run directory alone, so toolscore does not depend on
inspect_ai; :func:`validate_inspect_log` loads a written log with inspect_ai's own reader when
it is installed, which is the only proof of compatibility that counts.

How a run maps onto a log:

* the eval spec names the benchmark (task), model, dataset, options (task args), versions
  (packages), and in its metadata the scoring mode/protocol label and the run directory;
* each latest record of a (sample, epoch) is one sample. Inspect counts epochs from 1,
  toolscore from 0: a sample's ``epoch`` is toolscore's plus one (toolscore's is kept in its
  metadata). Its messages are the benchmark's own view of the record (``record_view``: the
  transcript in the chat shape, ToolTalk turn by turn with the turn in each message's
  metadata); a message in a role Inspect has no place for (a judge's verdict) goes to the
  score's explanation instead. Each scalar score is one Inspect ``Score`` named as the metric
  (one column per metric in Inspect's data frames), nested ones in its metadata;
* a record with status "error" (an infrastructure failure) is a sample with an ``error`` and
  no scores, as in the run's own reports, and the log's status is then "error" (the run is
  incomplete: resuming it retries exactly those samples);
* results are ``scores.json``'s headline table, one Inspect score per group (split) with the
  benchmark's headline columns as metrics; a run without ``scores.json`` (stopped before its
  end) has no results and status "started";
* usage per sample and in total, by model and by role (assistant, user, judge).

Memory stays flat in the number of records: a first pass reads records without their outputs
(which record is the latest of its key, usage, status), the header is written, then records
are read one at a time and written as they come. The same documents go into a ``.json`` file
(the default: one plain JSON document, easy to read and diff) or, when the output is named
``*.eval``, into Inspect's zip container (:mod:`toolscore.report.export.inspect_eval`: what
Inspect's viewer handles best on large runs).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from toolscore.records import RunStore
from toolscore.records.store import SCORES_FILE, sample_key
from toolscore.report.export.inspect_eval import write_eval_zip
from toolscore.report.export.inspect_sample import SampleContext, finite, inspect_sample, usage_doc
from toolscore.report.tables import headline
from toolscore.report.usage import record_roles, role_models
from toolscore.report.view import run_view

LOG_VERSION = 2  # the version of Inspect's log format this writer follows


def _iso(text: str | None, fallback: Path) -> str:
    """A timestamp Inspect accepts: run.json's, else the file's modification time (UTC)."""
    if text:
        try:
            stamp = datetime.fromisoformat(text)
            return (stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)).isoformat()
        except ValueError:
            pass
    return datetime.fromtimestamp(fallback.stat().st_mtime, timezone.utc).isoformat()


def _keep_user_usage(output: Any) -> Any:
    """The part of an output the first pass needs: an old AutoDE record's user tokens."""
    if isinstance(output, dict) and isinstance(output.get("user_usage"), dict):
        return {"user_usage": output["user_usage"]}
    return None


class _Totals:
    """What the header needs from every latest record, gathered without their transcripts."""

    def __init__(self, store: RunStore) -> None:
        latest: dict[tuple[str, int], tuple[int, dict[str, Any]]] = {}
        for n, r in enumerate(store.records(_keep_user_usage)):
            latest[sample_key(r)] = (n, {"status": r.get("status"), "roles": record_roles(r)})
        self.numbers = {n for n, _ in latest.values()}
        self.ids = {key[0] for key in latest}
        self.total = len(latest)
        self.errors = sum(1 for _, s in latest.values() if s["status"] == "error")
        self.roles: dict[str, dict[str, Any]] = {}
        for _, s in latest.values():
            for role, u in s["roles"].items():
                into = self.roles.setdefault(role, {})
                for key in ("input_tokens", "output_tokens", "calls", "cached_calls"):
                    into[key] = into.get(key, 0) + int(u.get(key) or 0)


def _results(bench: str, metrics: dict[str, Any] | None, totals: _Totals) -> dict[str, Any] | None:
    """``scores.json`` as Inspect results: one score per headline group, the benchmark's
    headline columns as its metrics, the group's other figures in its metadata."""
    if metrics is None:
        return None
    columns, rows = headline(bench, metrics)
    shown = {c.key for c in columns}
    scores = []
    for group, row in rows.items():
        scores.append({
            "name": str(group), "scorer": bench, "params": {},
            "metrics": {c.key: {"name": c.key, "value": row[c.key], "params": {},
                                "metadata": {"title": c.title, "kind": c.kind}}
                        for c in columns if isinstance(row.get(c.key), (int, float))
                        and not isinstance(row.get(c.key), bool)
                        and math.isfinite(row[c.key])},
            "metadata": finite({k: v for k, v in row.items() if k not in shown})})
    rest = {k: v for k, v in metrics.items() if k not in rows}
    return {"total_samples": totals.total, "completed_samples": totals.total - totals.errors,
            "scores": scores, "metadata": finite(rest)}


def _identity(store: RunStore, config: dict[str, Any]) -> tuple[str, str]:
    """(creation time, a hex digest): the log's ids derive from the run, so exporting the same
    run twice gives the same file."""
    created = _iso(config.get("created"), store.path / "run.json")
    return created, hashlib.sha256(f"{store.path.resolve()}\n{created}".encode()).hexdigest()


def default_log_name(path: str | Path) -> str:
    """Inspect's own file name for this run's log (``<created>_<task>_<id>.json``): Inspect
    lists a ``.json`` file in a log folder only when its name starts with such a timestamp."""
    store = RunStore(path)
    config = store.config().to_dict()
    created, identity = _identity(store, config)
    stamp = created.replace(":", "-")
    task = "".join(c if c.isalnum() or c in "-." else "-" for c in str(config["benchmark"]))
    return f"{stamp}_{task}_{identity[44:64]}.json"


def _header(store: RunStore, totals: _Totals) -> tuple[dict[str, Any], SampleContext]:
    """(top-level fields before ``samples``, what every sample shares)."""
    config = store.config().to_dict()
    view = run_view(config)
    model = str(config["model"])
    bench = str(config["benchmark"])
    created, identity = _identity(store, config)
    samples_file = store.samples_path if store.samples_path.is_file() else store.path / "run.json"
    completed = _iso(None, samples_file)
    metrics = store.read_scores()
    models = role_models(config)
    ctx = SampleContext(view, model, models, view.mode(), view.protocol())
    role_usage = {role: usage_doc(u) for role, u in totals.roles.items()}
    model_usage: dict[str, dict[str, Any]] = {}
    for role, u in role_usage.items():
        merged = model_usage.setdefault(ctx.model_of(role), usage_doc({}))
        for key in merged:
            merged[key] += u[key]
    spec = {
        "eval_id": identity[:22], "run_id": identity[22:44], "created": created,
        "task": bench, "task_id": identity[44:64], "task_version": 0,
        "task_description": view.cls.description or None,
        "task_args": finite(config.get("options") or {}),
        "task_args_passed": finite(config.get("options") or {}),
        "dataset": {"name": bench, "location": config.get("data"), "samples": len(totals.ids)},
        "model": model, "model_base_url": config.get("base_url"),
        "model_args": finite(config.get("model_args") or {}),
        "config": {"epochs": int(config.get("epochs") or 1),
                   "limit": inspect_limit(config.get("limit")),
                   "sample_id": config.get("sample_ids"),
                   "max_samples": config.get("max_concurrency")},
        "packages": {str(k): str(v) for k, v in (config.get("versions") or {}).items()},
        "metadata": finite({"toolscore": {
            "run_dir": str(store.path), "mode": ctx.mode, "protocol": ctx.protocol,
            "roles": {k: v for k, v in {**models, **view.roles()}.items() if v},
            "benchmark_config": config.get("benchmark_config") or {},
            "format_version": config.get("format_version"), "note": view.note,
            "usage_by_role": totals.roles,
            "command": config.get("command") or []}}),
    }
    status = "started" if metrics is None else "error" if totals.errors else "success"
    head: dict[str, Any] = {
        "version": LOG_VERSION, "status": status, "eval": spec,
        "plan": {"name": "plan", "steps": [{"solver": f"toolscore/{bench}",
                                            "params": finite(config.get("options") or {})}],
                 "config": {}},
        "results": _results(bench, metrics, totals),
        "stats": {"started_at": created, "completed_at": completed if metrics else "",
                  "model_usage": model_usage, "role_usage": role_usage},
    }
    if totals.errors:
        head["error"] = {"message": f"{totals.errors} of {totals.total} samples ended in an "
                                    "infrastructure error (not scored); resuming the run "
                                    "retries exactly those",
                         "traceback": "", "traceback_ansi": ""}
    return head, ctx


def dumps(doc: Any) -> str:
    """One JSON document as Inspect reads it: no NaN or infinity (a tool call's arguments may
    hold one, as Python's JSON reader accepts them), which become null; text that is not valid
    Unicode (a lone surrogate in a model's reply) written with ASCII escapes, losslessly."""
    try:
        text = json.dumps(doc, ensure_ascii=False, allow_nan=False, default=str)
    except ValueError:
        doc = finite(doc)
        text = json.dumps(doc, ensure_ascii=False, allow_nan=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(doc, ensure_ascii=True, allow_nan=False, default=str)
    return text


def inspect_parts(path: str | Path) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """(the log's fields besides its samples, the samples one at a time in file order)."""
    store = RunStore(path)
    store.config()  # a clear error for a path that is not a run directory
    totals = _Totals(store)
    head, ctx = _header(store, totals)
    return head, (inspect_sample(r, ctx) for _, r in store.records_at(totals.numbers))


def write_inspect_log(path: str | Path, fh: IO[str]) -> int:
    """Write the run at ``path`` as an Inspect JSON log to ``fh``; returns the samples written."""
    head, samples = inspect_parts(path)
    fh.write(dumps(head)[:-1] + ', "samples": [')  # the header's fields first: Inspect reads
    written = 0                                     # them without parsing the samples
    for sample in samples:
        fh.write(",\n" if written else "\n")
        fh.write(dumps(sample))
        written += 1
    fh.write("\n]}\n")
    return written


def export_inspect(path: str | Path, out: str | Path | None = None) -> Path:
    """Write the log atomically to ``out`` (``.json``, or ``.eval`` for Inspect's zip) or, by
    default, to ``<run dir>/inspect/`` under Inspect's own file name (``inspect view
    --log-dir <run dir>/inspect`` lists it); returns the file written."""
    RunStore(path).config()  # a clear error for a path that is not a run directory
    target = Path(out) if out is not None else Path(path) / "inspect" / default_log_name(path)
    if target.suffix not in (".json", ".eval"):
        raise ValueError(f"{target}: an Inspect log file name must end in .json or .eval "
                         "(Inspect picks its reader by the extension)")
    if target.resolve().parent == Path(path).resolve() and target.name in (
            "run.json", "samples.jsonl", SCORES_FILE):
        raise ValueError(f"{target}: refusing to overwrite the run's own {target.name}")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        if target.suffix == ".eval":
            with open(tmp, "wb") as raw:
                write_eval_zip(*inspect_parts(path), raw, dumps)
        else:
            with open(tmp, "w", encoding="utf-8") as fh:
                write_inspect_log(path, fh)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def validate_inspect_log(path: str | Path) -> dict[str, Any]:
    """Load a written log with inspect_ai's own reader (``pip install 'toolscore[inspect]'``);
    returns what it read: status, samples, errored samples, score names."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise ImportError("--validate needs inspect_ai: pip install 'toolscore[inspect]'"
                          ) from None
    try:
        log = read_eval_log(str(path))
    except Exception as e:  # its validation errors: say which file, in one line
        first = " ".join(str(e).split())[:300]
        raise ValueError(f"{path}: inspect_ai cannot read this log: {first}") from None
    samples = log.samples or []
    return {"status": log.status, "samples": len(samples),
            "errors": sum(1 for s in samples if s.error is not None),
            "scores": [s.name for s in (log.results.scores if log.results else [])]}



def validation_line(path: str | Path) -> str:
    """:func:`validate_inspect_log` as one line for the terminal."""
    read = validate_inspect_log(path)
    return (f"inspect_ai read {path}: status {read['status']}, {read['samples']} samples "
            f"({read['errors']} with an error), scores {', '.join(read['scores']) or '-'}")


def inspect_limit(limit: Any) -> Any:
    """run.json's limit as Inspect stores it: N as is, samples A to B (counted from 1) as
    Inspect's (start, stop) slice, (A - 1, B)."""
    if isinstance(limit, list) and len(limit) == 2:
        return [limit[0] - 1, limit[1]]
    return limit
