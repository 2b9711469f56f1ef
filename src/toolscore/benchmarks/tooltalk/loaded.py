"""ToolTalk data parsed once per process, shared by every benchmark that reads the same files.

A sweep, a notebook or ``perf/throughput.py`` evaluating several models in one process builds a
benchmark per run, and each used to parse the conversations, load the databases and replay the
ground truth of every conversation again: about a sixth of the harness's CPU in a one-epoch run
of ToolTalk hard. What was parsed is kept per folder and reused while the folder's files are
unchanged. The key is every ``*.json`` file's name, size, modification time and inode, read
again on each use (one ``stat`` per file), so an edited, added, removed or replaced file is
parsed again, and a file that fails to load is never kept.

Nothing kept is written to: worlds are built from a snapshot of the databases
(``data.dataset_snapshot``), the conversations are read only, and a ground truth's states are
restored from checkpoints. Only the last few datasets are kept.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from toolscore.benchmarks.tooltalk import final_state
from toolscore.benchmarks.tooltalk.data import (
    SPLIT_DIRS,
    Conversation,
    Split,
    load_conversations,
    load_databases,
)

KEEP = 4  # datasets (folder and split) kept per process
_LOCK = threading.Lock()
# by kind (conversations, databases), then folder: (the files' signatures, what was parsed)
_PARSED: dict[str, OrderedDict[tuple[str, ...], tuple[tuple[Any, ...], Any]]] = {}
# ground truths, by the identities of what they were replayed from; each entry holds those
# objects, so that their identities cannot be reused while it lives
_TRUTH: OrderedDict[tuple[int | bool, ...], tuple[final_state.TruthHashes, tuple[Any, ...]]] = (
    OrderedDict())


def signature(folder: Path) -> tuple[Any, ...] | None:
    """What identifies the folder's JSON files' contents; None if it is not a folder."""
    try:
        with os.scandir(folder) as entries:
            files = [(e.name, e.stat()) for e in entries if e.name.endswith(".json")]
    except (FileNotFoundError, NotADirectoryError):
        return None
    return tuple(sorted((name, s.st_size, s.st_mtime_ns, s.st_ino) for name, s in files))


def _where(root: Path) -> tuple[str, str]:
    """The folder as given (what the loaded paths and messages show) and where it is now."""
    return str(root), os.path.abspath(root)


def _kept(kind: str, key: tuple[str, ...], folders: list[Path], load: Any) -> Any:
    sig = tuple(signature(f) for f in folders)
    with _LOCK:
        kept = _PARSED.setdefault(kind, OrderedDict())
        entry = kept.get(key)
        if entry is not None and entry[0] == sig and None not in sig:
            kept.move_to_end(key)
            return entry[1]
    value = load()  # raises DataError on a bad file: nothing is kept then
    with _LOCK:
        kept[key] = (sig, value)
        kept.move_to_end(key)
        while len(kept) > KEEP:
            kept.popitem(last=False)
    return value


def conversations(root: Path, split: Split) -> list[Conversation]:
    """:func:`data.load_conversations`, parsed once while the files are unchanged."""
    root = Path(root)
    names = ["easy", "hard"] if split == "all" else [split]
    folders = [root / SPLIT_DIRS[n] for n in names if n in SPLIT_DIRS]
    return _kept("conversations", (*_where(root), split), folders,
                 lambda: load_conversations(root, split))


def databases(root: Path) -> dict[str, Any]:
    """:func:`data.load_databases`, loaded once while the files are unchanged."""
    root = Path(root)
    return _kept("databases", _where(root), [root / "databases"],
                 lambda: load_databases(root))


def truth(convs: list[Conversation], dbs: dict[str, Any], plugins: list[Any],
          strict: bool = False) -> final_state.TruthHashes:
    """The ground truth's states shared by every benchmark of these very conversations,
    databases and plugins (the objects, as returned by this module) that runs the same
    simulator (the strict one consumes a reset code, so its states differ)."""
    held = (convs, dbs, *plugins)
    key = (*(id(x) for x in held), strict)
    with _LOCK:
        entry = _TRUTH.get(key)
        if entry is None:
            entry = _TRUTH[key] = (final_state.TruthHashes(), held)
            while len(_TRUTH) > KEEP:
                _TRUTH.popitem(last=False)
        return entry[0]
