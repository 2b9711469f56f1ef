"""AutoDE user-script generation against a scripted fake OpenAI server: valid scripts are kept in
the released shape, unknown parameters / missing required ones / malformed JSON are rejected
with messages naming API and field, and counted."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.testing.openai_server import FakeOpenAIServer, prompt_tokens, reply_to_completion

from toolscore.benchmarks.autode import load_api_docs, load_scripts
from toolscore.benchmarks.autode.generate import (
    ScriptRejected,
    generate_scripts,
    parse_script,
    write_scripts,
)
from toolscore.models import ModelClient, get_model
from toolscore.types import Message

APIS = [{"name": "BookTable", "description": "Book a restaurant table.",
         "parameters": {"restaurant": {"description": "name of the restaurant", "required": True},
                        "people": {"description": "number of people", "required": True},
                        "outdoor": {"description": "sit outside", "type": "boolean"}}}]
PERSON = {"character": "Ann, a nurse", "background": "Her friend visits.",
          "purpose": "Book dinner for two.", "query": "Can you book a table for tonight?"}
OUTPUTS = {  # variant -> the model's reply
    1: json.dumps({**PERSON, "arguments": {"restaurant": "Roma", "people": "2",
                                          "outdoor": True}}),
    2: "```json\n" + json.dumps({**PERSON, "arguments": {"restaurant": "Roma", "people": "2",
                                                         "table": "7"}}) + "\n```",
    3: json.dumps({**PERSON, "arguments": {"restaurant": "Roma"}}),
    4: '{"character": "Bob", "arguments": {',
    5: "Here you go: " + json.dumps({**PERSON, "query": "Table at Luigi's please",
                                     "arguments": {"restaurant": "Luigi's", "people": "4"}}),
}


def responder(request: dict[str, Any]) -> dict[str, Any]:
    prompt = request["messages"][-1]["content"]
    assert "API name: BookTable" in prompt and "restaurant: name of the restaurant" in prompt
    variant = int(re.search(r"\(variant (\d+)\)", prompt).group(1))
    return reply_to_completion(Message(role="assistant", content=OUTPUTS[variant]),
                               prompt_tokens=prompt_tokens(request))


@pytest.fixture()
def apis(tmp_path: Path) -> Path:
    path = tmp_path / "apis.json"
    path.write_text(json.dumps(APIS))
    return path


def test_parse_script_rejections_name_api_and_field(apis: Path) -> None:
    (doc,) = load_api_docs(apis)
    script = parse_script(OUTPUTS[1], doc)
    assert script["slots"] == {"restaurant": "Roma", "people": "2", "outdoor": True}
    assert script["background"].split("\n")[0] == "Character: Ann, a nurse"
    expected = {2: ("unknown_parameter", "API 'BookTable': field 'table' is not a parameter"),
                3: ("missing_required", "API 'BookTable': required field 'people' is missing"),
                4: ("malformed_json", "API 'BookTable': the reply is not valid JSON")}
    for variant, (kind, message) in expected.items():
        with pytest.raises(ScriptRejected) as e:
            parse_script(OUTPUTS[variant], doc)
        assert e.value.kind == kind and message in str(e.value)
    with pytest.raises(ScriptRejected, match="field 'query' must be non-empty text"):
        parse_script(json.dumps({**PERSON, "query": " ", "arguments": {}}), doc)


def test_generate_against_fake_server(apis: Path, tmp_path: Path) -> None:
    docs = load_api_docs(apis)
    with FakeOpenAIServer(responder) as srv:
        client = ModelClient(get_model("openai/fake", base_url=srv.base_url, api_key="k"))
        report = asyncio.run(generate_scripts(client, docs, per_api=5))
    assert report.requested == 5 and len(report.scripts) == 2
    assert report.counts == {"unknown_parameter": 1, "missing_required": 1,
                             "malformed_json": 1}
    out = tmp_path / "scripts.jsonl"
    write_scripts(report.scripts, out)
    loaded = load_scripts(out)  # the released loader accepts them
    assert [s.slots["restaurant"] for s in loaded] == ["Roma", "Luigi's"]
    assert loaded[1].initial_query == "Table at Luigi's please" and loaded[0].character
    assert len({s.uuid for s in loaded}) == 2


def test_generate_scripts_cli(apis: Path, tmp_path: Path) -> None:
    out = tmp_path / "gen" / "scripts.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(XDG_CACHE_HOME=str(tmp_path / "xdg"), OPENAI_API_KEY="k")
    with FakeOpenAIServer(responder) as srv:
        args = [sys.executable, "-m", "toolscore.cli", "autode", "generate-scripts", "--apis",
                str(apis), "--model", "openai/fake", "--base-url", srv.base_url, "--per-api",
                "5", "--out", str(out)]
        done = subprocess.run([*args, "--json"], env=env, capture_output=True, text=True,
                              timeout=300)
        text = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    assert doc["valid"] == 2 and doc["rejected"] == 3
    assert doc["rejected_by_kind"]["unknown_parameter"] == 1
    assert len(out.read_text().splitlines()) == 2
    assert text.returncode == 0 and "2 of 5 scripts valid" in text.stdout
    assert "rejected: API 'BookTable': field 'table' is not a parameter" in text.stderr
