"""What a plan or manifest may ask is bounded and every field is checked before anything is
planned or written: alias bombs, huge epochs or matrices, nulls, negative or non-finite
numbers, values JSON cannot say and manifests that point run directories elsewhere are each
one line naming the file and the field (exit 2), said at once."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import assert_user_error, toolscore

from toolscore.sweeps import plan as plan_module
from toolscore.sweeps.plan import PlanError, load_plan

PLAN = "out: runs\nmodels: [oracle]\nbenchmarks: {demo: {embedder: hashing}}\n"


def laughs(levels: int = 9, indent: str = "      ") -> str:
    """Nine values, nine times nine, ... : 9**levels values from a dozen lines."""
    lines = [f'{indent}l0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"{indent}l{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]"
              for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def refused(tmp_path: Path, name: str, content: str) -> str:
    """The one-line error of loading ``content`` as the sweep file ``name`` (timed)."""
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(PlanError) as e:
        load_plan(path)
    assert time.perf_counter() - started < 1.0
    text = str(e.value)
    assert text.startswith(str(path) + ": ") and "\n" not in text, text
    return text


def test_an_alias_bomb_in_model_args_is_refused_at_once(tmp_path: Path) -> None:
    text = refused(tmp_path, "bomb.yaml", "out: runs\nmodels:\n  - model: oracle\n"
                   "    model_args:\n" + laughs() + "benchmarks: {demo: {embedder: hashing}}\n")
    assert "field 'models[0].model_args.l" in text and "100,000" in text


def test_an_alias_bomb_in_a_benchmark_option_is_refused_at_once(tmp_path: Path) -> None:
    text = refused(tmp_path, "bomb.yaml", "out: runs\nmodels: [oracle]\nbenchmarks:\n"
                   "  demo:\n    embedder: hashing\n    x:\n" + laughs(indent="      "))
    assert "field 'benchmarks.demo.x.l" in text and "at most 100,000" in text


def test_the_cli_says_it_in_one_line_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text("out: runs\nmodels:\n  - model: oracle\n"
                                        "    model_args:\n" + laughs() + "benchmarks: [demo]\n")
    for command in ("plan", "run", "status"):
        assert_user_error(toolscore("sweep", command, "bomb.yaml", cwd=tmp_path, timeout=60),
                          "bomb.yaml: field 'models[0].model_args.l")
    for field, problem in (("epochs", "an integer from 1 to 1,000"),
                           ("timeout", "a number > 0 and <= 86400")):
        (tmp_path / "null.yaml").write_text(PLAN + f"{field}: null\n")
        assert_user_error(toolscore("sweep", "run", "null.yaml", cwd=tmp_path, timeout=60),
                          f"null.yaml: field '{field}': expected {problem}, got null")


@pytest.mark.parametrize(("content", "message"), [
    ("x: &a [1, *a]\n", "field 'x[1]': the alias *a is inside the node it names"),
    ("models: " + "[" * 40 + "]" * 40 + "\n", "nested more than 32 levels deep"),
    (PLAN + "epochs: null\n", "field 'epochs': expected an integer from 1 to 1,000, got null"),
    (PLAN + "timeout: null\n", "field 'timeout': expected a number > 0 and <= 86400, got null"),
    (PLAN + "epochs: 1000000000\n", "field 'epochs': expected an integer from 1 to 1,000, got"),
    (PLAN + "epochs: 1000000\n", "field 'epochs': expected an integer from 1 to 1,000, got"),
    (PLAN + "epochs: 2.0\n", "field 'epochs': expected an integer"),
    (PLAN + "epochs: true\n", "field 'epochs': expected an integer"),
    (PLAN + "timeout: -5\n", "field 'timeout': expected a number > 0"),
    (PLAN + "timeout: 0\n", "field 'timeout': expected a number > 0"),
    (PLAN + "timeout: .nan\n", "field 'timeout': nan is not a finite number"),
    (PLAN + "timeout: .inf\n", "field 'timeout': inf is not a finite number"),
    (PLAN + "max_concurrency: -1\n", "field 'max_concurrency': expected an integer from 1"),
    (PLAN + "shards: 100000\n", "field 'shards': expected an integer from 1 to 256"),
    (PLAN + "limit: -3\n", "field 'limit': expected an integer from 1"),
    (PLAN + "limits: {openai: -2}\n", "field 'limits.openai': expected an integer from 1"),
    (PLAN + "ray: {api_cpus: -1}\n", "field 'ray.api_cpus': expected a number >= 0"),
    (PLAN + "ray: {local_gpus: -0.5}\n", "field 'ray.local_gpus': expected a number >= 0"),
    (PLAN + "ray: {local_cpus: .nan}\n", "field 'ray.local_cpus': nan is not a finite number"),
    (PLAN + "ray: {local_gpus: 1.5}\n", "field 'ray.local_gpus': 1.5: Ray takes 0, a fraction"),
    (PLAN + "ray: {max_retries: -1}\n", "field 'ray.max_retries': expected an integer from 0"),
    (PLAN + "ray: {max_retries: 2.5}\n", "field 'ray.max_retries': expected an integer"),
    (PLAN + "cache: 5\n", "field 'cache': expected default, none or a file, got 5"),
    (PLAN + "out: null\n", "field 'out': expected text, got null"),
    (PLAN + "data: {demo: 5}\n", "field 'data.demo': expected text, got 5"),
    (PLAN + "settings: {temperature: [0.5, .nan]}\n", "field 'settings.temperature[1]': nan"),
    (PLAN + "settings: {temperature: [0.5, -1]}\n", "field 'settings.temperature[1]'"),
    (PLAN + "settings: {on: [1]}\n", "field 'settings.true': a key must be text"),
    (PLAN + "settings: {seed: [2024-01-01]}\n", "field 'settings.seed[0]': a date"),
    (PLAN + "settings: {seed: !!binary aGk=}\n", "field 'settings.seed': a bytes"),
    (PLAN + "limit: " + "9" * 5000 + "\n", "invalid YAML (ValueError"),
    ("out: !!python/object/apply:os.system [echo]\nmodels: [oracle]\nbenchmarks: [demo]\n",
     "invalid YAML (could not determine a constructor for the tag"),
    ("out: runs\nmodels: [{model: oracle, base_url: 5}]\nbenchmarks: [demo]\n",
     "field 'models[0].base_url': expected text"),
    ("out: runs\nmodels: [{model: oracle, model_args: {temperature: -1}}]\nbenchmarks: [demo]\n",
     "field 'models[0].model_args' 'temperature'"),
], ids=lambda v: v if len(v) < 40 else v[:40])
def test_every_field_is_checked_in_one_line(tmp_path: Path, content: str, message: str) -> None:
    assert message in refused(tmp_path, "sweep.yaml", content)


@pytest.mark.parametrize(("content", "message"), [
    ('{"models": ' + "[" * 5000 + "]" * 5000 + "}", "invalid JSON (RecursionError"),
    ('{"models": ' + "[" * 40 + "]" * 40 + "}", "nested more than 32 levels deep"),
    ('{"limit": ' + "9" * 5000 + "}", "invalid JSON (ValueError"),
    ('{"out": "runs", "models": ["oracle"], "benchmarks": ["demo"], "timeout": NaN}',
     "field 'timeout': nan is not a finite number"),
])
def test_json_plans_too(tmp_path: Path, content: str, message: str) -> None:
    assert message in refused(tmp_path, "sweep.json", content)


def test_the_matrix_is_bounded_before_it_is_made(tmp_path: Path) -> None:
    values = ", ".join(str(i) for i in range(1, 101))
    text = refused(tmp_path, "sweep.yaml", PLAN + f"settings: {{seed: [{values}], "
                   f"max_tokens: [{values}], temperature: [0.1, 0.2]}}\n")
    assert "field 'settings': the matrix has 1 models x 1 benchmarks x 1 judges x 20,000 " \
           "settings = 20,000 units; a plan may have at most 10,000" in text
    many = ", ".join(f"x{i}: [1, 2]" for i in range(64))  # 2**64 settings
    assert "at most 10,000" in refused(tmp_path, "huge.yaml", PLAN + f"settings: {{{many}}}\n")


def test_the_records_of_one_run_are_bounded(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan_module, "MAX_UNIT_SAMPLES", 10)
    text = refused(tmp_path, "sweep.yaml", PLAN + "epochs: 2\n")
    assert "field 'epochs': benchmarks.demo has 6 samples x 2 epochs = 12 records in one " \
           "run; a run may hold at most 10" in text


# -- manifests ---------------------------------------------------------------------------------
def manifest(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    (tmp_path / "sweep.yaml").write_text(PLAN + "settings: {seed: [1, 2]}\n")
    done = toolscore("sweep", "plan", "sweep.yaml", "--out", "manifest.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    path = tmp_path / "manifest.json"
    return path, json.loads(path.read_text())


def edited(path: Path, doc: dict[str, Any], change: Any) -> Path:
    change(doc)
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["units"][0].update(epochs="3"),
     "field 'units[0].epochs': expected an integer from 1 to 1,000, got '3'"),
    (lambda d: d["units"][1].update(limit=0), "field 'units[1].limit': expected an integer"),
    (lambda d: d["units"][0].update(options={"embedder": 5}),
     "field 'units[0].options': option 'embedder': expected a string, got 5"),
    (lambda d: d["units"][0].update(model_args={"seed": "x"}),
     "field 'units[0].model_args' 'seed': 'x' is not an integer"),
    (lambda d: d["units"][0].update(index=1), "field 'units[0].index'"),
    (lambda d: d["units"][0].update(extra=1), "field 'units[0].extra': unknown"),
    (lambda d: d["units"][0].pop("epochs"), "field 'units[0].epochs': missing"),
    (lambda d: d["units"][0].update(base_url=["x"]), "field 'units[0].base_url'"),
    (lambda d: d.update(timeout=None), "field 'timeout': expected a number > 0"),
    (lambda d: d.update(manifest_version=7), "field 'manifest_version': 7"),
    (lambda d: d["units"][1].update(run_dir=d["units"][0]["run_dir"]),
     "field 'units[1].run_dir'"),
])
def test_a_manifest_is_checked_before_anything_is_written(
        tmp_path: Path, change: Any, message: str) -> None:
    path, doc = manifest(tmp_path)
    edited(path, doc, change)
    done = toolscore("sweep", "run", "manifest.json", cwd=tmp_path, timeout=60)
    assert_user_error(done, f"manifest.json: {message}")
    assert not (tmp_path / "runs").exists()  # no run directory, no run.json


def test_a_manifest_keeps_its_runs_inside_out_unless_allowed(tmp_path: Path) -> None:
    path, doc = manifest(tmp_path)
    elsewhere = tmp_path / "elsewhere" / "victim"
    edited(path, doc, lambda d: d["units"][1].update(run_dir=str(elsewhere)))
    for command in ("plan", "run", "status"):
        assert_user_error(toolscore("sweep", command, "manifest.json", cwd=tmp_path,
                                    timeout=60),
                          f"field 'units[1].run_dir': {elsewhere} is not inside the sweep's "
                          "out folder")
    assert not elsewhere.parent.exists()
    for up in ("runs/../elsewhere", "runs/x/../../elsewhere", "runs"):
        edited(path, doc, lambda d, up=up: d["units"][1].update(run_dir=str(tmp_path / up)))
        assert_user_error(toolscore("sweep", "plan", "manifest.json", cwd=tmp_path),
                          "is not inside the sweep's out folder")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "link").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    edited(path, doc, lambda d: d["units"][1].update(run_dir=str(tmp_path / "runs/link/x")))
    assert_user_error(toolscore("sweep", "plan", "manifest.json", cwd=tmp_path),
                      "is not inside the sweep's out folder")
    allowed = toolscore("sweep", "plan", "manifest.json", "--allow-outside", "--json",
                        cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stderr
    assert json.loads(allowed.stdout)["units"][1]["run_dir"] == str(tmp_path / "runs/link/x")


def test_a_manifest_without_out_keeps_its_runs_beside_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the plan was given as sweep.yaml: its paths are relative
    path, doc = manifest(tmp_path)
    assert doc["out"] == "runs"
    del doc["out"]
    path.write_text(json.dumps(doc))
    assert len(load_plan(path).units) == 2  # runs/ is beside the manifest
    moved = tmp_path / "sub" / "manifest.json"
    moved.parent.mkdir()
    moved.write_text(json.dumps(doc))
    with pytest.raises(PlanError, match="units.0..run_dir.*not inside"):
        load_plan(moved)
    assert len(load_plan(moved, allow_outside=True).units) == 2


def test_a_manifest_reads_back_as_the_plan_it_came_from(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path, doc = manifest(tmp_path)
    plan = load_plan("sweep.yaml")
    again = load_plan(path)
    assert [u.to_dict() for u in again.units] == [u.to_dict() for u in plan.units]
    assert (again.out, again.timeout, again.ray) == (plan.out, plan.timeout, plan.ray)
