"""``sweep plan``'s estimate: records exactly, model calls from finished runs or the benchmark's
reference, tokens measured only, cost with a price table, and what is unknown said so."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolscore.cli import app
from toolscore.sweeps.estimate import estimate, estimate_lines
from toolscore.sweeps.manifest import Manifest, Unit
from toolscore.sweeps.plan import expand, load_plan

PRICES = {"openai/a": {"input_per_mtok": 1.0, "output_per_mtok": 4.0}}


def unit(i: int, bench: str, model: str, samples: int, calls: int | None) -> Unit:
    return Unit(i, f"/p/runs/u{i}", bench, model, {}, {}, 1, None, samples, "openai",
                expected_calls=calls)


def finished(bench: str, model: str, records: int, calls: int, tokens: tuple[int, int]) -> dict:
    return {"benchmark": bench, "model": model, "records": records,
            "usage_by_role": {"assistant": {"calls": calls, "input_tokens": tokens[0],
                                            "output_tokens": tokens[1]}},
            "role_models": {"assistant": model}}


def test_sources_in_order_measured_reference_other_models_unknown() -> None:
    m = Manifest("s", [unit(0, "x", "openai/a", 10, 25), unit(1, "x", "openai/b", 10, 25),
                       unit(2, "y", "openai/a", 4, None), unit(3, "z", "openai/a", 4, None)], {})
    runs = [finished("x", "openai/a", 20, 60, (2000, 400)),
            finished("y", "openai/c", 8, 40, (800, 80))]
    doc = estimate(m, runs, lambda model: PRICES.get(str(model)))
    # u0 measured: 10 x 3 calls; u1 the reference's 25; u2 measured on another model: 4 x 5
    assert doc["calls"] == {"value": 30 + 25 + 20, "sources": {
        "measured": 1, "the benchmark's reference": 1, "measured on other models": 1,
        "unknown": 1}}
    assert doc["tokens"]["input"] == 10 * 100 + 10 * 100 + 4 * 100
    assert doc["tokens"]["output"] == 10 * 20 + 10 * 20 + 4 * 10
    # priced: u0 and u2 (openai/a); u1 is openai/b (no price)
    assert doc["cost"]["value"] == pytest.approx((1000 * 1 + 200 * 4 + 400 * 1 + 40 * 4) / 1e6)
    assert doc["cost"]["units_priced"] == 2 and doc["cost"]["unpriced_models"] == ["openai/b"]
    lines = estimate_lines(doc, lambda name: False)
    assert lines[0] == "estimate: 4 units, 28 records (sample x epoch)"
    assert "1 of 4 units unknown" in lines[1]


def test_nothing_measured_and_no_prices() -> None:
    m = Manifest("s", [unit(0, "x", "openai/a", 10, None)], {})
    doc = estimate(m, [], None)
    assert doc["calls"]["value"] is None and doc["tokens"]["input"] is None
    lines = estimate_lines(doc, lambda name: True)
    assert lines[1:] == ["  model calls: unknown (1 of 1 units unknown)",
                         "  tokens: unknown in, unknown out (1 of 1 units unknown)",
                         "  cost: unpriced (no price table: toolscore data prices, or "
                         "--prices FILE)"]


def test_reference_calls_of_a_plan() -> None:
    doc = {"out": "runs", "models": ["oracle"], "benchmarks": {"demo": {"embedder": "hashing"}},
           "epochs": 2, "limit": 3}
    m = expand(doc, "s", Path("/p"))
    # demo's first three conversations as the reference plays them, twice
    from toolscore.benchmarks.registry import make_benchmark

    bench = make_benchmark("demo", None, download=False, embedder="hashing")
    want = sum(bench.expected_calls(s) or 0 for s in bench.samples()[:3]) * 2
    assert m.units[0].expected_calls == want > 6


def test_a_thousand_unit_plan_is_planned_and_estimated_in_seconds(tmp_path: Path) -> None:
    plan = {"out": "runs", "models": [{"model": f"openai/m{i}", "base_url": "http://h/v1",
                                       "api_key_env": "TEAM_KEY"} for i in range(50)],
            "benchmarks": {"demo": {"embedder": "hashing"},
                           "tooltalk": {"variants": {"split": "easy"}, "epochs": 5,
                                        "limit": 10}},
            "settings": {"seed": list(range(10))}, "epochs": 5}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    (tmp_path / "prices.json").write_text(json.dumps(PRICES))
    wall, cpu = time.perf_counter(), time.process_time()
    m = load_plan(tmp_path / "plan.json")
    doc = estimate(m, [], None)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert doc["units"] == 1000 and doc["records"] == 500 * 6 * 5 + 500 * 10 * 5
    print(f"1,000 units planned and estimated: {cpu:.2f} s of CPU, {wall:.2f} s wall")
    assert cpu < 5.0, f"{cpu:.2f} s of CPU ({wall:.2f} s wall) to plan and estimate"
    res = CliRunner().invoke(app, ["sweep", "plan", str(tmp_path / "plan.json"), "--prices",
                                   str(tmp_path / "prices.json")], env={"TEAM_KEY": ""})
    assert res.exit_code == 0, res.output
    tail = res.stdout.splitlines()[-5:]
    assert tail[0] == "estimate: 1,000 units, 40,000 records (sample x epoch)"
    assert tail[1].startswith("  model calls: ~") and "1,000 of 1,000 units the benchmark's " \
                                                       "reference" in tail[1]
    assert tail[3] == "  cost: unknown (no unit has both measured tokens and priced models)"
    assert tail[4] == "  keys: TEAM_KEY not set here (needed where the units run)"
