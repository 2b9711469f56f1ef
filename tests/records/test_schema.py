"""The run artefact: run.json and samples.jsonl lines round-trip through their types, a 0.1.0
run.json is read into the current shape, a file nobody can read is a one-line error, and the
published JSON Schema describes what toolscore really writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import toolscore
from toolscore.records import (
    FORMAT_VERSION,
    RUN_FILE,
    SAMPLES_FILE,
    RecordError,
    RunConfig,
    RunStore,
    RunStoreError,
    SampleRecord,
    json_schema,
)

# run.json as toolscore 0.1.0 wrote it: the run described by its "request", ToolTalk's --tools
# stored as "tools_mode", no format_version.
V1_RUN = {
    "benchmark": "demo",
    "benchmark_config": {"split": "all", "tools": "all", "strict": False, "embedder": "hashing"},
    "model": "oracle",
    "model_identity": {"provider": "oracle"},
    "epochs": 1, "limit": None, "max_concurrency": 8,
    "created": "2026-01-05T10:00:00+00:00",
    "versions": {"toolscore": "0.1.0", "python": "3.11.7"},
    "command": ["toolscore", "run", "demo", "--model", "oracle"],
    "request": {"benchmark": "demo", "model": "oracle", "data": None, "epochs": 1,
                "limit": None, "max_concurrency": 4, "base_url": None, "timeout": 60.0,
                "options": {"split": "all", "tools_mode": "all", "strict": False,
                            "embedder": "hashing", "max_calls_per_turn": None}},
}


def write_run_json(folder: Path, doc: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RUN_FILE).write_text(json.dumps(doc))
    return folder


# -- round trips -----------------------------------------------------------------------------
def test_run_config_round_trips_through_json() -> None:
    config = RunConfig(benchmark="tooltalk", model="openai/gpt-4o",
                       options={"split": "easy", "tools": "exact", "plugins": ["demo"]},
                       benchmark_config={"embedder_id": "hashing"}, data="datasets/tooltalk",
                       model_identity={"provider": "openai", "model": "gpt-4o"},
                       base_url="http://127.0.0.1:9/v1", epochs=3, limit=5, max_concurrency=2,
                       timeout=30.0, cache="cache/responses.sqlite", created="2026-01-05",
                       versions={"toolscore": "0.2.0"}, command=["toolscore", "run"])
    doc = json.loads(json.dumps(config.to_dict()))
    assert doc["format_version"] == FORMAT_VERSION
    assert RunConfig.from_dict(doc) == config


def test_sample_record_round_trips_and_leaves_out_empty_fields() -> None:
    full = SampleRecord(id="conv-1", epoch=2, status="error", meta={"split": "hard"},
                        output={"turns": []}, scores={"success": 0.0}, error="timeout",
                        traceback="Traceback ...", usage={"calls": 3},
                        usage_by_role={"assistant": {"calls": 3}}, time_s=1.5)
    assert SampleRecord.from_dict(json.loads(json.dumps(full.to_dict()))) == full
    assert full.key == ("conv-1", 2)
    bare = SampleRecord(id="conv-2")
    assert set(bare.to_dict()) == {"id", "epoch", "status", "meta", "usage", "usage_by_role",
                                   "time_s"}
    assert SampleRecord.from_dict(bare.to_dict()) == bare
    # ids and epochs are normalised the way the store keys records
    assert SampleRecord.from_dict({"id": 7, "epoch": "1"}).key == ("7", 1)


@pytest.mark.parametrize(("doc", "message"), [
    ([], "samples.jsonl: expected a JSON object, got list"),
    ({"epoch": 0}, "samples.jsonl: field 'id': missing"),
    ({"id": "a", "status": "done"}, "samples.jsonl: field 'status': 'done' is not 'ok' or"),
    ({"id": "a", "epoch": "first"}, "samples.jsonl: field 'epoch': 'first' is not an integer"),
])
def test_bad_sample_lines_are_one_line_errors(doc: Any, message: str) -> None:
    with pytest.raises(RecordError) as err:
        SampleRecord.from_dict(doc)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_store_names_the_bad_line(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.append(SampleRecord(id="a"))
    store.append({"id": "b", "status": "maybe"})
    with pytest.raises(RunStoreError, match=rf"{SAMPLES_FILE}: line 2: field 'status'"):
        list(store.typed_records())


# -- older and unreadable run.json ---------------------------------------------------------
def test_v1_run_json_loads_into_the_current_shape(tmp_path: Path) -> None:
    config = RunStore(write_run_json(tmp_path / "run", V1_RUN)).config()
    assert config.format_version == 1
    assert (config.benchmark, config.model) == ("demo", "oracle")
    assert config.options == {"split": "all", "tools": "all", "strict": False,
                              "embedder": "hashing", "max_calls_per_turn": None}
    # the request's settings win over the copies beside it
    assert (config.max_concurrency, config.timeout, config.data) == (4, 60.0, None)
    assert config.versions == {"toolscore": "0.1.0", "python": "3.11.7"}
    assert "request" not in config.to_dict()


def test_v1_run_is_rescored_with_its_options(tmp_path: Path) -> None:
    """A 0.1.0 run directory scores again today: its options are renamed and checked."""
    run = toolscore.evaluate("demo", "oracle", embedder="hashing", cache=None,
                             out=tmp_path / "run")
    write_run_json(run.path, {**V1_RUN, "request": {
        **V1_RUN["request"], "options": {**V1_RUN["request"]["options"], "strict": True}}})
    again = toolscore.score(run.path, write=False)
    assert again.config.format_version == 1 and again.config.options["strict"] is True
    assert again.config.benchmark_config["strict"] is True  # rebuilt from the 0.1.0 options
    assert again.metrics["strict"] is True and run.metrics["strict"] is False
    for split in ("easy", "hard"):  # the oracle is perfect in either mode
        assert again.metrics[split] == run.metrics[split]
        assert again.metrics[split]["success_rate"] == 1.0


@pytest.mark.parametrize(("doc", "message"), [
    ({"benchmark": "demo", "model": "oracle"},
     "field 'request': missing; this run.json was not written by toolscore >= 0.1.0"),
    ({"format_version": 99, "benchmark": "demo", "model": "oracle"},
     "field 'format_version': 99 is newer than this toolscore reads"),
    ({"format_version": 2, "model": "oracle"}, "field 'benchmark': missing or not a string"),
    ({**V1_RUN, "request": {"options": {}}, "model": None},
     "field 'model': missing or not a string"),
], ids=["no-request-no-version", "newer", "no-benchmark", "v1-no-model"])
def test_unreadable_run_json_is_one_line_naming_file_and_field(tmp_path: Path, doc: Any,
                                                               message: str) -> None:
    folder = write_run_json(tmp_path / "run", doc)
    with pytest.raises(RunStoreError) as err:
        RunStore(folder).config()
    text = str(err.value)
    assert "\n" not in text and text.startswith(str(folder / RUN_FILE)) and message in text


def test_run_json_that_is_not_json(tmp_path: Path) -> None:
    (tmp_path / RUN_FILE).write_text("{not json")
    with pytest.raises(RunStoreError, match=r"run\.json: invalid JSON"):
        RunStore(tmp_path).config()
    with pytest.raises(RunStoreError, match="not a run directory"):
        RunStore(tmp_path / "nowhere").config()


# -- the published schema --------------------------------------------------------------------
def schema_errors(value: Any, schema: dict[str, Any], where: str = "$") -> list[str]:
    """What ``value`` breaks of ``schema``: jsonschema when installed, else the subset of
    JSON Schema that the record types produce (type, anyOf, enum, required, properties,
    additionalProperties, items)."""
    try:
        import jsonschema
    except ImportError:
        pass
    else:
        validator = jsonschema.Draft202012Validator(schema)
        return [f"{where}{list(e.absolute_path)}: {e.message}"
                for e in validator.iter_errors(value)]
    if "anyOf" in schema:
        options = [schema_errors(value, s, where) for s in schema["anyOf"]]
        return [] if any(not o for o in options) else [f"{where}: matches no anyOf"]
    errors: list[str] = []
    kinds = {"string": str, "integer": int, "number": (int, float), "boolean": bool,
             "object": dict, "array": list, "null": type(None)}
    kind = schema.get("type")
    if kind is not None and (not isinstance(value, kinds[kind]) or (
            kind in ("integer", "number") and isinstance(value, bool))):
        return [f"{where}: {value!r} is not of type {kind}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: {value!r} not in {schema['enum']}")
    if isinstance(value, dict):
        errors += [f"{where}: {k!r} is required" for k in schema.get("required", [])
                   if k not in value]
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            sub = schema.get("properties", {}).get(key, extra)
            if sub is False:
                errors.append(f"{where}: {key!r} is not allowed")
            elif isinstance(sub, dict):
                errors += schema_errors(item, sub, f"{where}.{key}")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            errors += schema_errors(item, schema["items"], f"{where}[{i}]")
    return errors


def test_json_schema_describes_a_real_run(tmp_path: Path) -> None:
    run = toolscore.evaluate("demo", "oracle", embedder="hashing", cache=None,
                             out=tmp_path / "run")
    schema = json_schema()
    assert str(FORMAT_VERSION) in schema["title"]
    json.dumps(schema)  # publishable as is
    run_json = json.loads((run.path / RUN_FILE).read_text())
    run_schema = schema["run.json"]
    assert schema_errors(run_json, run_schema) == []
    assert set(run_json) == set(run_schema["properties"])  # every field written is declared
    line_schema = schema["samples.jsonl (one line)"]
    lines = [json.loads(line) for line in (run.path / SAMPLES_FILE).read_text().splitlines()]
    assert len(lines) == 6
    for line in lines:
        assert schema_errors(line, line_schema) == []
        assert set(line) <= set(line_schema["properties"])
    scores = json.loads((run.path / "scores.json").read_text())
    assert schema_errors(scores, schema["scores.json"]) == []
    # and it does reject what toolscore would not write
    assert schema_errors({**run_json, "epochs": "one"}, run_schema)
    assert schema_errors({k: v for k, v in run_json.items() if k != "model"}, run_schema)
    assert schema_errors({**lines[0], "status": "done"}, line_schema)
