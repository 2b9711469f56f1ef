"""``sweep run`` keeps the results index beside its runs: a part per finished unit (a job
array's task too), compacted at the end, still valid after a resubmission; the leaderboard
then reads the index and prints what it prints from the runs."""

from __future__ import annotations

from pathlib import Path

from support.cli import json_doc, toolscore
from support.testing.openai_server import FakeOpenAIServer
from sweeps.plans import demo_oracle, write_plan

from toolscore.report.leaderboard.index import INDEX_DIR, indexed_runs
from toolscore.sweeps.plan import load_plan

KEY = {"OPENAI_API_KEY": "dummy"}


def test_sweep_run_writes_the_index_the_leaderboard_reads(tmp_path: Path) -> None:
    with FakeOpenAIServer(demo_oracle().responder) as srv:
        plan = write_plan(tmp_path, srv.base_url, units=3, limit=4)
        done = toolscore("sweep", "run", str(plan), "--workers", "2", cwd=tmp_path, env=KEY)
        assert done.returncode == 0, done.stderr[-2000:]
        manifest = load_plan(plan)
        runs = tmp_path / "runs"
        parts = sorted((runs / INDEX_DIR / "parts").iterdir())
        assert [p.name for p in parts] == sorted(f"{Path(u.run_dir).name}.jsonl"
                                                 for u in manifest.units)
        assert (runs / INDEX_DIR / "index.parquet").is_file()
        # a resubmission resumes the finished runs (their scores are written again): their
        # parts follow
        again = toolscore("sweep", "run", str(plan), cwd=tmp_path, env=KEY)
        assert again.returncode == 0, again.stderr[-2000:]
    _, counts = indexed_runs([u.run_dir for u in manifest.units], seed=0, n_resamples=2000)
    assert counts == {"indexed": 3, "stale": 0, "missing": 0, "unindexed": 0}
    fast = toolscore("leaderboard", "runs", "--json", cwd=tmp_path)
    slow = toolscore("leaderboard", "runs", "--json", "--no-index", cwd=tmp_path)
    assert json_doc(fast) == json_doc(slow) and fast.stdout == slow.stdout
    assert "results index: all 3 runs read from the index" in fast.stderr
    by_plan = [toolscore("leaderboard", str(plan), "--json", *no, cwd=tmp_path)
               for no in ([], ["--no-index"])]
    assert by_plan[0].stdout == by_plan[1].stdout and json_doc(by_plan[0])["boards"]


def test_a_job_array_task_leaves_its_part(tmp_path: Path) -> None:
    with FakeOpenAIServer(demo_oracle().responder) as srv:
        plan = write_plan(tmp_path, srv.base_url, units=2)
        done = toolscore("sweep", "run", str(plan), "--index", "1", "--slots", "1", cwd=tmp_path,
                         env=KEY)
        assert done.returncode == 0, done.stderr[-2000:]
    unit = load_plan(plan).units[1]
    parts = list((tmp_path / "runs" / INDEX_DIR / "parts").iterdir())
    assert [p.name for p in parts] == [f"{Path(unit.run_dir).name}.jsonl"]
    assert not (tmp_path / "runs" / INDEX_DIR / "index.parquet").exists()  # `sweep index` does
    done = toolscore("sweep", "index", str(plan), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "0 runs indexed, 1 unchanged, 0 unreadable" in done.stdout
    assert (tmp_path / "runs" / INDEX_DIR / "index.parquet").is_file()
