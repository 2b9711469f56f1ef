"""One entry judged as BFCL's evaluator judges it: relevance categories by whether the model
called anything, the others by the decoded calls' shape and then the AST checker (one call;
one call among several functions; several calls in any order)."""

from __future__ import annotations

import json
from typing import Any

from .calls import check_call, language_of
from .verdict import NO_MATCH, VALID, Verdict, invalid


def is_call_list(decoded: Any) -> bool:
    """BFCL's decoded shape: a list of {name: {parameter: value}} (an empty list included)."""
    if type(decoded) is not list:
        return False
    for item in decoded:
        if type(item) is not dict or len(item) != 1:
            return False
        if type(next(iter(item.values()))) is not dict:
            return False
    return True


def makes_a_call(decoded: Any) -> bool:
    """Whether a decoded reply counts as a function call for (ir)relevance: a non-empty list
    in the call-list shape (so neither [] nor [{}] nor text)."""
    return decoded is not None and is_call_list(decoded) and len(decoded) > 0


def check_relevance(category: str, decoded: Any, decode_error: str | None) -> Verdict:
    called = makes_a_call(decoded)
    if "irrelevance" in category:
        if not called:
            return VALID
        return invalid(
            "irrelevance_error:decoder_success",
            "Valid syntax. Successfully decode AST when it should not.",
        )
    if called:
        return VALID
    # the reference's message shows "None" when the reply decoded but held no call
    return invalid(
        "relevance_error:decoder_failed",
        f"Invalid syntax. Failed to decode AST when it should have. {decode_error}",
    )


def _find_function(functions: Any, name: str) -> Any:
    if type(functions) is not list:
        return functions  # a single document
    for function in functions:
        if function["name"] == name:
            return function
    return None


def _json_item(item: Any) -> str:
    """A structured item of BFCL's error list as its score file writes it (JSON; whatever
    JSON cannot hold, as its ``str``)."""
    return json.dumps(item, ensure_ascii=False, default=str)


def _check_parallel(
    functions: Any, calls: list[Any], expected: list[Any], language: str, dots: bool
) -> Verdict:
    """Every expected call matched by a distinct call, expected calls taken in order and each
    given the first call left that passes (greedy, as in the reference)."""
    if len(calls) != len(expected):
        return invalid(
            "parallel_function_checker_no_order:wrong_count", "Wrong number of functions."
        )
    matched: set[int] = set()
    for position, answer in enumerate(expected):
        function = _find_function(functions, next(iter(answer)))
        failures: list[str] = []
        found = False
        for index, call in enumerate(calls):
            if index in matched:
                continue
            outcome = check_call(function, call, answer, language, dots)
            if outcome.valid:
                matched.add(index)
                found = True
                break
            detail = {
                "sub_error": list(outcome.errors),
                "sub_error_type": outcome.error_type,
                "model_output_item": call,
                "possible_answer_item": answer,
            }
            failures.append(_json_item({f"Model Result Index {index}": detail}))
        if not found:
            left = [index for index in range(len(calls)) if index not in matched]
            return invalid(
                NO_MATCH,
                f"Could not find a matching function among index {left} of model output "
                f"for index {position} of possible answers.",
                *failures,
            )
    return VALID


def check_calls(
    category: str, functions: Any, calls: list[Any], expected: list[Any], dots: bool
) -> Verdict:
    """The AST checker proper, on calls already in BFCL's decoded shape."""
    language = language_of(category)
    if "parallel" in category:
        return _check_parallel(functions, calls, expected, language, dots)
    if "multiple" in category:
        if len(calls) != len(expected):
            return invalid("multiple_function_checker:wrong_count", "Wrong number of functions.")
        function = _find_function(functions, next(iter(expected[0])))
        return check_call(function, calls[0], expected[0], language, dots)
    if len(calls) != 1:
        return invalid("simple_function_checker:wrong_count", "Wrong number of functions.")
    return check_call(functions[0], calls[0], expected[0], language, dots)


def check_entry(
    category: str,
    entry: dict[str, Any],
    answer: dict[str, Any] | None,
    decoded: list[dict[str, dict[str, Any]]] | None,
    decode_error: str | None = None,
    *,
    dots_to_underscores: bool = True,
) -> Verdict:
    """One entry as BFCL's evaluator judges it.

    ``category`` e.g. "simple_python", "live_irrelevance"; ``entry`` the question record (with
    "function"); ``answer`` the possible-answer record (with "ground_truth"), None for the
    relevance categories; ``decoded`` the model's calls as BFCL's handler decodes them
    ([{name: {arg: value}}]), None when decoding failed (``decode_error`` then holds the
    exception's text). ``dots_to_underscores``: the model is served through an API that
    forbids dots in function names (OpenAI's function calling, BFCL's "-FC" models), so a
    documented "math.factorial" is expected as "math_factorial"; false for models that keep
    the names as documented.
    """
    if "relevance" in category:  # irrelevance too
        return check_relevance(category, decoded, decode_error)
    if decoded is None:
        return invalid(
            "ast_decoder:decoder_failed", f"Invalid syntax. Failed to decode AST. {decode_error}"
        )
    if not is_call_list(decoded):
        return invalid(
            "ast_decoder:decoder_wrong_output_format",
            "Did not output in the specified format. Note: the model_result is wrapped in a "
            "string to ensure json serializability.",
        )
    if answer is None:
        raise ValueError(f"category {category!r} needs the entry's possible answer")
    return check_calls(
        category, entry["function"], decoded, answer["ground_truth"], dots_to_underscores
    )
