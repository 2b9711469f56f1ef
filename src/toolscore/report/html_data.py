"""The numbers behind the HTML report that no benchmark supplies: which records failed, the
spread of per-sample scores, and the index the page's filters work on.

Kept apart from the page itself (:mod:`toolscore.report.html`) so they can be tested without
parsing HTML. Headline intervals are in :mod:`toolscore.report.intervals`; everything specific
to one benchmark (breakdowns, facets, how a record reads) comes from the benchmark through
:mod:`toolscore.report.view`.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from toolscore.report.intervals import split_of
from toolscore.report.view import RunView


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


def sample_index(records: list[dict[str, Any]], view: RunView, metric: str | None
                 ) -> dict[str, Any]:
    """What the filter script needs: per record its id, split, pass/fail and facet values;
    the facets (name and every value, in first-seen order) and the splits."""
    samples = []
    names: dict[str, dict[str, None]] = {}
    for idx, r in enumerate(records):
        facets = view.record_facets(r)
        for name, values in facets.items():
            seen = names.setdefault(name, {})
            for v in values:
                seen.setdefault(v, None)
        samples.append({"idx": idx, "id": str(r.get("id")), "epoch": int(r.get("epoch", 0)),
                        "split": split_of(r), "failed": failed(r, metric), "facets": facets})
    return {"samples": samples,
            "facets": [{"name": n, "values": sorted(vs)} for n, vs in names.items()],
            "splits": sorted({s["split"] for s in samples})}
