"""The lazy command group: ``toolscore --help`` lists what the real commands would list, and a
command's module is imported only when that command runs.

The table in ``toolscore.cli`` repeats each command's first help sentence so that listing
needs no import; these tests are what keeps the copy equal to the commands."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import toolscore.cli
from toolscore.cli import COMMANDS, app
from toolscore.cli.lazy import LazyGroup

SRC = Path(toolscore.cli.__file__).resolve().parents[2]
SHARED = {"common", "lazy"}
WIDTHS = (30, 60, 80, 100, 140, 220)


def real_commands() -> dict[str, click.Command]:
    return {name: app.load(name) for name in COMMANDS}


def top_level_commands() -> list[click.Command]:
    """Every click command defined at module level in a command module that is not a
    subcommand of another one: what ``toolscore`` has to offer."""
    found: dict[int, click.Command] = {}
    for info in pkgutil.iter_modules(toolscore.cli.__path__):
        if info.name in SHARED or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"toolscore.cli.{info.name}")
        for value in vars(module).values():
            if isinstance(value, click.Command):
                found[id(value)] = value
    nested = {id(sub) for cmd in found.values() if isinstance(cmd, click.Group)
              for sub in cmd.commands.values()}
    return [cmd for key, cmd in found.items() if key not in nested]


def test_the_table_names_every_command_once() -> None:
    real = real_commands()
    assert {id(c) for c in real.values()} == {id(c) for c in top_level_commands()}
    assert len({id(c) for c in real.values()}) == len(real)
    assert all(cmd.name == name for name, cmd in real.items())


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_summary_is_the_commands_own(name: str) -> None:
    real = app.load(name)
    group = LazyGroup("toolscore", lazy=COMMANDS)  # app may have loaded it in another test
    with group.listing():
        shown = group.get_command(click.Context(group), name)
    assert shown is not None and shown is not real and name not in group.commands
    assert (shown.hidden, shown.deprecated) == (real.hidden, real.deprecated)
    for limit in range(1, 260):
        assert shown.get_short_help_str(limit) == real.get_short_help_str(limit), limit


@pytest.mark.parametrize("width", WIDTHS)
def test_help_page_equals_the_eager_groups(width: int) -> None:
    eager = click.Group(app.name, commands=list(real_commands().values()), params=app.params,
                        callback=app.callback, help=app.help,
                        context_settings=app.context_settings)
    runner = CliRunner()
    lazy_page = runner.invoke(app, ["--help"], prog_name="toolscore", terminal_width=width)
    eager_page = runner.invoke(eager, ["--help"], prog_name="toolscore", terminal_width=width)
    assert lazy_page.exit_code == eager_page.exit_code == 0
    assert lazy_page.output == eager_page.output
    assert all(f"  {name} " in lazy_page.output for name in COMMANDS)


def test_a_command_is_loaded_once_and_runs() -> None:
    group = LazyGroup("t", lazy={"report": COMMANDS["report"]})
    ctx = click.Context(group)
    first = group.get_command(ctx, "report")
    assert first is group.get_command(ctx, "report") is group.commands["report"]
    assert group.get_command(ctx, "nothing") is None
    result = CliRunner().invoke(app, ["report", "/nonexistent/run"])
    assert result.exit_code == 2 and "error:" in result.output


def test_a_target_that_is_not_the_named_command_is_refused() -> None:
    group = LazyGroup("t", lazy={"export": ("toolscore.cli.report:compare", "Compare.")})
    with pytest.raises(TypeError, match="toolscore.cli.report:compare"):
        group.get_command(click.Context(group), "export")


def imported_after(args: list[str], env: dict[str, str] | None = None
                   ) -> tuple[list[str], str]:
    """The command modules (and numpy) a fresh interpreter imported to run ``toolscore ARGS``,
    and what the command printed."""
    code = ("import sys\nfrom toolscore.cli import app\ntry:\n"
            f"    app({args!r}, prog_name='toolscore')\nexcept SystemExit:\n    pass\n"
            "import json\nsys.stderr.write('\\n' + json.dumps(sorted(m for m in sys.modules "
            "if m.startswith('toolscore.cli.') or m == 'numpy')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(SRC), **(env or {})},
                          timeout=120)
    return json.loads(done.stderr.strip().splitlines()[-1]), done.stdout


def test_help_and_completion_import_no_command_module() -> None:
    modules, page = imported_after(["--help"])
    assert modules == ["toolscore.cli.lazy"] and "judge-agreement" in page
    completion = {"_TOOLSCORE_COMPLETE": "zsh_complete", "COMP_WORDS": "toolscore re",
                  "COMP_CWORD": "1"}
    modules, completed = imported_after([], completion)
    assert modules == ["toolscore.cli.lazy"]
    assert completed.split("\n")[:3] == ["plain", "report",
                                          app.load("report").get_short_help_str()]


def test_a_command_imports_only_its_own_module() -> None:
    modules, page = imported_after(["report", "--help"])
    assert [m for m in modules if m != "toolscore.cli.common"] == [
        "toolscore.cli.lazy", "toolscore.cli.report"]
    assert "--html" in page
