"""Record what BFCL's own evaluator makes of the result files in
``tests/fixtures/bfcl_results/results`` (a few entries of each single-turn category: right
answers, texts, empty and null replies, malformed arguments, missing and changed arguments,
extra and misnamed calls): its score files and its leaderboard tables, copied to
``tests/fixtures/bfcl_results/scores``.

Run with the Python that has bfcl-eval 2026.3.23 installed (never toolscore's environment):

    OPENAI_API_KEY=unused /path/to/bfcl-venv/bin/python tests/reference/bfcl/record_scores.py

The files are of BFCL's model ``openbmb/MiniCPM-SALA-FC``, whose handler is BFCL's OpenAI
function-calling handler itself; ``--partial-eval`` scores the entries present.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[2] / "fixtures" / "bfcl_results"
MODEL = "openbmb/MiniCPM-SALA-FC"
KEPT = ("id", "valid", "error", "error_type")
TABLES = ("data_overall.csv", "data_non_live.csv", "data_live.csv")


def main() -> None:
    bfcl = Path(sys.executable).with_name("bfcl")
    with tempfile.TemporaryDirectory() as tmp:
        scores = Path(tmp) / "scores"
        env = {**os.environ, "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "unused")}
        subprocess.run([str(bfcl), "evaluate", "--model", MODEL, "--test-category",
                        "single_turn", "--result-dir", str(HERE / "results"), "--score-dir",
                        str(scores), "--partial-eval"], check=True, cwd=tmp, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out = HERE / "scores"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        for f in sorted((scores / MODEL.replace("/", "_")).rglob("*_score.json")):
            # the header line, then of each invalid entry its verdict (BFCL also copies the
            # prompt, the reply and the answer there; the test reads those from elsewhere)
            lines = [json.loads(line) for line in f.open(encoding="utf-8")]
            kept = lines[:1] + [{k: e[k] for k in KEPT} for e in lines[1:]]
            (out / f.name).write_text("".join(json.dumps(e) + "\n" for e in kept),
                                      encoding="utf-8")
        for name in TABLES:
            shutil.copy(scores / name, out / name)
    print(f"BFCL's scores -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
