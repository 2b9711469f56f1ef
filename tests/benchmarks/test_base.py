"""A benchmark's declared options: the one place where keyword arguments (Python) and command
line strings (CLI) become typed values, so an unknown option or a wrong type is always a
one-line error naming the benchmark and the option, never silently dropped or misread."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from toolscore.benchmarks.base import (
    NoOptions,
    OptionError,
    coerce,
    option,
    option_fields,
    options_to_json,
    parse_options,
)
from toolscore.benchmarks.registry import make_benchmark

WHERE = "benchmark 'toy'"


@dataclass
class ToyOptions:
    name: str = option("x", "A name.")
    count: int = option(1, "How many.")
    ratio: float = option(0.5, "A fraction.")
    flag: bool = option(False, "On or off.")
    mode: Literal["fast", "slow"] = option("fast", "How.")
    tags: list[str] = option(list, "Any number of tags.")
    steps: list[int] = option(list, "Numbers.")
    limit: int | None = option(None, "At most this many, or no limit.")
    path: Path | None = option(None, "A file.")
    hook: Any = option(None, "An object (Python only).", cli=False)


def parse(**given: Any) -> ToyOptions:
    return parse_options(ToyOptions, given, WHERE)


def test_defaults_and_fresh_lists() -> None:
    assert parse() == ToyOptions()
    first, second = parse(), parse()
    first.tags.append("mine")
    assert second.tags == []  # a list default is a factory, never shared
    assert [f.metadata["help"] for f in option_fields(ToyOptions)][:2] == ["A name.",
                                                                          "How many."]


def test_command_line_strings_become_typed_values() -> None:
    got = parse(count="3", ratio="0.25", flag="yes", mode="slow", tags=("a", "b"),
                steps=["1", "2"], limit="7", path="data/x.json")
    assert got == ToyOptions(count=3, ratio=0.25, flag=True, mode="slow", tags=["a", "b"],
                             steps=[1, 2], limit=7, path=Path("data/x.json"))
    assert [parse(flag=s).flag for s in ("true", "1", "YES", "false", "0", "no")] == [
        True, True, True, False, False, False]


def test_python_values_pass_and_a_single_item_is_a_list() -> None:
    hook = object()
    got = parse(name="y", count=2, ratio=1, flag=True, tags="solo", limit=None,
                path=Path("p"), hook=hook)
    assert (got.name, got.count, got.ratio, got.flag, got.tags, got.limit, got.path) == (
        "y", 2, 1.0, True, ["solo"], None, Path("p"))
    assert got.hook is hook and isinstance(got.ratio, float)
    assert parse(path="p").path == Path("p")


@pytest.mark.parametrize(("given", "message"), [
    ({"cout": 3}, "unknown option 'cout' (its options: count, flag, hook, limit, mode, name, "
                  "path, ratio, steps, tags)"),
    ({"count": "three"}, "option 'count': expected int, got 'three'"),
    ({"count": True}, "option 'count': expected a number, got True"),
    ({"count": [1]}, "option 'count': expected int, got [1]"),
    ({"ratio": "half"}, "option 'ratio': expected float, got 'half'"),
    ({"flag": "maybe"}, "option 'flag': expected true or false, got 'maybe'"),
    ({"flag": 1}, "option 'flag': expected true or false, got 1"),
    ({"mode": "medium"}, "option 'mode': 'medium' is not one of 'fast', 'slow'"),
    ({"tags": 5}, "option 'tags': expected a list, got 5"),
    ({"tags": ["a", 5]}, "option 'tags': expected a string, got 5"),
    ({"steps": ["1", "x"]}, "option 'steps': expected int, got 'x'"),
    ({"limit": "none"}, "option 'limit': expected int, got 'none'"),
    ({"name": 3}, "option 'name': expected a string, got 3"),
    ({"path": 3}, "option 'path': expected a path, got 3"),
], ids=["unknown", "int-text", "int-bool", "int-list", "float", "bool-text", "bool-int",
        "literal", "list", "list-item", "list-int", "optional", "str", "path"])
def test_bad_options_are_one_line_errors(given: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionError) as err:
        parse(**given)
    assert str(err.value) == f"{WHERE}: {message}"


def test_an_option_error_is_a_user_error() -> None:
    from toolscore.cli.common import USER_ERRORS

    assert issubclass(OptionError, ValueError) and issubclass(OptionError, USER_ERRORS)


def test_optional_tries_each_member_and_reports_the_first_failure() -> None:
    hint = int | Path | None
    assert coerce(None, hint, "w") is None
    assert coerce("4", hint, "w") == 4
    assert coerce("four", hint, "w") == Path("four")
    with pytest.raises(OptionError, match=r"^w: expected int, got \[\]$"):
        coerce([], hint, "w")


def test_a_benchmark_without_options_takes_none() -> None:
    assert parse_options(NoOptions, {}, WHERE) == NoOptions()
    with pytest.raises(OptionError, match=r"unknown option 'split' \(its options: none\)"):
        parse_options(NoOptions, {"split": "easy"}, WHERE)


def test_options_to_json_is_what_run_json_stores() -> None:
    got = parse(tags=["a"], path="data/x.json", hook=object())
    assert options_to_json(got) == {"name": "x", "count": 1, "ratio": 0.5, "flag": False,
                                    "mode": "fast", "tags": ["a"], "steps": [], "limit": None,
                                    "path": "data/x.json"}  # Python-only options left out


def test_real_benchmarks_check_their_options() -> None:
    with pytest.raises(OptionError, match=r"^benchmark 'demo': option 'split': 'medium' is not "
                                          "one of 'easy', 'hard', 'all'$"):
        make_benchmark("demo", split="medium")
    with pytest.raises(OptionError, match=r"^benchmark 'demo': unknown option 'tools_mode'"):
        make_benchmark("demo", tools_mode="all")
    with pytest.raises(OptionError, match="ships its own data; --data is not used"):
        make_benchmark("demo", "somewhere")
    bench = make_benchmark("demo", embedder="hashing", max_calls_per_turn="2", strict="true")
    assert bench.config()["max_calls_per_turn"] == 2 and bench.config()["strict"] is True
