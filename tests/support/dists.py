"""A fake installed distribution: a module plus a ``*.dist-info`` folder in a fresh directory on
sys.path, so importlib.metadata finds its entry points exactly as it finds a pip-installed
package's. Nothing of toolscore is mocked: discovery, loading and error messages run for real.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest


def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry_points: dict[str, str],
            dist: str = "fake_dist", version: str = "0.1", module_source: str = "",
            module: str | None = None, group: str = "toolscore.plugins") -> str:
    """Write ``module_source`` as a module and a dist-info declaring ``entry_points`` (name ->
    "{module}:attr") in ``group``; return the module name (unique, so imports never collide).
    The directory leaves sys.path when the test ends."""
    module = module or f"fake_ext_{uuid.uuid4().hex[:8]}"
    site = tmp_path / f"site_{uuid.uuid4().hex[:8]}"
    site.mkdir()
    (site / f"{module}.py").write_text(module_source)
    info = site / f"{dist}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist.replace('_', '-')}\nVersion: {version}\n")
    lines = [f"{name} = {target.format(module=module)}" for name, target in entry_points.items()]
    (info / "entry_points.txt").write_text(f"[{group}]\n" + "\n".join(lines) + "\n")
    monkeypatch.syspath_prepend(str(site))
    return module
