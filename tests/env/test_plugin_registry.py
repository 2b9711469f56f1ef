"""Plugin discovery through real entry points: each test installs a fake distribution (a module
plus a ``*.dist-info`` folder, see ``support.dists``) in a temporary directory on sys.path, and
importlib.metadata reads it exactly as it reads a pip-installed package. Nothing of toolscore is
mocked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import dists

from toolscore.env import Environment, Plugin
from toolscore.env.registry import PluginError, available_plugin_sets, load_plugins

ROOT = Path(__file__).resolve().parents[2]

PLUGIN_MODULE = '''
from toolscore.env import Plugin, tool


@tool("Echo")
def echo(env, text: str) -> dict:
    """Repeat the text.

    Args:
        text: What to repeat.
    """
    return {"text": text}


PLUGIN = Plugin("Echo", [echo])
PLUGINS = [PLUGIN]


def factory():
    return PLUGINS


def failing_factory():
    raise RuntimeError("no echo today")


NOT_A_PLUGIN = 42
'''


def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry_points: dict[str, str],
            dist: str = "fake_dist", version: str = "0.1", module_source: str = PLUGIN_MODULE,
            module: str | None = None) -> str:
    """A fake distribution declaring plugin sets (see ``support.dists``)."""
    return dists.install(tmp_path, monkeypatch, entry_points, dist, version, module_source,
                         module, group="toolscore.plugins")


@pytest.mark.parametrize("attribute", ["PLUGINS", "PLUGIN", "factory"])
def test_entry_point_is_discovered_and_loaded(tmp_path, monkeypatch, attribute) -> None:
    module = install(tmp_path, monkeypatch, {"echo": f"{{module}}:{attribute}"})
    listing = available_plugin_sets()
    assert listing["echo"] == f"{module}:{attribute} (fake-dist 0.1)"
    assert "demo" in listing and "tooltalk" in listing
    plugins = load_plugins("echo")
    assert [p.name for p in plugins] == ["Echo"]
    env = Environment(plugins)
    assert env.call("Echo", {"text": "hi"}).response == {"text": "hi"}


def test_builtin_demo_loads() -> None:
    plugins = load_plugins("demo")
    assert all(isinstance(p, Plugin) for p in plugins)
    assert {"Notes", "Shopping", "Calculator"} == {p.name for p in plugins}
    assert available_plugin_sets()["demo"].endswith("(built-in)")


def test_listing_imports_nothing() -> None:
    code = ("import sys; from toolscore.env.registry import available_plugin_sets as a; a(); "
            "print(any(m.startswith('toolscore.benchmarks') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""})
    assert out.stdout.strip() == "False"


def test_unknown_name_lists_the_known_ones(tmp_path, monkeypatch) -> None:
    install(tmp_path, monkeypatch, {"echo": "{module}:PLUGINS"})
    with pytest.raises(PluginError) as err:
        load_plugins("nope")
    message = str(err.value)
    assert message.startswith("Unknown plugin set 'nope'; known: ")
    assert "demo" in message and "echo" in message and "tooltalk" in message
    assert "\n" not in message


@pytest.mark.parametrize(("target", "expected"), [
    ("missing_module_{module}:PLUGINS", "ModuleNotFoundError"),
    ("{module}:MISSING", "AttributeError"),
    ("{module}:failing_factory", "its factory raised RuntimeError: no echo today"),
    ("{module}:NOT_A_PLUGIN", "it gave a int, expected a Plugin"),
])
def test_broken_entry_point_names_distribution_and_entry_point(
        tmp_path, monkeypatch, target, expected) -> None:
    module = install(tmp_path, monkeypatch, {"broken": target}, dist="broken_dist")
    assert "broken" in available_plugin_sets()  # listed: nothing is imported to list it
    with pytest.raises(PluginError) as err:
        load_plugins("broken")
    message = str(err.value)
    assert "distribution 'broken-dist 0.1'" in message
    assert f"entry point broken = {target.format(module=module)}" in message
    assert expected in message and "\n" not in message


def test_module_with_syntax_error_is_reported(tmp_path, monkeypatch) -> None:
    install(tmp_path, monkeypatch, {"bad": "{module}:PLUGINS"}, dist="bad_dist",
            module_source="def broken(:\n")
    with pytest.raises(PluginError, match="'bad-dist 0.1'.*SyntaxError"):
        load_plugins("bad")


def test_builtin_name_cannot_be_taken_over(tmp_path, monkeypatch) -> None:
    module = install(tmp_path, monkeypatch, {"demo": "{module}:PLUGINS"}, dist="squatter")
    assert "Notes" in {p.name for p in load_plugins("demo")}
    listing = available_plugin_sets()["demo"]
    assert listing.startswith("toolscore.benchmarks.demo.plugins:PLUGINS (built-in)")
    assert f"ignored, the name is built-in: {module}:PLUGINS (squatter 0.1)" in listing


def test_same_name_from_two_distributions_is_ambiguous(tmp_path, monkeypatch) -> None:
    install(tmp_path, monkeypatch, {"echo": "{module}:PLUGINS"}, dist="first")
    install(tmp_path, monkeypatch, {"echo": "{module}:PLUGINS"}, dist="second")
    with pytest.raises(PluginError, match="declared by several distributions") as err:
        load_plugins("echo")
    assert "'first 0.1'" in str(err.value) and "'second 0.1'" in str(err.value)


def test_builtin_declared_again_by_toolscore_is_not_a_clash(tmp_path, monkeypatch) -> None:
    install(tmp_path, monkeypatch, {"demo": "toolscore.benchmarks.demo.plugins:PLUGINS"},
            dist="toolscore")
    assert available_plugin_sets()["demo"] == "toolscore.benchmarks.demo.plugins:PLUGINS (built-in)"


def test_example_plugin_package(tmp_path, monkeypatch) -> None:
    """examples/plugin_package works as documented: its pyproject's entry point, installed,
    makes its plugin loadable by name."""
    tomllib = pytest.importorskip("tomllib")
    package = ROOT / "examples" / "plugin_package"
    project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
    declared = project["entry-points"]["toolscore.plugins"]
    assert declared == {"counter": "toolscore_counter:PLUGINS"}
    monkeypatch.syspath_prepend(str(package / "src"))
    install(tmp_path, monkeypatch, declared, dist=project["name"].replace("-", "_"),
            version=project["version"], module="unused_module")
    (plugin,) = load_plugins("counter")
    assert plugin.name == "Counter" and [t.name for t in plugin.tools] == ["Increment", "GetCount"]
    listing = available_plugin_sets()["counter"]
    assert listing == "toolscore_counter:PLUGINS (toolscore-counter 0.1.0)"
    env = Environment([plugin])
    env.call("Increment", {"name": "tea", "by": 2})
    assert env.call("GetCount", {"name": "tea"}).response == {"name": "tea", "value": 2}
    assert plugin["Increment"].action and not plugin["GetCount"].action
