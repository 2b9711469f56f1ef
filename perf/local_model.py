"""Tokens per second of the embedded model (SmolLM2-135M, llama.cpp) under each way of
loading it, side by side in one invocation, and whether the replies are the same.

Why: llama.cpp built natively on a CPU with AMX repacks SmolLM2's q4_1 weights for AMX (an
"extra buffer type") and then crashes in batched decode. toolscore loads the weights with the
extra buffer types off; this measures what that costs where the extra buffers do run (a CPU
with AMX, or llama.cpp's other repacking), and compares builds (``--python`` of another
virtual environment, e.g. one with llama-cpp-python built ``CMAKE_ARGS=-DGGML_NATIVE=OFF``).

Each configuration runs in a child process, as toolscore runs the model, so a configuration
that crashes on this CPU is reported as such (its exit status) and the others still run. Per
configuration: load time; prompt reading (a ~700-token prompt, evaluated in the engine's
32-token chunks: the batched path) and greedy generation of 96 tokens, best of ``--repeat``.
Usage::

    .venv/bin/python perf/local_model.py [--repeat 3] [--python OTHER/bin/python ...]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

PROMPT_WORDS = 420  # about 700 tokens with the chat template
GENERATE = 96


def child(extra_buffers: bool, repeat: int) -> dict[str, object]:
    """Runs in the child: load, read, generate; the figures as a dict."""
    from toolscore.models.local.engine import LlamaEngine, load_llama
    from toolscore.models.local.model import find_gguf, prompt_text
    from toolscore.types import Message

    path = find_gguf()
    started = time.perf_counter()
    llm = load_llama(path, extra_buffers=extra_buffers)
    load_s = time.perf_counter() - started
    engine = LlamaEngine(path, llm=llm)
    words = " ".join(f"item{i % 37} costs {i % 11} euros," for i in range(PROMPT_WORDS // 4))
    text = prompt_text(path, [Message(role="user", content="Sum up this list: " + words)], [])
    tokens = engine.tokenize(text, "")
    read, gen, outputs = [], [], []
    for _ in range(repeat):
        engine.states.clear()
        llm.reset()
        llm._ctx.kv_cache_clear()
        t0 = time.perf_counter()
        engine.states.evaluate(llm, tokens)
        t1 = time.perf_counter()
        out = []
        for token in llm.generate(tokens, temp=0.0):
            out.append(token)
            if len(out) >= GENERATE:
                break
        t2 = time.perf_counter()
        read.append(len(tokens) / (t1 - t0))
        gen.append(len(out) / (t2 - t1))
        outputs.append(out)
    import llama_cpp

    return {"extra_buffers": extra_buffers, "load_s": round(load_s, 3),
            "prompt_tokens": len(tokens), "read_tok_s": round(max(read), 1),
            "generate_tok_s": round(max(gen), 1), "same_every_time": all(
                o == outputs[0] for o in outputs), "output": outputs[0],
            "llama_cpp": llama_cpp.__version__,
            "system_info": llama_cpp.llama_print_system_info().decode(errors="replace")}


def measure(python: str, extra_buffers: bool, repeat: int) -> dict[str, object]:
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [src, *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([python, __file__, "--child", str(int(extra_buffers)),
                           "--repeat", str(repeat)], capture_output=True, text=True, env=env,
                          timeout=1800)
    if done.returncode != 0:
        return {"python": python, "extra_buffers": extra_buffers,
                "crashed": f"exit status {done.returncode}", "stderr": done.stderr[-500:]}
    figures: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return {"python": python, **figures}


def cpu_flags() -> str:
    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("flags")).split()
    except (OSError, StopIteration):
        return "?"
    wanted = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8")
    return " ".join(f for f in wanted if f in flags)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", type=int, choices=(0, 1), default=None,
                        help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--python", action="append", default=None,
                        help="Interpreter of a virtual environment to measure (repeatable; "
                             "default: this one).")
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(bool(args.child), args.repeat)))
        return
    pythons = args.python or [sys.executable]
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} {platform.node()} {platform.processor() or ''}"
          f" load {os.getloadavg()[0]:.2f}; CPU flags: {cpu_flags()}")
    rows = [measure(p, extra, args.repeat) for p in pythons for extra in (True, False)]
    reference = next((r.get("output") for r in rows if "output" in r), None)
    print(f"{'python':<40} {'extra buffers':>13} {'load s':>7} {'read tok/s':>10} "
          f"{'gen tok/s':>9}  same reply")
    for r in rows:
        if "crashed" in r:
            print(f"{r['python']:<40} {str(r['extra_buffers']):>13}  crashed: {r['crashed']}")
            continue
        same = r["output"] == reference and r["same_every_time"]
        print(f"{r['python']:<40} {str(r['extra_buffers']):>13} {r['load_s']:>7} "
              f"{r['read_tok_s']:>10} {r['generate_tok_s']:>9}  {same}")
    for python in pythons:
        info = next((r["system_info"] for r in rows if r.get("python") == python
                     and "system_info" in r), "?")
        print(f"# {python}: {info}")


if __name__ == "__main__":
    main()
