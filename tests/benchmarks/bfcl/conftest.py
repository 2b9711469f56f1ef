"""The bfcl benchmark's tests: the benchmark registered under its name (entry points are read
from the installed metadata, which may predate it), and, only while toolscore's checker
(``toolscore.benchmarks.bfcl.checker``) is absent from the tree, a minimal stand-in for it so
the pipeline around it can be tested: it knows relevance and irrelevance as BFCL decides
them, and for the AST categories accepts exactly the calls whose every argument is one of the
possible values. The scoring fidelity itself is the checker's own tests' business."""

from __future__ import annotations

import importlib.util
import re
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from toolscore.entrypoints import BENCHMARKS


@dataclass(frozen=True)
class _Verdict:
    valid: bool
    error_type: str | None
    errors: tuple[str, ...] = ()


def _empty(decoded: Any) -> bool:
    if not isinstance(decoded, list):
        return True
    if any(not isinstance(c, dict) or len(c) != 1 for c in decoded):
        return True
    return len(decoded) == 0 or (len(decoded) == 1 and len(decoded[0]) == 0)


def _matches(value: Any, options: list[Any]) -> bool:
    for option in options:
        if isinstance(option, dict) and isinstance(value, dict):
            if all(k in option and _matches(v, option[k]) for k, v in value.items()) and all(
                    k in value or "" in o for k, o in option.items()):
                return True
        elif value == option:
            return True
    return False


def _call_ok(call: dict[str, Any], truth: dict[str, Any]) -> bool:
    (name, args), = call.items()
    (tname, possible), = truth.items()
    if name != re.sub(r"\.", "_", tname) or not isinstance(args, dict):
        return False
    return all(k in possible and _matches(v, possible[k]) for k, v in args.items()) and all(
        k in args or "" in o for k, o in possible.items())


def _stand_in_check_entry(category: str, entry: dict[str, Any], answer: dict[str, Any] | None,
                          decoded: Any, decode_error: str | None = None) -> _Verdict:
    if "relevance" in category:
        called = decoded is not None and not _empty(decoded)
        if "irrelevance" in category:
            return _Verdict(not called, None if not called else
                            "irrelevance_error:decoder_success")
        return _Verdict(called, None if called else "relevance_error:decoder_failed")
    if decoded is None:
        return _Verdict(False, "ast_decoder:decoder_failed", (str(decode_error),))
    truth = (answer or {}).get("ground_truth", [])
    left = list(truth)
    for call in decoded:
        try:
            hit = next((t for t in left if _call_ok(call, t)), None)
        except (TypeError, ValueError, AttributeError):  # beyond what the stand-in reads
            hit = None
        if hit is None:
            return _Verdict(False, "stand_in:no_match")
        left.remove(hit)
    return _Verdict(not left, None if not left else "stand_in:count")


if importlib.util.find_spec("toolscore.benchmarks.bfcl.checker") is None:
    _module = types.ModuleType("toolscore.benchmarks.bfcl.checker")
    _module.Verdict = _Verdict  # type: ignore[attr-defined]
    _module.check_entry = _stand_in_check_entry  # type: ignore[attr-defined]
    sys.modules["toolscore.benchmarks.bfcl.checker"] = _module
    STAND_IN = True
else:
    STAND_IN = False


@pytest.fixture(autouse=True, scope="module")
def bfcl_registered() -> Iterator[None]:
    """``bfcl`` as an installed benchmark, whatever the installed metadata says."""
    from toolscore.benchmarks.bfcl.benchmark import BFCLBenchmark

    fresh = "bfcl" not in BENCHMARKS.names()
    if fresh:
        BENCHMARKS.register("bfcl", BFCLBenchmark)
    try:
        yield
    finally:
        if fresh:
            BENCHMARKS.unregister("bfcl")
