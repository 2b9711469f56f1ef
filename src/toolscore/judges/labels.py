"""Human labels and judge verdicts from files, so any judge can be measured against any
human-labelled set (not only the ACS rows).

Both files are JSON lines or CSV with one item per line/row, joined on an id field. A label is a
boolean (true/false, 1/0, yes/no, pass/fail, satisfied/unsatisfied); a verdict may also be empty
or null (an abstention). Items may carry a group (reported separately) and a cluster (resampled
together by the bootstrap, e.g. several items judged on one response).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolscore.data import DataError, iter_jsonl, read_text

_TRUE = {"true", "1", "yes", "pass", "passed", "satisfied", "solved", "y", "t"}
_FALSE = {"false", "0", "no", "fail", "failed", "unsatisfied", "unsolved", "n", "f"}


@dataclass(frozen=True)
class LabelledItem:
    id: str
    human: bool
    label: bool | None
    group: str
    cluster: str


def read_items(path: Path) -> list[dict[str, Any]]:
    """Rows of a .jsonl/.json-lines or .csv file as dicts (one-line errors name file and line)."""
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    if path.suffix.lower() == ".csv":
        with io.StringIO(read_text(path), newline="") as f:
            return list(csv.DictReader(f))
    return [row for _, row in iter_jsonl(path)]


def to_bool(value: Any, *, allow_none: bool, where: str) -> bool | None:
    if isinstance(value, bool):
        return value
    if value is None or (isinstance(value, str) and not value.strip()):
        if allow_none:
            return None
        raise DataError(f"{where}: missing label")
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if allow_none and text in {"null", "none", "unsure", "abstain"}:
        return None
    raise DataError(f"{where}: not a yes/no label: {value!r}")


def join_labels(labels_path: Path, verdicts_path: Path, *, id_field: str = "id",
                label_field: str = "label", verdict_field: str = "label",
                group_field: str | None = None,
                cluster_field: str | None = None) -> tuple[list[LabelledItem], int]:
    """Human-labelled items joined with the judge's verdicts; returns (items, unjudged count).

    Items the judge did not judge are counted, not silently dropped; verdicts for unknown ids
    are an error (they usually mean the files do not belong together).
    """
    humans: dict[str, dict[str, Any]] = {}
    for n, row in enumerate(read_items(labels_path), 1):
        if id_field not in row:
            raise DataError(f"{labels_path}: item {n}: missing field {id_field!r}")
        humans[str(row[id_field])] = row
    verdicts: dict[str, Any] = {}
    for n, row in enumerate(read_items(verdicts_path), 1):
        if id_field not in row:
            raise DataError(f"{verdicts_path}: item {n}: missing field {id_field!r}")
        key = str(row[id_field])
        if key not in humans:
            raise DataError(f"{verdicts_path}: item {n}: id {key!r} has no human label in "
                            f"{labels_path}")
        verdicts[key] = row.get(verdict_field)
    items = []
    for key, row in humans.items():
        if key not in verdicts:
            continue
        where = f"{labels_path}: id {key!r}: field {label_field!r}"
        human = to_bool(row.get(label_field), allow_none=False, where=where)
        label = to_bool(verdicts[key], allow_none=True,
                        where=f"{verdicts_path}: id {key!r}: field {verdict_field!r}")
        items.append(LabelledItem(
            id=key, human=bool(human), label=label,
            group=str(row.get(group_field, "")) if group_field else "",
            cluster=str(row.get(cluster_field, key)) if cluster_field else key))
    return items, len(humans) - len(items)


def agreement_from_files(labels_path: Path, verdicts_path: Path, *, id_field: str = "id",
                         label_field: str = "label", verdict_field: str = "label",
                         group_field: str | None = None, cluster_field: str | None = None,
                         resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """How well recorded verdicts agree with human labels (any labelled set, any judge): the
    same document as the ACS benchmark's, with items and clusters named generically."""
    from toolscore.stats.classification import classification_report

    items, unjudged = join_labels(labels_path, verdicts_path, id_field=id_field,
                                  label_field=label_field, verdict_field=verdict_field,
                                  group_field=group_field, cluster_field=cluster_field)
    rep = classification_report(
        [i.human for i in items], [i.label for i in items],
        groups=[i.group for i in items] if group_field else None,
        clusters=[i.cluster for i in items], n_resamples=resamples, seed=seed)
    return {
        "judge": str(verdicts_path), "labels": str(labels_path), "rows": len(items),
        "how": "recorded verdicts", "items_name": "labelled items", "clusters_name": "clusters",
        "unjudged": unjudged, "errors": 0, "shots": 0, "votes": 1,
        "group": group_field or "none", "requests": len({i.cluster for i in items}),
        "abstentions": sum(i.label is None for i in items),
        "baseline_always_satisfied": sum(i.human for i in items) / len(items) if items else None,
        "report": rep.to_dict(),
    }
