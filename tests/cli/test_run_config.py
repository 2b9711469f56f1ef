"""``toolscore run --config FILE`` (a run configuration in YAML or JSON, a run's run.json
included) and ``--role ROLE=MODEL``: what the file and the roles set, what the command line
overrides, and one line (exit 2) naming the file and field for a bad one."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from support.cli import assert_user_error, json_doc, toolscore

from toolscore.benchmarks.registry import benchmark_class
from toolscore.cli.run_config import apply_roles, parse_roles
from toolscore.entrypoints import BENCHMARKS

CONFIG = """\
benchmark: demo
model: oracle
options: {embedder: hashing, split: easy}
model_args: {temperature: 0.0}
limit: 2
epochs: 2
"""


def test_a_yaml_configuration_runs_as_its_command_line_would(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text(CONFIG)
    doc = json_doc(toolscore("run", "--config", "run.yaml", "--no-cache", "--json",
                             cwd=tmp_path))
    typed = json_doc(toolscore("run", "demo", "--model", "oracle", "--embedder", "hashing",
                               "--split", "easy", "--limit", "2", "--epochs", "2",
                               "--temperature", "0", "--no-cache", "--json", "--out", "typed",
                               cwd=tmp_path))
    for key in ("benchmark", "model", "options", "model_args", "limit", "epochs"):
        assert doc["config"][key] == typed["config"][key], key
    assert doc["summary"]["samples"] == 4  # 2 samples x 2 epochs
    # the same identity: the default run directory is the typed command's (here --out moved it)
    assert Path(doc["run_dir"]).parent == Path("runs")


def test_the_command_line_wins_over_the_file(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text(CONFIG)
    doc = json_doc(toolscore("run", "--config", "run.yaml", "--limit", "1", "-T",
                             "split=hard", "--temperature", "0.5", "--no-cache", "--json",
                             cwd=tmp_path))
    assert doc["config"]["limit"] == 1 and doc["config"]["options"]["split"] == "hard"
    assert doc["config"]["model_args"] == {"temperature": 0.5}
    assert doc["config"]["epochs"] == 2  # from the file
    # the benchmark named on the command line must be the file's
    assert_user_error(toolscore("run", "tooltalk", "--config", "run.yaml", cwd=tmp_path),
                      "run.yaml: field 'benchmark': 'demo', but the command runs 'tooltalk'")


def test_a_runs_own_run_json_runs_it_again(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text(CONFIG)
    first = json_doc(toolscore("run", "--config", "run.yaml", "--no-cache", "--json",
                               cwd=tmp_path))
    stored = Path(tmp_path / first["run_dir"] / "run.json")
    again = toolscore("run", "--config", str(stored), "--no-cache", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "this run is already complete" in again.stderr  # the same run directory
    fresh = json_doc(toolscore("run", "--config", str(stored), "--out", "fresh", "--no-cache",
                               "--json", cwd=tmp_path))
    recorded = json.loads(stored.read_text())
    for key in ("benchmark", "model", "options", "model_args", "limit", "epochs"):
        assert fresh["config"][key] == recorded[key], key
    assert fresh["summary"]["run_now"] == 4


@pytest.mark.parametrize(("text", "message"), [
    ("benchmark: demo\nbogus: 1\n", "run.yaml: field 'bogus': not a run setting"),
    ("- demo\n", "run.yaml: a run configuration is a mapping"),
    ("model: oracle\n", "run.yaml: field 'benchmark': missing"),
    ("benchmark: demo\noptions: [a]\n", "run.yaml: field 'options': must be a mapping"),
    ("benchmark: demo\nmodel: oracle\noptions: {nope: 1}\n",
     "run.yaml: field 'options.nope': benchmark 'demo' has no such option"),
    ("benchmark: demo\n  bad: [\n", "run.yaml:2: not valid YAML"),
])
def test_a_bad_file_is_one_line_naming_the_field(tmp_path: Path, text: str,
                                                 message: str) -> None:
    (tmp_path / "run.yaml").write_text(text)
    assert_user_error(toolscore("run", "--config", "run.yaml", cwd=tmp_path), message)
    assert not (tmp_path / "runs").exists()


def test_roles_reach_the_model_each_benchmark_reads(tmp_path: Path) -> None:
    doc = json_doc(toolscore("run", "demo", "--role", "assistant=oracle", "--embedder",
                             "hashing", "--limit", "1", "--no-cache", "--json", cwd=tmp_path,
                             env={"TOOLSCORE_MODEL": "nope/x"}))
    assert doc["config"]["model"] == "oracle"  # a role on the command line beats the env
    assert_user_error(toolscore("run", "demo", "--role", "user=oracle", cwd=tmp_path),
                      "--role user=oracle: benchmark 'demo' has no user role (its roles: "
                      "assistant)")
    assert_user_error(toolscore("run", "demo", "--model", "oracle", "--role",
                                "assistant=oracle", cwd=tmp_path),
                      "--role assistant=oracle and --model: given twice")
    assert_user_error(toolscore("run", "demo", "--role", "assistant", cwd=tmp_path),
                      "--role 'assistant': expected ROLE=MODEL")
    # AutoDE's simulated user, ToolEval's judge: where each benchmark reads them
    generic: dict = {"model": None}
    options: dict = {}
    apply_roles(parse_roles(["assistant=openai/a", "user=openai/u"]),
                benchmark_class("autode").roles, "autode", generic, options, set())
    assert generic["model"] == "openai/a" and options == {"user_model": "openai/u"}
    with pytest.raises(ValueError, match="--role user=openai/u and --user-model: given twice"):
        apply_roles({"user": "openai/u"}, benchmark_class("autode").roles, "autode", {}, {},
                    {"user_model"})
    apply_roles({"judge": "openai/j"}, benchmark_class("tooleval").roles, "tooleval",
                generic, options, set())
    assert generic["model"] == "openai/j"


def test_every_benchmark_declares_roles_it_can_honour() -> None:
    for name in BENCHMARKS.names():
        cls = benchmark_class(name)
        fields = {f.name for f in dataclasses.fields(cls.Options)}
        assert cls.roles, name
        for role, target in cls.roles.items():
            assert role in ("assistant", "user", "judge"), (name, role)
            assert target == "model" or target in fields, (name, role, target)
