"""The records of the HTML report as the page receives them: gzip-compressed JSON chunks that
the page's script opens on demand and renders with DOM text nodes.

A page that rendered every record on the server grew with the run (42 MB and 32 s for 10,000
ToolTalk records) and made the browser lay out every transcript before showing anything. Here
each record becomes a small *head* (id, epoch, split, verdict, the benchmark's summary and
tags, facets: what the list and the filters need, kept uncompressed in the page's index) and a
*body* (scores, error, the benchmark's view, or the stored output when the view shows
nothing), and the bodies of :data:`CHUNK` consecutive records are gzipped together and
base64-encoded into one inert ``<script type="application/octet-stream">`` block. The page
decompresses a block (``DecompressionStream``) only when one of its records is opened.

Record text is never HTML here: it travels as JSON inside base64 (whose alphabet cannot close
an element) and the page's script puts it into the document with ``textContent`` only. The
view's shape is :meth:`~toolscore.benchmarks.base.Benchmark.record_view`'s (``summary``,
``tags``, ``messages``, ``details``, ``sections`` of ``title/tags/columns/rows/empty/messages/
text/text_label``; cells are text, numbers, ``{"text", "tone"}``, ``{"json"}`` or lists).
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import math
import re
from collections.abc import Iterator
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

from toolscore.report.export.table import printable
from toolscore.report.html.data import failed
from toolscore.report.intervals import split_of

CHUNK = 200  # records per compressed block: small enough to open at once, big enough to pack
SUMMARY_CHARS = 300  # of the benchmark's one-line summary kept in the (uncompressed) index
LEVEL = 3  # gzip: on 10,000 ToolTalk records half the time of 6 (0.08 s); blocks 0.6 -> 1.8 MB
BLOCK = re.compile(r'<script type="application/octet-stream" class="chunk">([A-Za-z0-9+/=]*)'
                   r"</script>")


def esc(value: Any) -> str:
    """HTML-escaped text with controls and bidi overrides made visible (:func:`printable`)."""
    return html.escape(printable(str(value)), quote=True)


def score_line(scores: dict[str, Any]) -> list[list[str]]:
    """``[[key, shown value], ...]`` of the scalar scores (nested ones are the view's job)."""
    return [[str(k), f"{v:.3g}" if isinstance(v, float) else str(v)]
            for k, v in scores.items() if not isinstance(v, (dict, list))]


def _short(value: Any) -> Any:
    if isinstance(value, str) and len(value) > SUMMARY_CHARS:
        return value[:SUMMARY_CHARS] + " …"
    return value


def record_head(idx: int, record: dict[str, Any], metric: str | None, view: dict[str, Any],
                facets: dict[str, list[str]]) -> dict[str, Any]:
    """What the list and the filters show of one record without opening it."""
    tags = view.get("tags")
    return {"idx": idx, "id": str(record.get("id")), "epoch": int(record.get("epoch", 0)),
            "split": split_of(record), "failed": failed(record, metric),
            "error": record.get("status") != "ok", "facets": facets,
            "summary": _short(view.get("summary") or ""),
            "tags": [_short(t) for t in tags] if isinstance(tags, list) else []}


def record_body(record: dict[str, Any], view: dict[str, Any]) -> dict[str, Any]:
    """What opening one record shows: its scores, its error, the benchmark's view of it, and
    the stored output when the view has neither sections nor messages."""
    sections = view.get("sections")
    sections = [s for s in sections if isinstance(s, dict)] if isinstance(sections, list) else []
    shows = bool(sections) or bool(view.get("messages"))
    # the head carries summary and tags; a dialogue that the sections show turn by turn is
    # not shown again whole (the page's rule), so it is not sent twice either
    drop = {"summary", "tags"} | ({"messages"} if any(s.get("messages") for s in sections)
                                  else set())
    body = {"scores": score_line(record.get("scores") or {}), "error": record.get("error"),
            "view": {k: v for k, v in view.items() if k not in drop}}
    if not shows and record.get("output") is not None:
        body["output"] = record["output"]
    return body


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities as strings (JSON has no such numbers)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def dumps(value: Any) -> str:
    """Strict JSON (ASCII, so a lone surrogate from a model cannot break the encoding); the
    rare value holding NaN is walked once to spell it out."""
    try:
        return json.dumps(value, default=str, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(value), default=str, allow_nan=False)


def encode(bodies: list[dict[str, Any]]) -> bytes:
    """The bodies as a JSON array in UTF-8 bytes (what the page's script decodes).

    pydantic's serializer (a core dependency) writes it three times faster than the standard
    library, which was a sixth of the page's time. Where the two could differ the standard
    library's :func:`dumps` is used, as before: text it cannot encode (a lone surrogate) and
    any block where NaN or Infinity appear (spelled out as strings there, not as the literals
    JSON lacks; a block that merely mentions the word takes the slow path too)."""
    try:
        data = to_json(bodies, fallback=str)
    except (PydanticSerializationError, ValueError):
        data = b""
    if not data or b"NaN" in data or b"Infinity" in data:
        data = dumps(bodies).encode("ascii")
    return data


def pack(bodies: list[dict[str, Any]]) -> str:
    """One block: the bodies as a JSON array, gzipped (mtime 0: same bytes for the same run)
    and base64-encoded."""
    data = gzip.compress(encode(bodies), compresslevel=LEVEL, mtime=0)
    return base64.b64encode(data).decode("ascii")


def blocks(bodies: Iterator[dict[str, Any]], size: int = CHUNK) -> Iterator[str]:
    """The ``<script>`` blocks of a stream of bodies, ``size`` per block: only one block's
    bodies are held at a time."""
    batch: list[dict[str, Any]] = []
    for body in bodies:
        batch.append(body)
        if len(batch) == size:
            yield f'<script type="application/octet-stream" class="chunk">{pack(batch)}</script>'
            batch = []
    if batch:
        yield f'<script type="application/octet-stream" class="chunk">{pack(batch)}</script>'


def page_bodies(page: str) -> list[dict[str, Any]]:
    """Every record body of a report page, in index order: what the page's script decompresses
    (for tests and for tools that read a report back)."""
    return [body for b in BLOCK.findall(page)
            for body in json.loads(gzip.decompress(base64.b64decode(b)))]
