"""Processes as the kernel sees them (Linux /proc): which processes a run started, so that a
test can kill one of them, or check that none is left behind."""

from __future__ import annotations

from pathlib import Path


def parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    return [int(e.name) for e in Path("/proc").iterdir()
            if e.name.isdigit() and parent_of(int(e.name)) == pid]


def descendants(pid: int) -> list[int]:
    found, frontier = [], [pid]
    while frontier:
        for child in children(frontier.pop()):
            found.append(child)
            frontier.append(child)
    return found


def running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
