"""The broken-input corpus (issue 10, item 7): every input file of every command that reads
files, broken in every way that applies (see :mod:`robustness.inputs`), run through the real
command line, in process (a subprocess per variant would make 400 variants take minutes).

A variant expected to fail must exit 2 with exactly one line on stderr, no traceback, the file
named and, for a fault inside a record, the record and the field; and a run directory's files
must be byte for byte what they were. A variant expected to be accepted must exit 0.
``test_corpus_size`` keeps the corpus from shrinking unnoticed, and ``closing_table`` is the
figure of the issue's closing note (``python -m robustness.table``).
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from support import data
from support.testing.openai_server import FakeOpenAIServer

from robustness import workspace
from robustness.corpus import ACCEPTED, ERROR, GAP, GUARDED, Variant, variants
from robustness.inputs import inputs
from toolscore.cli import app

VARIANTS = list(variants(inputs()))
pytestmark = data.needs("tooltalk", "tooltalk-reference", "autode", "tooleval", "acs")


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(app, args, catch_exceptions=True)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(workspace.responder([]), keep_requests=False) as srv:
        yield srv


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, server: FakeOpenAIServer) -> Path:
    root = tmp_path_factory.mktemp("corpus-template")
    return workspace.build(root, server.base_url, invoke)


def digests(root: Path) -> dict[str, str | None]:
    return {rel: hashlib.sha256((root / rel).read_bytes()).hexdigest()
            if (root / rel).is_file() else None for rel in GUARDED}


def outcome(variant: Variant, work: Path, url: str) -> dict[str, Any]:
    """Break the file, run the command; what happened, as the closing table counts it."""
    variant.breakage.apply(work / variant.target)
    before = digests(work)
    done = invoke(variant.args(work, url))
    lines = done.stderr.strip().splitlines()
    return {"exit": done.exit_code, "lines": lines, "stdout": done.stdout,
            "exception": None if isinstance(done.exception, SystemExit) else done.exception,
            "kept": digests(work) == before, "workspace": str(work)}


def check(variant: Variant, got: dict[str, Any]) -> list[str]:
    """The ways ``got`` falls short of the variant's decided outcome (empty: as decided)."""
    problems = []
    if got["exception"] is not None:
        return [f"traceback: {type(got['exception']).__name__}: {got['exception']}"]
    if variant.expect == GAP:
        return problems + check(Variant(variant.kind, variant.target, variant.breakage,
                                        variant.command, ERROR), got)
    if variant.expect == ACCEPTED:
        if got["exit"] != 0:
            problems.append(f"exit {got['exit']} (accepted by design): {got['lines'][-3:]}")
        return problems
    if got["exit"] != 2:
        problems.append(f"exit {got['exit']}, expected 2")
    if len(got["lines"]) != 1:
        problems.append(f"{len(got['lines'])} lines on stderr: {got['lines'][:4]}")
        return problems
    line = got["lines"][0].replace(got["workspace"], "<w>")  # needles never match the path
    if not line.startswith("error: "):
        problems.append(f"not an error line: {line}")
    name = Path(variant.target).name
    if variant.breakage.name == "missing" and name not in line:  # a file less: the folder
        name = next((p for p in Path(variant.target).parts if p in line), name)  # is named
    for needle in (name, *variant.breakage.needles):
        if needle not in line:
            problems.append(f"{needle!r} not named: {line}")
    if not got["kept"]:
        problems.append("a run directory file changed")
    return problems


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.id for v in VARIANTS])
def test_broken_input(variant: Variant, template: Path, tmp_path: Path,
                      server: FakeOpenAIServer) -> None:
    work = tmp_path / "w"
    shutil.copytree(template, work)
    got = outcome(variant, work, server.base_url)
    problems = check(variant, got)
    if variant.expect == GAP:  # should be a clear error; fails until it is
        assert problems, "the gap is closed: make this variant an expected error"
        pytest.xfail(f"known gap (see robustness/inputs.py): {problems[0]}")
    assert not problems, problems


def test_corpus_size() -> None:
    """At least 200 variants over every kind of input, most of them expected errors."""
    kinds = {v.kind for v in VARIANTS}
    assert len(VARIANTS) >= 200 and len(kinds) >= 15
    assert sum(v.expect == ERROR for v in VARIANTS) > 0.8 * len(VARIANTS)
