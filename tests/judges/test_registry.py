"""Judge kinds through the ``toolscore.judges`` entry points, judge configuration files
(validation with one-line errors), and a configured LLM judge end to end (ACS agreement)
against a scripted OpenAI-compatible server."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.data import ROOT as _DATA_ROOT
from support.data import needs
from support.testing.openai_server import FakeOpenAIServer, reply_to_completion

from toolscore.cli import app
from toolscore.entrypoints import JUDGES, Extension, ExtensionError
from toolscore.judges.registry import (
    DETERMINISTIC,
    LLM,
    JudgeConfigError,
    JudgeKind,
    get_judge,
    judge_config,
    list_judges,
    load_judge_config,
)
from toolscore.types import Message

ACS = _DATA_ROOT / "acs" / "acs_dev.csv"
needs_acs = needs("acs")


def rows_of(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def builtin_judges() -> dict[str, str]:
    """The judge kinds toolscore declares in its pyproject.toml (name -> module:attribute)."""
    import tomllib

    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml")
                            .read_text())["project"]
    return dict(project["entry-points"]["toolscore.judges"])


def test_builtin_kinds_are_found_through_the_entry_point_registry(
        builtin_judges: dict[str, str]) -> None:
    assert set(builtin_judges) <= set(JUDGES.names())
    assert not get_judge("acs-verify").needs_model
    assert all(get_judge(k).needs_model for k in ("tooleval-pass", "tooleval-pref", "acs-llm"))
    listed = [k.name for k in list_judges()]
    assert listed == sorted(listed) and set(builtin_judges) <= set(listed)
    with pytest.raises(LookupError) as e:
        get_judge("gpt-judge")
    assert "unknown judge 'gpt-judge'" in str(e.value) and "acs-verify" in str(e.value)


def test_declared_targets_are_judge_kinds_of_their_name(builtin_judges: dict[str, str]) -> None:
    """The targets pyproject.toml declares load to the kind they name; where the installed
    metadata already declares them, it names the same targets."""
    for name, target in builtin_judges.items():
        kind = Extension(name, target, "toolscore", "").load("judge")
        assert isinstance(kind, JudgeKind) and kind.name == name
        assert kind.kind in (DETERMINISTIC, LLM) and kind.description
    declared = {ep.name: ep.value for ep in entry_points(group="toolscore.judges")}
    assert {n: t for n, t in declared.items() if n in builtin_judges} == builtin_judges


def test_a_kind_registered_by_another_package_is_usable_in_a_config(tmp_path: Path) -> None:
    JUDGES.register("house-llm", JudgeKind("house-llm", LLM, "yes / no", "our own judge"))
    JUDGES.register("broken", {"name": "broken"})
    try:
        cfg = load_judge_config(write(tmp_path, "h.yaml", "name: h\nkind: house-llm\n"
                                      "model: openai/m\n"))
        assert cfg.id == "h (house-llm, openai/m, built-in template)"
        assert "house-llm" in [k.name for k in list_judges()]
        assert "broken" not in [k.name for k in list_judges()]
        with pytest.raises(ExtensionError, match="not a toolscore.judges.registry.JudgeKind"):
            get_judge("broken")
        with pytest.raises(JudgeConfigError, match="field 'kind': judge 'broken'"):
            load_judge_config(write(tmp_path, "b.yaml", "name: b\nkind: broken\n"))
    finally:
        JUDGES.unregister("house-llm")
        JUDGES.unregister("broken")


def test_cli_lists_judge_kinds(builtin_judges: dict[str, str]) -> None:
    res = CliRunner().invoke(app, ["judges", "--json"])
    assert res.exit_code == 0, res.output
    kinds = {k["name"]: k for k in json.loads(res.stdout)["judges"]}
    assert set(builtin_judges) <= set(kinds)
    assert kinds["acs-verify"]["kind"] == "deterministic" and kinds["acs-llm"]["kind"] == "llm"


def test_valid_yaml_config_with_template_file(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    write(tmp_path, "prompts/strict.txt", "Be strict. Reply in JSON {like this}.\n")
    path = write(tmp_path, "judge.yaml", "name: strict-pass\nkind: tooleval-pass\n"
                 "model: openai/gpt-4o-mini\nbase_url: http://x/v1\n"
                 "template: prompts/strict.txt\ntemperature: 0.3\nvotes: 5\n")
    cfg = load_judge_config(path)
    assert (cfg.name, cfg.kind, cfg.model, cfg.base_url) == (
        "strict-pass", "tooleval-pass", "openai/gpt-4o-mini", "http://x/v1")
    assert cfg.template == "Be strict. Reply in JSON {like this}.\n"
    assert cfg.template_source == str(tmp_path / "prompts" / "strict.txt")
    assert (cfg.temperature, cfg.votes) == (0.3, 5)
    ident = cfg.identity()
    assert ident["template_sha256"] and len(ident["template_sha256"]) == 64
    assert cfg.id == (f"strict-pass (tooleval-pass, openai/gpt-4o-mini, template "
                      f"{ident['template_sha256'][:12]})")


def test_valid_json_config_inline_template_and_deterministic(tmp_path: Path) -> None:
    path = write(tmp_path, "j.json", json.dumps({
        "name": "pref", "kind": "tooleval-pref", "model": "openai/m",
        "template": "You compare two attempts carefully."}))
    cfg = load_judge_config(path)
    assert cfg.template == "You compare two attempts carefully."
    assert cfg.template_source == "inline" and cfg.votes is None
    det = load_judge_config(write(tmp_path, "v.json", '{"name": "v", "kind": "acs-verify"}'))
    assert det.model is None and det.id == "v (acs-verify)"
    assert det.require("acs-verify", "acs-llm") is det
    with pytest.raises(JudgeConfigError, match="'kind': 'acs-verify' cannot be used here"):
        det.require("tooleval-pass")


@pytest.mark.parametrize(("doc", "field", "problem"), [
    ({"name": "a", "kind": "acs-llm", "model": "openai/m", "shots": 2}, "shots",
     "unknown field"),
    ({"name": "a", "kind": "acs-llm", "model": "openai/m", "votes": 0}, "votes",
     "expected an integer >= 1, got 0"),
    ({"name": "a", "kind": "acs-llm", "model": "openai/m", "votes": "3"}, "votes",
     "expected an integer >= 1"),
    ({"name": "a", "kind": "acs-llm", "model": "openai/m", "votes": True}, "votes",
     "expected an integer >= 1"),
    ({"name": "a", "kind": "tooleval-pass"}, "model", "missing (the tooleval-pass judge is an "
                                                      "LLM"),
    ({"name": "a", "kind": "acs-verify", "model": "openai/m"}, "model",
     "not used by the deterministic acs-verify judge"),
    ({"name": "a", "kind": "judge-o-matic", "model": "m"}, "kind", "unknown judge"),
    ({"kind": "acs-llm", "model": "m"}, "name", "missing"),
    ({"name": "a", "kind": "acs-llm", "model": "m", "temperature": 9}, "temperature",
     "expected a number in [0, 2]"),
    ({"name": "a", "kind": "acs-llm", "model": "m", "template": "missing.txt"}, "template",
     "no such template file"),
])
def test_bad_configs_are_one_line_errors_naming_file_and_field(
        tmp_path: Path, doc: dict[str, Any], field: str, problem: str) -> None:
    path = write(tmp_path, "judge.json", json.dumps(doc))
    with pytest.raises(JudgeConfigError) as e:
        load_judge_config(path)
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: field {field!r}: ") and problem in message


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(JudgeConfigError, match="no such judge config file"):
        load_judge_config(tmp_path / "none.yaml")
    with pytest.raises(JudgeConfigError, match=r"'\(file\)': not JSON"):
        load_judge_config(write(tmp_path, "b.json", "{name: a"))
    with pytest.raises(JudgeConfigError, match="not YAML") as e:
        load_judge_config(write(tmp_path, "b.yaml", "name: [a\nkind: x\n"))
    assert "\n" not in str(e.value)
    with pytest.raises(JudgeConfigError, match="expected a mapping of fields, got list"):
        load_judge_config(write(tmp_path, "l.yaml", "- a\n- b\n"))
    with pytest.raises(JudgeConfigError, match="<inline>: field 'name'"):
        judge_config({"kind": "acs-verify"})


def test_cli_rejects_a_bad_config_in_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, "j.yaml", "name: x\nkind: acs-llm\nvotes: -1\nmodel: openai/m\n")
    res = CliRunner().invoke(app, ["judge-agreement", "--judge-config", str(path)])
    assert res.exit_code == 2
    assert "field 'votes'" in res.output and str(path) in " ".join(res.output.split())
    wrong = write(tmp_path, "p.yaml", "name: x\nkind: tooleval-pass\nmodel: openai/m\n")
    res = CliRunner().invoke(app, ["judge-agreement", "--judge-config", str(wrong)])
    assert res.exit_code == 2 and "cannot be used here" in res.output


@needs_acs
def test_acs_verify_config_names_its_judge(tmp_path: Path) -> None:
    path = write(tmp_path, "v.yaml", "name: verifier\nkind: acs-verify\n")
    res = CliRunner().invoke(app, ["judge-agreement", "--judge-config", str(path), "--limit",
                                   "10", "--resamples", "0", "--json", "--out",
                                   str(tmp_path / "run")])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["judge"] == "verifier (acs-verify)" and doc["judge_config"]["kind"] == "acs-verify"
    rows = rows_of(tmp_path / "run")
    assert len(rows) == 10 and {r["output"]["judge"] for r in rows} == {"verifier (acs-verify)"}
    assert json.loads((tmp_path / "run" / "scores.json").read_text()) == doc


@needs_acs
def test_acs_llm_config_end_to_end_with_template(tmp_path: Path) -> None:
    """The configured system prompt reaches the server, votes come from the config and every
    row names the judge (name, model, template hash)."""
    seen: list[dict[str, Any]] = []

    def responder(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        text = '{"reasoning": "checked", "satisfied": true}'
        return reply_to_completion(Message(role="assistant", content=text), prompt_tokens=5)

    with FakeOpenAIServer(responder) as srv:
        path = write(tmp_path, "acs.yaml", f"name: acs-mini\nkind: acs-llm\nmodel: openai/fake\n"
                     f"base_url: {srv.base_url}\nvotes: 3\ntemperature: 0.5\n"
                     "template: |\n  Check the constraint; answer with JSON {{satisfied}}.\n")
        res = CliRunner().invoke(app, ["judge-agreement", "--judge-config", str(path),
                                       "--limit", "4", "--resamples", "0", "--no-cache",
                                       "--json", "--out", str(tmp_path / "run")])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    cfg = load_judge_config(path)
    assert doc["judge"] == cfg.id and "acs-mini (acs-llm, openai/fake, template " in cfg.id
    assert doc["judge_config"]["template_sha256"] == cfg.template_sha256
    assert doc["votes"] == 3 and doc["rows"] == 4 and doc["errors"] == 0
    assert len(seen) == 4 * 3
    assert {r["messages"][0]["content"] for r in seen} == {
        "Check the constraint; answer with JSON {{satisfied}}.\n"}
    assert {r.get("temperature") for r in seen} == {0.5}
    rows = rows_of(tmp_path / "run")
    assert {r["output"]["judge"] for r in rows} == {cfg.id}
    assert all(len(r["output"]["votes"]) == 3 for r in rows)
    # the configured model is the judge's, not the run's: usage is counted as the judge's
    assert all(set(r["usage_by_role"]) == {"judge"} for r in rows)
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["model"] == "none" and run["benchmark_config"]["judge_id"] == cfg.id
