"""How a child process ended, in words a person reads ("died of SIGSEGV (segmentation
fault)"), for the one-line messages of a crashed model process, a dead worker or a pool.

Bottom layer: the model layer (its native-code host process), the runner (workers) and the
sweeps all name exits the same way.
"""

from __future__ import annotations

import signal


def signal_name(number: int | None) -> str:
    """``SIGSEGV (segmentation fault)`` for 11; ``signal 77`` for a number with no name."""
    if number is None:
        return "an unknown signal"
    try:
        sig = signal.Signals(number)
    except ValueError:
        return f"signal {number}"
    described = signal.strsignal(sig)
    return f"{sig.name} ({described.lower()})" if described else sig.name


def exit_status(code: int | None) -> str:
    """``of SIGKILL (killed)`` / ``with exit code 1``, from ``Popen.returncode`` or
    ``Process.exitcode`` (negative: the signal that ended it)."""
    if code is None:
        return "without an exit status"
    if code < 0:
        return f"of {signal_name(-code)}"
    return f"with exit code {code}"
