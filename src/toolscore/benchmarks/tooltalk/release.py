"""ToolTalk's own wording, read at run time from the release's source files.

The default mode must send a model what ToolTalk's runner sends: its system-prompt template (a
class attribute of the runner's predictor) and, later, its tool documents. That wording is the
reference's, not ours: rather than carry a copy, it is read from the release's own Python files
beside the data (the pinned archive a user downloads holds them, :mod:`toolscore.data`), by
parsing them with :mod:`ast`, never importing them (they import openai 0.28 and the release's
package, and their code has no business running here).

A data folder without these files (one made before they were kept) cannot run the default mode:
one line says which file is missing and how to get it. Falling back to toolscore's own wording
would give figures that look like the reference's and are not; ``--strict`` is the way to run
with toolscore's own wording.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import OptionError

PROMPT_FILE = "src/tooltalk/evaluation/evaluate_openai.py"
PROMPT_ATTRIBUTE = "system_prompt"
ARCHIVE = "https://github.com/microsoft/ToolTalk/archive/e05f4ce.zip"


def source_file(data_dir: Path, relative: str) -> Path:
    """``data_dir/relative``, or a one-line error naming it and how to get it."""
    path = data_dir / relative
    if not path.is_file():
        raise OptionError(
            f"ToolTalk's default mode reads the reference's own wording from {path}, which is "
            f"missing (a data folder made before toolscore kept the release's source files): "
            f"copy src/tooltalk/ of the pinned release ({ARCHIVE}) into {data_dir}, or delete "
            f"a downloaded copy so that it is downloaded again with them; --strict runs with "
            f"toolscore's own wording")
    return path


def parse(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError) as e:
        raise OptionError(f"{path}: not readable Python ({e})") from None


def string_value(node: ast.expr, where: str) -> str:
    """A string written as constants, joined implicitly or with ``+`` (nothing is run)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return string_value(node.left, where) + string_value(node.right, where)
    raise OptionError(f"{where}: not a string constant")


def class_attribute(tree: ast.Module, name: str) -> ast.expr | None:
    """The value assigned to ``name`` in the body of the first class that assigns it."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                        and isinstance(stmt.targets[0], ast.Name)
                        and stmt.targets[0].id == name):
                    return stmt.value
    return None


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class ReleasePrompt:
    """The reference's system-prompt template and where it was read."""

    template: str
    source: str  # what run.json and the report say

    def format(self, metadata: dict[str, Any]) -> str:
        """As the reference's predictor formats it (``metadata.get("username")``: a user who
        is not logged in shows as ``None``)."""
        return self.template.format(location=metadata.get("location"),
                                    timestamp=metadata.get("timestamp"),
                                    username=metadata.get("username"))


def release_prompt(data_dir: Path) -> ReleasePrompt:
    """The template of the release's predictor, read from :data:`PROMPT_FILE`."""
    from toolscore.data_pins import TOOLTALK_SOURCE

    path = source_file(data_dir, PROMPT_FILE)
    value = class_attribute(parse(path), PROMPT_ATTRIBUTE)
    if value is None:
        raise OptionError(f"{path}: no class attribute {PROMPT_ATTRIBUTE!r} (the runner's "
                          "system prompt)")
    template = string_value(value, f"{path}: {PROMPT_ATTRIBUTE}")
    return ReleasePrompt(template, source_label(path, PROMPT_FILE, TOOLTALK_SOURCE))


def source_label(path: Path, relative: str, pins: dict[str, str]) -> str:
    """``release: <file>``, said to be modified when it is not the pinned release's file."""
    label = f"release: {relative}"
    if pins.get(relative) not in (None, file_digest(path)):
        label += " (modified: not the pinned release's file)"
    return label
