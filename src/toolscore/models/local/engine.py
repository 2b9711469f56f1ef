"""The embedded model's engine: llama.cpp reading a prompt and writing a reply, greedily.

This module runs in the model's own process (:mod:`toolscore.models.local.host`), never in
toolscore's: it is the one place that calls native model code. Importing it loads nothing;
``llama_cpp`` is imported when an engine is built.

How a request becomes a reply, and why:

* The prompt text arrives rendered (:func:`toolscore.models.local.model.prompt_text`) and is
  tokenized here with the model's own tokenizer.
* ``tool_choice`` "auto": the model's first token, greedy and unconstrained, decides: if it
  opens a ``<tool_call>`` block, the reply is regenerated under the call grammar
  (:mod:`toolscore.models.local.toolgrammar`: well-formed JSON, a known tool, its argument schema);
  otherwise the text continues unconstrained. "required" and a tool name use the grammar from
  the first token; "none" (or no tools) never does.
* Evaluated prefixes are reused across calls (:mod:`toolscore.models.local.kvstate`): most of every
  prompt is the tool list and a conversation an earlier call already read.
* Generation is capped (``TEXT_TOKENS``, ``CALL_TOKENS``, ``MAX_CALLS``, below the request's
  own ``max_tokens``) and stops when the text repeats itself (``looping``): greedy decoding of
  a 135M model that has not finished by then is looping, and more tokens only cost CPU. A
  call cut short keeps its partial arguments, scored as the model's mistake. The caps are
  part of the model's cache identity.
* The weights are loaded with llama.cpp's extra buffer types off (``EXTRA_BUFFERS``): on a
  CPU with AMX, a native build repacks SmolLM2's q4_1 tensors for AMX and batched decode then
  faults in ``libggml-cpu``; without them every x86-64 CPU takes the same, plain path, and
  the same prompt gives the same reply on every machine (see docs/performance.md for the
  speed of each choice).

One thread and greedy decoding keep outputs deterministic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.models.base import ContextLengthExceeded
from toolscore.models.local import chatml
from toolscore.types import GenerateConfig, ToolSpec

N_CTX = 8192  # SmolLM2's trained context length
TEXT_TOKENS = 192  # a text reply (an answer, a question, a judge's verdict)
CALL_TOKENS = 160  # a reply of tool calls, all blocks together
MAX_CALLS = 3  # call blocks in one reply
# Greedy decoding that starts repeating a span of 4 to 32 tokens three times back to back has
# entered a loop it does not leave ("26.2 * 100 = 26.2 * 100 = ..."): stop there.
LOOP_PERIODS, LOOP_REPEATS = (4, 32), 3
STATE_ENTRIES = 12  # evaluated prefixes kept (a runner keeps up to 8 conversations in flight)
STATE_BYTES = 512 << 20
EXTRA_BUFFERS = False  # llama.cpp's extra (repacking) buffer types: off, see above


class RequestRefused(ValueError):
    """A request the engine cannot serve as asked (a ``tool_choice`` naming no offered tool)."""


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


def plan(tools: list[ToolSpec], config: GenerateConfig) -> tuple[str | None, bool, int]:
    """(call grammar or None, does the first token choose?, token cap) for a request."""
    from toolscore.models.local.toolgrammar import call_grammar

    limit = config.max_tokens or 10**9
    choice = config.tool_choice or "auto"  # None: not set, what an API does by default
    if not tools or choice == "none":
        return None, False, min(limit, TEXT_TOKENS)
    only = None if choice in ("auto", "required") else choice
    grammar = call_grammar(tools, only=only, max_calls=MAX_CALLS)
    if choice == "auto":
        return grammar, True, min(limit, max(TEXT_TOKENS, CALL_TOKENS))
    return grammar, False, min(limit, CALL_TOKENS)


def default_params_with(extra_buffers: bool) -> Callable[[], None]:
    """Make llama-cpp-python build every model's parameters with ``use_extra_bufts`` set to
    ``extra_buffers`` (its version 0.3.36 has no keyword for it: it builds them from
    ``llama_model_default_params()``, wrapped here); returns the function that undoes it."""
    import llama_cpp.llama_cpp as native

    defaults = native.llama_model_default_params

    def params() -> Any:
        p = defaults()
        p.use_extra_bufts = extra_buffers
        return p

    native.llama_model_default_params = params

    def restore() -> None:
        native.llama_model_default_params = defaults
    return restore


def load_llama(path: Path, extra_buffers: bool = EXTRA_BUFFERS) -> Any:
    """The ``Llama`` object every run uses, loaded with the parameters described above.

    The parameters are set for the time of the constructor, which loads the weights
    (:func:`default_params_with`; this process runs nothing else meanwhile), and the loaded
    object's parameters are checked."""
    from llama_cpp import Llama

    restore = default_params_with(extra_buffers)
    try:
        llm = Llama(model_path=str(path), n_ctx=N_CTX, n_threads=1, n_threads_batch=1, seed=0,
                    verbose=False)
    finally:
        restore()
    if bool(llm.model_params.use_extra_bufts) != extra_buffers:
        raise RuntimeError("llama-cpp-python did not take use_extra_bufts; the model would "
                           "load with llama.cpp's default buffers")
    return llm


@dataclass
class LlamaEngine:
    """One loaded model and its reusable prefixes; answers one request at a time."""

    path: Path
    llm: Any = None
    states: Any = None
    _opens: dict[int, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from toolscore.models.local.kvstate import PrefixStates

        if self.llm is None:
            self.llm = load_llama(self.path)
        self.states = PrefixStates(STATE_ENTRIES, STATE_BYTES)

    def describe(self) -> dict[str, Any]:
        import llama_cpp

        return {"llama_cpp": getattr(llama_cpp, "__version__", "?"),
                "extra_bufts": bool(self.llm.model_params.use_extra_bufts),
                "system_info": llama_cpp.llama_print_system_info().decode(errors="replace")}

    def generate(self, request: dict[str, Any]) -> dict[str, Any]:
        tools = [ToolSpec(name, "", parameters) for name, parameters in request["tools"]]
        config = GenerateConfig(tool_choice=request["tool_choice"],
                                max_tokens=request["max_tokens"])
        try:
            grammar, choose, cap = plan(tools, config)
        except ValueError as e:
            raise RequestRefused(str(e)) from None
        tokens = self.tokenize(request["text"], request["bos"])
        room = N_CTX - len(tokens)
        if room < 2:
            raise ContextLengthExceeded(f"prompt of {len(tokens)} tokens fills the "
                                        f"{N_CTX}-token context window")
        out, constrained, finish = self.complete(tokens, grammar, min(cap, room - 1), choose)
        return {"input_tokens": len(tokens), "output_tokens": len(out),
                "text": self.text(out), "constrained": constrained, "finish": finish}

    def tokenize(self, text: str, bos: str) -> list[int]:
        add_bos = not (bos and text.startswith(bos))  # the template may print BOS itself
        tokens: list[int] = self.llm.tokenize(text.encode("utf-8"), add_bos=add_bos,
                                              special=True)
        return tokens

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
                assert out is not None  # only a choosing decode stops before its first token
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
        if token not in self._opens:
            piece = self.llm.detokenize([token]).decode("utf-8", errors="replace").lstrip()
            self._opens[token] = bool(piece) and (chatml.CALL_OPEN.startswith(piece)
                                                  or piece.startswith(chatml.CALL_OPEN))
        return self._opens[token]

    def text(self, tokens: list[int]) -> str:
        text: str = self.llm.detokenize(tokens).decode("utf-8", errors="replace")
        return text

    def close(self) -> None:
        self.states.clear()
        self.llm.close()
