"""One version: ``toolscore --version``, ``toolscore.__version__`` and a new run's run.json
agree, and name pyproject.toml's version (installed, or read from a source checkout)."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from support.cli import toolscore

import toolscore as package
from toolscore.runs.runner import package_versions

SRC = Path(package.__file__).resolve().parents[1]


def test_version_has_one_source(tmp_path: Path) -> None:
    done = toolscore("--version", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    installed = metadata.version("toolscore")
    assert package.__version__ == installed
    assert done.stdout.split()[-1] == installed
    assert package_versions()["toolscore"] == installed
    run = package.evaluate("demo", "oracle", embedder="hashing", cache=None, out=tmp_path / "r")
    stored = json.loads((run.path / "run.json").read_text())
    assert stored["versions"]["toolscore"] == installed


def test_a_source_checkout_reads_pyproject(tmp_path: Path) -> None:
    """Without installed metadata the version is the checkout's pyproject.toml's."""
    pyproject = SRC.parent / "pyproject.toml"
    if not pyproject.is_file():
        return  # installed from a wheel: there is no checkout to read
    code = ("import importlib.metadata as m\n"
            "def missing(name):\n"
            "    raise m.PackageNotFoundError(name)\n"
            "m.version = missing\n"
            "import toolscore\n"
            "print(toolscore.__version__)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env={"PYTHONPATH": str(SRC)}, check=False)
    assert done.returncode == 0, done.stderr
    expected = next(line.split('"')[1] for line in pyproject.read_text().splitlines()
                    if line.startswith("version = "))
    assert done.stdout.strip() == expected
