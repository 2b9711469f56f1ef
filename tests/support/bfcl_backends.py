"""Call sequences for BFCL's multi-turn backends and a comparable snapshot of a backend's state.

Stdlib only: imported both by ``tests/reference/bfcl/record_backends.py`` (which runs BFCL's
own backends in the reference environment) and by toolscore's tests (which run toolscore's),
so the two sides build the same sequences and snapshot states the same way.

A snapshot keeps what BFCL's state checker compares: an object's attributes whose names do
not start with ``_`` (a file-system node's ``parent`` link is left out: it points back up the
tree, and BFCL's node equality ignores it too); dicts as sorted (key, value) pairs so that int
and str keys stay distinct; sets sorted; tuples apart from lists; floats as ``repr``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
              "multi_turn_long_context")


def snapshot(value):
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, dict):
        pairs = [[snapshot(k), snapshot(v)] for k, v in value.items()]
        pairs.sort(key=lambda kv: json.dumps(kv[0], sort_keys=True))
        return {"dict": pairs}
    if isinstance(value, list):
        return [snapshot(v) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [snapshot(v) for v in value]}
    if isinstance(value, (set, frozenset)):
        items = [snapshot(v) for v in value]
        items.sort(key=lambda v: json.dumps(v, sort_keys=True))
        return {"set": items}
    if hasattr(value, "__dict__"):
        return {"object": type(value).__name__,
                "attrs": {k: snapshot(v) for k, v in sorted(vars(value).items())
                          if not k.startswith("_") and k != "parent"}}
    return {"repr": repr(value)}


def state_snapshot(instance) -> dict:
    """The public state of one backend instance, as BFCL's state checker sees it."""
    return {k: snapshot(v) for k, v in sorted(vars(instance).items()) if not k.startswith("_")}


def digest(value) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def read_lines(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load(root: Path, category: str) -> list[tuple[dict, dict]]:
    """(question entry, answer record) pairs of one multi-turn category."""
    entries = read_lines(root / f"BFCL_v4_{category}.json")
    answer_file = root / "possible_answer" / f"BFCL_v4_{category}.json"
    answers = {a["id"]: a for a in read_lines(answer_file)}
    return [(e, answers[e["id"]]) for e in entries]


def _drop_first_keyword(call: str) -> str | None:
    """The call without its first keyword argument (None when it has none)."""
    import ast

    try:
        node = ast.parse(call, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call) or not node.keywords:
        return None
    node.keywords = node.keywords[1:]
    return ast.unparse(node)


def _change_first_value(call: str) -> str | None:
    """The call with its first argument's value changed (a string gets a suffix, a number
    moves by one and a half, a bool flips, a list loses its last item)."""
    import ast

    try:
        node = ast.parse(call, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call):
        return None
    args = list(node.args) + [k.value for k in node.keywords]
    if not args:
        return None
    target = args[0]
    try:
        value = ast.literal_eval(target)
    except ValueError:
        return None
    if isinstance(value, bool):
        new = not value
    elif isinstance(value, (int, float)):
        new = value + 1.5
    elif isinstance(value, str):
        new = value + "_x"
    elif isinstance(value, list) and value:
        new = value[:-1]
    else:
        return None
    replacement = ast.parse(repr(new), mode="eval").body
    if node.args:
        node.args[0] = replacement
    else:
        node.keywords[0].value = replacement
    return ast.unparse(node)


def sequences(entries: list[tuple[dict, dict]]) -> list[tuple[str, dict, list[list[str]]]]:
    """(variant, entry, calls per turn) for every entry: its ground truth; the ground truth of
    the next entry sharing its classes, run from this entry's state (it reaches the backends'
    error branches: missing files, unknown ids, wrong logins); and the ground truth with, in
    each turn, the first call's first keyword dropped and the last call's first value changed."""
    out: list[tuple[str, dict, list[list[str]]]] = []
    by_classes: dict[tuple, list[int]] = {}
    for i, (entry, _) in enumerate(entries):
        by_classes.setdefault(tuple(sorted(entry["involved_classes"])), []).append(i)
    for i, (entry, answer) in enumerate(entries):
        truth = answer["ground_truth"]
        out.append(("ground_truth", entry, truth))
        peers = by_classes[tuple(sorted(entry["involved_classes"]))]
        other = entries[peers[(peers.index(i) + 1) % len(peers)]][1]["ground_truth"]
        if other is not truth:
            out.append(("cross", entry, other))
        perturbed = []
        for turn in truth:
            turn = list(turn)
            if turn:
                dropped = _drop_first_keyword(turn[0])
                if dropped is not None:
                    turn[0] = dropped
                changed = _change_first_value(turn[-1])
                if changed is not None:
                    turn[-1] = changed
            perturbed.append(turn)
        out.append(("perturbed", entry, perturbed))
    return out
