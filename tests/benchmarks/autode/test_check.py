"""Bad data fails before the first model call: one line naming the file, exit 2, no run
directory full of errored samples."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner
from support.data import needs

from toolscore.cli import app


@needs("autode")
def test_a_broken_workbook_is_one_line_before_any_model_call(tmp_path: Path) -> None:
    from support.data import dataset

    data = tmp_path / "autode"
    data.mkdir()
    shutil.copy(dataset("autode") / "data_v1_2.jsonl", data)
    (data / "API_list.xlsx").write_text("not a zip")
    done = CliRunner().invoke(app, ["run", "autode", "-m", "openai/never-called", "--data",
                                    str(data), "--out", str(tmp_path / "run")])
    assert done.exit_code == 2
    assert done.stderr.strip().startswith("error: ")
    assert "API_list.xlsx: not a readable .xlsx workbook" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run" / "samples.jsonl").exists()
