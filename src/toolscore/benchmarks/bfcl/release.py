"""What BFCL keeps in its code rather than in its data folder, read from the released package.

BFCL's multi-turn backends start from default states and, in the long-context category, grow
with filler records; the user message of a ``miss_func`` turn and the step limit are module
constants. All of them live in the ``bfcl-eval`` 2026.3.23 wheel's Python files, not in its
data folder. toolscore reads them from those files at run time (pinned by sha256, like the
data) and never executes them: a module's top-level assignments whose values are literals
(strings, numbers, lists, dicts, sets, tuples, empty ``set()``/``dict()``/``list()``/
``tuple()``, ``None``/booleans, string concatenation, and names bound earlier in the same
module) are evaluated by :func:`module_constants`; every other assignment is skipped.

The files are found as a dataset named ``bfcl_release`` (``$TOOLSCORE_DATA/bfcl_release`` or
the user cache), downloaded from PyPI on first need (``toolscore data bfcl_release``)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Any

from toolscore.benchmarks.bfcl.dataset import WHEEL
from toolscore.data import DataError, DatasetSource, find_dataset, read_text

#: file (last two path parts inside the wheel) -> sha256 of the released file
RELEASE_PINS: dict[str, str] = {
    "func_source_code/gorilla_file_system.py":
        "84173750930b09aaa31b90547c9bd79ce75714682608b35e78a9c1ea259faf2b",
    "func_source_code/long_context.py":
        "5c9a5710115609c779e5b2ccb43f6ad58271ed96f2ea7a797edb0d65c385aa38",
    "func_source_code/math_api.py":
        "abde32cc25e71b2ff3acf4d028a3c005b98409c174aba4abddbfe1c018afb9a8",
    "func_source_code/message_api.py":
        "cf72af1635654147af17df1891a7fb354549e78a61930139f741a31f4be21121",
    "func_source_code/posting_api.py":
        "32b887aaa37c7167ad9c84ddfa7bbb855c75d3c1edab19ba868aba29acc4cfa1",
    "func_source_code/ticket_api.py":
        "6a9375aa6425410c07a151aef27f3e44e9ed1023bb5cc5c25f14f4a9b3c99116",
    "func_source_code/trading_bot.py":
        "cc2e3949035b561e9d07418b081561aa07b211672200e2e511aec074bf79fcb2",
    "func_source_code/travel_booking.py":
        "e698e22adccf0d6d41b297f2d5e44faebd828cef4752df6a4ffb1570c0c35296",
    "func_source_code/vehicle_control.py":
        "f5f7a2f28968728927a98ae12ec68a32d70781cfb74c2d7b14801772362b12d1",
    "func_source_code/memory_kv.py":
        "7be11ccae7741e07fcd7a2fc6664cad556357a047453db68db9e11bfec6c0ca7",
    "func_source_code/memory_rec_sum.py":
        "e5a08f4183ab2c14a330eb3db1aca5e13533e0ffe70ce1c424851944295b898c",
    "func_source_code/memory_vector.py":
        "489df326a8fc6e19270d6a349c8c3434f4bdcb360050d7ac17596eeb4da03a54",
    "func_source_code/memory_api_metaclass.py":
        "5b924c2482797fa2055c4c606788db517470d0a65d1a64c97f21bceb5f820611",
    "func_source_code/web_search.py":
        "d39007b676640c560a65bcc0c4a9cff677a6a8da200a951d6d30bf7cac00037d",
    "constants/default_prompts.py":
        "4cc033be99ae2b10bbde30e7751ddcac5468cb45841b6dc7b3a97b92adf38205",
}

RELEASE = DatasetSource(name="bfcl_release", url=WHEEL, marker="func_source_code/long_context.py",
                        pins=RELEASE_PINS,
                        note="BFCL's backends read their default states from the bfcl-eval "
                             "wheel's code: `toolscore data bfcl_release` downloads it.")


@functools.lru_cache(maxsize=4)
def release_dir(data_dir: str | None = None) -> Path:
    """The folder holding the released code files (found, or downloaded once)."""
    return find_dataset(RELEASE, data_dir)


#: ``set()``, ``dict()``, ``list()``, ``tuple()`` without arguments: empty containers
_EMPTY: dict[str, type] = {"set": set, "dict": dict, "list": list, "tuple": tuple}


def _value(node: ast.expr, bound: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in bound:
            return bound[node.id]
        raise ValueError(node.id)
    if isinstance(node, ast.List):
        return [_value(x, bound) for x in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_value(x, bound) for x in node.elts)
    if isinstance(node, ast.Set):
        return {_value(x, bound) for x in node.elts}
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise ValueError("**")
        return {_value(k, bound): _value(v, bound)  # type: ignore[arg-type]
                for k, v in zip(node.keys, node.values, strict=True)}
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args
            and not node.keywords and node.func.id in _EMPTY):
        return _EMPTY[node.func.id]()
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _value(node.operand, bound)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _value(node.left, bound), _value(node.right, bound)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
    raise ValueError(type(node).__name__)


def parse_constants(source: str, name: str = "<release>") -> dict[str, Any]:
    """Top-level ``NAME = <literal>`` assignments of a module's source, evaluated as data."""
    try:
        tree = ast.parse(source, filename=name)
    except SyntaxError as e:
        raise DataError(f"{name}: not Python source ({e.msg}, line {e.lineno})") from None
    bound: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            try:
                value = _value(node.value, bound)
            except (ValueError, TypeError):
                continue
            for target in node.targets:
                bound[target.id] = value  # type: ignore[attr-defined]
    return bound


@functools.lru_cache(maxsize=32)
def _constants(path: Path) -> dict[str, Any]:
    return parse_constants(read_text(path), str(path))


def module_constants(module: str, data_dir: str | None = None) -> dict[str, Any]:
    """The constants of one released module, e.g. ``module_constants("message_api.py")`` or
    ``module_constants("constants/default_prompts.py")`` (a bare file name is looked up in
    ``func_source_code/``). The returned dict is shared: copy before changing a value."""
    rel = module if "/" in module else f"func_source_code/{module}"
    if rel not in RELEASE_PINS:
        raise KeyError(f"bfcl release: no pinned file {rel}")
    return _constants(release_dir(data_dir) / rel)


def constant(module: str, name: str, data_dir: str | None = None) -> Any:
    """One constant of a released module; a one-line DataError when it is not there."""
    values = module_constants(module, data_dir)
    if name not in values:
        raise DataError(f"bfcl release {module}: no literal constant {name}")
    return values[name]


@functools.lru_cache(maxsize=64)
def _function_literals(path: Path, function: str) -> dict[str | None, Any]:
    tree = ast.parse(read_text(path), filename=str(path))
    found: dict[str | None, Any] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef) or node.name != function:
            continue
        for stmt in node.body:
            value, names = None, []
            if isinstance(stmt, ast.Assign):
                value, names = stmt.value, [t.id for t in stmt.targets if isinstance(t, ast.Name)]
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                value, names = stmt.value, [stmt.target.id]
            elif isinstance(stmt, ast.Return):
                value, names = stmt.value, [None]  # type: ignore[list-item]
            if value is None:
                continue
            try:
                literal = _value(value, {})
            except (ValueError, TypeError):
                continue
            for n in names:
                found.setdefault(n, literal)
        break
    return found


def local_constant(module: str, function: str, name: str | None = None,
                   data_dir: str | None = None) -> Any:
    """A literal table kept inside one of a released module's functions: the first
    ``name = <literal>`` (annotated or not) at the top of the body of the (first) function or
    method named ``function``; with ``name`` None, the literal the function returns. Shared:
    copy before changing it. A one-line DataError when there is no such literal."""
    rel = module if "/" in module else f"func_source_code/{module}"
    if rel not in RELEASE_PINS:
        raise KeyError(f"bfcl release: no pinned file {rel}")
    values = _function_literals(release_dir(data_dir) / rel, function)
    if name not in values:
        what = f"literal {name}" if name else "returned literal"
        raise DataError(f"bfcl release {module}: no {what} in {function}()")
    return values[name]
