"""The layers of docs/design.md, checked on every test run rather than trusted to review.

* Layers point down: the import-linter "layers" contract declared in pyproject.toml, and the
  generic layers (runs, serve, report, sweeps, judges, users, env, models, data) import no
  method package (its "forbidden" contract).
* The CLI's command modules never import each other (only ``cli/common.py``), so a command can
  be read, changed or removed on its own.
* No two sibling modules or packages import each other, even lazily inside a function: a cycle
  means two modules are one concept split in two, and it is how a layer violation starts.
* A module is split by responsibility, not by line count: 400 lines is a guideline (a file
  read in one sitting); a module over it says why in a ``# longer than 400 lines: ...``
  comment, and none exceeds 600.

import-linter runs in a subprocess with this checkout's ``src`` first on the path, so it
analyses these sources, never an installed copy of toolscore.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
PACKAGE = SRC / "toolscore"
MAX_LINES = 400  # the guideline: longer needs a reason written in the module
HARD_MAX_LINES = 600
WHY_LONGER = "# longer than 400 lines:"
# cli/ modules that are not commands: the group itself, ``python -m``, what commands share, and
# the run configuration file and roles (read by ``run``; no command of its own)
CLI_SHARED = {"__init__", "__main__", "common", "run_config"}
RUN = "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())"


def lint_imports(config: Path, cwd: Path, src: Path = SRC) -> subprocess.CompletedProcess[str]:
    """``lint-imports --config CONFIG`` on the package found first in ``src``."""
    path = os.pathsep.join(p for p in (str(src), os.environ.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-c", RUN, "--config", str(config), "--no-cache",
                           "--no-logo"], cwd=cwd, env={**os.environ, "PYTHONPATH": path},
                          capture_output=True, text=True, timeout=300)


def report(done: subprocess.CompletedProcess[str]) -> str:
    """What to show when a contract is broken: the broken contracts, or the error."""
    out = done.stdout
    return out[out.find("Broken contracts"):] if "Broken contracts" in out else (
        out[-3000:] + done.stderr[-3000:])


def check(config: Path, cwd: Path, *contracts: str) -> None:
    done = lint_imports(config, cwd)
    assert done.returncode == 0, report(done)
    modules = len(list(PACKAGE.rglob("*.py")))
    assert f"Analyzed {modules} files" in done.stdout, done.stdout  # these sources, all of them
    for name in contracts:
        assert f"{name} KEPT" in done.stdout, done.stdout


def write_config(path: Path, contracts: dict[str, dict[str, str | list[str]]],
                 root: str = "toolscore") -> Path:
    """An import-linter INI file with ``contracts`` (id -> options)."""
    lines = ["[importlinter]", f"root_package = {root}", ""]
    for ident, options in contracts.items():
        lines.append(f"[importlinter:contract:{ident}]")
        for key, value in options.items():
            if isinstance(value, list):
                lines.append(f"{key} =")
                lines += [f"    {v}" for v in value]
            else:
                lines.append(f"{key} = {value}")
        lines.append("")
    path.write_text("\n".join(lines))
    return path


def cli_commands() -> list[str]:
    return sorted(f"toolscore.cli.{p.stem}" for p in (PACKAGE / "cli").glob("*.py")
                  if p.stem not in CLI_SHARED)


def test_layers_point_down(tmp_path: Path) -> None:
    check(REPO / "pyproject.toml", tmp_path, "layers point down",
          "generic layers know no method")


def test_cli_command_modules_import_only_common(tmp_path: Path) -> None:
    commands = cli_commands()
    assert "toolscore.cli.run" in commands and len(commands) >= 5
    config = write_config(tmp_path / "cli.ini", {"cli": {
        "name": "cli command modules are independent", "type": "independence",
        "modules": commands}})
    check(config, tmp_path, "cli command modules are independent")


def test_no_import_cycles_between_siblings(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cycles.ini", {"cycles": {
        "name": "no cycles between siblings", "type": "acyclic_siblings",
        "ancestors": "toolscore"}})
    check(config, tmp_path, "no cycles between siblings")


def test_a_violation_fails_the_check(tmp_path: Path) -> None:
    """The harness above turns a broken contract into a failure (and names the import)."""
    package = tmp_path / "src" / "layered"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "high.py").write_text("")
    (package / "low.py").write_text("def f():\n    from layered import high\n")
    config = write_config(tmp_path / "layers.ini", {"layers": {
        "name": "layered", "type": "layers", "layers": ["layered.high", "layered.low"]}},
        root="layered")
    done = lint_imports(config, tmp_path, src=tmp_path / "src")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "layered.low -> layered.high" in report(done)


def test_module_length_is_a_guideline_with_reasons() -> None:
    texts = {str(p.relative_to(SRC)): p.read_text(encoding="utf-8")
             for p in sorted(PACKAGE.rglob("*.py"))}
    assert len(texts) > 50
    long = {p: len(t.splitlines()) for p, t in texts.items() if len(t.splitlines()) > MAX_LINES}
    assert {p: n for p, n in long.items() if WHY_LONGER not in texts[p]} == {}
    assert {p: n for p, n in long.items() if n > HARD_MAX_LINES} == {}
