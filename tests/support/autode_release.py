"""A release folder for AutoDE's default mode, written from ``release_values.json``.

The default mode reads the reference's prompt files and a few values of its ``evaluators/eval.py``
and ``utils/utils.py`` from the data folder; the shared test data do not hold those files, and
the project keeps no copy of them. The fixture ``tests/fixtures/autode_requests/
release_values.json`` records the values (made by ``release_values.py`` there from the
reference's repository); this module writes the two prompt files as recorded and two small
Python files of its own holding only the structures toolscore's reader parses: ``user_messages``
with the opening cue second, the reader's constants, a function with the "at least one of"
f-string. Their sha256 (shown in run.json) are therefore not the release's.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from support import data

VALUES_FILE = data.REPO / "tests" / "fixtures" / "autode_requests" / "release_values.json"
RUNNER = "evaluators/eval.py"
READER = "utils/utils.py"


@cache
def values() -> dict[str, Any]:
    return json.loads(VALUES_FILE.read_text(encoding="utf-8"))


def _fstring_head(text: str) -> str:
    """``text`` as the literal part of a double-quoted f-string."""
    if any(c in text for c in '"\\\n'):
        raise ValueError(f"cannot write {text!r} into an f-string literal")
    return text.replace("{", "{{").replace("}", "}}")


def runner_source() -> str:
    v = values()
    return ('"""The user agent\'s opening, as toolscore\'s reader finds it (test data)."""\n\n\n'
            "def opening(instruction):\n"
            f"    user_messages = [{{'role': 'system', 'content': instruction}}, "
            f"{{'role': 'user', 'content': {v['start_cue']!r}}}]\n"
            "    return user_messages\n")


def reader_source() -> str:
    v = values()
    separator = repr(v["optional_separator"])
    if "\\" in separator or '"' in separator:
        raise ValueError(f"cannot write {separator} into an f-string expression")
    lines = ['"""The API-document reader\'s values, as toolscore\'s reader finds them (test '
             'data)."""\n\n']
    lines += [f"{name} = {value!r}\n" for name, value in v["constants"].items()]
    lines.append("\n\ndef any_of(description, names):\n"
                 f'    return description.rstrip(".") + '
                 f'f"{_fstring_head(v["optional_sentence"])}{{{separator}.join(names)}}"\n')
    return "".join(lines)


def write_release(folder: Path) -> Path:
    """The release's source files the default mode reads, under ``folder``."""
    files = {**values()["prompts"], RUNNER: runner_source(), READER: reader_source()}
    for rel, text in files.items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder

