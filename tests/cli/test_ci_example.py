"""The GitHub Actions example (examples/github-actions/toolscore.yml) runs real commands.

Every ``toolscore ...`` command in its steps is parsed against the click command tree, exactly
as the command line would be (an option that does not exist, or a subcommand that does not, is
click's error here rather than a red CI job for whoever copied the file); the metric it gates
is one of the benchmark's headline metrics; what it uploads includes the files the run writes;
and the response cache is kept per model.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import click
import pytest

from toolscore.benchmarks.registry import benchmark_class
from toolscore.cli import app
from toolscore.report.gates import parse_floors

yaml = pytest.importorskip("yaml")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "github-actions" / "toolscore.yml"
DOC = EXAMPLE.parents[2] / "docs" / "ci.md"
# where a shell command starts: a line's start, or after ; && || | ( then do else
COMMAND_START = re.compile(r"(?:^|;|&&|\|\||\||\(|\bthen\b|\bdo\b|\belse\b)\s*toolscore\s")
COMMAND_END = re.compile(r";|&&|\|\||\||\bfi\b|\bdone\b|\)")


def workflow() -> dict[str, Any]:
    doc = yaml.safe_load(EXAMPLE.read_text())
    assert isinstance(doc, dict)
    return doc


def job() -> dict[str, Any]:
    (only,) = workflow()["jobs"].values()
    return only


def env_value(expression: str) -> str:
    """A job env value as a shell sees it on a run without secrets or variables: the last
    literal of a ``${{ a || 'b' }}`` expression, else the text."""
    literals = re.findall(r"'([^']*)'", expression)
    return literals[-1] if "${{" in expression and literals else expression


def commands() -> list[list[str]]:
    """Every ``toolscore`` command the steps run, as argv after ``toolscore``, with the job's
    environment variables substituted."""
    env = {k: env_value(str(v)) for k, v in (job().get("env") or {}).items()}
    found = []
    for step in job()["steps"]:
        script = step.get("run")
        if not script:
            continue
        for line in script.replace("\\\n", " ").splitlines():
            line = line.split(" #")[0] if not line.lstrip().startswith("#") else ""
            for start in COMMAND_START.finditer(line):
                rest = line[start.end():]
                end = COMMAND_END.search(rest)
                text = rest[:end.start()] if end else rest
                text = re.sub(r"\$\{?(\w+)\}?", lambda m: env.get(m.group(1), m.group(0)), text)
                found.append(shlex.split(text))
    return found


def parse(argv: list[str]) -> tuple[list[str], click.Context]:
    """Resolve ``argv`` through the command tree and parse its options; the command path and
    the parsed context."""
    command: click.Command = app
    path: list[str] = []
    parent = click.Context(app, info_name="toolscore")
    while isinstance(command, click.Group):
        if not argv:
            raise click.UsageError(f"toolscore {' '.join(path)}: no subcommand given")
        sub = command.get_command(parent, argv[0])
        if sub is None:
            raise click.UsageError(f"toolscore {' '.join([*path, argv[0]])}: no such command")
        path.append(argv[0])
        command, argv = sub, argv[1:]
        parent = click.Context(command, info_name=path[-1], parent=parent)
    ctx = command.make_context(path[-1], list(argv), parent=parent.parent)
    return path, ctx


def test_the_workflow_runs_real_toolscore_commands_with_real_options() -> None:
    found = commands()
    assert len(found) >= 4, found
    paths = []
    for argv in found:
        try:
            path, ctx = parse(argv)
        except click.UsageError as e:
            pytest.fail(f"toolscore {shlex.join(argv)}: {e.format_message()}")
        paths.append(" ".join(path))
        for spec in ctx.params.get("fail_under") or ():
            (floor,) = parse_floors([spec])
            cls = benchmark_class(path[-1])
            names = {n for m in cls.interval_metrics([]) for n in (m.label, m.key) if n}
            assert floor.metric in names, (spec, names)
    assert "run tooltalk" in paths and "cache prune" in paths


def test_the_run_is_gated_and_its_report_and_junit_are_uploaded() -> None:
    runs = [parse(a)[1] for a in commands() if a[0] == "run"]
    (run,) = runs
    assert run.params["fail_under"] and run.params["junit"] and run.params["html"]
    upload = next(s for s in job()["steps"] if str(s.get("uses", "")).startswith(
        "actions/upload-artifact@"))
    assert upload.get("if") == "always()"  # uploaded when the gate fails too
    uploaded = [Path(p.strip()) for p in upload["with"]["path"].splitlines() if p.strip()]
    for written in (run.params["junit"], run.params["html"]):
        assert any(written == p or p in written.parents for p in uploaded), (written, uploaded)


def test_the_response_cache_is_kept_per_model_between_runs() -> None:
    steps = job()["steps"]
    cache = next(s for s in steps if str(s.get("uses", "")).startswith("actions/cache@"))
    key, restore = cache["with"]["key"], cache["with"]["restore-keys"]
    assert "env.TOOLSCORE_MODEL" in key and "github.run_id" in key  # a new entry per run
    assert restore.strip() and key.startswith(restore.strip())  # restores the newest
    home = env_value(str(job()["env"]["XDG_CACHE_HOME"]))
    assert home.endswith("/.cache") and cache["with"]["path"] == ".cache/toolscore"
    evaluate = next(i for i, s in enumerate(steps) if "toolscore run" in str(s.get("run")))
    assert steps.index(cache) < evaluate
    triggers = workflow().get("on", workflow().get(True))  # YAML 1.1 reads a bare on as true
    assert "pull_request" in triggers


@pytest.mark.parametrize("argv", [["run", "tooltalk", "--fail-undr", "success=0.5"],
                                  ["run", "no-such-benchmark"], ["cache", "purge"],
                                  ["compare", "a", "b", "--fail-on-regresion"]])
def test_the_check_catches_what_does_not_exist(argv: list[str]) -> None:
    with pytest.raises((click.UsageError, SystemExit)):
        parse(argv)


def test_the_documentation_explains_the_example() -> None:
    text = DOC.read_text()
    assert "examples/github-actions/toolscore.yml" in text
    for needle in ("--fail-under", "--junit", "--fail-on-regression", "actions/cache"):
        assert needle in text, needle
