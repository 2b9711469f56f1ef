"""BFCL's category names and groups: what ``--category`` accepts, and the one-line refusal of
what toolscore does not run yet."""

from __future__ import annotations

import pytest

from toolscore.benchmarks.bfcl.categories import (
    AGENTIC,
    LIVE,
    MEMORY,
    MULTI_TURN,
    NON_LIVE,
    SUPPORTED,
    category_of,
    parse_categories,
)
from toolscore.benchmarks.options import OptionError


def test_groups_and_names_repeated_or_comma_separated() -> None:
    assert parse_categories(["all"]) == list(SUPPORTED)
    assert parse_categories(["non_live"]) == list(NON_LIVE)
    assert parse_categories(["live,simple_python"]) == ["simple_python", *LIVE]
    assert parse_categories(["live_simple", " simple_java ", "live_simple"]) == [
        "simple_java", "live_simple"]
    assert parse_categories(["non_python"]) == ["simple_java", "simple_javascript"]
    assert parse_categories(["multi_turn"]) == list(MULTI_TURN)
    assert parse_categories(["multi_turn_miss_func,simple_python"]) == [
        "simple_python", "multi_turn_miss_func"]
    assert set(MULTI_TURN) <= set(parse_categories(["all"]))


def test_named_but_not_yet_supported() -> None:
    with pytest.raises(OptionError, match="not yet supported by toolscore"):
        parse_categories(["format_sensitivity"])


def test_memory_runs_when_named_and_never_by_default() -> None:
    assert parse_categories(["memory"]) == list(MEMORY)
    assert parse_categories(["memory_vector,simple_python"]) == ["simple_python",
                                                                 "memory_vector"]
    assert not set(AGENTIC) & set(parse_categories(["all"]))


@pytest.mark.parametrize("name", ["web_search", "web_search_base", "agentic"])
def test_web_search_needs_the_runs_opt_in(name: str) -> None:
    with pytest.raises(OptionError, match="internet.*off by default.*-T web_search=true"):
        parse_categories([name])
    assert set(parse_categories([name], web_search=True)) <= set(AGENTIC)
    assert parse_categories(["agentic"], web_search=True) == list(AGENTIC)


def test_unknown_names_are_refused() -> None:
    with pytest.raises(OptionError, match="unknown category 'simple'"):
        parse_categories(["simple"])
    with pytest.raises(OptionError, match="no category"):
        parse_categories([","])


def test_category_of_an_entry_id() -> None:
    assert category_of("live_parallel_multiple_3-2-0") == "live_parallel_multiple"
    assert category_of("simple_python_12") == "simple_python"
