"""One multi-turn entry judged as BFCL's evaluator judges it.

The model's result is a list of turns, each a list of steps (one raw output of the model per
request it answered). Every step is decoded into call strings; a step that does not decode
(a text reply) or decodes to nothing is left out. Then, turn by turn, the model's calls run in
the model's world and the ground truth's calls in a separate world of the same entry, and a turn
whose ground truth holds calls must have: at least one model step; every involved instance in
the same public state as the ground truth's (attribute by attribute, with ``!=``); and each of
the ground truth's result texts among the model's results so far, all turns included, as a
multiset (the model may have done the work earlier, and in any order). A turn whose ground
truth is empty is not checked (the model's calls in it still run, so later states see them).

Error types and messages are BFCL's, verbatim; BFCL's execution details (states, results) are
not part of the verdict. BFCL's release also defines an irrelevance rule for those empty turns
(:func:`check_irrelevance`) that its evaluator does not apply; it is kept here for callers who
want it, and :func:`check_multi_turn` does not apply it either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from toolscore.benchmarks.bfcl.checker.verdict import VALID, Verdict, invalid
from toolscore.benchmarks.bfcl.multiturn.execute import World, call_strings

#: decodes one step of a model's raw output into call strings (raising when it cannot)
Decoder = Callable[[Any], list[str]]


def decode_turns(result: list[Any], decode: Decoder = call_strings) -> list[list[list[str]]]:
    """The model's steps as call strings, turn by turn; undecodable or empty steps dropped."""
    turns: list[list[list[str]]] = []
    for steps in result:
        kept: list[list[str]] = []
        for step in steps:
            try:
                calls = decode(step)
            except Exception:  # a text reply or malformed arguments: BFCL skips the step
                continue
            if calls:
                kept.append(calls)
        turns.append(kept)
    return turns


def missing_results(expected: Sequence[str], produced: Sequence[str]) -> list[str]:
    """The expected results not found in ``produced``, each produced result used once."""
    left = list(produced)
    missing = []
    for item in expected:
        try:
            left.remove(item)
        except ValueError:
            missing.append(item)
    return missing


def state_mismatch(model: World, truth: World) -> str | None:
    """The first class (in the entry's order) whose model instance differs from the ground
    truth's in a public attribute the ground truth's instance has."""
    for name, expected in truth.instances.items():
        got = model.instances[name]
        for attr, value in vars(expected).items():
            if not attr.startswith("_") and getattr(got, attr) != value:
                return name
    return None


def check_turns(entry: dict[str, Any], decoded: list[list[list[str]]],
                ground_truth: list[list[str]]) -> Verdict:
    """BFCL's multi-turn checker on decoded steps (as many turns as the ground truth)."""
    model, truth = World(entry), World(entry)
    for cls, instance in model.instances.items():  # as in one BFCL process (see the hook)
        instance._share_filler(truth.instances[cls])
    produced: list[str] = []
    for index, expected_calls in enumerate(ground_truth):
        steps = decoded[index]
        for step in steps:
            produced += model.execute(step)
        expected = truth.execute(expected_calls)
        if not expected_calls:
            continue
        if not steps:
            return invalid("multi_turn:empty_turn_model_response",
                           f"Model response list is empty for turn {index}")
        name = state_mismatch(model, truth)
        if name is not None:
            return invalid("multi_turn:instance_state_mismatch",
                           f"Model instance for {name} does not match the state with ground "
                           "truth instance.")
        if missing_results(expected, produced):
            return invalid("multi_turn:execution_response_mismatch",
                           "Model response execution results so far does not contain all the "
                           f"ground truth response execution results for turn {index}.")
    return VALID


def check_multi_turn(category: str, entry: dict[str, Any], answer: dict[str, Any],
                     result: Any, *, decode: Decoder = call_strings) -> Verdict:
    """One entry as BFCL's evaluator judges it.

    ``category`` e.g. "multi_turn_base" (BFCL takes what it needs from the entry's id);
    ``entry`` the question record (``id``, ``initial_config``, ``involved_classes``);
    ``answer`` the possible-answer record (``ground_truth``: call strings per turn);
    ``result`` the model's raw result as BFCL's result file holds it (turns of steps);
    ``decode`` turns one step into call strings (default: an OpenAI function-calling model's
    decoding, :func:`~toolscore.benchmarks.bfcl.multiturn.execute.call_strings`).
    """
    del category  # BFCL decides everything from the entry's id
    ground_truth: list[list[str]] = answer["ground_truth"]
    if type(result) is not list:
        return invalid("multi_turn:inference_error",
                       "Error during inference phase. Model did not output a list of model "
                       "responses.")
    if len(result) != len(ground_truth):
        return invalid("multi_turn:force_terminated",
                       "Model was force-terminated during inference phase. The length of the "
                       f"model result turns ({len(result)}) does not match the length of the "
                       f"ground truth turns ({len(ground_truth)}).")
    return check_turns(entry, decode_turns(result, decode), ground_truth)


def check_irrelevance(decoded: list[list[list[str]]],
                      ground_truth: list[list[str]]) -> Verdict:
    """BFCL's rule for turns whose ground truth is empty: the model must not call anything
    there (defined by BFCL's release, not applied by its evaluator)."""
    for index, expected_calls in enumerate(ground_truth):
        steps = decoded[index]
        if not expected_calls and not (len(steps) == 0 or (len(steps) == 1 and not steps[0])):
            return invalid("multi_turn:irrelevance_error:decoder_success",
                           "Model outputs valid function calls when it should not for turn "
                           f"{index}.")
    return VALID
