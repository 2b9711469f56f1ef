"""``toolscore cache info | merge | prune``: the response cache, after a sweep on many nodes."""

from __future__ import annotations

from pathlib import Path

import click

from toolscore.cli.common import EXIT_INCOMPLETE, UserErrors, emit_json, err, stdout

CACHE = click.option("--cache", type=click.Path(path_type=Path), default=None,
                     help="Cache file (default: the one runs use, ~/.cache/toolscore).")
JSON = click.option("--json", "json_out", is_flag=True, help="Print one JSON document.")


def _path(cache: Path | None) -> Path:
    from toolscore.models.factory import cache_path

    path = cache_path(cache if cache is not None else "default")
    assert path is not None
    return path


@click.group("cache")
def cache_group() -> None:
    """The response cache: what it holds, merge caches from other nodes, prune it."""


@cache_group.command("info")
@CACHE
@JSON
def info_command(cache: Path | None, json_out: bool) -> None:
    """Entries, size and path of the cache."""
    from toolscore.models.cache_admin import info

    with UserErrors():
        doc = info(_path(cache))
    if json_out:
        emit_json(doc)
        return
    models = ", ".join(f"{m or '?'} {n}" for m, n in doc["models"].items()) or "-"
    stdout().print(f"{doc['path']}: {doc['entries']} entries, {doc['bytes'] / 1e6:.1f} MB "
                   f"({models})", highlight=False, soft_wrap=True, markup=False)


@cache_group.command("merge")
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path))
@CACHE
@JSON
def merge_command(sources: tuple[Path, ...], cache: Path | None, json_out: bool) -> None:
    """Copy into the cache every entry of SOURCES it lacks. A key present with another reply
    is a conflict: reported (exit 3), the target's reply kept."""
    from toolscore.models.cache_admin import merge

    target = _path(cache)
    with UserErrors():
        report = merge(target, list(sources))
    doc = {"target": str(target), **report.to_dict()}
    if json_out:
        emit_json(doc)
    else:
        stdout().print(f"{target}: {doc['copied']} copied, {doc['same']} already there, "
                       f"{doc['conflicts']} conflicts", highlight=False, soft_wrap=True,
                       markup=False)
    if report.conflicts:
        err.print(f"{len(report.conflicts)} keys hold another reply in the target (kept); "
                  f"first: {report.conflicts[0]}", highlight=False, soft_wrap=True, markup=False)
        raise SystemExit(EXIT_INCOMPLETE)


@cache_group.command("prune")
@CACHE
@click.option("--older-than", type=float, default=None, metavar="DAYS",
              help="Delete entries older than this many days.")
@click.option("--max-size", default=None, metavar="SIZE",
              help="Then delete the oldest entries until the replies fit (e.g. 500M).")
@JSON
def prune_command(cache: Path | None, older_than: float | None, max_size: str | None,
                  json_out: bool) -> None:
    """Delete old entries (by age, then by size) and compact the file."""
    from toolscore.models.cache_admin import parse_size, prune

    with UserErrors():
        doc = prune(_path(cache), older_than_days=older_than,
                    max_bytes=None if max_size is None else parse_size(max_size))
    if json_out:
        emit_json(doc)
        return
    stdout().print(f"{doc['path']}: {doc['removed']} removed, {doc['entries']} left",
                   highlight=False, soft_wrap=True, markup=False)


COMMANDS = [cache_group]
