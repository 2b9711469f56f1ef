"""BFCL's format-sensitivity category: 200 single-turn entries, each asked under every prompt
configuration (26: :func:`toolscore.benchmarks.bfcl.prompt_docs.sensitivity_configs`), in
prompting mode only.

The released ``BFCL_v4_format_sensitivity.json`` maps source categories to entry ids; the
entries are taken in that category order and, within a category, in the dataset's order, and
each is repeated per configuration. An entry's id is BFCL's:
``format_sensitivity_<n>:<configuration>:<source id>``, ``n`` counting every (entry,
configuration) pair. The category is not scored into BFCL's overall figures; its summary is
the accuracy of each configuration, their largest difference and their standard deviation (in
percentage points, rounded to two places), as BFCL's ``data_format_sensitivity.csv`` has them.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import Sample
from toolscore.benchmarks.bfcl.data import PREFIX, load_category
from toolscore.benchmarks.bfcl.prompt_docs import sensitivity_configs
from toolscore.data import DataError, read_text

CATEGORY = "format_sensitivity"


def id_file(data_dir: Path) -> Path:
    return data_dir / f"{PREFIX}_{CATEGORY}.json"


def samples(data_dir: Path) -> list[Sample]:
    try:
        wanted = json.loads(read_text(id_file(data_dir)))
    except ValueError as e:
        raise DataError(f"{id_file(data_dir)}: not JSON ({e})") from None
    configs = [str(c) for c in sensitivity_configs()]
    out: list[Sample] = []
    for source, ids in wanted.items():
        if not ids:
            continue
        chosen = set(ids)
        for entry, answer in load_category(data_dir, source):
            if entry["id"] not in chosen:
                continue
            for config in configs:
                sample_id = f"{CATEGORY}_{len(out)}:{config}:{entry['id']}"
                out.append(Sample(sample_id, {"category": CATEGORY, "entry": entry,
                                              "answer": answer, "config": config,
                                              "source": source, "source_id": entry["id"]},
                                  {"split": CATEGORY}))
    return out


def config_of(sample_id: str) -> str:
    return sample_id.split(":")[1]


def summarise(rows: list[tuple[str, bool]]) -> dict[str, Any]:
    """From (sample id, valid) pairs: overall accuracy, each configuration's accuracy (in the
    order the configurations first appear), and the spread across configurations."""
    tally: dict[str, list[int]] = {}
    for sample_id, valid in rows:
        t = tally.setdefault(config_of(sample_id), [0, 0])
        t[0] += bool(valid)
        t[1] += 1
    per_config = {c: {"accuracy": ok / n, "correct": ok, "total": n}
                  for c, (ok, n) in tally.items()}
    accuracies = [v["accuracy"] for v in per_config.values()]
    if len(accuracies) > 1:
        spread = {"max_delta": round((max(accuracies) - min(accuracies)) * 100, 2),
                  "variance": round(statistics.variance(accuracies) * 100 ** 2, 2),
                  "std": round(statistics.stdev(accuracies) * 100, 2)}
    else:
        spread = {"max_delta": 0.0, "variance": 0.0, "std": 0.0}
    correct = sum(ok for ok, _ in tally.values())
    total = sum(n for _, n in tally.values())
    return {"accuracy": correct / total if total else 0.0, "correct": correct, "total": total,
            **spread, "configs": per_config}


def header_extra(metrics: dict[str, Any]) -> dict[str, Any]:
    """The fields BFCL's format-sensitivity score file adds to its header line (none for
    another category)."""
    if "max_delta" not in metrics:
        return {}
    return {"accuracy_max_delta": metrics["max_delta"], "accuracy_variance": metrics["variance"],
            "accuracy_std": metrics["std"],
            **{c: {"accuracy": v["accuracy"], "correct_count": v["correct"],
                   "total_count": v["total"]} for c, v in metrics["configs"].items()}}


def summary_lines(metrics: dict[str, Any]) -> list[str]:
    found = metrics.get(CATEGORY)
    if not isinstance(found, dict) or "max_delta" not in found:
        return []
    return [f"BFCL format sensitivity: accuracy {found['accuracy'] * 100:.2f}% over "
            f"{len(found.get('configs') or {})} prompt configurations, max delta "
            f"{found['max_delta']}, standard deviation {found['std']} (percentage points; "
            "not part of overall, as in BFCL)"]


def table(summary: dict[str, Any] | None, model: str) -> str:
    """The format-sensitivity table as BFCL writes it (``data_format_sensitivity.csv``, one
    model); "N/A" where the category was not run."""
    configs = [str(c) for c in sensitivity_configs()]
    header = ["Rank", "Model", "Format Sensitivity Max Delta",
              "Format Sensitivity Standard Deviation", *(f"Config {c}" for c in configs)]
    summary = summary or {}
    found = summary.get("configs") or {}
    row = ["1", model, str(summary.get("max_delta", "N/A")), str(summary.get("std", "N/A"))]
    row += [f"{found[c]['accuracy'] * 100:.2f}%" if c in found else "N/A" for c in configs]
    return ",".join(header) + "\n" + ",".join(row)
