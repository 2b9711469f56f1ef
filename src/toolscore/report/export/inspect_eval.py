"""Inspect's ``.eval`` log container: a zip archive of the same documents as the ``.json`` log.

Inspect's own default format, and the one its viewer handles best on large runs: the viewer
reads the header and a short summary of every sample first and opens a sample's transcript only
when it is shown, where a ``.json`` log is parsed whole; the archive is also compressed (a
9,996-record ToolTalk run: 36 MB of JSON). A ``.eval`` file is listed by ``inspect view``
whatever its name. Members, as Inspect's reader looks them up: ``header.json`` (the log without
samples), ``_journal/start.json`` (spec and plan), ``samples/<id>_epoch_<n>.json`` (one per
sample) and ``summaries.json`` (the list the viewer shows before opening a sample). A sample's
member is named from its id, so the writer takes only names that are safe to extract
(:mod:`toolscore.report.export.inspect_names`) and never writes one name twice.

Samples are written one at a time and their summaries spooled to a temporary file, so memory
stays flat in the number of records here too.
"""

from __future__ import annotations

import tempfile
import zipfile
from collections.abc import Callable, Iterator
from typing import IO, Any

from toolscore.report.export.inspect_names import sample_member

SUMMARY_METADATA = (str, int, float, bool, type(None))  # the small values a list row shows


def summary_of(sample: dict[str, Any]) -> dict[str, Any]:
    """The row of one sample in the viewer's list: no transcript, no nested score details."""
    doc: dict[str, Any] = {k: sample[k] for k in ("id", "epoch", "input", "target", "model_usage",
                                  "role_usage", "total_time") if k in sample}
    doc["metadata"] = {k: v for k, v in (sample.get("metadata") or {}).items()
                       if isinstance(v, SUMMARY_METADATA)}
    if sample.get("scores"):
        doc["scores"] = {name: {k: v for k, v in score.items() if k != "metadata"}
                         for name, score in sample["scores"].items()}
    if sample.get("error"):
        doc["error"] = sample["error"]["message"]
    doc.update(completed=True, message_count=len(sample.get("messages") or []))
    return doc


def write_eval_zip(head: dict[str, Any], samples: Iterator[dict[str, Any]], raw: IO[bytes],
                   dumps: Callable[[Any], str]) -> int:
    """Write the archive to the binary stream ``raw``; returns the samples written."""
    written = 0
    names: set[str] = set()
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool, \
            zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_journal/start.json", dumps(
            {"version": head["version"], "eval": head["eval"], "plan": head["plan"]}))
        for sample in samples:
            name = sample_member(str(sample["id"]), sample["epoch"])
            if name in names:
                raise ValueError(f"two samples would be stored as {name} in the archive")
            names.add(name)
            archive.writestr(name, dumps(sample))
            spool.write(("," if written else "") + dumps(summary_of(sample)))
            written += 1
        spool.seek(0)
        with archive.open("summaries.json", "w", force_zip64=True) as member:
            member.write(b"[")
            for chunk in iter(lambda: spool.read(1 << 16), ""):
                member.write(chunk.encode("utf-8"))
            member.write(b"]")
        archive.writestr("header.json", dumps(head))
    return written
