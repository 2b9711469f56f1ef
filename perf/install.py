"""Time and disk size of installing toolscore into a fresh virtual environment.

Creates a new venv in a temporary folder, runs ``pip install`` of a copy of this checkout's
package files (so that the build leaves nothing in the checkout; the light core by default, or
with ``--extras``) with pip's own cache off, and prints the wall time of the
install and the size of the venv's ``site-packages`` (what the install added, pip itself
excluded). The packages come from the registry pip is configured with, so the time includes
downloads and is a measure of the network as much as of the machine.

    .venv/bin/python perf/install.py                    # pip install toolscore (the core)
    .venv/bin/python perf/install.py --extras openai    # pip install 'toolscore[openai]'
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tree_size(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            with_path = Path(dirpath) / name
            if not with_path.is_symlink():
                total += with_path.stat().st_size
    return total


def site_packages(env: Path) -> Path:
    return next((env / "lib").glob("python*/site-packages"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--extras", default="", help="comma-separated extras, e.g. openai,report")
    ap.add_argument("--src", type=Path, default=ROOT, help="the checkout to install")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="toolscore-perf-install-") as tmp:
        copy = Path(tmp) / "toolscore"
        shutil.copytree(args.src / "src", copy / "src",
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        for name in ("pyproject.toml", "README.md", "LICENSE"):
            shutil.copy2(args.src / name, copy / name)
        target = str(copy) + (f"[{args.extras}]" if args.extras else "")
        env = Path(tmp) / "venv"
        venv.EnvBuilder(with_pip=True).create(env)
        python = env / "bin" / "python"
        before = tree_size(site_packages(env))
        start = time.perf_counter()
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-cache-dir", target],
                       check=True, cwd=tmp)
        wall = time.perf_counter() - start
        added = tree_size(site_packages(env)) - before
        check = subprocess.run([str(env / "bin" / "toolscore"), "--version"],
                               capture_output=True, text=True, check=False, cwd=tmp)
    print(f"python {sys.version.split()[0]}, pip install {args.src}"
          + (f"[{args.extras}]" if args.extras else ""))
    print(f"  install: {wall:.1f} s wall; site-packages grew by {added / 1e6:.0f} MB")
    print(f"  {check.stdout.strip() or check.stderr.strip()}")


if __name__ == "__main__":
    main()
