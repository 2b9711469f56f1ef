"""The multi-turn executor and step decoding, on the stateless MathAPI: the texts are what
bfcl-eval 2026.3.23's executor (``execute_multi_turn_func_call``) and its OpenAI
function-calling decoder (``convert_to_function_call``) give for the same input."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from support.bfcl_multiturn import recorded

from toolscore.benchmarks.bfcl.multiturn import execute
from toolscore.benchmarks.bfcl.multiturn.backend import Backend
from toolscore.benchmarks.bfcl.multiturn.backends.math import MathAPI
from toolscore.benchmarks.bfcl.multiturn.execute import World, call_strings, format_result

MATH = {"id": "multi_turn_base_0", "initial_config": {}, "involved_classes": ["MathAPI"]}
ERROR = "Error during execution: "

CASES = [
    ("add(a=-1,b=+2)", '{"result": 1}'),
    (" mean(numbers=[1])", '{"result": 1.0}'),
    ("mean([1,2])", '{"result": 1.5}'),
    ("mean(numbers={1,2})", '{"result": 1.5}'),
    ("mean(numbers=[True])", '{"result": 1.0}'),
    ("mean(numbers=[1e400])", '{"result": Infinity}'),
    ("add(a=1, b=None)", '{"error": "Both inputs must be numbers"}'),
    ("divide(a=1, b=0)", '{"error": "Cannot divide by zero"}'),
    ("round_number(number=2.567, decimal_places=1)", '{"result": 2.6}'),
    ("logarithm(value=8, base=2, precision=3)", "{'result': mpf('3.00049')}"),
    ("logarithm(value=-1, base=2, precision=3)", "{'result': mpc(real='0.0', imag='4.53223')}"),
    ("logarithm(value=8, base=2, precision='a')",
     '{"error": "invalid literal for int() with base 10: \'a\'"}'),
    ("square_root(number=2, precision=5)", "{'result': Decimal('1.4142')}"),
    ("square_root(number=2, precision=2.5)",
     '{"error": "Input must be a number or computation resulted in an invalid operation"}'),
    ("square_root(number=2, precision=0)", ERROR + "valid range for prec is [1, MAX_PREC]"),
    ("kill(pid=1)", ERROR + "Function call kill is not allowed."),
    ("os.remove('x')", ERROR + "Function call remove is not allowed."),
    ("exit()", ERROR + "Function call exit is not allowed."),
    ("run(x=1)", ERROR + "Function call run is not allowed."),
    ("add(a=1, b=2", ERROR + "'(' was never closed (<string>, line 1)"),
    ("mean(numbers=[1, 2)]", ERROR + "closing parenthesis ')' does not match opening "
                             "parenthesis '[' (<string>, line 1)"),
    ("", ERROR + "invalid syntax (<string>, line 0)"),
    ("add(a=1, a=2)", ERROR + "keyword argument repeated: a (<string>, line 1)"),
    ("unknown(x=1)", ERROR + "name 'unknown' is not defined"),
    ("add(a=foo, b=1)", ERROR + "name 'foo' is not defined"),
    ("add(a=inf, b=1)", ERROR + "name 'inf' is not defined"),
    ("x.y(a=1)", ERROR + "name 'x' is not defined"),
    ("add.x(a=1)", ERROR + "name 'add' is not defined"),
    ("add(1, 2, 3)", ERROR + "MathAPI.add() takes 3 positional arguments but 4 were given"),
    ("add(a=1)", ERROR + "MathAPI.add() missing 1 required positional argument: 'b'"),
    ("mean(numbers=[1,2], x=1)", ERROR + "MathAPI.mean() got an unexpected keyword argument 'x'"),
    ("mean(numbers=-[1])", ERROR + "bad operand type for unary -: 'list'"),
    ("add(a=1, b=2)(1)", ERROR + "'dict' object is not callable"),
    ("add(a=1, b=2).x", ERROR + "'dict' object has no attribute 'x'"),
    ("add(a=mean(numbers=[1]), b=1)", '{"error": "Both inputs must be numbers"}'),
    ("mean(numbers=[add(a=1, b=2)])", '{"error": "All elements in the list must be numbers"}'),
]


@pytest.mark.parametrize(("call", "text"), CASES)
def test_a_call_gives_bfcls_text(call: str, text: str) -> None:
    assert World(MATH).execute([call]) == [text]


def test_what_the_executor_does_not_evaluate_is_named() -> None:
    # BFCL's eval computes these ('{"result": 4}'; mean(1): the list error): toolscore names
    # them instead (a function-calling model's calls never hold them)
    assert World(MATH).execute(["add(a=1+2, b=1)", "mean(*[1])"]) == [
        ERROR + "unsupported expression in a call: BinOp",
        ERROR + "unsupported expression in a call: Starred"]


def test_nested_calls_run_before_the_outer_one_and_a_name_error_stops_them() -> None:
    ran: list[str] = []

    class Spy(MathAPI):
        def add(self, a: float, b: float) -> dict[str, Any]:
            ran.append(f"add {a} {b}")
            return super().add(a, b)

    world = World(MATH)
    world._methods["add"] = Spy().add
    assert world.execute(["unknown(x=add(a=1, b=2))", "add(a=add(a=1, b=2), b=x)",
                          "mean(numbers=[add(a=1, b=2), add(a=3, b=4)])"]) == [
        ERROR + "name 'unknown' is not defined", ERROR + "name 'x' is not defined",
        '{"error": "All elements in the list must be numbers"}']
    assert ran == ["add 1 2", "add 1 2", "add 3 4"]


def test_results_are_formatted_as_bfcl_records_them() -> None:
    assert format_result("text") == "text"
    assert format_result({"a": 1.0, "b": [None]}) == '{"a": 1.0, "b": [null]}'
    assert format_result({"a": {1, 2}}) == "{'a': {1, 2}}"
    assert format_result(None) == "None"
    assert format_result([1, "x"]) == "[1, 'x']"


def test_the_stateless_class_gets_no_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    class Loud(MathAPI):
        def _load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
            raise AssertionError("a stateless class was given a scenario")

    monkeypatch.setattr(execute, "backend_class", lambda name: Loud)
    world = World({**MATH, "initial_config": {"MathAPI": {"x": 1}}})
    assert list(world.instances) == ["MathAPI"]
    assert world.execute(["add(a=1, b=2)"]) == ['{"result": 3}']


def test_each_stateful_class_gets_a_copy_of_its_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[dict[str, Any], bool]] = []

    class Stateful(Backend):
        def _load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
            scenario["touched"] = True
            seen.append((scenario, long_context))

    monkeypatch.setattr(execute, "backend_class", lambda name: Stateful)
    config = {"Stateful": {"items": [1]}}
    World({"id": "multi_turn_long_context_3", "initial_config": config,
           "involved_classes": ["Stateful", "Other"]})
    World({"id": "multi_turn_base_3", "initial_config": config,
           "involved_classes": ["Stateful"]}, long_context=True)
    World({"id": "multi_turn_miss_func_3", "initial_config": config,
           "involved_classes": ["Stateful"]})
    assert seen == [({"items": [1], "touched": True}, True), ({"touched": True}, True),
                    ({"items": [1], "touched": True}, True),
                    ({"items": [1], "touched": True}, False)]
    assert config == {"Stateful": {"items": [1]}}


DECODED = [
    ([{"cd": '{"folder": "a\'b"}'}], ["cd(folder=\"a'b\")"]),
    ([{"f": '{"x": true, "y": null, "z": [1, 2.0, "s"], "w": {"k": 1}}'}, {"g": "{}"}],
     ["f(x=True,y=None,z=[1, 2.0, 's'],w={'k': 1})", "g()"]),
    ({"f": '{"x": 1}'}, ["f(x=1)"]),
    ([{"f": {"x": "already"}}], ["f(x='already')"]),
    ([{"f": '{"x": 1}', "g": '{"y": 2}'}], ["f(x=1)", "g(y=2)"]),
    ([{"f": '{"x": 1e400, "u": "\\u00e9\\n"}'}], ["f(x=inf,u='\u00e9\\n')"]),
    ("", []),
    ([], []),
]


@pytest.mark.parametrize(("step", "calls"), DECODED)
def test_a_step_decodes_as_bfcl_decodes_it(step: Any, calls: list[str]) -> None:
    assert call_strings(step) == calls


@pytest.mark.parametrize(("step", "error", "text"), [
    ([{"f": "not json"}], json.JSONDecodeError, "Expecting value: line 1 column 1 (char 0)"),
    ([{"f": "[1, 2]"}], AttributeError, "'list' object has no attribute 'items'"),
    ("text reply", AttributeError, "'str' object has no attribute 'items'"),
    ([{"f": 3}], AttributeError, "'int' object has no attribute 'items'"),
    (None, TypeError, "'NoneType' object is not iterable"),
])
def test_a_step_that_does_not_decode_raises_what_bfcl_raises(step: Any, error: type,
                                                              text: str) -> None:
    with pytest.raises(error, match=f"^{re.escape(text)}$"):
        call_strings(step)


def test_every_recorded_math_call_gives_bfcls_result() -> None:
    methods = {name for name in dir(MathAPI) if not name.startswith("_")}
    calls = [(call, result) for row in recorded() if "MathAPI" in row["turns"][0]["state"]
             for turn in row["turns"] for call, result in zip(turn["calls"], turn["results"],
                                                              strict=True)
             if call.split("(")[0].strip() in methods]
    assert len(calls) > 150
    world = World(MATH)
    differences = [(call, got, wanted) for (call, wanted), got
                   in zip(calls, world.execute([c for c, _ in calls]), strict=True)
                   if got != wanted]
    assert not differences, differences[:5]
