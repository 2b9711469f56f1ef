"""``toolscore score autode --predictions DIR`` prints AutoDE's Table 1 as a table (one row per
recorded run: cases, trials, slot precision / recall / F1 ×100 and the F1 std over trials, as
``toolscore run autode`` shows them); ``--json`` keeps the whole document."""

from __future__ import annotations

import json

from click.testing import CliRunner
from support import data
from support.data import needs

from toolscore.cli import app
from toolscore.report.tables import fmt

pytestmark = needs("autode")
RESULTS = data.path("autode") / "results"


def score(*args: str) -> str:
    done = CliRunner(env={"COLUMNS": "160"}).invoke(
        app, ["score", "autode", "--predictions", str(RESULTS), *args], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.stdout


def test_predictions_print_one_table_row_per_recorded_run() -> None:
    doc = json.loads(score("--json"))
    results = doc["results"]
    assert len(results) == 14
    text = score()
    assert not text.lstrip().startswith("{")
    lines = text.splitlines()
    assert lines[0].startswith("autode · 14 scored files · published scores")
    assert len(lines) < 30
    for result in results:
        (row,) = [line for line in lines if f" {result['name']} " in line]
        exact = result["exact"]
        cells = [c.strip() for c in row.split("│")[2:-1]]
        assert cells == [str(result["n_cases"]), str(result["n_trials"]),
                         *(fmt(exact[k]) for k in ("precision", "recall", "f1", "f1_std"))]
    # a Table 1 cell (Llama-2-7B user agent, Claude Instant): F1 84.38 ± 0.64
    (row,) = [line for line in lines if "u_llama7b_a_claude_instant_1_2_complementary" in line]
    assert "84.38" in row and "0.6424" in row
