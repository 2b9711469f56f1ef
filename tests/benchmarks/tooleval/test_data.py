"""ToolEval's released answers: converted files, raw DFS answers, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.data import ROOT as _DATA_ROOT
from support.data import needs

from toolscore.benchmarks.tooleval.data import (
    SUBSETS,
    ToolEvalDataError,
    load_answers,
    load_converted,
    load_raw_answer,
    load_raw_dir,
    parse_finish,
    tree_chain,
)

DATA = _DATA_ROOT / "tooleval"
CONVERTED = DATA / "converted" / "gpt-3.5-turbo_CoT"
RAW = DATA / "raw"
needs_data = needs("tooleval")


@needs_data
def test_converted_answers_load_with_the_released_counts() -> None:
    samples = load_answers(CONVERTED)
    assert len(samples) == 600
    assert sorted({s.subset for s in samples}) == sorted(SUBSETS)
    answers = [s.answer for s in samples if s.answer is not None]
    assert len(answers) == 600
    assert sum(a.finished for a in answers) == 376  # last tool call is Finish
    assert sum(a.finished and not a.gave_up for a in answers) == 296  # a judge is needed
    assert sum(a.return_type == "give_up_and_restart" for a in answers) == 72
    assert all(s.name for a in answers for s in a.path if s.role == "tool")


@needs_data
def test_one_converted_record_in_detail() -> None:
    s = {x.query_id: x for x in load_converted(CONVERTED / "G1_instruction.json")}["42700"]
    assert s.query.startswith("I'm working on a research project about different car models")
    assert s.available_tools[-1]["name"] == "Finish"
    a = s.answer
    assert a is not None and a.method == "chatgpt_CoT" and a.total_steps == 6
    assert [x.role for x in a.path] == ["system", "user", "tool", "tool", "tool", "tool"]
    assert [x.name for x in a.path[2:]] == ["vin_decode_for_vin_decoder_v4"] * 3 + ["Finish"]
    assert a.finished and a.return_type == "give_answer" and not a.gave_up
    assert a.text.startswith("The decoded information for the VINs are as follows:")


def test_broken_finish_arguments_still_yield_the_answer() -> None:
    assert parse_finish("") == (None, "")
    assert parse_finish('{"return_type": "give_up_and_restart"}') == ("give_up_and_restart", "")
    broken = '{\n  "return_type": "give_answer",\n  "final_answer": "He said "hi" to me"\n}'
    assert parse_finish(broken) == ("give_answer", 'He said "hi" to me')


def _write(tmp: Path, doc: object) -> Path:
    path = tmp / "G1_tool.json"
    path.write_text(json.dumps(doc))
    return path


def test_errors_name_file_record_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path, {"7": {"available_tools": []}})
    with pytest.raises(ToolEvalDataError, match=r"G1_tool.json: record 7: field 'query': missing"):
        load_converted(path)
    bad = {"7": {"query": "q", "available_tools": [], "answer": {
        "final_answer": "", "answer_details": [{"role": "robot", "message": "", "next": []}]}}}
    with pytest.raises(ToolEvalDataError, match=r"record 7: field 'answer.answer_details': "
                                                r"unknown role 'robot'"):
        load_converted(_write(tmp_path, bad))
    (tmp_path / "x.json").write_text("{oops")
    with pytest.raises(ToolEvalDataError, match=r"x.json: field '\(file\)': not JSON"):
        load_converted(tmp_path / "x.json")
    assert len(str(pytest.raises(ToolEvalDataError, load_converted, path).value).splitlines()) == 1


def test_a_query_without_answer_is_kept(tmp_path: Path) -> None:
    (s,) = load_converted(_write(tmp_path, {"7": {"query": "q", "available_tools": []}}))
    assert s.answer is None and s.query_id == "7"


@needs_data
def test_raw_answers_become_solution_paths() -> None:
    s = load_raw_answer(RAW / "answer" / "G1_answer" / "10_ChatGPT_DFS_woFilter_w2.json")
    doc = json.loads((RAW / "answer" / "G1_answer" / "10_ChatGPT_DFS_woFilter_w2.json")
                     .read_text())
    last = doc["answer_generation"]["train_messages"][-1]
    a = s.answer
    assert a is not None and s.query_id == "10" and a.method == "ChatGPT_DFS_woFilter_w2"
    assert [x.role for x in a.path] == ["system", "user", "tool", "tool", "tool"]
    assert [x.name for x in a.path if x.role == "tool"] == [
        "transitaires_for_transitaires", "transitaire_for_transitaires", "Finish"]
    assert a.path[2].content == last[3]["content"]  # response = the next message's content
    assert a.finished and a.return_type == "give_answer"
    assert a.text.startswith("The contact details of the 'Gondrand' customs agency")


@needs_data
def test_invalid_raw_answer_reduces_the_search_tree_to_one_chain() -> None:
    path = RAW / "answer" / "G1_answer" / "69_ChatGPT_DFS_woFilter_w2.json"
    s = load_raw_answer(path)
    a = s.answer
    assert a is not None and a.final_answer == "" and a.gave_up
    chain = tree_chain(json.loads(path.read_text())["tree"]["tree"])
    assert all(len(n.get("children") or []) <= 1 or n is not chain[-1] for n in chain)
    assert chain[-1].get("children") == [] and chain[-1]["node_type"] == "Action Input"
    tools = [x for x in a.path if x.role == "tool"]
    actions = [n for n in chain if n["node_type"] == "Action"]
    assert [t.name for t in tools] == [n["description"] for n in actions]
    assert tools[-1].content == chain[-1]["observation"]


@needs_data
def test_raw_directory_keeps_every_query() -> None:
    samples = load_raw_dir(RAW / "answer", RAW / "instruction")
    answered = [s for s in samples if s.answer is not None]
    assert len(answered) == 15 and len(samples) == 25  # 10 instructions have no answer file
    assert {s.subset for s in samples} == {"G1", "G2", "G3"}
    gave_up = {(s.subset, s.query_id) for s in answered if s.answer and s.answer.gave_up}
    assert gave_up == {("G1", "69"), ("G2", "10"), ("G2", "119"), ("G2", "127"), ("G3", "13"),
                       ("G3", "8")}
    assert len(load_answers(RAW / "answer")) == 15
