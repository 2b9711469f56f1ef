"""One version: ``toolscore --version``, ``toolscore.__version__`` and run.json's record."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

from support.cli import toolscore

import toolscore as package
from toolscore.runs.runner import package_versions


def test_version_has_one_source(tmp_path: Path) -> None:
    done = toolscore("--version", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    installed = metadata.version("toolscore")
    assert package.__version__ == installed
    assert done.stdout.split()[-1] == installed
    assert package_versions()["toolscore"] == installed
