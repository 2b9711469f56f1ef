"""Prompt evaluation that reuses earlier calls' work (llama.cpp's KV cache), deterministically.

On one CPU thread the embedded model reads a prompt at about 100 tokens per second, and nearly
every call of a benchmark starts with what an earlier call already read: the tool list and
system prompt, then the conversation so far. The runner interleaves conversations (several
samples in flight, their calls queued for the one model), so the prompt just evaluated is
usually another conversation's; this keeps the KV state of the last few prompts (llama.cpp's
per-sequence state holds only the used cells: about 23 kB per token for SmolLM2-135M) and
restores the one sharing the longest prefix with the next prompt.

Reuse must not change replies, or a run's results would depend on the order its calls happened
to run in. They would: llama.cpp's CPU kernels round differently for different batch sizes (one
token while generating, hundreds while reading a prompt), and on the demo 2 of 13 replies
changed when a prefix was reused naively. So a prompt is always evaluated in fixed chunks
aligned to absolute positions (``CHUNK`` tokens: 0-31, 32-63, ...), only whole chunks of
earlier *prompts* are reused, and never the KV of generated tokens. Every token's KV is then
computed from the same inputs in the same batch whatever ran before, and a reply is a function
of its prompt alone (a slow test compares replies with and without reuse).
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from typing import Any

CHUNK = 32  # tokens per evaluation batch; as fast as 512 on one thread (measured 8-11 ms/token)


def common_prefix(a: Any, b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _aligned(n: int) -> int:
    return n // CHUNK * CHUNK


class PrefixStates:
    """Evaluates prompts for one ``Llama`` and keeps an LRU of (tokens -> KV state of sequence
    0), bounded by entries and bytes. Drives the llama-cpp-python 0.3 object through
    ``eval`` and its ``n_tokens``/``input_ids``, which ``Llama.generate`` reads to see that the
    prompt is already evaluated."""

    def __init__(self, max_entries: int = 12, max_bytes: int = 512 << 20):
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._states: OrderedDict[tuple[int, ...], bytes] = OrderedDict()
        self.restored = self.reused = self.evaluated = 0

    def __len__(self) -> int:
        return len(self._states)

    @property
    def nbytes(self) -> int:
        return sum(len(s) for s in self._states.values())

    def evaluate(self, llm: Any, tokens: list[int]) -> None:
        """Leave ``tokens`` evaluated (logits of the last one ready), reusing what it can."""
        live = _aligned(common_prefix(llm.input_ids[:llm.n_tokens].tolist(), tokens))
        best_key, best = None, live
        for key in self._states:
            n = _aligned(common_prefix(key, tokens))
            if n > best:
                best_key, best = key, n
        if best_key is not None:
            if self._restore(llm, best_key):
                self._states.move_to_end(best_key)
                self.restored += 1
            else:
                best = 0
        keep = min(best, _aligned(len(tokens) - 1))  # at least one token to get logits from
        llm.n_tokens = keep  # ``eval`` drops the KV cells from here on
        for start in range(keep, len(tokens), CHUNK):
            llm.eval(tokens[start:start + CHUNK])
        self.reused += keep
        self.evaluated += len(tokens) - keep

    def settle(self, llm: Any, prompt_length: int) -> None:
        """After generating: drop the KV of generated tokens and of the prompt's last, partial
        chunk (neither is canonical), and keep the rest for later calls."""
        keep = min(_aligned(prompt_length), llm.n_tokens)
        llm._ctx.kv_cache_seq_rm(0, keep, -1)
        llm.n_tokens = keep
        llm._requires_eval = True  # the logits are no longer the kept prefix's
        if keep == 0:
            return
        key = tuple(llm.input_ids[:keep].tolist())
        ctx = llm._ctx.ctx
        size = _llama().llama_state_seq_get_size(ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        written = _llama().llama_state_seq_get_data(ctx, buf, size, 0)
        if not written:
            return
        for old in [k for k in self._states if len(k) <= len(key) and key[:len(k)] == k]:
            del self._states[old]  # superseded by this longer state
        self._states[key] = bytes(buf)[:written]
        while self._states and (len(self._states) > self.max_entries
                                or self.nbytes > self.max_bytes):
            self._states.popitem(last=False)

    def _restore(self, llm: Any, key: tuple[int, ...]) -> bool:
        data = self._states[key]
        llm._ctx.kv_cache_clear()
        llm.n_tokens = 0
        buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        if _llama().llama_state_seq_set_data(llm._ctx.ctx, buf, len(data), 0) != len(data):
            llm._ctx.kv_cache_clear()  # evaluate the whole prompt instead
            del self._states[key]
            return False
        llm.input_ids[:len(key)] = key
        llm.n_tokens = len(key)
        return True

    def clear(self) -> None:
        self._states.clear()


def _llama() -> Any:
    import llama_cpp

    return llama_cpp
