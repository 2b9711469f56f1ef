"""The price table: toolscore's model names on LiteLLM's keys, a user's file over it, cached and
reasoning rates, and cost per role in report, compare, the leaderboard and the HTML page with
the table's date; "unpriced" never $0, partial roles said so. The table is the fixture's
(made-up numbers), never the network."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolscore.cli import app
from toolscore.data import DataNotFound, cache_root
from toolscore.models.prices import (
    LITELLM_VERSION,
    SOURCE,
    TABLE_DATE,
    TABLE_FILE,
    Price,
    PriceTable,
    price_table,
)
from toolscore.records import RunStore
from toolscore.report.compare import compare_runs
from toolscore.report.leaderboard.build import build_leaderboard
from toolscore.report.leaderboard.text import to_markdown
from toolscore.report.overview import run_overview

FIXTURE = Path(__file__).parents[1] / "fixtures" / "prices" / TABLE_FILE


@pytest.fixture
def table() -> Path:
    folder = cache_root() / "data" / SOURCE.name
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURE, folder / TABLE_FILE)
    yield folder
    shutil.rmtree(folder)


def test_model_names_map_onto_the_tables_keys(table: Path) -> None:
    prices = price_table()
    assert prices.price_of("openai/gpt-x") == Price(2.0, 8.0, 0.5, 10.0)
    assert prices.price_of("anthropic/claude-x") == Price(3.0, 15.0)
    assert prices.price_of("litellm/gemini/gem-x") == Price(1.0, 4.0)  # the table's own key
    assert prices.price_of("litellm/openai/gpt-x") == Price(2.0, 8.0, 0.5, 10.0)
    assert prices.price_of("litellm/gpt-x") == Price(2.0, 8.0, 0.5, 10.0)
    # another provider's model under this provider's name, a key with no output rate, the
    # table's own description row and models it does not know: no price
    for model in ("openai/claude-x", "anthropic/gpt-x", "openai/half-priced",
                  "openai/sample_spec", "openai/nope", "local/smollm2", "oracle", None):
        assert prices.price_of(model) is None, model
    assert prices.source == f"LiteLLM {LITELLM_VERSION} price table of {TABLE_DATE}"
    assert prices.missing is None


def test_a_users_file_overrides_the_table(table: Path, tmp_path: Path) -> None:
    own = tmp_path / "prices.yaml"
    own.write_text("openai/gpt-x:\n  input_per_mtok: 1\n  output_per_mtok: 1\n"
                   "mine:\n  input_per_mtok: 4\n  output_per_mtok: 5\n"
                   "  cached_input_per_mtok: 0.5\n")
    prices = price_table(own)
    assert prices.price_of("openai/gpt-x") == Price(1.0, 1.0)
    assert prices.price_of("openai/mine") == Price(4.0, 5.0, 0.5)
    assert prices.price_of("anthropic/claude-x") == Price(3.0, 15.0)  # the table below it
    assert prices.source == (f"price file {own} over LiteLLM {LITELLM_VERSION} price table "
                             f"of {TABLE_DATE}")


def test_cached_input_and_reasoning_rates() -> None:
    price = Price(2.0, 8.0, cached_input_per_mtok=0.5, reasoning_per_mtok=10.0)
    usage = {"input_tokens": 1_000_000, "output_tokens": 1_000_000,
             "cached_input_tokens": 400_000, "reasoning_tokens": 250_000}
    assert price.split(usage) == pytest.approx((0.6 * 2 + 0.4 * 0.5, 0.75 * 8 + 0.25 * 10))
    # without those counts (or rates) every token is at the input and output rates
    assert Price(2.0, 8.0).cost(usage) == pytest.approx(10.0)
    assert price.cost({"input_tokens": 10, "output_tokens": 0}) == pytest.approx(20 / 1e6)


def _usage(inp: int, out: int, **more: Any) -> dict[str, Any]:
    return {"input_tokens": inp, "output_tokens": out, "calls": 1, "cached_calls": 0,
            "latency_s": 0.0, **more}


def _run(path: Path, model: str, records: list[dict[str, Any]]) -> Path:
    store = RunStore(path)
    store.write_config({"benchmark": "demo", "model": model, "epochs": 1,
                        "benchmark_config": {}})
    for r in records:
        store.append(r)
    return path


def _record(sample: str, **roles: dict[str, Any]) -> dict[str, Any]:
    total = {k: sum(int(u.get(k) or 0) for u in roles.values())
             for k in ("input_tokens", "output_tokens", "calls")}
    return {"id": sample, "epoch": 0, "status": "ok", "scores": {"success": 1.0},
            "usage": total, "usage_by_role": roles}


def test_a_role_partly_priced_is_partial(table: Path, tmp_path: Path) -> None:
    judge = {**_usage(2_000_000, 0), "models": {"openai/gpt-x": _usage(1_000_000, 0),
                                                 "openai/nope": _usage(1_000_000, 0)}}
    run = _run(tmp_path / "run", "anthropic/claude-x", [
        _record("a", assistant=_usage(1_000_000, 100_000, model="anthropic/claude-x"),
                judge=judge)])
    cost = run_overview(run)["cost"]
    assert cost["by_role"]["assistant"]["cost"] == pytest.approx(3.0 + 1.5)
    j = cost["by_role"]["judge"]
    assert j["priced"] and j["partial"] and j["unpriced_models"] == ["openai/nope"]
    assert j["cost"] == pytest.approx(2.0)
    assert cost["total"] == pytest.approx(6.5) and not cost["complete"]
    assert cost["unpriced"] == [{"role": "judge", "model": "openai/nope", "tokens": 1_000_000}]
    res = CliRunner().invoke(app, ["report", str(run)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "2.00 (partial)" in res.stdout
    assert f"prices: LiteLLM {LITELLM_VERSION} price table of {TABLE_DATE}" in res.stdout
    assert "unpriced: judge model openai/nope is not in the price table" in res.stdout
    html = tmp_path / "r.html"
    res = CliRunner().invoke(app, ["report", str(run), "--html", str(html)])
    assert res.exit_code == 0, res.output
    page = html.read_text()
    assert "(partial)" in page and f"price table of {TABLE_DATE}" in page


def test_without_the_table_every_model_is_unpriced_with_a_hint(tmp_path: Path) -> None:
    run = _run(tmp_path / "run", "openai/gpt-x", [_record("a", assistant=_usage(10, 10))])
    res = CliRunner().invoke(app, ["report", str(run)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "│ unpriced │" in res.stdout and "$0" not in res.stdout
    assert "cost unpriced" in res.stdout
    hint = next(x for x in res.stdout.splitlines() if x.startswith("prices: no price table"))
    assert "`toolscore data prices`" in hint and LITELLM_VERSION in hint


def test_compare_and_leaderboard_show_cost_per_role(table: Path, tmp_path: Path) -> None:
    a = _run(tmp_path / "a", "openai/gpt-x",
             [_record(s, assistant=_usage(1_000_000, 0)) for s in ("s1", "s2")])
    b = _run(tmp_path / "b", "anthropic/claude-x",
             [_record(s, assistant=_usage(1_000_000, 0)) for s in ("s1", "s2")])
    c = _run(tmp_path / "c", "openai/nope",
             [_record(s, assistant=_usage(1_000_000, 0)) for s in ("s1", "s2")])
    result = compare_runs(a, b, n_resamples=50)
    (role,) = result["cost"]["roles"]
    assert (role["a"], role["b"], role["diff"]) == pytest.approx((4.0, 6.0, 2.0))
    assert result["cost"]["prices"]["date"] == TABLE_DATE
    unpriced = compare_runs(a, c, n_resamples=50)["cost"]
    assert unpriced["roles"][0]["b"] is None and unpriced["roles"][0]["diff"] is None
    res = CliRunner().invoke(app, ["compare", str(a), str(c), "--resamples", "50"],
                             env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "cost per model role" in res.stdout and "unpriced" in res.stdout
    assert f"price table of {TABLE_DATE}" in res.stdout

    doc = build_leaderboard([a, b, c], n_resamples=50)
    cells = {x["model"]: x for x in doc["boards"][0]["cells"]}
    assert cells["openai/gpt-x"]["cost"] == pytest.approx(4.0)
    assert cells["openai/nope"]["cost"] is None
    assert cells["openai/nope"]["cost_complete"] is False
    md = to_markdown(doc)
    assert "| unpriced |" in md and "4.00 |" in md and f"price table of {TABLE_DATE}" in md


def test_the_table_is_a_dataset_fetched_only_with_its_pinned_checksum(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``toolscore data prices`` knows the source; a wheel whose table differs is refused."""
    import urllib.request

    from toolscore.benchmarks.datasets import dataset_source
    from toolscore.data import fetch

    assert dataset_source("prices") is SOURCE
    blob = io.BytesIO()
    with zipfile.ZipFile(blob, "w") as zf:
        zf.writestr(f"litellm/{TABLE_FILE}", FIXTURE.read_bytes())

    class Reply(io.BytesIO):
        def __enter__(self) -> Reply:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(urllib.request, "urlopen",
                        lambda url, timeout=0: Reply(blob.getvalue()))
    with pytest.raises(DataNotFound, match="pinned checksum"):
        fetch(SOURCE)
    assert not (cache_root() / "data" / SOURCE.name).exists()
    assert PriceTable().missing is not None and json.dumps(PriceTable().describe())
