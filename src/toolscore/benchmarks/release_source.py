"""A method's released source files read as data (parsed, never imported), where its default
mode takes the reference's own wording from them (ToolTalk's prompt and tool documents,
AutoDE's prompts): one way to find them and one way to parse them, for every method."""

from __future__ import annotations

import ast
from pathlib import Path

from toolscore.benchmarks.options import OptionError


def source_file(data_dir: Path, relative: str, *, method: str, files: str,
                archive: str) -> Path:
    """``data_dir/relative``, or a one-line error naming it and how to get it (``files``: what
    to copy from the pinned release ``archive``)."""
    path = Path(data_dir) / relative
    if not path.is_file():
        raise OptionError(
            f"{method}'s default mode reads the reference's own wording from {path}, which is "
            f"missing (a data folder made before toolscore kept the release's source files): "
            f"copy {files} of the pinned release ({archive}) into {data_dir}, or delete a "
            f"downloaded copy so that it is downloaded again with them; --strict runs with "
            f"toolscore's own wording")
    return path


def parse_python(path: Path) -> ast.Module:
    """The syntax tree of a released Python file, or a one-line error naming it."""
    try:
        return ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError) as e:
        raise OptionError(f"{path}: not readable Python ({e})") from None
