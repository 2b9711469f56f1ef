"""Plans as people write them: per-benchmark model lists and exclusions, per-benchmark epochs
and limits, per-model keys by the name of an environment variable; each mistake one line
naming the file and the field."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from toolscore.sweeps.manifest import Manifest
from toolscore.sweeps.plan import PlanError, expand
from toolscore.sweeps.plan_rules import unit_key

PLAN = {"out": "runs",
        "models": ["oracle", {"model": "openai/x", "base_url": "http://h/v1",
                              "api_key_env": "TEAM_B_KEY"},
                   {"model": "anthropic/claude-x", "api_key_env": "CLAUDE_KEY"}],
        "benchmarks": {
            "demo": {"embedder": "hashing"},
            "tooltalk": {"variants": [{"split": "easy"}, {"split": "hard"}],
                         "models": ["oracle", "openai/x"], "epochs": 3, "limit": 2}},
        "settings": {"temperature": [0.0, 1.0]}, "epochs": 2}


def units(doc: dict) -> list[tuple[str, str, str, float, int, int | None]]:
    return [(u.benchmark, u.model, str(u.options.get("split")), u.model_args["temperature"],
             u.epochs, u.limit) for u in expand(doc, "sweep.yaml", Path("/p")).units]


def test_per_benchmark_models_epochs_and_limits() -> None:
    got = units(PLAN)
    demo = [u for u in got if u[0] == "demo"]
    tooltalk = [u for u in got if u[0] == "tooltalk"]
    assert len(demo) == 3 * 2 and {u[4:] for u in demo} == {(2, None)}
    assert len(tooltalk) == 2 * 2 * 2  # two models, two splits, two temperatures
    assert {u[1] for u in tooltalk} == {"oracle", "openai/x"}
    assert {u[4:] for u in tooltalk} == {(3, 2)}
    m = expand(PLAN, "sweep.yaml", Path("/p"))
    assert {u.samples for u in m.units if u.benchmark == "tooltalk"} == {2 * 3}
    assert [u.index for u in m.units] == list(range(len(m.units)))


def test_exclusions() -> None:
    plan = {**PLAN, "benchmarks": {**PLAN["benchmarks"], "tooltalk": {
        **PLAN["benchmarks"]["tooltalk"], "models": None}}}
    del plan["benchmarks"]["tooltalk"]["models"]
    plan["benchmarks"]["tooltalk"]["exclude"] = ["anthropic/claude-x"]
    plan["exclude"] = [{"model": "oracle", "benchmark": "tooltalk", "options": {"split": "hard"}},
                       {"model": "openai/x", "setting": {"temperature": 1.0}}]
    got = units(plan)
    assert ("tooltalk", "oracle", "hard", 0.0, 3, 2) not in got
    assert ("tooltalk", "oracle", "easy", 0.0, 3, 2) in got
    assert not [u for u in got if u[1] == "openai/x" and u[3] == 1.0]
    assert not [u for u in got if u[0] == "tooltalk" and u[1] == "anthropic/claude-x"]
    # demo: 3 models x 2 temperatures, less openai/x at 1.0; tooltalk: 2 models x 2 splits x
    # 2 temperatures, less oracle's hard split and openai/x at 1.0
    assert len(got) == (6 - 1) + (8 - 2 - 2)


def test_keys_are_named_never_given(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    m = expand(PLAN, "sweep.yaml", Path("/p"))
    by_model = {u.model: u.api_key_env for u in m.units}
    assert by_model == {"oracle": None, "openai/x": "TEAM_B_KEY", "anthropic/claude-x":
                        "CLAUDE_KEY"}
    doc = m.to_dict()
    again = Manifest.from_dict(json.loads(json.dumps(doc)), "m.json", Path("/p/runs"))
    assert [u.to_dict() for u in again.units] == [u.to_dict() for u in m.units]
    # what the unit does with it: its provider's variable, for the unit only
    monkeypatch.setenv("TEAM_B_KEY", "sk-team-b")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default")
    with unit_key("openai/x", "TEAM_B_KEY"):
        assert os.environ["OPENAI_API_KEY"] == "sk-team-b"
    assert os.environ["OPENAI_API_KEY"] == "sk-default"
    monkeypatch.delenv("CLAUDE_KEY", raising=False)
    with pytest.raises(ValueError, match="CLAUDE_KEY .api_key_env of anthropic/claude-x. is "
                                         "not set"), unit_key("anthropic/claude-x", "CLAUDE_KEY"):
        pass


def test_a_unit_without_its_key_fails_alone(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    from toolscore.sweeps.unit import run_unit

    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    doc = {"out": str(tmp_path), "models": [{"model": "openai/x", "base_url": "http://h/v1",
                                             "api_key_env": "NO_SUCH_KEY_VAR"}],
           "benchmarks": {"demo": {"embedder": "hashing"}}, "cache": "none"}
    unit = expand(doc, "s", tmp_path).units[0]
    result = run_unit(unit.to_dict(), {"max_concurrency": 1, "cache": None, "timeout": 5,
                                       "limits": {}})
    assert result["state"] == "failed"
    assert "NO_SUCH_KEY_VAR (api_key_env of openai/x) is not set" in result["message"]
    assert not Path(unit.run_dir).exists()


def bench(**long: object) -> dict:
    return {"benchmarks": {"demo": {"variants": {"embedder": "hashing"}, **long}}}


@pytest.mark.parametrize(("change", "message"), [
    (bench(models=["nosuch/x"]), "field 'benchmarks.demo.models[0]': 'nosuch/x' is not in "
                                 "models"),
    (bench(models=[1]), "field 'benchmarks.demo.models': expected a list of model names"),
    (bench(models=["oracle"], exclude=["oracle"]), "field 'benchmarks.demo.exclude': give "
                                                   "models"),
    (bench(epochs=0), "field 'benchmarks.demo.epochs': expected an integer from 1 to 1,000"),
    (bench(limit="all"), "field 'benchmarks.demo.limit': expected an integer from 1"),
    (bench(split="easy"), "field 'benchmarks.demo.split': unknown (known: variants, models"),
    ({"exclude": {"model": "oracle"}}, "field 'exclude': expected a list of mappings"),
    ({"exclude": [{"model": "gpt"}]}, "field 'exclude[0].model': 'gpt' is not in models"),
    ({"exclude": [{"benchmark": "acs"}]}, "field 'exclude[0].benchmark': 'acs' is not in"),
    ({"exclude": [{"modle": "oracle"}]}, "field 'exclude[0].modle': unknown (known: model"),
    ({"exclude": [{}]}, "field 'exclude[0]': empty"),
    ({"exclude": [{"model": "oracle"}, {"model": "openai/x"}, {"model": "anthropic/claude-x"}]},
     "field 'exclude': every unit of the plan is left out"),
    ({"models": [{"model": "openai/x", "api_key": "sk-123"}]},
     "field 'models[0].api_key': a plan names the environment variable holding the key"),
    ({"models": [{"model": "openai/x", "api_key_env": "sk-123"}]},
     "field 'models[0].api_key_env': expected the name of an environment variable"),
    ({"models": [{"model": "oracle", "api_key_env": "KEY"}]},
     "field 'models[0].api_key_env': provider 'oracle' takes no key"),
])
def test_mistakes_are_one_line_naming_file_and_field(change: dict, message: str) -> None:
    with pytest.raises(PlanError) as e:
        expand({**PLAN, **change}, "sweep.yaml", Path("/p"))
    text = str(e.value)
    assert text.startswith("sweep.yaml") and message in text and "\n" not in text
    assert "sk-123" not in text  # a key written in a plan is never repeated


def test_a_manifest_unit_with_a_key_is_refused() -> None:
    doc = expand(PLAN, "s", Path("/p")).to_dict()
    doc["units"][1]["api_key_env"] = "not a name"
    with pytest.raises(PlanError, match=r"m.json: field 'units\[1\].api_key_env'"):
        Manifest.from_dict(doc, "m.json", Path("/p/runs"))
