"""llama.cpp's OpenAI-compatible server, loaded as toolscore loads its embedded model.

``python -m toolscore.models.local.llama_server ARGS`` runs ``python -m llama_cpp.server ARGS``
(extra ``local-server``; the same arguments) with llama.cpp's extra buffer types off, as
:mod:`toolscore.models.local.engine` loads the embedded model: built natively on a CPU with
AMX, llama.cpp otherwise repacks SmolLM2's q4_1 tensors for AMX and the server dies of a
segmentation fault on its first batched decode (the client then sees only refused
connections). Everything else is llama-cpp-python's own server.
"""

from __future__ import annotations

import runpy
import sys

from toolscore.models.local.engine import EXTRA_BUFFERS, default_params_with


def main() -> None:
    try:
        default_params_with(EXTRA_BUFFERS)
    except ImportError as e:
        sys.exit(f"llama.cpp's server needs llama-cpp-python[server] ({e.name or e} is "
                 "missing): pip install 'toolscore[local-server]'")
    sys.argv[0] = "llama_cpp.server"
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
