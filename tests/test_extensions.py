"""Extension points work with zero edits to toolscore: the example package
(examples/plugin_package) declares a plugin set, a benchmark and a model provider in its
pyproject.toml; once installed, `toolscore run counter`, `--model parrot/...` and
`toolscore run tooltalk --plugins counter` work. "Installed" here is exactly what pip leaves
behind: the package on sys.path and a *.dist-info folder with its entry points."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")
REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "examples" / "plugin_package"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site folder holding the example's dist-info, built from its own pyproject.toml."""
    project = tomllib.loads((PACKAGE / "pyproject.toml").read_text())["project"]
    site = tmp_path_factory.mktemp("site")
    info = site / f"toolscore_counter-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\n"
                                   f"Version: {project['version']}\n")
    lines = []
    for group, entries in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {target}" for name, target in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return site


def toolscore(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join([str(site), str(PACKAGE / "src"), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "XDG_CACHE_HOME": str(cwd / "xdg")}
    return subprocess.run([sys.executable, "-m", "toolscore.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def doc(done: subprocess.CompletedProcess[str]) -> dict:
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_installed_benchmark_runs_by_name(site: Path, tmp_path: Path) -> None:
    listed = doc(toolscore(site, tmp_path, "benchmarks", "--json"))["benchmarks"]
    counter = next(b for b in listed if b["name"] == "counter")
    assert "toolscore-counter 0.1.0" in counter["source"]
    help_text = toolscore(site, tmp_path, "run", "counter", "--help").stdout
    assert "--max-calls-per-turn" in help_text and "--model" in help_text
    run = doc(toolscore(site, tmp_path, "run", "counter", "-m", "oracle", "--embedder",
                        "hashing", "--out", "oracle-run", "--json"))
    assert run["config"]["benchmark"] == "counter"
    assert run["metrics"]["easy"]["success_rate"] == 1.0
    assert run["metrics"]["hard"]["success_rate"] == 1.0
    report = doc(toolscore(site, tmp_path, "report", "oracle-run", "--json"))
    assert report["benchmark"] == "counter" and report["counts"]["all"]["samples"] == 2


def test_installed_provider_is_a_model(site: Path, tmp_path: Path) -> None:
    models = doc(toolscore(site, tmp_path, "models", "--json"))["models"]
    assert "parrot" in [m["provider"] for m in models]
    run = doc(toolscore(site, tmp_path, "run", "counter", "-m", "parrot/plain", "--embedder",
                        "hashing", "--out", "parrot-run", "--json"))
    assert run["config"]["model"] == "parrot/plain"
    assert run["metrics"]["easy"]["recall"] == 0.0 and run["metrics"]["errors"] == 0
    records = sorted((json.loads(line) for line in
                      (tmp_path / "parrot-run" / "samples.jsonl").read_text().splitlines()),
                     key=lambda r: str(r["id"]))  # the file is in completion order
    texts = [t["text"] for r in records for t in r["output"]["turns"]]
    assert any(t.startswith("You said: I just had a cup of coffee") for t in texts), texts


def test_tooltalk_runs_over_an_installed_plugin_set(site: Path, tmp_path: Path) -> None:
    data = PACKAGE / "src" / "toolscore_counter" / "data"
    run = doc(toolscore(site, tmp_path, "run", "tooltalk", "--plugins", "counter", "--data",
                        str(data), "-m", "oracle", "--embedder", "hashing", "--json"))
    assert run["config"]["benchmark_config"]["plugins"] == ["Counter"]
    assert run["metrics"]["hard"]["success_rate"] == 1.0
    missing = toolscore(site, tmp_path, "run", "tooltalk", "--plugins", "counter", "-m", "oracle")
    assert missing.returncode == 2 and "--plugins needs --data" in missing.stderr
    unknown = toolscore(site, tmp_path, "run", "tooltalk", "--plugins", "nope", "--data",
                        str(data), "-m", "oracle")
    assert unknown.returncode == 2 and "Unknown plugin set 'nope'" in unknown.stderr
