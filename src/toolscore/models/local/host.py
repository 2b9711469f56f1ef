"""The process that runs the embedded model's native code, and this process's handle on it.

Why a separate process: llama.cpp is native code, and native code can die in ways Python cannot
catch (a segfault in a CPU kernel, an abort, the OOM killer). Built natively on a CPU with AMX,
llama.cpp 0.3.36 faults in batched decode of SmolLM2's q4_1 tensors; run in toolscore's own
process, that took the whole run down with it, printing nothing. In a child process the same
fault is an end of file on a pipe and an exit status: the run stops, keeps every finished
sample, and says in one line what died and how to resume (:class:`ModelCrashed`).

The child is started with ``python -m toolscore.models.local.host`` (not ``multiprocessing``:
a user's script needs no ``if __name__ == "__main__"`` guard, and a parent running threads
forks safely through exec). It loads one engine (default: llama.cpp,
:mod:`toolscore.models.local.engine`; ``$TOOLSCORE_LOCAL_ENGINE=module:factory`` names
another, which is how the tests put a crashing stand-in at exactly this edge), then answers
one request at a time: length-prefixed JSON frames on its stdin and on a private copy of its
stdout (whatever native code prints goes to stderr instead, so it cannot corrupt a frame). It
ignores Ctrl-C, which is the parent's to handle, and exits when its stdin closes, so it never
outlives the process that started it by more than one reply.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from toolscore.exits import exit_status
from toolscore.models.base import ContextLengthExceeded, InfraError, ModelCrashed

ENGINE_ENV = "TOOLSCORE_LOCAL_ENGINE"
DEFAULT_ENGINE = "toolscore.models.local.engine:LlamaEngine"
_HEADER = struct.Struct(">I")


TIMEOUT_ENV = "TOOLSCORE_LOCAL_TIMEOUT"
# A reply reads at most 8,192 tokens (~80 s on one thread) and writes at most a few hundred:
# a process silent for ten minutes is hung (a deadlock in native code), not slow.
ANSWER_TIMEOUT = 600.0


def answer_timeout() -> float:
    value = os.environ.get(TIMEOUT_ENV, "").strip()
    try:
        return float(value) if value else ANSWER_TIMEOUT
    except ValueError:
        raise ValueError(f"${TIMEOUT_ENV}={value!r}: expected seconds") from None


def write_frame(stream: IO[bytes], message: dict[str, Any]) -> None:
    body = json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")
    stream.write(_HEADER.pack(len(body)) + body)
    stream.flush()


def read_frame(stream: IO[bytes]) -> dict[str, Any] | None:
    """The next message, or None at the end of the stream (the other side is gone)."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    body = stream.read(size)
    if len(body) < size:
        return None
    loaded: dict[str, Any] = json.loads(body.decode("utf-8", "surrogatepass"))
    return loaded


def engine_spec() -> str:
    return os.environ.get(ENGINE_ENV, "").strip() or DEFAULT_ENGINE


class HostProcess:
    """One child process serving one model file; requests are serialised (the engine is one
    llama.cpp context on one thread: it answers one at a time anyway)."""

    def __init__(self, model_path: Path, name: str) -> None:
        self.model_path = model_path
        self.name = name  # "local/smollm2", for messages
        self.owner = os.getpid()  # a forked process must start its own host
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._crashed: ModelCrashed | None = None
        self.info: dict[str, Any] = {}

    @property
    def crashed(self) -> ModelCrashed | None:
        return self._crashed

    def _start(self) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "toolscore.models.local.host", str(self.model_path)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True)
        assert proc.stdout is not None
        hello = read_frame(proc.stdout)
        if hello is None:
            raise self._died(proc, "while loading the model")
        if "error" in hello:  # the engine could not load: an install problem, not a crash
            proc.wait()
            raise InfraError(f"{self.name}: {hello['error']}", retryable=False)
        self.info = hello
        return proc

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """The engine's answer to ``message``; ModelCrashed if the process died on it (and on
        every later request: a crashed native library is not retried under a run)."""
        with self._lock:
            if self._crashed is not None:
                raise self._crashed
            if self._proc is None:
                self._proc = self._start()
            proc = self._proc
            assert proc.stdin is not None and proc.stdout is not None
            try:
                write_frame(proc.stdin, message)
                if not select.select([proc.stdout], [], [], answer_timeout())[0]:
                    proc.kill()  # hung in native code: as good as crashed, and said so
                    raise self._died(proc, f"after giving no answer for {answer_timeout():g} s "
                                           f"(${TIMEOUT_ENV}); it was killed")
                answer = read_frame(proc.stdout)
            except (BrokenPipeError, OSError):
                answer = None
            if answer is None:
                raise self._died(proc, "while generating a reply")
        return answer

    def _died(self, proc: subprocess.Popen[bytes], when: str) -> ModelCrashed:
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        self._crashed = ModelCrashed(
            f"{self.name}: the model process (pid {proc.pid}) died {exit_status(code)} {when}",
            signal=-code if code is not None and code < 0 else None, exit_code=code)
        return self._crashed

    def close(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None or self.owner != os.getpid():
            return
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def answer_or_raise(answer: dict[str, Any], name: str) -> dict[str, Any]:
    """A host's reply to a generate request, with its errors as the exceptions callers
    expect: a prompt too long for the context, a request the engine refuses, a bug."""
    error = answer.get("error")
    if error is None:
        return answer
    if error == "context":
        raise ContextLengthExceeded(f"{name}: {answer['message']}")
    if error == "request":
        raise InfraError(f"{name} rejected the request: {answer['message']}", retryable=False)
    raise RuntimeError(f"{name}: the model process failed: {answer.get('message')}\n"
                       f"{answer.get('traceback', '')}")


# -- the child --------------------------------------------------------------------------------

def _load_engine(spec: str, model_path: str) -> Any:
    import importlib

    module, _, attr = spec.partition(":")
    factory = getattr(importlib.import_module(module), attr or "make")
    return factory(Path(model_path))


def serve(model_path: str, requests: IO[bytes], replies: IO[bytes]) -> int:
    """Load the engine, say hello, answer requests until ``requests`` ends."""
    from toolscore.models.local.engine import RequestRefused

    try:
        engine = _load_engine(engine_spec(), model_path)
    except Exception as e:  # noqa: BLE001 - said to the parent in one line
        write_frame(replies, {"error": f"could not load {model_path} with {engine_spec()}: "
                                       f"{type(e).__name__}: {e}"})
        return 1
    write_frame(replies, {"pid": os.getpid(), "engine": engine_spec(),
                          **getattr(engine, "describe", dict)()})
    while (message := read_frame(requests)) is not None:
        try:
            answer = engine.generate(message)
        except ContextLengthExceeded as e:
            answer = {"error": "context", "message": str(e)}
        except RequestRefused as e:
            answer = {"error": "request", "message": str(e)}
        except Exception as e:  # noqa: BLE001 - a bug: reported to the parent with its trace
            import traceback

            answer = {"error": "bug", "message": f"{type(e).__name__}: {e}",
                      "traceback": traceback.format_exc(limit=8)}
        try:
            write_frame(replies, answer)
        except OSError:  # the parent is gone (stopped, killed): nobody to answer
            break
    close = getattr(engine, "close", None)
    if close is not None:  # freed while llama_cpp's globals still exist
        close()
    return 0


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # native code printing to stdout must not corrupt a frame
    sys.stdout = sys.stderr
    try:
        return serve(argv[0], sys.stdin.buffer, replies)
    except OSError:  # the parent went away mid-frame (stopped, killed): nobody to tell
        return 0
    finally:
        with contextlib.suppress(OSError):
            replies.close()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
