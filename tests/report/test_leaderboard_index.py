"""The results index: the leaderboard read from it is the leaderboard read from the runs.

Runs are made as a sweep leaves them, without a model: one oracle demo run of 2 epochs, copied
per model with some conversations failed (one call missed) and scored again by the benchmark,
in two boards (demo's seed 0 and 1). Each document is built both ways and compared as the
JSON ``toolscore leaderboard --json`` prints: the ties and p-values of the paired tests
(McNemar on success, a permutation test on precision), intervals, pass^k, cost, splits.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolscore.benchmarks.registry import make_benchmark
from toolscore.cli import app
from toolscore.records import RunStore
from toolscore.report.leaderboard import index as results_index
from toolscore.report.leaderboard.build import build_leaderboard
from toolscore.report.leaderboard.index import (
    INDEX_DIR,
    compact,
    index_run,
    indexed_runs,
    read_index,
    refresh,
    unit_states,
)
from toolscore.runs.api import evaluate

N = 200  # resamples
PRICES = {"openai/model-1": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}


def fail_some(record: dict[str, Any], rng: random.Random, p: float) -> dict[str, Any]:
    if rng.random() >= p:
        return record
    s = dict(record["scores"])
    s["matches"] = max(0, int(s["matches"]) - 1)
    s["success"] = s["final_state_success"] = False
    s["precision"] = s["matches"] / max(1, int(s["predictions"]))
    return {**record, "scores": s, "usage": {**record.get("usage", {}), "input_tokens": 10}}


def make_runs(root: Path, base: Path, models: int, boards: int) -> list[Path]:
    store = RunStore(base)
    config, records = store.read_config(), list(store.latest().values())
    bench = make_benchmark("demo", None, download=False, embedder="hashing")
    runs = []
    for board in range(boards):
        for model in range(models):
            rng = random.Random(100 * board + model)
            mine = [fail_some(r, rng, model / (models + 1)) for r in records]
            if model == models - 1:  # one infrastructure error, kept out of the scores
                mine[0] = {**mine[0], "status": "error", "error": "timeout"}
            run = RunStore(root / f"demo-m{model}-s{board}")
            run.path.mkdir(parents=True)
            run.write_config({**config, "model": f"openai/model-{model}",
                              "options": {**config["options"], "seed": board}})
            run.samples_path.write_text("".join(json.dumps(r) + "\n" for r in mine))
            run.write_scores(bench.aggregate([r for r in mine if r["status"] == "ok"]))
            runs.append(run.path)
    return runs


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("base") / "oracle"
    evaluate("demo", "oracle", out=out, epochs=2, embedder="hashing", cache=None)
    return out


@pytest.fixture()
def runs(tmp_path: Path, base: Path) -> list[Path]:
    return make_runs(tmp_path / "runs", base, models=5, boards=2)


def as_printed(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, default=str)


def both_ways(folder: Path, **kwargs: Any) -> tuple[str, str, list[str]]:
    notes: list[str] = []
    walked = build_leaderboard([folder], n_resamples=N, use_index=False, **kwargs)
    indexed = build_leaderboard([folder], n_resamples=N, on_note=notes.append, **kwargs)
    return as_printed(walked), as_printed(indexed), notes


def index_all(runs: list[Path]) -> None:
    for run in runs:
        index_run(run, n_resamples=N)


@pytest.mark.parametrize("kwargs", [
    {}, {"split": "hard"}, {"metric": "precision"}, {"metric": {"demo": "recall"}},
    {"prices": PRICES}, {"alpha": 0.5, "split": "easy", "metric": "precision"}],
    ids=["default", "split", "ratio", "per-benchmark", "prices", "alpha-split-ratio"])
def test_the_index_gives_the_same_document(runs: list[Path], kwargs: dict[str, Any]) -> None:
    index_all(runs)
    compact(runs[0].parent)
    walked, indexed, notes = both_ways(runs[0].parent, **kwargs)
    assert notes == [f"results index: all {len(runs)} runs read from the index"]
    assert indexed == walked
    doc = json.loads(indexed)
    assert len(doc["boards"]) == 2
    tests = [c["vs_best"]["test"] for b in doc["boards"] for c in b["cells"] if c["vs_best"]]
    assert tests and set(tests) == ({"permutation"} if "precision" in json.dumps(kwargs)
                                    else {"mcnemar-exact"} if "recall" not in json.dumps(kwargs)
                                    else set(tests))


def test_a_changed_run_is_read_from_its_files(runs: list[Path]) -> None:
    index_all(runs)
    changed = RunStore(runs[3])
    records = list(changed.latest().values())
    changed.samples_path.write_text("".join(json.dumps(r) + "\n" for r in records[:-2]))
    walked, indexed, notes = both_ways(runs[0].parent)
    assert indexed == walked
    assert notes == [f"results index: {len(runs) - 1} of {len(runs)} runs read from the "
                     "index; 1 read from their files (1 stale)"]


def test_no_index_or_other_resamples_walk_and_say_so(runs: list[Path]) -> None:
    notes: list[str] = []
    build_leaderboard([runs[0].parent], n_resamples=N, on_note=notes.append)
    assert notes == []  # no index anywhere: nothing to say
    index_all(runs[:4])
    build_leaderboard([runs[0].parent], n_resamples=N, on_note=notes.append)
    assert notes == [f"results index: 4 of {len(runs)} runs read from the index; "
                     f"{len(runs) - 4} read from their files ({len(runs) - 4} missing)"]
    index_all(runs)
    _, counts = indexed_runs([str(r) for r in runs], seed=0, n_resamples=N + 1)
    assert counts == {"indexed": 0, "stale": len(runs), "missing": 0, "unindexed": 0}
    _, counts = indexed_runs([str(r) for r in runs], seed=1, n_resamples=N)
    assert counts["stale"] == len(runs)


def test_a_table_of_every_split_and_metric(runs: list[Path]) -> None:
    index_all(runs)
    table = compact(runs[0].parent)
    assert table is not None and table.name == "index.parquet"
    import pyarrow.parquet as pq

    rows = pq.read_table(table).to_pylist()
    run = [r for r in rows if r["run"] == runs[0].name]
    assert {r["split"] for r in run} == {"all", "easy", "hard"}
    assert {(r["benchmark"], r["model"]) for r in run} == {("demo", "openai/model-0")}
    doc = build_leaderboard([runs[0]], n_resamples=N, use_index=False)
    cell = doc["boards"][0]["cells"][0]
    mine = next(r for r in run if r["split"] == "all" and r["metric"] == cell["metric"]["label"])
    assert (mine["value"], mine["low"], mine["high"], mine["n"]) == (
        cell["value"], cell["low"], cell["high"], cell["n"])


def test_without_pyarrow_the_table_is_json_lines(runs: list[Path],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(results_index, "_has_pyarrow", lambda: False)
    index_all(runs)
    table = compact(runs[0].parent)
    assert table is not None and table.name == "index.jsonl"
    shutil.rmtree(runs[0].parent / INDEX_DIR / "parts")
    assert sorted(read_index(runs[0].parent)) == sorted(r.name for r in runs)
    walked, indexed, notes = both_ways(runs[0].parent)
    assert indexed == walked and "all 10 runs" in notes[0]


def _write_part(run: str) -> str:
    return str(index_run(run))


def test_several_writers_and_a_compaction_lose_nothing(runs: list[Path]) -> None:
    folder = runs[0].parent
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        first = pool.map_async(_write_part, [str(r) for r in runs[:5]])
        compact(folder)  # while parts are written: it may see some, never a torn one
        first.get(timeout=120)
    compact(folder)
    for run in runs[5:]:  # written after the last compaction: read from their parts
        _write_part(str(run))
    assert sorted(read_index(folder)) == sorted(r.name for r in runs)
    valid, counts = indexed_runs([str(r) for r in runs], seed=0, n_resamples=2000)
    assert counts == {"indexed": len(runs), "stale": 0, "missing": 0, "unindexed": 0}
    assert not list((folder / INDEX_DIR).glob("parts/.*"))  # no temporary file left


def test_refresh_and_the_cli(runs: list[Path]) -> None:
    folder = runs[0].parent
    assert refresh([str(r) for r in runs[:3]]) == {"indexed": 3, "kept": 0, "failed": 0}
    assert refresh([str(r) for r in runs[:3]]) == {"indexed": 0, "kept": 3, "failed": 0}
    res = CliRunner().invoke(app, ["sweep", "index", str(folder)])
    assert res.exit_code == 0, res.output
    assert "7 runs indexed, 3 unchanged, 0 unreadable" in res.output
    res = CliRunner().invoke(app, ["leaderboard", str(folder), "--json", "--resamples", "2000"])
    assert res.exit_code == 0
    assert "all 10 runs read from the index" in res.stderr
    walked = CliRunner().invoke(app, ["leaderboard", str(folder), "--json", "--no-index"])
    assert walked.stdout == res.stdout and "results index" not in walked.stderr


def test_unit_states_are_the_sweep_status(runs: list[Path]) -> None:
    from toolscore.sweeps.manifest import Unit
    from toolscore.sweeps.status import unit_status

    index_all(runs)
    for run in runs:  # index_all writes 200-resample rows; states read the default ones
        index_run(run)
    seen = set()
    for samples in (12, 30):  # demo's 6 conversations x 2 epochs: all there, or not
        units = [Unit(i, str(run), "demo", "openai/x", {}, {}, 2, None, samples, "openai")
                 for i, run in enumerate(runs)]
        states = unit_states([(u.run_dir, u.samples) for u in units])
        for u in units:
            assert states[u.run_dir] == unit_status(u)["state"]
            seen.add(states[u.run_dir])
    assert seen == {"done", "error", "partial"}
