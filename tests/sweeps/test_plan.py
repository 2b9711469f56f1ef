"""A plan expands into the same units and directories every time, any change of what a run
computes names another directory, and a mistake is one line naming the file and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import assert_user_error, json_doc, toolscore

from toolscore.sweeps.plan import PlanError, expand, load_plan

BASE = {"out": "runs", "models": ["oracle", {"model": "openai/x", "base_url": "http://h/v1"}],
        "benchmarks": {"demo": [{"embedder": "hashing"}, {"embedder": "hashing",
                                                          "strict": True}]},
        "settings": {"temperature": [0.0, 1.0]}, "epochs": 2, "limits": {"openai": 4}}


def dirs(doc: dict) -> list[str]:
    return [u.run_dir for u in expand(doc, "sweep.yaml", Path("/p")).units]


def test_expansion_is_the_full_matrix_in_a_fixed_order() -> None:
    m = expand(BASE, "sweep.yaml", Path("/p"))
    assert len(m.units) == 2 * 2 * 2
    assert [u.index for u in m.units] == list(range(8))
    first = m.units[0]
    assert (first.model, first.benchmark, first.model_args, first.epochs) == (
        "oracle", "demo", {"temperature": 0.0}, 2)
    assert first.options["strict"] is False and first.options["embedder"] == "hashing"
    assert first.samples == 6 * 2  # the demo's six conversations, twice
    assert first.run_dir.startswith("/p/runs/demo-oracle-temperature0.0-")
    assert {u.group for u in m.units} == {"oracle", "openai"}
    assert len(set(dirs(BASE))) == 8


def test_same_plan_same_directories(tmp_path: Path) -> None:
    assert dirs(BASE) == dirs(json.loads(json.dumps(BASE)))
    (tmp_path / "a.yaml").write_text(json.dumps(BASE))  # JSON is YAML
    (tmp_path / "b.json").write_text(json.dumps(BASE))
    a, b = load_plan(tmp_path / "a.yaml"), load_plan(tmp_path / "b.json")
    assert [u.to_dict() for u in a.units] == [u.to_dict() for u in b.units]


@pytest.mark.parametrize("change", [
    {"epochs": 3}, {"limit": 2}, {"settings": {"temperature": [0.0, 0.5]}},
    {"models": ["oracle", {"model": "openai/x", "base_url": "http://other/v1"}]},
    {"benchmarks": {"demo": [{"embedder": "hashing", "max_tokens": 100},
                             {"embedder": "hashing", "strict": True}]}},
], ids=["epochs", "limit", "setting", "base-url", "option"])
def test_any_change_of_what_a_run_computes_names_another_directory(change: dict) -> None:
    before, after = dirs(BASE), dirs({**BASE, **change})
    assert set(before) != set(after)
    assert len(set(after) - set(before)) >= 1


def test_run_settings_that_do_not_change_results_keep_the_directories() -> None:
    same = {**BASE, "max_concurrency": 2, "timeout": 5, "cache": "none",
            "limits": {"openai": 1}}
    assert dirs(same) == dirs(BASE)


def test_a_run_of_the_plan_is_in_the_same_directory_as_toolscore_run_would_name() -> None:
    from toolscore.runs.api import default_run_dir, run_identity

    u = expand(BASE, "s", Path("/p")).units[0]
    ident = run_identity(u.benchmark, u.model, options=u.options, model_args=u.model_args,
                         epochs=u.epochs, limit=u.limit)
    assert u.run_dir.endswith(default_run_dir("demo", "oracle", ident).name.split("-")[-1])


@pytest.mark.parametrize(("change", "message"), [
    ({"models": []}, "field 'models': expected a non-empty list"),
    ({"models": ["gpt4"]}, "field 'models[0]': bad model name 'gpt4'"),
    ({"benchmarks": {"nosuch": {}}}, "field 'benchmarks.nosuch': unknown benchmark"),
    ({"benchmarks": {"demo": {"nosuch": 1}}}, "benchmarks.demo: unknown option 'nosuch'"),
    ({"benchmarks": {"demo": {"max_tokens": "many"}}}, "option 'max_tokens'"),
    ({"epochs": 0}, "field 'epochs': expected an integer from 1 to 1,000, got 0"),
    ({"epochs": "two"}, "field 'epochs': expected an integer from 1 to 1,000, got 'two'"),
    ({"limits": {"openai": 0}}, "field 'limits.openai': expected an integer from 1"),
    ({"judges": [{"judge_config": "j.yaml"}]}, "field 'judges[0].judge_config': no benchmark"),
    ({"settings": {"temperature": []}}, "field 'settings.temperature': an empty list"),
    ({"workers": 3}, "field 'workers': unknown"),
    ({"ray": {"gpus": 1}}, "field 'ray.gpus': unknown"),
    ({"models": ["oracle", "oracle"]}, "two units have the same configuration"),
])
def test_mistakes_are_one_line_naming_file_and_field(change: dict, message: str) -> None:
    with pytest.raises(PlanError) as e:
        expand({**BASE, **change}, "sweep.yaml", Path("/p"))
    text = str(e.value)
    assert text.startswith("sweep.yaml") and message in text and "\n" not in text


def test_cli_plan_and_its_errors(tmp_path: Path) -> None:
    (tmp_path / "sweep.yaml").write_text("out: runs\nmodels: [oracle]\n"
                                         "benchmarks: {demo: {embedder: hashing}}\n"
                                         "settings: {seed: [1, 2, 3]}\n")
    doc = json_doc(toolscore("sweep", "plan", "sweep.yaml", "--out", "manifest.json",
                             "--json", cwd=tmp_path))
    assert [u["index"] for u in doc["units"]] == [0, 1, 2]
    assert json.loads((tmp_path / "manifest.json").read_text()) == doc
    # the manifest is a plan too
    again = json_doc(toolscore("sweep", "plan", "manifest.json", "--json", cwd=tmp_path))
    assert again["units"] == doc["units"]
    (tmp_path / "bad.yaml").write_text("models: [oracle]\nbenchmarks: {demo: {embeder: x}}\n")
    assert_user_error(toolscore("sweep", "plan", "bad.yaml", cwd=tmp_path),
                      "bad.yaml: benchmarks.demo: unknown option 'embeder'")
    (tmp_path / "broken.yaml").write_text("models: [oracle\n")
    assert_user_error(toolscore("sweep", "plan", "broken.yaml", cwd=tmp_path),
                      "broken.yaml: invalid YAML")
    assert_user_error(toolscore("sweep", "run", "missing.yaml", cwd=tmp_path),
                      "missing.yaml: no such sweep file")


def test_only_local_model_units_are_sharded_and_they_ask_ray_for_cpus() -> None:
    from toolscore.sweeps.local import tasks_of
    from toolscore.sweeps.ray_executor import requests

    doc = {**BASE, "models": ["local/smollm2", {"model": "openai/x", "base_url": "http://h"}],
           "shards": 3, "ray": {"local_cpus": 2, "local_gpus": 1}}
    m = expand(doc, "s", Path("/p"))
    local, remote = m.units[0], m.units[-1]
    assert (local.shards, remote.shards) == (3, 1)
    tasks = tasks_of([local, remote])
    assert [s for _, s in tasks] == [(1, 3), (2, 3), (3, 3), None]
    assert requests(m, local, {}) == {"num_cpus": 2, "num_gpus": 1}
    assert requests(m, remote, {"openai": 2}) == {
        "num_cpus": 0.5, "num_gpus": 0, "resources": {"provider:openai": 2.0}}


def test_the_example_plan_expands() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "sweep.yaml"
    m = load_plan(example)
    assert len(m.units) == 4 and {u.model for u in m.units} == {"oracle"}
    assert all(Path(u.run_dir).parent == example.parents[1] / "runs" / "sweep" for u in m.units)
