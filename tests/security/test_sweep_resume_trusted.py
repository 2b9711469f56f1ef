"""A sweep plan is trusted (the user runs it), a run directory is not: resubmitting a plan
whose unit starts a process (an MCP server command) resumes its partial run, because the plan
repeats the option, where ``run --resume`` alone would refuse it."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mcp")

import toolscore as api  # noqa: E402
from security.crafted import marker_command, write_data  # noqa: E402
from toolscore.sweeps.unit import _run  # noqa: E402


def test_a_plan_resumes_its_unit_that_starts_a_process(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    command = marker_command(tmp_path, marker)
    data = write_data(tmp_path)
    run = tmp_path / "run"
    api.evaluate("tooltalk", "oracle", data=data, mcp_server=command, embedder="hashing",
                 out=run, cache=None)
    lines = (run / "samples.jsonl").read_text().splitlines()
    (run / "samples.jsonl").write_text("\n".join(lines[:1]) + "\n")  # a partial run
    (run / "scores.json").unlink()
    with pytest.raises(ValueError, match="--allow-run-commands"):
        api.resume(run)  # the directory alone is not trusted
    marker.unlink(missing_ok=True)
    unit = {"index": 0, "run_dir": str(run), "benchmark": "tooltalk", "model": "oracle",
            "options": {"mcp_server": command, "embedder": "hashing"}, "data": str(data),
            "epochs": 1, "limit": None, "model_args": {}}
    result = _run(unit, {"max_concurrency": 2, "cache": None, "timeout": 30.0}, None)
    assert result["state"] == "done", result
    assert result["run_now"] == len(lines) - 1 and marker.is_file()
