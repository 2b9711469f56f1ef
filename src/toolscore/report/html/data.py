"""The numbers behind the HTML report that no benchmark supplies: which records failed, the
spread of per-sample scores, and the index the page's filters work on.

Kept apart from the page itself (:mod:`toolscore.report.html.page`) so they can be tested without
parsing HTML. Headline intervals are in :mod:`toolscore.report.intervals`; everything specific
to one benchmark (breakdowns, facets, how a record reads) comes from the benchmark through
:mod:`toolscore.report.view`.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np


def failed(record: dict[str, Any], metric: str | None) -> bool:
    """An errored record, or one whose primary pass/fail score is false."""
    if record.get("status") != "ok":
        return True
    return metric is not None and (record.get("scores") or {}).get(metric) is False


def distributions(records: list[dict[str, Any]], bins: int = 10) -> dict[str, list[int]]:
    """Histograms (``bins`` equal bins over [0, 1]) of the per-sample fractional scores."""
    values: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if r.get("status") != "ok":
            continue
        for key, v in (r.get("scores") or {}).items():
            if isinstance(v, float) and 0.0 <= v <= 1.0:
                values[key].append(v)
    return {k: np.histogram(np.array(v), bins=bins, range=(0.0, 1.0))[0].tolist()
            for k, v in values.items()}


def sample_index(heads: list[dict[str, Any]]) -> dict[str, Any]:
    """What the page's list and filters need: per record its head
    (:func:`toolscore.report.html.samples.record_head`: id, split, pass/fail, facet values,
    the benchmark's summary and tags); the facets (name and every value, sorted) and the
    splits."""
    names: dict[str, dict[str, None]] = {}
    for head in heads:
        for name, values in head["facets"].items():
            seen = names.setdefault(name, {})
            for v in values:
                seen.setdefault(v, None)
    return {"samples": heads,
            "facets": [{"name": n, "values": sorted(vs)} for n, vs in names.items()],
            "splits": sorted({h["split"] for h in heads})}
