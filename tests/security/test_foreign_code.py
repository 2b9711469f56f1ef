"""Code from another installed package is imported only when the user names it: a plugin set
or a model provider that a run directory names is not imported to read, report or score the
run, and continuing the run needs the user to name it again.

Each package here is a fake installed distribution (:mod:`support.dists`) whose module writes a
marker file when it is imported; the commands run as subprocesses that find it on their path.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from support.cli import toolscore
from support.dists import install

import toolscore as api

PLUGINS_MODULE = '''
from pathlib import Path
Path({marker!r}).write_text("imported")
from toolscore.benchmarks.demo.plugins import PLUGINS
'''

PROVIDER_MODULE = '''
from pathlib import Path
Path({marker!r}).write_text("imported")
from toolscore.types import Message, Reply


class Parrot:
    def __init__(self, model="", **options):
        self.name = "parrot/" + model

    def cache_identity(self):
        return {{"provider": "parrot"}}

    async def generate(self, messages, tools, config):
        return Reply(Message(role="assistant", content="ok"))


def make(model, **options):
    return Parrot(model, **options)
'''


def site_of(module: str) -> str:
    import importlib

    return str(Path(importlib.import_module(module).__file__).parent)


def test_a_foreign_plugin_set_is_not_imported_from_a_run(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "marker"
    module = install(tmp_path, monkeypatch, {"basket": "{module}:PLUGINS"}, dist="basket_set",
                     module_source=PLUGINS_MODULE.format(marker=str(marker)))
    env = {"PYTHONPATH": os.pathsep.join([site_of(module), os.environ.get("PYTHONPATH", "")])}
    run = tmp_path / "run"
    from toolscore.benchmarks.demo import data_dir

    api.evaluate("tooltalk", "oracle", plugins=["basket"], data=data_dir(), embedder="hashing",
                 cache=None, out=run)
    metrics = json.loads((run / "scores.json").read_text())
    marker.unlink()
    for args in (("report", str(run)), ("report", str(run), "--html", str(tmp_path / "r.html")),
                 ("export", str(run), "-f", "jsonl", "-o", str(tmp_path / "e.jsonl"))):
        done = toolscore(*args, cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        assert not marker.exists(), args
    done = toolscore("score", str(run), cwd=tmp_path, env=env)  # matching needs its rules
    assert not marker.exists()
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "plugins" in done.stderr and "-T plugins=basket" in done.stderr
    done = toolscore("run", "tooltalk", "--resume", str(run), cwd=tmp_path, env=env)
    assert not marker.exists()
    assert done.returncode == 2 and "--plugins basket" in done.stderr
    done = toolscore("score", str(run), "-T", "plugins=basket", "--json", cwd=tmp_path, env=env)
    assert done.returncode == 0 and marker.exists(), done.stderr[-2000:]
    assert json.loads(done.stdout)["metrics"] == metrics
    marker.unlink()
    done = toolscore("run", "tooltalk", "--resume", str(run), "--plugins", "basket",
                     cwd=tmp_path, env=env)
    assert done.returncode == 0 and marker.exists(), done.stderr[-2000:]


def test_a_foreign_model_provider_is_not_loaded_to_continue_a_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "marker"
    module = install(tmp_path, monkeypatch, {"parrot": "{module}:make"}, dist="parrot_models",
                     module_source=PROVIDER_MODULE.format(marker=str(marker)),
                     group="toolscore.providers")
    env = {"PYTHONPATH": os.pathsep.join([site_of(module), os.environ.get("PYTHONPATH", "")])}
    run = tmp_path / "run"
    api.evaluate("demo", "parrot/x", embedder="hashing", cache=None, out=run, limit=1)
    marker.unlink()
    other = tmp_path / "other"
    shutil.copytree(run, other)
    for args in (("report", str(run)), ("score", str(run)), ("compare", str(run), str(other)),
                 ("leaderboard", str(run))):
        done = toolscore(*args, cwd=tmp_path, env=env)
        assert done.returncode == 0, (args, done.stderr[-2000:])
        assert not marker.exists(), args
    done = toolscore("run", "demo", "--resume", str(run), cwd=tmp_path, env=env)
    assert not marker.exists()
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "parrot-models" in done.stderr and "--model parrot/x" in done.stderr
    done = toolscore("run", "demo", "--resume", str(run), "--model", "parrot/x", cwd=tmp_path,
                     env=env)
    assert done.returncode == 0 and marker.exists(), done.stderr[-2000:]
