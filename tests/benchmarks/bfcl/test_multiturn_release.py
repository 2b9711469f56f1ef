"""BFCL's code constants read from the released files as data (never executed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.data import REQUIRED

from toolscore.benchmarks.bfcl import release
from toolscore.data import DataError, DataNotFound, find_dataset


def test_literals_containers_and_concatenation_are_read() -> None:
    source = (
        "A = 'x' + 'y'\n"
        "B = {'k': [1, -2, 3.5], 2: (None, True)}\n"
        "C = {1, 2}\n"
        "D = set()\n"
        "E = dict()\n"
        "F = [list(), tuple()]\n"
    )
    values = release.parse_constants(source)
    assert values == {"A": "xy", "B": {"k": [1, -2, 3.5], 2: (None, True)}, "C": {1, 2},
                      "D": set(), "E": {}, "F": [[], ()]}
    assert type(values["D"]) is set and type(values["F"][1]) is tuple


def test_names_bound_earlier_are_used_and_later_ones_are_not() -> None:
    source = "A = 'a'\nB = A + 'b'\nC = [A, B]\nD = LATER\nLATER = 1\nA = 'changed'\nE = A\n"
    values = release.parse_constants(source)
    assert values["B"] == "ab" and values["C"] == ["a", "ab"]
    assert "D" not in values and values["LATER"] == 1 and values["E"] == "changed"


def test_whatever_is_not_a_literal_is_skipped() -> None:
    source = (
        "import os\n"
        "A = os.getcwd()\n"
        "B = 1 + 2\n"
        "C = set([1])\n"
        "D = {**{}}\n"
        "E = -'x'\n"
        "F = f'{A}'\n"
        "G, H = 1, 2\n"
        "I: int = 3\n"
        "x = y = 'both'\n"
        "def f():\n    Z = 1\n"
        "class K:\n    Y = 2\n"
        "J = [1, len]\n"
        "K2 = 'ok'\n"
    )
    assert release.parse_constants(source) == {"x": "both", "y": "both", "K2": "ok"}


def test_a_file_that_is_not_python_is_a_data_error() -> None:
    with pytest.raises(DataError, match=r"^bad\.py: not Python source"):
        release.parse_constants("A = (\n", "bad.py")


def test_only_pinned_files_are_read() -> None:
    with pytest.raises(KeyError, match="no pinned file func_source_code/nothing.py"):
        release.module_constants("nothing.py")


@pytest.fixture(scope="module")
def released() -> Path:
    try:
        return find_dataset(release.RELEASE, download=False)
    except DataNotFound as e:
        if REQUIRED:
            pytest.fail(f"{e}; TOOLSCORE_REQUIRE_DATA=1", pytrace=False)
        pytest.skip(str(e))


@pytest.mark.parametrize("module", ["message_api.py", "posting_api.py", "ticket_api.py",
                                    "trading_bot.py", "travel_booking.py", "vehicle_control.py"])
def test_every_stateful_backend_has_its_default_state(released: Path, module: str) -> None:
    state = release.constant(module, "DEFAULT_STATE", str(released))
    assert isinstance(state, dict) and state


def test_the_release_constants_the_multi_turn_categories_use(released: Path) -> None:
    data = str(released)
    filler = release.module_constants("long_context.py", data)
    assert isinstance(filler["WATCH_LIST_EXTENSION"], list) and filler["WATCH_LIST_EXTENSION"]
    prompt = release.constant("constants/default_prompts.py",
                              "DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC", data)
    assert isinstance(prompt, str) and prompt
    limit = release.constant("constants/default_prompts.py", "MAXIMUM_STEP_LIMIT", data)
    assert isinstance(limit, int) and limit > 0
    # the file system's default builds a node object: code, so it is not read
    with pytest.raises(DataError, match="no literal constant DEFAULT_STATE"):
        release.constant("gorilla_file_system.py", "DEFAULT_STATE", data)
    with pytest.raises(DataError, match="no literal constant NOT_THERE"):
        release.constant("message_api.py", "NOT_THERE", data)
    # the dict is shared between callers: it is the same object each time
    assert release.module_constants("message_api.py", data) is \
        release.module_constants("message_api.py", data)
