"""The default mode reads the reference's wording from the release's own source files at run
time (never from a copy in the project): the system-prompt template and the tool documents,
checked against what ToolTalk's code returns (``openai_docs.json``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.data import dataset, needs

from toolscore.benchmarks.base import OptionError
from toolscore.benchmarks.tooltalk.benchmark import ToolTalkBenchmark
from toolscore.benchmarks.tooltalk.release import (
    APIS_INIT,
    PROMPT_FILE,
    release_documents,
    release_prompt,
)
from toolscore.types import ToolSpec

pytestmark = needs("tooltalk", "tooltalk-reference")


def _reference() -> dict:
    return json.loads((dataset("tooltalk-reference") / "openai_docs.json").read_text())


def test_the_template_is_the_reference_runners() -> None:
    found = release_prompt(dataset("tooltalk"))
    assert found.template == _reference()["system_prompt"]
    assert found.source == f"release: {PROMPT_FILE}"


def test_it_is_formatted_as_the_reference_formats_it() -> None:
    template = _reference()["system_prompt"]
    bench = ToolTalkBenchmark(dataset("tooltalk"))
    for meta in ({"location": "Here", "timestamp": "2023-09-11 09:00:00", "username": "ann"},
                 {"location": "Here", "timestamp": "2023-09-11 09:00:00"}):  # logged out
        expected = template.format(location=meta["location"], timestamp=meta["timestamp"],
                                   username=meta.get("username"))
        assert bench.system_prompt(meta) == expected
    assert bench.system_prompt({"location": "x", "timestamp": "y"}).endswith("None")
    assert bench.config()["prompt_source"] == f"release: {PROMPT_FILE}"


def test_toolscores_own_modes_keep_their_prompt() -> None:
    template = _reference()["system_prompt"].split("{")[0]
    meta = {"location": "Here", "timestamp": "2023-09-11 09:00:00"}
    for bench in (ToolTalkBenchmark(dataset("tooltalk"), strict=True),
                  ToolTalkBenchmark(dataset("tooltalk"), plugins=[])):
        assert not bench.system_prompt(meta).startswith(template)
        assert bench.config()["prompt_source"] == "toolscore's own"


def _copy_data(tmp_path: Path) -> Path:
    data = tmp_path / "tooltalk"
    shutil.copytree(dataset("tooltalk"), data, ignore=shutil.ignore_patterns("*.json"))
    return data


def test_a_data_folder_without_the_source_fails_in_one_line(tmp_path: Path) -> None:
    data = _copy_data(tmp_path)
    (data / PROMPT_FILE).unlink()
    with pytest.raises(OptionError) as err:
        release_prompt(data)
    said = str(err.value)
    assert "\n" not in said and str(data / PROMPT_FILE) in said and "e05f4ce.zip" in said


def test_a_modified_source_is_labelled(tmp_path: Path) -> None:
    data = _copy_data(tmp_path)
    path = data / PROMPT_FILE
    path.write_text(path.read_text() + "\n# changed\n")
    assert "modified" in release_prompt(data).source


def _sent(spec: ToolSpec) -> dict:
    """The document as the reference's legacy ``functions`` API carried it."""
    return spec.to_openai_function()


def test_the_documents_are_the_reference_runners_in_its_order() -> None:
    found = release_documents(dataset("tooltalk"))
    # byte for byte, key order included (``required`` beside ``parameters``)
    assert json.dumps(list(found.docs.values())) == json.dumps(_reference()["docs"])
    assert found.source == "release: src/tooltalk/apis/*.py"
    bench = ToolTalkBenchmark(dataset("tooltalk"))
    conv = bench.samples()[0].data
    sent = [_sent(s) for s in bench.reference_specs(conv) or []]
    assert json.dumps(sent) == json.dumps(_reference()["docs"])
    assert bench.config()["documents_source"] == found.source


def test_exact_and_suite_offer_the_reference_runners_order() -> None:
    docs = {d["name"]: d for d in _reference()["docs"]}
    found = release_documents(dataset("tooltalk"))
    for mode in ("exact", "suite"):
        bench = ToolTalkBenchmark(dataset("tooltalk"), tools=mode)
        for sample in bench.samples():
            conv = sample.data
            names = (list(conv.apis_used) if mode == "exact" else
                     [n for s in conv.suites_used for n in found.suites[s]])
            assert [_sent(s) for s in bench.reference_specs(conv) or []] == [docs[n]
                                                                          for n in names]
    # a suite lists its APIs in its own order, not ALL_APIS's
    assert found.suites["AccountTools"][0] == "GetAccountInformation"


def test_strict_mode_keeps_toolscores_documents() -> None:
    bench = ToolTalkBenchmark(dataset("tooltalk"), strict=True)
    assert bench.reference_specs(bench.samples()[0].data) is None
    assert bench.config()["documents_source"] == "toolscore's own"


def test_a_spec_without_extra_keys_keeps_its_cache_key() -> None:
    spec = ToolSpec("Add", "adds")
    assert "extra" not in spec.to_dict()
    assert ToolSpec.from_dict(spec.to_dict()) == spec
    shaped = ToolSpec("Add", "adds", extra={"required": ["a"]})
    assert shaped.to_openai_function()["required"] == ["a"]
    assert ToolSpec.from_dict(shaped.to_dict()) == shaped
    # the tools API takes nothing beside parameters (strict servers refuse an unknown key)
    tools_api = shaped.to_openai()["function"]
    assert set(tools_api) == {"name", "description", "parameters"}
    assert tools_api["parameters"]["required"] == ["a"]


def test_missing_api_sources_fail_in_one_line(tmp_path: Path) -> None:
    data = _copy_data(tmp_path)
    (data / APIS_INIT).unlink()
    with pytest.raises(OptionError) as err:
        release_documents(data)
    assert "\n" not in str(err.value) and str(data / APIS_INIT) in str(err.value)
