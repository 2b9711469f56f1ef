"""AutoDE's default mode sends each model what AutoDE's own runner sends, and records what it
records (``tests/fixtures/autode_requests``, made by ``make_fixtures.py`` there with the
reference's ``evaluators/eval.py`` at a recording endpoint).

Ten released cases run in the three modes with the same scripted replies (``policies.py``):
every request toolscore sends the assistant model and the user model is compared with the
reference's, request by request (system prompt, messages, API documents, sampling fields, tool
choice), and every case's transcript, slots, state and reason with the reference's output. The
comparison is shown to fail: ``--strict`` (toolscore's own protocol) differs in every category.

The shared test data do not hold the release's prompt files, runner and reader that the default
mode reads; the fixtures record the values read from them (``release_values.json``), and each
test builds its data folder from the shared data and a release folder written from those values.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support.autode_release import values, write_release
from support.data import dataset, needs

from toolscore.benchmarks.autode.benchmark import AutoDEBenchmark
from toolscore.benchmarks.autode.release import FILES, OPENAI_TAG, load_release, reference_documents
from toolscore.benchmarks.autode.workbook import read_sheet
from toolscore.benchmarks.options import OptionError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "autode_requests"
sys.path.insert(0, str(FIXTURES))

import compare  # noqa: E402
import policies  # noqa: E402

pytestmark = needs("autode")
NOTHING = dict.fromkeys(compare.CATEGORIES, 0)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compare.data_folder(tmp_path_factory.mktemp("autode-ref"), dataset("autode").parent)


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_release(tmp_path_factory.mktemp("autode-release"))


@pytest.fixture(scope="module")
def cases() -> list[dict[str, Any]]:
    return policies.load_cases(dataset("autode") / "data_v1_2.jsonl")


def test_fixtures_are_small_and_what_they_claim() -> None:
    assert sum(p.stat().st_size for p in FIXTURES.rglob("*") if p.is_file()) < 400_000
    for mode in policies.MODES:
        fixture = compare.load_fixture(mode)
        assert fixture["mode"] == mode and fixture["made_with"]["client"] == "openai==0.28.1"
        assert len(fixture["results"]) == len(policies.CASES)
        for item in fixture["decoded"]:
            # the runner sends its assistant the model, the messages, the gold API's document
            # and the call mode; its user agent the dialogue alone: no sampling field
            if item["to"] == "assistant":
                assert set(item["body"]) == {"model", "messages", "functions", "function_call"}
                assert len(item["body"]["functions"]) == 1
            else:
                assert set(item["body"]) == {"dialogs"}


def test_the_documents_are_the_reference_readers(release_dir: Path) -> None:
    """All 66 documents as the reference's reader builds them: every parameter required, the
    "at least one of" sentence, its two enumerations and two booleans."""
    release = load_release(release_dir)
    rows = read_sheet(dataset("autode") / "API_list.xlsx", "API list_2")
    docs = reference_documents(rows, release, "API_list.xlsx")
    expected = json.loads((FIXTURES / "documents.json").read_text(encoding="utf-8"))
    assert docs == expected["documents"]
    assert len(docs) == 66
    assert sum(len(d["parameters"]["required"]) for d in docs) == 217
    assert sum("must contain at least one of" in d["description"] for d in docs) == 15


def test_the_written_release_reads_as_the_recorded_values(release_dir: Path) -> None:
    """What toolscore reads from the release folder the tests write is what was recorded from
    the reference's files (so that folder cannot drift from the record)."""
    recorded = values()
    release = load_release(release_dir)
    assert release.assistant_prompt == \
        recorded["prompts"]["prompts/prompt_eng_system_v1.txt"].strip(OPENAI_TAG)
    assert release.user_prompt == recorded["prompts"]["prompts/prompt_eng_user_v3.txt"]
    assert release.start_cue == recorded["start_cue"]
    assert release.special_types == recorded["constants"]["SPECIAL_TYPES"]
    assert release.enums == recorded["constants"]["ENUM_MAP_ENG"]
    assert (release.optional_sentence, release.optional_separator) == (
        recorded["optional_sentence"], recorded["optional_separator"])
    assert set(recorded["sources"]) == set(FILES) == set(release.sources)
    # the prompts are the release's bytes; the two Python files are toolscore's stand-ins
    assert {rel for rel in FILES if release.sources[rel] == recorded["sources"][rel]} == {
        "prompts/prompt_eng_system_v1.txt", "prompts/prompt_eng_user_v3.txt"}


def test_the_wording_is_read_from_the_release(release_dir: Path) -> None:
    release = load_release(release_dir)
    assert release.assistant_prompt.startswith("You are a helpful voice assistant, Bob, that "
                                               "needs to call APIs")
    assert release.start_cue == "Now let's start the chat."
    assert release.user_prompt.startswith("You are an experienced data annotator.")


@pytest.mark.parametrize("mode", policies.MODES)
def test_default_mode_sends_and_records_what_the_reference_does(
        mode: str, folder: Path, cases: list[dict[str, Any]], tmp_path: Path) -> None:
    """In the reference's own request shape (legacy ``functions``, as toolscore sends OpenAI's
    API by default), every request body is the reference's but for the model's name."""
    got = compare.run_toolscore(mode, folder, tmp_path / "run", cases, call_api="functions")
    assert got["unknown"] == 0
    row = compare.compare(mode, got)
    assert row["requests"]["toolscore"] == row["requests"]["reference"] == row["requests"]["pairs"]
    assert {c: row["requests"][c] for c in compare.CATEGORIES} == NOTHING
    assert row["requests"]["other bodies"] == 0
    assert row["results"] == dict.fromkeys(compare.RESULT_FIELDS, 0)
    # the published score of the run is the reference's over the same outputs
    figures = compare.load_fixture(mode)["figures"]
    assert got["metrics"]["exact"]["f1"] == pytest.approx(figures["f1_avg"] * 100)
    assert got["metrics"]["exact"]["precision"] == pytest.approx(figures["precision_avg"] * 100)
    # run.json names the protocol and the prompts' source
    config = json.loads((got["path"] / "run.json").read_text(encoding="utf-8"))[
        "benchmark_config"]
    assert config["protocol"] == "reference" and config["tools"] == "gold"
    assert config["assistant_prompt"].startswith("hlmu/AutoDE@952086b prompts/prompt_eng_system")


def test_on_the_tools_api_only_the_shape_differs(folder: Path, cases: list[dict[str, Any]],
                                                tmp_path: Path) -> None:
    """At an endpoint other than OpenAI's, the default sends ``tools``: the same documents,
    messages and choice, framed for that API."""
    for mode in ("static", "dynamic"):
        row = compare.compare(mode, compare.run_toolscore(mode, folder, tmp_path / mode, cases))
        assert {c: row["requests"][c] for c in compare.CATEGORIES} == NOTHING
        to_assistant = sum(r["to"] == "assistant" for r in compare.load_fixture(mode)["decoded"])
        assert row["requests"]["other bodies"] == to_assistant  # tools, tool_choice
        assert row["results"] == dict.fromkeys(compare.RESULT_FIELDS, 0)


def test_strict_mode_differs_in_every_category(folder: Path, cases: list[dict[str, Any]],
                                               tmp_path: Path) -> None:
    """The comparison fails where toolscore's own protocol differs (so it can fail)."""
    row = compare.compare("dynamic", compare.run_toolscore("dynamic", folder, tmp_path / "run",
                                                           cases, strict=True))
    assert all(row["requests"][c] > 0 for c in ("count", "system", "sampling"))
    assert row["results"]["content"] > 0 and row["results"]["reason"] > 0
    static = compare.compare("static", compare.run_toolscore("static", folder, tmp_path / "s",
                                                             cases, strict=True, tools="all"))
    assert static["requests"]["documents"] == static["requests"]["tool choice"] == 10


def test_labels_name_the_protocol_and_every_variation(folder: Path) -> None:
    default = AutoDEBenchmark(folder)
    assert default.mode_label() == ("dynamic, reference (prompts: hlmu/AutoDE@952086b "
                                    "prompts/prompt_eng_system_v1.txt, "
                                    "prompts/prompt_eng_user_v3.txt)")
    varied = AutoDEBenchmark(folder, mode="static", tools="all", temperature=0.0)
    assert varied.mode_label().endswith(", deviating sampling (temperature=0.0), all APIs "
                                        "offered")
    assert AutoDEBenchmark(folder, strict=True).mode_label() == \
        "dynamic, strict (toolscore's own prompts)"
    assert AutoDEBenchmark(folder, strict=True).temperature == 0.0
    assert default.temperature is None and default.max_tokens is None


def test_a_run_made_before_the_reference_protocol_is_rebuilt_as_strict(folder: Path) -> None:
    from toolscore.benchmarks.autode.benchmark import AutoDEOptions
    from toolscore.benchmarks.options import StoredRun

    old = StoredRun({"benchmark_config": {"mode": "dynamic", "assistant_prompt":
                                          "autode-assistant-v1"}})
    assert AutoDEBenchmark.create_stored(folder, AutoDEOptions(), old).options.strict
    new = StoredRun({"benchmark_config": {"mode": "dynamic", "protocol": "reference"}})
    assert not AutoDEBenchmark.create_stored(folder, AutoDEOptions(), new).options.strict


def test_a_data_folder_without_the_release_files_is_one_line(tmp_path: Path) -> None:
    for name in ("data_v1_2.jsonl", "API_list.xlsx"):
        (tmp_path / name).write_bytes((dataset("autode") / name).read_bytes())
    with pytest.raises(OptionError, match=r"prompt_eng_system_v1.txt, which is missing.*--strict"):
        AutoDEBenchmark(tmp_path).check()
    AutoDEBenchmark(tmp_path, strict=True).check()
