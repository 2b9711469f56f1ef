"""One test per rule of BFCL's AST checker, on small made-up entries: each failing case with
BFCL's exact error type and message."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolscore.benchmarks.bfcl.checker import Verdict, check_entry


def function(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"name": name, "parameters": {"type": "dict", "properties": properties,
                                         "required": required}}


AREA = function(
    "geometry.area",
    {
        "shape": {"type": "string"},
        "size": {"type": "float"},
        "count": {"type": "integer"},
        "exact": {"type": "boolean"},
        "sides": {"type": "array", "items": {"type": "integer"}},
        "origin": {"type": "tuple", "items": {"type": "float"}},
        "style": {"type": "dict"},
        "layers": {"type": "array", "items": {"type": "dict"}},
        "note": {"type": "any"},
    },
    ["shape", "size"],
)
AREA_ANSWER = {
    "geometry.area": {
        "shape": ["square", "Square shape"],
        "size": [2.0],
        "count": [3, ""],
        "exact": [True, ""],
        "sides": [[1, 2], ""],
        "origin": [[0.5, 1.0], ""],
        "style": [{"color": ["red", "dark red"], "width": [1, ""]}, ""],
        "layers": [[{"name": ["top"]}, {"name": ["base"]}], ""],
        "note": ["", "n/a"],
    }
}


def simple(arguments: dict[str, Any], name: str = "geometry_area", **options: Any) -> Verdict:
    entry = {"id": "simple_python_0", "function": [AREA]}
    answer = {"id": "simple_python_0", "ground_truth": [AREA_ANSWER]}
    return check_entry("simple_python", entry, answer, [{name: arguments}], **options)


def test_the_expected_call_is_valid() -> None:
    assert simple({"shape": "square", "size": 2.0}) == Verdict(True, None, ())


def test_strings_are_compared_without_case_spaces_or_punctuation() -> None:
    assert simple({"shape": "SQUARE-shape.", "size": 2.0}).valid
    assert simple({"shape": "square_shape", "size": 2.0}).valid


def test_an_int_is_accepted_for_a_float() -> None:
    assert simple({"shape": "square", "size": 2}).valid


def test_dots_in_function_names_are_underscores_for_function_calling_models() -> None:
    assert simple({"shape": "square", "size": 2.0}, name="geometry.area").errors == (
        "Function name 'geometry_area' not found in model output.",)
    assert simple({"shape": "square", "size": 2.0}, name="geometry.area",
                  dots_to_underscores=False).valid
    verdict = simple({"shape": "square", "size": 2.0}, name="area")
    assert verdict.error_type == "simple_function_checker:wrong_func_name"


def test_a_missing_required_parameter() -> None:
    assert simple({"shape": "square"}) == Verdict(
        False, "simple_function_checker:missing_required", ("Missing required parameter: 'size'.",))


def test_an_unexpected_parameter() -> None:
    assert simple({"shape": "square", "size": 2.0, "unit": "cm"}) == Verdict(
        False, "simple_function_checker:unexpected_param", ("Unexpected parameter: 'unit'.",))


def test_an_optional_parameter_left_out_must_allow_the_empty_string() -> None:
    entry = {"id": "simple_python_1", "function": [AREA]}
    answer = {"id": "simple_python_1",
              "ground_truth": [{"geometry.area": {"shape": ["square"], "size": [2.0],
                                                  "count": [3]}}]}
    verdict = check_entry("simple_python", entry, answer,
                          [{"geometry_area": {"shape": "square", "size": 2.0}}])
    assert verdict == Verdict(
        False, "simple_function_checker:missing_optional",
        ("Optional parameter 'count' not provided and not marked as optional.",))


def test_a_wrong_type() -> None:
    assert simple({"shape": "square", "size": 2.0, "count": 3.0}) == Verdict(
        False, "type_error:simple",
        ("Incorrect type for parameter 'count'. Expected type integer, got float. "
         "Parameter value: 3.0.",))
    # a bool is not an int here (types are compared exactly)
    assert simple({"shape": "square", "size": 2.0, "count": True}).error_type == (
        "type_error:simple")


def test_a_wrong_item_type() -> None:
    entry = {"id": "simple_python_3", "function": [AREA]}
    answer = {"id": "simple_python_3",
              "ground_truth": [{"geometry.area": {"shape": ["square"], "size": [2.0],
                                                  "sides": [[1, 2]]}}]}
    calls = [{"geometry_area": {"shape": "square", "size": 2.0, "sides": [1, "2"]}}]
    verdict = check_entry("simple_python", entry, answer, calls)
    assert verdict == Verdict(False, "type_error:nested", (
        "Nested type checking failed for parameter 'sides'. Expected outer type array with "
        "inner type <class 'int'>. Parameter value: [1, '2'].",
    ))


def test_values_outside_the_allowed_ones() -> None:
    assert simple({"shape": "circle", "size": 2.0}) == Verdict(False, "value_error:string", (
        "Invalid value for parameter 'shape': 'circle'. Expected one of ['square', "
        "'Square shape']. Case insensitive.",))
    assert simple({"shape": "square", "size": 3.0}) == Verdict(False, "value_error:others", (
        "Invalid value for parameter 'size': 3.0. Expected one of [2.0].",))
    assert simple({"shape": "square", "size": 2.0, "sides": [2, 1]}) == Verdict(
        False, "value_error:list/tuple",
        ("Invalid value for parameter 'sides': [2, 1]. Expected one of [[1, 2], ''].",))


def test_an_empty_list_matches_an_optional_marker() -> None:
    assert simple({"shape": "square", "size": 2.0, "sides": []}).valid
    # "" among the allowed values also lets any items pass the type check
    assert simple({"shape": "square", "size": 2.0, "sides": [1, "2"]}).error_type == (
        "value_error:list/tuple")


def test_a_tuple_is_compared_as_a_list() -> None:
    assert simple({"shape": "square", "size": 2.0, "origin": (0.5, 1.0)}).valid


def test_dictionaries_key_by_key() -> None:
    assert simple({"shape": "square", "size": 2.0, "style": {"color": "Dark-Red"}}).valid
    assert simple({"shape": "square", "size": 2.0, "style": {"color": "blue"}}) == Verdict(
        False, "value_error:dict_value",
        ("Invalid value for parameter 'color': 'blue'. Expected one of ['red', 'darkred'].",))
    assert simple({"shape": "square", "size": 2.0, "style": {"width": 1}}) == Verdict(
        False, "value_error:dict_key", ("Missing dict key parameter: 'color'.",))
    assert simple({"shape": "square", "size": 2.0,
                   "style": {"color": "red", "glow": 1}}) == Verdict(
        False, "value_error:dict_key", ("Unexpected dict key parameter: 'glow'.",))


def test_lists_of_dictionaries_position_by_position() -> None:
    layers = [{"name": "top"}, {"name": "base"}]
    assert simple({"shape": "square", "size": 2.0, "layers": layers}).valid
    assert simple({"shape": "square", "size": 2.0, "layers": layers[:1]}) == Verdict(
        False, "value_error:list_dict_count", ("Wrong number of dictionaries in the list.",))
    # the failure reported is the last allowed value's: here "", whose length differs
    assert simple({"shape": "square", "size": 2.0, "layers": layers[::-1]}).error_type == (
        "value_error:list_dict_count")
    entry = {"id": "simple_python_4", "function": [AREA]}
    answer = {"id": "simple_python_4", "ground_truth": [{"geometry.area": {
        "shape": ["square"], "size": [2.0], "layers": [[{"name": ["top"]}, {"name": ["base"]}]]}}]}
    calls = [{"geometry_area": {"shape": "square", "size": 2.0, "layers": layers[::-1]}}]
    assert check_entry("simple_python", entry, answer, calls) == Verdict(
        False, "value_error:dict_value",
        ("Invalid value for parameter 'name': 'base'. Expected one of ['top'].",))


def test_items_that_are_not_dictionaries_fail_where_the_reference_would_crash() -> None:
    # "" among the allowed values lets any items through the type check; BFCL's evaluator
    # then fails on the first item that is not a dictionary, this checker gives a verdict
    assert simple({"shape": "square", "size": 2.0, "layers": ["top", "base"]}) == Verdict(
        False, "type_error:nested",
        ("Nested type checking failed for parameter 'layers'. Expected outer type array with "
         "inner type <class 'dict'>. Parameter value: ['top', 'base'].",))


def test_a_variable_is_compared_as_it_is() -> None:
    # "any" is a string type; the answer's value of another type stands for a variable
    entry = {"id": "simple_python_2", "function": [AREA]}
    answer = {"id": "simple_python_2",
              "ground_truth": [{"geometry.area": {"shape": ["square"], "size": ["side"]}}]}
    calls = [{"geometry_area": {"shape": "square", "size": "side"}}]
    assert check_entry("simple_python", entry, answer, calls).valid
    calls = [{"geometry_area": {"shape": "square", "size": "Side"}}]
    assert check_entry("simple_python", entry, answer, calls).error_type == "value_error:others"


def test_one_call_is_expected_where_one_is_asked() -> None:
    assert simple({"shape": "square", "size": 2.0}).valid
    entry = {"id": "simple_python_0", "function": [AREA]}
    answer = {"id": "simple_python_0", "ground_truth": [AREA_ANSWER]}
    assert check_entry("simple_python", entry, answer, []) == Verdict(
        False, "simple_function_checker:wrong_count", ("Wrong number of functions.",))
    verdict = check_entry("multiple", entry, answer, [])
    assert verdict.error_type == "multiple_function_checker:wrong_count"


SQUARE = function("square", {"n": {"type": "integer"}}, ["n"])
CUBE = function("cube", {"n": {"type": "integer"}}, ["n"])
PARALLEL_ENTRY = {"id": "parallel_multiple_0", "function": [SQUARE, CUBE]}
PARALLEL_ANSWER = {"id": "parallel_multiple_0", "ground_truth": [
    {"square": {"n": [2]}}, {"square": {"n": [3]}}, {"cube": {"n": [2]}}]}


def parallel(calls: list[dict[str, Any]]) -> Verdict:
    return check_entry("parallel_multiple", PARALLEL_ENTRY, PARALLEL_ANSWER, calls)


def test_multiple_picks_the_answers_function() -> None:
    answer = {"id": "multiple_0", "ground_truth": [{"cube": {"n": [2]}}]}
    entry = {"id": "multiple_0", "function": [SQUARE, CUBE]}
    assert check_entry("multiple", entry, answer, [{"cube": {"n": 2}}]).valid
    verdict = check_entry("multiple", entry, answer, [{"square": {"n": 2}}])
    assert verdict.error_type == "simple_function_checker:wrong_func_name"


def test_parallel_calls_match_in_any_order() -> None:
    assert parallel([{"cube": {"n": 2}}, {"square": {"n": 3}}, {"square": {"n": 2}}]).valid


def test_parallel_calls_counted() -> None:
    assert parallel([{"cube": {"n": 2}}]) == Verdict(
        False, "parallel_function_checker_no_order:wrong_count", ("Wrong number of functions.",))


def test_parallel_calls_without_a_match_list_every_candidates_failure() -> None:
    verdict = parallel([{"square": {"n": 2}}, {"square": {"n": 4}}, {"cube": {"n": 2}}])
    assert verdict.error_type == "parallel_function_checker_no_order:cannot_find_match"
    assert verdict.errors[0] == (
        "Could not find a matching function among index [1, 2] of model output for index 1 "
        "of possible answers.")
    first, second = (json.loads(e) for e in verdict.errors[1:])
    assert first == {"Model Result Index 1": {
        "sub_error": ["Invalid value for parameter 'n': 4. Expected one of [3]."],
        "sub_error_type": "value_error:others",
        "model_output_item": {"square": {"n": 4}},
        "possible_answer_item": {"square": {"n": [3]}}}}
    assert second["Model Result Index 2"]["sub_error_type"] == (
        "simple_function_checker:wrong_func_name")
    # BFCL's score file holds those details as objects
    assert verdict.score_file_errors() == [verdict.errors[0], first, second]
    assert simple({"shape": "square"}).score_file_errors() == [
        "Missing required parameter: 'size'."]


@pytest.mark.parametrize("decoded", ["I cannot help", [{}], [{"square": 2}], [["square"]]])
def test_replies_outside_the_call_shape(decoded: Any) -> None:
    assert parallel(decoded) == Verdict(False, "ast_decoder:decoder_wrong_output_format", (
        "Did not output in the specified format. Note: the model_result is wrapped in a string "
        "to ensure json serializability.",))


def test_a_reply_that_did_not_decode() -> None:
    verdict = check_entry("parallel_multiple", PARALLEL_ENTRY, PARALLEL_ANSWER, None,
                          "Expecting value: line 1 column 1 (char 0)")
    assert verdict == Verdict(False, "ast_decoder:decoder_failed", (
        "Invalid syntax. Failed to decode AST. Expecting value: line 1 column 1 (char 0)",))


def test_irrelevance_wants_no_call() -> None:
    entry = {"id": "irrelevance_0", "function": [SQUARE]}
    for decoded, error in (([], None), ([{}], None), ("no", None), (None, "text")):
        assert check_entry("irrelevance", entry, None, decoded, error).valid
        assert check_entry("live_irrelevance", entry, None, decoded, error).valid
    assert check_entry("irrelevance", entry, None, [{"other": {}}]) == Verdict(
        False, "irrelevance_error:decoder_success",
        ("Valid syntax. Successfully decode AST when it should not.",))


def test_relevance_wants_a_call_of_any_function() -> None:
    entry = {"id": "live_relevance_0", "function": [SQUARE]}
    assert check_entry("live_relevance", entry, None, [{"other": {"x": 1}}]).valid
    assert check_entry("live_relevance", entry, None, None, "bad reply") == Verdict(
        False, "relevance_error:decoder_failed",
        ("Invalid syntax. Failed to decode AST when it should have. bad reply",))
    # decoded but empty: BFCL's message then ends with "None"
    assert check_entry("live_relevance", entry, None, []).errors == (
        "Invalid syntax. Failed to decode AST when it should have. None",)
