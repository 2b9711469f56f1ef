"""AutoDE with user-written API documents (JSON / YAML) and user scripts (JSONL): loading,
one-line validation errors, and ``toolscore run autode --apis --scripts`` end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import toolscore
from support.data import needs
from support.testing.openai_server import FakeOpenAIServer, prompt_tokens, reply_to_completion

from toolscore.benchmarks.autode import load_api_docs, load_scripts
from toolscore.benchmarks.autode.apidocs import check_arguments
from toolscore.data import DataError
from toolscore.types import Message, ToolCall

APIS: list[dict[str, Any]] = [
    {"name": "BookTable", "description": "Book a restaurant table.", "domain": "Life",
     "parameters": {
         "restaurant": {"description": "name of the restaurant", "required": True},
         "people": {"description": "number of people", "required": True},
         "outdoor": {"description": "sit outside", "type": "boolean"},
         "time": {"description": "meal time", "enum": ["lunch", "dinner"]}}},
    {"name": "TurnOnLight", "description": "Turn on a light.",
     "parameters": [{"name": "room", "description": "the room", "required": True}]},
]
YAML = """\
apis:
  - name: BookTable
    description: Book a restaurant table.
    domain: Life
    parameters:
      restaurant: {description: name of the restaurant, required: true}
      people: {description: number of people, required: true}
      outdoor: {description: sit outside, type: boolean}
      time: {description: meal time, enum: [lunch, dinner]}
  - name: TurnOnLight
    description: Turn on a light.
    parameters:
      - {name: room, description: the room, required: true}
"""
SCRIPT = {"uuid": "s1", "background": "Character: Ann\nBackground: Hungry.\nPurpose: Eat.",
          "content": [{"role": "User", "message": "Book me a table at Roma."}],
          "api": "BookTable", "slots": {"restaurant": "Roma", "people": "2"}}


def write(path: Path, obj: Any) -> Path:
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def test_json_and_yaml_documents_load_the_same(tmp_path: Path) -> None:
    from_json = load_api_docs(write(tmp_path / "apis.json", APIS))
    from_yaml = load_api_docs(write(tmp_path / "apis.yaml", YAML))
    assert [d.spec for d in from_json] == [d.spec for d in from_yaml]
    book, light = from_json
    assert book.domain == "Life" and book.parameter_names == {"restaurant", "people", "outdoor",
                                                              "time"}
    schema = book.spec.parameters
    assert schema["required"] == ["restaurant", "people"]
    assert schema["properties"]["outdoor"]["type"] == "boolean"
    assert schema["properties"]["time"]["enum"] == ["lunch", "dinner"]
    assert "restaurant: name of the restaurant (required slot)" in book.parameters_text
    assert light.spec.parameters["required"] == ["room"]
    no_enum = load_api_docs(tmp_path / "apis.json", enums=False)[0]
    assert "enum" not in no_enum.spec.parameters["properties"]["time"]


@pytest.mark.parametrize(("apis", "message"), [
    ([{"description": "x"}], "API #1: field 'name' must be non-empty text"),
    ([{"name": "A"}], "API 'A': field 'description' must be non-empty text"),
    ([{"name": "A", "description": "d", "params": {}}], "API 'A': field 'params' is not an API"),
    ([{"name": "A", "description": "d", "parameters": {"x": {"required": "yes",
                                                              "description": "d"}}}],
     "API 'A': field 'parameters.x.required' must be true or false"),
    ([{"name": "A", "description": "d", "parameters": {"x": {"description": "d",
                                                              "type": "int"}}}],
     "API 'A': field 'parameters.x.type' must be one of string, boolean"),
    ([{"name": "A", "description": "d", "parameters": {"x": {}}}],
     "API 'A': field 'parameters.x.description' must be non-empty text"),
    ([{"name": "A", "description": "d"}, {"name": "A", "description": "d"}],
     "API 'A': field 'name' repeats API #1"),
    ({"apis": 3}, "expected a list of APIs"),
])
def test_invalid_documents_give_one_line_errors(tmp_path: Path, apis: Any, message: str) -> None:
    path = write(tmp_path / "apis.json", apis)
    with pytest.raises(DataError) as e:
        load_api_docs(path)
    assert str(e.value).startswith(str(path)) and message in str(e.value)
    assert "\n" not in str(e.value)


def test_malformed_yaml_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "apis.yml", "- name: A\n  description: [unclosed\n")
    with pytest.raises(DataError, match=r"apis\.yml:\d+: not valid YAML"):
        load_api_docs(path)


def test_check_arguments_names_api_and_field(tmp_path: Path) -> None:
    book = load_api_docs(write(tmp_path / "apis.json", APIS))[0]
    assert check_arguments(book, {"restaurant": "Roma", "people": "2"}) == []
    kinds = [k for k, _ in check_arguments(book, {"restaurant": "Roma", "seats": "2",
                                                  "outdoor": "yes"})]
    assert sorted(kinds) == ["missing_required", "unknown_parameter", "wrong_type"]
    (problem,) = check_arguments(book, {"restaurant": "Roma"})
    assert problem[1] == "API 'BookTable': required field 'people' is missing"


def test_user_scripts_load_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "scripts.jsonl"
    path.write_text(json.dumps(SCRIPT) + "\n")
    (script,) = load_scripts(path)
    assert script.api == "BookTable" and script.initial_query.startswith("Book me")


def responder(request: dict[str, Any]) -> dict[str, Any]:
    """The assistant calls the first offered tool with the values of the user script."""
    call = ToolCall("c1", "BookTable", json.dumps({"restaurant": "Roma", "people": "2"}))
    return reply_to_completion(Message(role="assistant", tool_calls=[call]),
                               prompt_tokens=prompt_tokens(request))


@needs("autode")
def test_run_with_user_apis_and_scripts(tmp_path: Path) -> None:
    apis = write(tmp_path / "apis.yaml", YAML)
    scripts = tmp_path / "scripts.jsonl"
    scripts.write_text(json.dumps(SCRIPT) + "\n")
    with FakeOpenAIServer(responder) as srv:
        done = toolscore("run", "autode", "--mode", "static", "--strict", "--model", "openai/fake",
                         "--base-url", srv.base_url, "--apis", str(apis), "--scripts",
                         str(scripts), "--no-cache", "--json", "--out", str(tmp_path / "run"),
                         cwd=tmp_path, env={"OPENAI_API_KEY": "k"})
        assert done.returncode == 0, done.stderr[-2000:]
        doc = json.loads(done.stdout)
        assert doc["metrics"]["exact"]["f1"] == 100.0 and doc["metrics"]["n_cases"] == 1
        assert doc["config"]["benchmark_config"]["apis"] == str(apis.resolve())
        rescored = toolscore("score", str(tmp_path / "run"), "--json", cwd=tmp_path)
        assert json.loads(rescored.stdout)["metrics"]["exact"]["f1"] == 100.0
        bad = dict(SCRIPT, slots={"restaurant": "Roma", "table": "7"})
        scripts.write_text(json.dumps(bad) + "\n")
        done = toolscore("run", "autode", "--model", "openai/fake", "--base-url", srv.base_url,
                         "--apis", str(apis), "--scripts", str(scripts), "--no-cache",
                         "--out", str(tmp_path / "run2"), cwd=tmp_path,
                         env={"OPENAI_API_KEY": "k"})
    assert done.returncode == 2
    assert "scripts.jsonl:1: API 'BookTable': field 'table' is not a parameter" in done.stderr
