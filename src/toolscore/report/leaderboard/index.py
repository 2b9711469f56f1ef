"""The results index: what the leaderboard needs of each finished run, one table beside the runs.

A leaderboard of a sweep of 1,000 runs that reads every run's records spends its time decoding
them and recomputing each run's intervals. The index keeps, per run, one row per (split,
headline metric) with everything :func:`~.build.run_cell` would compute from the run, so
``toolscore leaderboard`` reads one table instead of walking the runs:

* the cell's figures: value, 95% interval, n, pass^k and noise floors, tokens, calls, errors,
  mode, the benchmark's own board columns (bootstrap seed 0, 2,000 resamples: the
  leaderboard's defaults; other ``--seed``/``--resamples`` walk the runs);
* usage per model role, so that the cost column is computed from a price table given now,
  exactly as the walk computes it;
* per (sample, epoch) record, the scores the headline metric is defined on (its numerator and
  denominator), so the paired tests against the best model run on the same pairs with the
  same values as when the records are read: the ties and p-values are exact, not estimated.

Where it is: ``<folder>/.toolscore-index/`` beside the run directories it indexes (a sweep's
``out``). Several writers (pool workers' parent, Ray's driver, array tasks on many nodes) never
share a file: each run has its own part, ``parts/<run>.jsonl``, written whole to a temporary
file and renamed into place. A compaction (:func:`compact`, under a lock) gathers the parts
into one table, ``index.parquet`` when pyarrow is installed (extra ``report``), else
``index.jsonl``, written the same way; it deletes no part, and a reader takes a part instead of
the table's rows when the part changed since it was compacted, so nothing a writer adds is
lost to a compaction running at the same time.

A row is used only while its run has not changed: it holds the size and modification time of
the run's ``run.json``, ``samples.jsonl`` and ``scores.json`` and the toolscore version that
computed it; any difference and the run is read again (:func:`indexed_runs` says how many).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolscore.records import RunStore
from toolscore.records.store import RUN_FILE, SAMPLES_FILE, SCORES_FILE
from toolscore.report.intervals import split_of
from toolscore.report.overview import overview_of, paused_collector
from toolscore.report.usage import role_models, usage_by_model, usage_by_role
from toolscore.report.view import run_view

INDEX_DIR = ".toolscore-index"
PARTS = "parts"
INDEX_VERSION = 1
SEED, RESAMPLES = 0, 2000  # the leaderboard's defaults
NO_MODEL = "null"  # a role's tokens of no known model: JSON writes the None key so
READ = ("index_version", "toolscore", "run", "stamp", "seed", "n_resamples", "benchmark",
        "split", "metric", "run_facts", "row_facts", "split_records", "part")  # what it uses


def _version() -> str:
    import toolscore

    return str(toolscore.__version__)


def run_stamp(run_dir: str | Path) -> str:
    """Size and modification time of the files a cell is computed from (None: no file)."""
    out: list[list[int] | None] = []
    for name in (RUN_FILE, SAMPLES_FILE, SCORES_FILE):
        try:
            st = os.stat(os.path.join(run_dir, name))
            out.append([st.st_mtime_ns, st.st_size])
        except OSError:
            out.append(None)
    return json.dumps(out)


def _plain(value: Any) -> Any:
    """A score as :func:`~toolscore.report.intervals.value_of` may read it (a bool stays a
    bool, for the exact McNemar test); anything it would not read is None."""
    if isinstance(value, bool) or (isinstance(value, (int, float)) and value == value
                                   and value not in (float("inf"), float("-inf"))):
        return value
    return None


# -- writing ---------------------------------------------------------------------------------
def index_rows(run_dir: str | Path, *, seed: int = SEED,
               n_resamples: int = RESAMPLES) -> list[dict[str, Any]]:
    """The index rows of one run: one per (split, headline metric), at least one."""
    store = RunStore(run_dir)
    stamp = run_stamp(store.path)  # before reading: a run changed meanwhile reads as stale
    config = store.read_config()
    view = run_view(config)
    with paused_collector():
        records = sorted(store.latest(view.cls.summary_output).values(),
                         key=lambda r: (str(r["id"]), int(r.get("epoch", 0))))
        scores = store.read_scores()
        doc = overview_of(store.path, config, records, scores, view, seed=seed, prices=None,
                          n_resamples=n_resamples)
    ok = [r for r in records if r.get("status") == "ok"]
    specs = view.interval_metrics(ok)
    splits = doc["intervals"]["splits"]
    repeats: dict[str, Any] = {}
    for key, rep in ((doc.get("repeats") or {}).get("splits") or {}).items():
        if rep and rep.get("epochs", 0) > 1:
            k = str(rep["epochs"])
            repeats[key] = {"pass_hat_k": {"k": int(k), "value": rep["pass_hat_k"].get(k),
                                           "metric": doc["repeats"].get("metric"),
                                           "samples": rep["samples_at_k"].get(k)},
                            "noise_floor": rep.get("noise_floor_k_epochs"),
                            "noise_floor_single": rep.get("noise_floor")}
    epochs = int(doc["epochs"])
    counts = doc["counts"].get("all", {"samples": 0, "records": 0, "errors": 0})
    run = {"benchmark": str(config.get("benchmark")), "model": config.get("model"),
           "model_args": config.get("model_args") or {}, "options": config.get("options") or {},
           "mode": doc["mode"], "epochs": epochs, "note": doc["note"],
           "tokens": doc["usage"]["tokens"], "calls": doc["usage"]["calls"],
           "records": counts["records"], "errors": counts["errors"],
           "columns": view.cls.board_columns(scores or {}),
           "usage_by_role": usage_by_role(records, epochs), "role_models": role_models(config),
           "usage_by_model": usage_by_model(records, role_models(config)),
           "specs": [dataclasses.asdict(s) for s in specs], "splits": list(splits),
           "repeats": repeats}
    common = {"index_version": INDEX_VERSION, "toolscore": _version(),
              "run": store.path.name, "stamp": stamp, "seed": seed, "n_resamples": n_resamples,
              "benchmark": run["benchmark"], "model": run["model"],
              "options": json.dumps(run["options"], sort_keys=True, default=str),
              "epochs": epochs, "tokens": run["tokens"], "calls": run["calls"],
              "errors": run["errors"], "run_facts": None, "split_records": None}
    fields = list(dict.fromkeys(f for s in specs for f in (s.numerator, s.denominator)
                                if f is not None))
    rows = []
    for key, metric_rows in splits.items():
        in_split = [r for r in ok if key == "all" or split_of(r) == key]
        kept = json.dumps({"fields": fields, "records": [
            [str(r["id"]), int(r.get("epoch", 0)),
             *(_plain((r.get("scores") or {}).get(f)) for f in fields)] for r in in_split]})
        for i, row in enumerate(metric_rows):
            cell = {k: row[k] for k in ("value", "low", "high", "n", "published")}
            rows.append({**common, "split": key, "metric": row["label"],
                         "value": _number(row["value"]), "low": _number(row["low"]),
                         "high": _number(row["high"]), "n": row["n"],
                         "row_facts": json.dumps(cell),
                         "split_records": kept if i == 0 else None})
    if not rows:
        rows.append({**common, "split": None, "metric": None, "value": None, "low": None,
                     "high": None, "n": None, "row_facts": None})
    rows[0]["run_facts"] = json.dumps(run, default=str)  # once per run
    return rows


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def index_dir(folder: str | Path) -> Path:
    return Path(folder) / INDEX_DIR


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _valid(rows: list[dict[str, Any]] | None, run_dir: str | Path, seed: int,
           n_resamples: int, version: str) -> bool:
    first = rows[0] if rows else {}
    return bool(rows) and first.get("index_version") == INDEX_VERSION \
        and first.get("toolscore") == version and first.get("seed") == seed \
        and first.get("n_resamples") == n_resamples and first.get("stamp") == run_stamp(run_dir)


def index_run(run_dir: str | Path, *, force: bool = True, seed: int = SEED,
              n_resamples: int = RESAMPLES) -> Path | None:
    """Write (or replace) the index part of one finished run, beside it; returns the part,
    or None when it is already there for the run as it is (unless ``force``)."""
    run = Path(run_dir)
    part = index_dir(run.parent) / PARTS / f"{run.name}.jsonl"
    if not force and _valid(_read_part(part) if part.is_file() else None, run, seed,
                            n_resamples, _version()):
        return None
    rows = index_rows(run_dir, seed=seed, n_resamples=n_resamples)
    _write_atomic(part, "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8"))
    return part


def _part_tag(st: os.stat_result) -> str:
    return f"{st.st_mtime_ns}:{st.st_size}"


def _read_part(path: Path) -> list[dict[str, Any]] | None:
    try:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    except (OSError, ValueError):
        return None
    return rows if rows and all(isinstance(r, dict) for r in rows) else None


@contextlib.contextmanager
def _lock(folder: Path) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a+b") as f:
        try:
            import fcntl

            fcntl.flock(f, fcntl.LOCK_EX)
        except (ImportError, OSError):  # no flock here: one compaction at a time by convention
            pass
        yield


def compact(folder: str | Path) -> Path | None:
    """Gather the parts of ``folder``'s index into one table (see the module); returns it,
    or None when there are no parts."""
    where = index_dir(folder)
    with _lock(where):
        rows: list[dict[str, Any]] = []
        for run, (tag, path) in sorted(_parts(where).items()):
            got = _read_part(path)
            rows.extend({**r, "part": tag} for r in got or [] if r.get("run") == run)
        if not rows:
            return None
        if _has_pyarrow():
            pa, pq = _pyarrow()
            table = pa.Table.from_pylist(rows)
            fd, tmp = tempfile.mkstemp(prefix=".index.", suffix=".parquet", dir=where)
            os.close(fd)
            try:
                pq.write_table(table, tmp)
                os.replace(tmp, where / "index.parquet")
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            with contextlib.suppress(OSError):  # one table only: the Parquet one
                os.unlink(where / "index.jsonl")
            return where / "index.parquet"
        _write_atomic(where / "index.jsonl",
                      "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8"))
        return where / "index.jsonl"


def _pyarrow() -> tuple[Any, Any]:
    """pyarrow and pyarrow.parquet (the extra ``report``; no type information)."""
    import importlib

    return importlib.import_module("pyarrow"), importlib.import_module("pyarrow.parquet")


def _has_pyarrow() -> bool:
    import importlib.util

    return importlib.util.find_spec("pyarrow") is not None


# -- reading ---------------------------------------------------------------------------------
def _parts(where: Path) -> dict[str, tuple[str, Path]]:
    found = {}
    with contextlib.suppress(OSError), os.scandir(where / PARTS) as entries:
        for e in entries:
            if e.name.endswith(".jsonl") and not e.name.startswith("."):
                with contextlib.suppress(OSError):
                    found[e.name[:-len(".jsonl")]] = (_part_tag(e.stat()), Path(e.path))
    return found


def _compacted(where: Path) -> list[dict[str, Any]]:
    parquet, lines = where / "index.parquet", where / "index.jsonl"
    if parquet.is_file() and _has_pyarrow():
        _, pq = _pyarrow()
        try:  # not pq.read_table: its dataset layer imports pandas (a second)
            with pq.ParquetFile(parquet) as table:
                names = [c for c in READ if c in table.schema_arrow.names]
                return list(table.read(columns=names).to_pylist())
        except (OSError, ValueError):
            return []
    if lines.is_file():
        return _read_part(lines) or []
    return []


def read_index(folder: str | Path) -> dict[str, list[dict[str, Any]]]:
    """``{run directory name: rows}`` of ``folder``'s index ({} when it has none)."""
    where = index_dir(folder)
    if not where.is_dir():
        return {}
    runs: dict[str, list[dict[str, Any]]] = {}
    for row in _compacted(where):
        runs.setdefault(str(row.get("run")), []).append(row)
    for run, (tag, path) in _parts(where).items():
        have = runs.get(run)
        if have and have[0].get("part") == tag:
            continue
        rows = _read_part(path)
        if rows is not None:
            runs[run] = rows
        else:
            runs.pop(run, None)
    return runs


def indexed_runs(run_dirs: list[str], *, seed: int,
                 n_resamples: int) -> tuple[dict[str, list[dict[str, Any]]], dict[str, int]]:
    """The valid index rows of those of ``run_dirs`` that have them, by run directory, and
    how many runs were found ``indexed``, ``stale`` (changed since, another version, other
    seed or resamples), ``missing`` (an index beside them without their rows) or in a folder
    with no index at all (``unindexed``)."""
    tables: dict[str, dict[str, list[dict[str, Any]]] | None] = {}
    out: dict[str, list[dict[str, Any]]] = {}
    counts = {"indexed": 0, "stale": 0, "missing": 0, "unindexed": 0}
    version = _version()
    for run_dir in run_dirs:
        path = Path(run_dir)
        parent = str(path.parent)
        if parent not in tables:
            tables[parent] = read_index(parent) if index_dir(parent).is_dir() else None
        table = tables[parent]
        rows = None if table is None else table.get(path.name)
        if table is None:
            counts["unindexed"] += 1
        elif not rows:
            counts["missing"] += 1
        elif not _valid(rows, path, seed, n_resamples, version):
            counts["stale"] += 1
        else:
            counts["indexed"] += 1
            out[run_dir] = rows
    return out, counts


def unit_states(units: list[tuple[str, int]]) -> dict[str, str]:
    """``{run_dir: state}`` of the sweep units (run directory, expected records) whose runs
    the index holds unchanged, as :func:`toolscore.sweeps.status.unit_status` says it from
    their records: done, error or partial."""
    valid, _ = indexed_runs([d for d, _ in units], seed=SEED, n_resamples=RESAMPLES)
    states = {}
    for run_dir, samples in units:
        rows = valid.get(run_dir)
        if rows is None:
            continue
        facts = json.loads(next(r["run_facts"] for r in rows if r.get("run_facts")))
        errors = int(facts["errors"])
        ok = int(facts["records"]) - errors
        scored = json.loads(rows[0]["stamp"])[2] is not None
        states[run_dir] = ("done" if ok >= samples and scored else "error"
                           if errors and ok + errors >= samples and scored else "partial")
    return states


def refresh(run_dirs: list[str], *, force: bool = False) -> dict[str, int]:
    """Index every run of ``run_dirs`` that the index lacks or holds stale (all of them with
    ``force``), then compact each folder's index; counts of ``indexed`` (written now),
    ``kept`` (already valid) and ``failed`` runs (unreadable: left to the leaderboard's walk,
    which says why)."""
    valid, _ = indexed_runs(run_dirs, seed=SEED, n_resamples=RESAMPLES)
    counts = {"indexed": 0, "kept": 0, "failed": 0}
    for run_dir in run_dirs:
        if run_dir in valid and not force:
            counts["kept"] += 1
            continue
        try:
            index_run(run_dir)
            counts["indexed"] += 1
        except Exception:  # noqa: BLE001 - a damaged run does not stop the others
            counts["failed"] += 1
    for folder in sorted({str(Path(r).parent) for r in run_dirs}):
        compact(folder)
    return counts
