"""Where each unit of a sweep stands, read from its run directory's files only.

No database and no server: the run directories are the state, so status is right whichever
executor ran them (a local pool, Ray, SLURM array tasks) and even while they run.

* pending: no ``run.json`` yet;
* done: every (sample, epoch) has an ok record, and ``scores.json`` is written;
* error: every (sample, epoch) has a record, some are infrastructure errors (resubmitting
  the plan retries exactly those);
* partial: started, not finished (running now, or stopped: resubmitting resumes it).
"""

from __future__ import annotations

from typing import Any

from toolscore.records import SCORES_FILE, RunStore, RunStoreError
from toolscore.sweeps.plan import Manifest, Unit

STATES = ("done", "partial", "error", "pending")


def unit_status(unit: Unit) -> dict[str, Any]:
    """The unit's manifest entry with ``state``, ``ok``, ``errors`` and ``expected``."""
    store = RunStore(unit.run_dir)
    doc = {**unit.to_dict(), "expected": unit.samples, "ok": 0, "errors": 0}
    if not store.exists():
        return {**doc, "state": "pending"}
    try:
        latest = store.latest()
    except RunStoreError as e:
        return {**doc, "state": "partial", "message": str(e)}
    ok = sum(r.get("status") == "ok" for r in latest.values())
    errors = len(latest) - ok
    scored = (store.path / SCORES_FILE).is_file()
    if ok >= unit.samples and scored:
        state = "done"
    elif errors and ok + errors >= unit.samples and scored:
        state = "error"
    else:
        state = "partial"
    return {**doc, "ok": ok, "errors": errors, "state": state}


def sweep_status(manifest: Manifest) -> dict[str, Any]:
    """Every unit's status and the counts per state (a document for ``--json``)."""
    units = [unit_status(u) for u in manifest.units]
    counts = {s: sum(u["state"] == s for u in units) for s in STATES}
    return {"source": manifest.source, "counts": counts, "units": units,
            "samples": {"expected": sum(u["expected"] for u in units),
                        "ok": sum(u["ok"] for u in units),
                        "errors": sum(u["errors"] for u in units)}}
