"""Run a test's body in a child Python process: for checks that must load native model code
(llama.cpp), which never runs in the test process itself (see tests/conftest.py). A crash in
the child fails the one test that started it, with the child's exit status and output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def run_in_child(target: str, *args: str, timeout: float = 600) -> str:
    """Call ``module:function(*args)`` (importable from tests/) in a fresh interpreter;
    its stdout. Fails the calling test if the child fails in any way."""
    import pytest

    module, _, function = target.partition(":")
    code = (f"import sys; from {module} import {function} as f; "
            "f(*sys.argv[1:])")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                          text=True, timeout=timeout)
    if done.returncode != 0:
        pytest.fail(f"{target} ended with exit status {done.returncode} in its process:\n"
                    f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}", pytrace=False)
    return done.stdout
