"""Reading a sweep file (a YAML or JSON plan, or a manifest) into plain values, within bounds.

YAML's anchors and aliases let ten lines stand for a billion values ("billion laughs"): a
loader builds them as shared references in no time, and whatever walks the result afterwards
(model arguments are validated, hashed, written) walks all of them. So the YAML parser's
events are counted first, an alias counting the whole node it stands for, and a document
above :data:`~.bounds.MAX_NODES` nodes or :data:`~.bounds.MAX_DEPTH` levels is refused
before anything is built, naming the field where the bound was crossed. Only then is it
loaded, with the safe loader (no Python tags).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolscore.sweeps.bounds import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_NODES,
    PlanError,
    field_error,
    plain_values,
)


def read_document(path: Path) -> Any:
    """The document in ``path`` (an existing file), checked by :func:`~.bounds.plain_values`."""
    where = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise PlanError(f"{where}: {size:,} bytes; a sweep file may have at most "
                            f"{MAX_FILE_BYTES:,}")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise PlanError(f"{where}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise PlanError(f"{where}: cannot read it ({e.strerror or e})") from None
    doc = _yaml(text, where) if path.suffix.lower() in (".yaml", ".yml") else _json(text, where)
    plain_values(doc, where)
    return doc


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise PlanError(f"{where}: invalid JSON ({e})") from None
    except (ValueError, RecursionError) as e:  # an integer of 5,000 digits; [[[[...]]]]
        raise PlanError(f"{where}: invalid JSON ({_why(e)})") from None


def _yaml(text: str, where: str) -> Any:
    try:
        import yaml
    except ImportError:
        raise PlanError(f"{where}: reading YAML needs pyyaml (pip install pyyaml), or write "
                        "the plan as JSON") from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser where built
    try:
        _count_nodes(yaml, yaml.parse(text, Loader=loader), where)
        return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader (C or Python)
    except PlanError:
        raise
    except yaml.YAMLError as e:
        raise PlanError(f"{where}: invalid YAML ({' '.join(str(e).split())})") from None
    except (ValueError, OverflowError, RecursionError) as e:
        raise PlanError(f"{where}: invalid YAML ({_why(e)})") from None


def _why(error: BaseException) -> str:
    return f"{type(error).__name__}: {' '.join(str(error).split())[:200]}"


class _Open:
    """A collection being parsed: where it starts in the count, its anchor, the field of the
    item being read (a key of a mapping, a position of a sequence)."""

    def __init__(self, start: int, anchor: str | None, is_mapping: bool) -> None:
        self.start, self.anchor, self.is_mapping = start, anchor, is_mapping
        self.items = 0
        self.key = ""

    def label(self) -> str:
        if not self.is_mapping:
            return f"[{self.items}]"
        return f".{self.key}" if self.items % 2 else ""


def _count_nodes(yaml: Any, events: Any, where: str) -> None:
    """Refuse a document that expands to more than MAX_NODES nodes or nests deeper than
    MAX_DEPTH, or whose alias refers to a node it is inside of (a recursive structure)."""
    stack: list[_Open] = []
    sizes: dict[str, int] = {}  # anchor -> nodes of the node it names, expanded
    total = 0

    def field() -> str:
        return "".join(f.label() for f in stack).lstrip(".") or "(top)"

    def item_done() -> None:
        if stack:
            stack[-1].items += 1

    for event in events:
        if stack and stack[-1].is_mapping and stack[-1].items % 2 == 0 and not isinstance(
                event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):  # a key
            stack[-1].key = str(getattr(event, "value", "?"))[:40]
        if isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
            if isinstance(event, yaml.AliasEvent):
                if any(f.anchor == event.anchor for f in stack):
                    raise field_error(where, field(), f"the alias *{event.anchor} is inside "
                                      "the node it names (a structure without end)")
                total += sizes.get(event.anchor, 1)
            else:
                total += 1
                if event.anchor is not None:
                    sizes[event.anchor] = 1
            if total > MAX_NODES:
                raise field_error(where, field(), f"the document expands to more than "
                                  f"{MAX_NODES:,} values (aliases counted at every use); a "
                                  f"sweep file may hold at most {MAX_NODES:,}")
            item_done()
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            total += 1
            stack.append(_Open(total - 1, event.anchor,
                               isinstance(event, yaml.MappingStartEvent)))
            if len(stack) > MAX_DEPTH:
                raise field_error(where, field(), f"nested more than {MAX_DEPTH} levels deep; "
                                  f"a sweep file may nest at most {MAX_DEPTH}")
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            done = stack.pop()
            if done.anchor is not None:
                sizes[done.anchor] = total - done.start
            item_done()
