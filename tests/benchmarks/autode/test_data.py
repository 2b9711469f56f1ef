"""Loading AutoDE data: typed records from the release, one-line errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import data
from support.data import needs

from toolscore.benchmarks.autode import (
    DataError,
    load_api_docs,
    load_results,
    load_scripts,
    score_results,
)
from toolscore.benchmarks.autode.apidocs import parse_parameters

DATA = data.path("autode")

SCRIPT = {"uuid": "u1", "background": "Character: Ann, a nurse\nBackground: Busy.\nPurpose: Quiet.",
          "content": [{"role": "User", "message": "Mute my phone"}], "api": "SetVolume",
          "slots": {"deviceType": "mobile phone", "targetValue": "0"}}
RESULT = {"uuid": "u1", "background": SCRIPT["background"], "content": [], "api": "SetVolume",
          "slots": {"deviceType": "mobile phone"}, "state": "success", "reason": "",
          "trial_uuid": "t"}


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


# -- synthetic files -------------------------------------------------------------------------------
def test_script_fields(tmp_path: Path) -> None:
    (script,) = load_scripts(write_jsonl(tmp_path / "s.jsonl", [SCRIPT]))
    assert (script.character, script.background, script.purpose) == ("Ann, a nurse", "Busy.",
                                                                     "Quiet.")
    assert script.initial_query == "Mute my phone" and script.line == 1
    assert script.content[0].to_message().role == "user"


@pytest.mark.parametrize(("change", "message"), [
    ({"uuid": 3}, "field 'uuid' must be a string"),
    ({"background": "Character: A\nPurpose: B"}, "field 'background' line 2"),
    ({"background": "Character: A\nBackground: B"}, "field 'background' must have 3 lines"),
    ({"content": []}, "field 'content' must start and end with a User message"),
    ({"content": [{"role": "Bot", "message": "x"}]}, "field 'content[0].role'"),
    ({"content": [{"role": "User"}]}, "field 'content[0].message'"),
    ({"slots": {"deviceType": 3}}, "field 'slots.deviceType' must be a string or boolean"),
    ({"slots": []}, "field 'slots' must be an object"),
])
def test_bad_script_names_file_line_and_field(tmp_path: Path, change: dict[str, Any],
                                              message: str) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", [SCRIPT, {**SCRIPT, "uuid": "u2", **change}])
    with pytest.raises(DataError) as info:
        load_scripts(path)
    text = str(info.value)
    assert text.startswith(f"{path}:2: ") and message in text and "\n" not in text


def test_bad_lines(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", [SCRIPT, "{not json", SCRIPT])
    with pytest.raises(DataError, match=r"s\.jsonl:2: not valid JSON"):
        load_scripts(path)
    path = write_jsonl(tmp_path / "d.jsonl", [SCRIPT, SCRIPT])
    with pytest.raises(DataError, match=r"d\.jsonl:2: field 'uuid' 'u1' repeats line 1"):
        load_scripts(path)
    with pytest.raises(DataError, match="file not found"):
        load_scripts(tmp_path / "missing.jsonl")
    with pytest.raises(DataError, match="no user scripts"):
        load_scripts(write_jsonl(tmp_path / "e.jsonl", []))


def test_results_accept_legacy_lines(tmp_path: Path) -> None:
    legacy = {k: RESULT[k] for k in ("uuid", "background", "content", "api", "slots")}
    result = load_results(write_jsonl(tmp_path / "r.jsonl", [RESULT, legacy]))
    assert [r.state for r in result.records] == ["success", None]
    assert result.records[1].line == 2 and result.name == "r"


@pytest.mark.parametrize(("change", "message"), [
    ({"state": "done"}, "field 'state'"),
    ({"reason": 5}, "field 'reason' must be a string"),
    ({"api": None}, "field 'api' must be a string"),
])
def test_bad_result_line(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", [RESULT, {**RESULT, **change}])
    with pytest.raises(DataError, match=rf"r\.jsonl:2: {message}"):
        load_results(path)


def test_result_uuid_must_be_gold(tmp_path: Path) -> None:
    scripts = load_scripts(write_jsonl(tmp_path / "s.jsonl", [SCRIPT]))
    path = write_jsonl(tmp_path / "r.jsonl", [RESULT, {**RESULT, "uuid": "zz"}])
    with pytest.raises(DataError, match=r"r\.jsonl:2: field 'uuid' 'zz' is not a gold case"):
        score_results(path, scripts)


def test_score_results_on_synthetic_run(tmp_path: Path) -> None:
    scripts = load_scripts(write_jsonl(tmp_path / "s.jsonl", [SCRIPT]))
    rows = [RESULT, {**RESULT, "slots": {}, "state": "failure", "reason": "Round limit reached",
                     "content": [{"role": "User", "message": "x"}] * 3}]
    run = score_results(write_jsonl(tmp_path / "a_gpt35_static.jsonl", rows), scripts)
    assert run.n_trials == 2 and run.run.method == "static"
    assert run.exact.f1 == pytest.approx((2 / 3 + 0) / 2)
    assert run.call_rate == 0.5 and run.refusal_rate == 0.5 and run.exact_match_rate == 0.0
    assert run.mean_dialogue_length == 1.5 and run.hallucinated_parameter_rate is None
    assert run.to_dict()["exact"]["f1"] == pytest.approx(100 / 3)


def test_parse_parameters() -> None:
    schema = parse_parameters(
        "\ndeviceType: Supported device types, including mobile phone, tablet, TV\n"
        "type: Kind, can be alarm, todo or reminder message (required slot)\n"
        "mediaType: Media type, including music, audio, etc. (optional slot)\n"
        "estimateTime: Whether to estimate, including True and False\n", "here")
    props = schema["properties"]
    assert props["deviceType"]["enum"] == ["mobile phone", "tablet", "TV"]
    assert props["type"] == {"type": "string", "description": "Kind, can be alarm, todo or "
                             "reminder message", "enum": ["alarm", "todo", "reminder message"]}
    assert "enum" not in props["mediaType"]
    assert props["estimateTime"]["type"] == "boolean"
    assert schema["required"] == ["type"]
    assert "enum" not in parse_parameters("t: T, can be a, b", "x", enums=False)["properties"]["t"]
    with pytest.raises(DataError, match="here: field 'parameters' line 2: expected"):
        parse_parameters("a: ok\nno colon here", "here")


def test_bad_workbook(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    sheet = wb.active
    sheet.title = "API list_2"
    sheet.append(["domain", "subdomain", "function", "api", "description", "parameters"])
    sheet.append(["D", "S", "F", "Api", "Does things.", "x: X (required slot)"])
    sheet.append(["D", "S", "F", "Api", "Again.", "x: X"])
    wb.save(tmp_path / "apis.xlsx")
    with pytest.raises(DataError, match=r"apis\.xlsx:API list_2 row 3: field 'api' 'Api' "
                                        r"repeats row 2"):
        load_api_docs(tmp_path / "apis.xlsx")
    sheet.delete_rows(3)
    wb.save(tmp_path / "apis.xlsx")
    (doc,) = load_api_docs(tmp_path / "apis.xlsx")
    assert doc.spec.parameters["required"] == ["x"] and doc.row == 2


# -- the release -----------------------------------------------------------------------------------
@needs("autode")
def test_released_scripts() -> None:
    scripts = load_scripts(DATA)
    assert len(scripts) == 276 and len({s.api for s in scripts}) == 61
    assert sum(isinstance(v, bool) for s in scripts for v in s.slots.values()) == 10


@needs("autode")
def test_released_api_documents() -> None:
    pytest.importorskip("openpyxl")
    docs = {d.name: d for d in load_api_docs(DATA)}
    assert len(docs) == 66
    assert {d.domain for d in docs.values()} == {
        "Device Manipulation", "Schedule Management", "Information Inquiry", "Communication",
        "User Management"}
    book = docs["BookTicket"].spec.parameters
    assert set(book["required"]) == {"ticketType", "time", "departure", "destination"}
    assert book["properties"]["ticketType"]["enum"][0] == "plane ticket"
    assert docs["Navigate"].spec.parameters["properties"]["estimateTime"]["type"] == "boolean"
    # Every gold slot is a documented parameter of its API with the documented type. A few gold
    # values lie outside their documented list and a few documented-required slots are absent
    # from the gold: facts of the release that a strict provider would run into.
    outside, absent = set(), set()
    for script in load_scripts(DATA):
        props = docs[script.api].spec.parameters["properties"]
        for key, value in script.slots.items():
            assert (props[key]["type"] == "boolean") == isinstance(value, bool)
            if value not in props[key].get("enum", [value]):
                outside.add((script.api, key, value))
        absent |= {(script.api, k) for k in docs[script.api].spec.parameters.get("required", [])
                   if k not in script.slots}
    assert outside == {("BookTicket", "ticketType", v) for v in ("plane", "train", "bus", "boat")
                       } | {("CheckBalance", "type", "call minutes")}
    assert absent == {("DeleteNotification", "type"), ("CheckNotification", "type")}
    assert all("enum" not in p for d in load_api_docs(DATA, enums=False)
               for p in d.spec.parameters["properties"].values())
