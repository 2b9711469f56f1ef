"""Loading the ACS (arithmetic constraint satisfaction) release: one row per constraint.

The csv has one row per (request, response, constraint) with the human label. Rows are
validated while loading because a misread label silently shifts every accuracy computed from
it: a bad row raises ``DataError`` with one line naming the file, the row and the field.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from toolscore.data import DataError, read_text

DOMAINS = ("meal-planning", "workout-routine_cardio", "workout-routine_strength", "schedule")
COLUMNS = ("row_id", "user_request", "agent_response", "constraint", "is_constraint_satisfied",
           "domain")
DEV_FILE = "acs_dev.csv"


@dataclass(frozen=True)
class AcsRow:
    """One human-labelled constraint of one response."""

    row_id: str
    request: str
    response: str
    constraint: str
    label: bool
    domain: str

    @property
    def request_key(self) -> str:
        """The request this row belongs to: rows of one request share its response, so they
        are resampled together and never used as examples for one another."""
        return self.request + "\x00" + self.response


def request_id(row: AcsRow) -> str:
    """A short stable id of the row's request (request and response text)."""
    from toolscore.models.cache import sha256_json

    return sha256_json([row.request, row.response])[:12]


def default_dir() -> Path:
    """The ACS dataset folder the dataset lookup finds (``$TOOLSCORE_DATA/acs``, the user
    cache); a one-line DataNotFound saying where it looked otherwise."""
    from toolscore.benchmarks.acs.dataset import SOURCE
    from toolscore.data import find_dataset

    return find_dataset(SOURCE, download=False)


def load_rows(path: str | Path | None = None) -> list[AcsRow]:
    """Read an ACS csv (a file, or a folder holding ``acs_dev.csv``) into validated rows."""
    p = Path(path) if path is not None else default_dir()
    if p.is_dir():
        p = p / DEV_FILE
    with io.StringIO(read_text(p), newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise DataError(f"{p}: header: missing column(s) {', '.join(missing)}")
        rows: list[AcsRow] = []
        seen: set[str] = set()
        for n, rec in enumerate(reader, start=2):
            if None in rec or None in rec.values():  # DictReader's marks of a ragged row
                raise DataError(f"{p}: line {n}: the row's cells do not match the header's "
                                f"{len(reader.fieldnames or [])} columns")
            rows.append(_row(p, n, rec, seen))
    if not rows:
        raise DataError(f"{p}: no rows (a header alone)")
    return rows


def _row(path: Path, line: int, rec: dict[str, str], seen: set[str]) -> AcsRow:
    rid = (rec.get("row_id") or "").strip()
    where = f"{path.name}: line {line} (row_id {rid or '?'})"
    if not rid:
        raise DataError(f"{where}: field row_id: empty")
    if rid in seen:
        raise DataError(f"{where}: field row_id: duplicate")
    seen.add(rid)
    label = (rec.get("is_constraint_satisfied") or "").strip()
    if label not in ("0", "1"):
        raise DataError(f"{where}: field is_constraint_satisfied: expected 0 or 1, got {label!r}")
    domain = (rec.get("domain") or "").strip()
    if domain not in DOMAINS:
        raise DataError(f"{where}: field domain: unknown domain {domain!r}")
    for field in ("user_request", "agent_response", "constraint"):
        if not (rec.get(field) or "").strip():
            raise DataError(f"{where}: field {field}: empty")
    return AcsRow(row_id=rid, request=rec["user_request"], response=rec["agent_response"],
                  constraint=rec["constraint"].strip(), label=label == "1", domain=domain)
