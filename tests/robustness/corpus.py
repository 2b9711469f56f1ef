"""The broken-input corpus: every input file a command reads, broken in every way that applies,
under every command that reads it, each with the outcome decided for it.

A variant is data: which file of the workspace (see :mod:`robustness.workspace`) is broken, how,
which command then reads it, and what must happen: ``error`` (exit 2, one line naming the file
and, for a fault inside a record, the record and the field) or ``accepted`` (exit 0: a UTF-8 BOM
or CRLF line ends are still the same text; a torn last line of samples.jsonl is what a killed
run leaves and every reader but ``score`` skips it, see ``RUN_TORN``).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robustness import mutations as mu

ERROR, ACCEPTED = "error", "accepted"
GAP = "known gap"  # should be an error; still is not (an expected failure, listed as such)
# Commands: arguments with {w} (the workspace), {url} (the fake endpoint) and {f} (the file).
TT = "{w}/tt"
COMMANDS: dict[str, list[str]] = {
    "run tooltalk": ["run", "tooltalk", "-m", "oracle", "--data", TT, "--embedder", "hashing",
                     "--split", "easy", "--no-cache", "--out", "{w}/out-tt"],
    "score tooltalk --predictions": ["score", "tooltalk", "--predictions", "{w}/pred",
                                     "--data", TT, "--json"],
    "tooltalk replay": ["tooltalk", "replay", "{w}/pred", "--data", TT, "--json"],
    "run autode": ["run", "autode", "-m", "openai/fake", "--base-url", "{url}", "--mode",
                   "static", "--data", "{w}/ad", "--no-cache", "--out", "{w}/out-ad"],
    "run autode --scripts": ["run", "autode", "-m", "openai/fake", "--base-url", "{url}",
                             "--mode", "static", "--data", "{w}/ad", "--scripts", "{f}",
                             "--no-cache", "--out", "{w}/out-ad"],
    "run autode --apis": ["run", "autode", "-m", "openai/fake", "--base-url", "{url}",
                          "--scripts", "{w}/bt.jsonl",
                          "--mode", "static", "--data", "{w}/ad", "--apis", "{f}",
                          "--no-cache", "--out", "{w}/out-ad"],
    "score autode --predictions": ["score", "autode", "--predictions", "{w}/res-a.jsonl",
                                   "--data", "{w}/ad", "--json"],
    "agree": ["agree", "{w}/res-a.jsonl", "{w}/res-b.jsonl", "--against", "{w}/res-b.jsonl",
              "--against", "{w}/res-a.jsonl", "--data", "{w}/ad", "--resamples", "20",
              "--json"],
    "autode gap": ["autode", "gap", "{w}/res-a.jsonl", "{w}/res-b.jsonl", "--data", "{w}/ad",
                   "--resamples", "20", "--json"],
    "autode gap --apis": ["autode", "gap", "{w}/res-a.jsonl", "{w}/res-b.jsonl", "--data",
                          "{w}/ad", "--apis", "{f}", "--resamples", "20", "--json"],
    "tooleval passrate": ["tooleval", "passrate", "{w}/te/converted", "--judge", "openai/fake",
                          "--base-url", "{url}", "--votes", "1", "--no-cache", "--out",
                          "{w}/out-te", "--json"],
    "tooleval passrate raw": ["tooleval", "passrate", "{w}/te/raw/answer", "--judge",
                              "openai/fake", "--base-url", "{url}", "--votes", "1",
                              "--no-cache", "--out", "{w}/out-te", "--json"],
    "run tooleval": ["run", "tooleval", "-m", "openai/fake", "--base-url", "{url}", "--data",
                     "{w}/te", "--answers", "{w}/te/converted", "--votes", "1", "--no-cache",
                     "--out", "{w}/out-te", "--json"],
    "run acs": ["run", "acs", "--csv", "{w}/acs.csv", "--out", "{w}/out-acs", "--json"],
    "judge-agreement": ["judge-agreement", "--data", "{w}/acs.csv", "--resamples", "0",
                        "--json"],
    "judge-agreement --labels": ["judge-agreement", "--labels", "{w}/labels.jsonl",
                                 "--verdicts", "{w}/verdicts.jsonl", "--resamples", "0",
                                 "--json"],
    "judge-agreement --judge-config": ["judge-agreement", "--data", "{w}/acs.csv",
                                       "--judge-config", "{w}/judge-acs.json",
                                       "--resamples", "0", "--json"],
    "score": ["score", "{w}/run", "--json"],
    "report": ["report", "{w}/run", "--json"],
    "report --html": ["report", "{w}/run", "--html", "{w}/report.html"],
    "report --prices": ["report", "{w}/run", "--prices", "{w}/prices.json", "--json"],
    "compare": ["compare", "{w}/run", "{w}/run2", "--resamples", "50", "--json"],
    "export": ["export", "{w}/run", "-f", "jsonl", "-o", "{w}/export.jsonl"],
    "judge": ["judge", "{w}/run", "-m", "openai/fake", "--base-url", "{url}", "--votes", "1",
              "--no-cache", "--json"],
    "judge --judge-config": ["judge", "{w}/run", "--judge-config", "{w}/judge.json",
                             "--no-cache", "--json"],
    "run --resume": ["run", "tooltalk", "--resume", "{w}/run", "--json"],
}
# Files whose bytes a failing command must leave as they were ("nothing already computed lost").
GUARDED = ("run/scores.json", "run/samples.jsonl", "run/run.json")


@dataclass(frozen=True)
class Breakage:
    """A way to break one file: ``apply(path)`` changes it in place."""

    name: str
    apply: Callable[[Path], None]
    expect: str = ERROR
    needles: tuple[str, ...] = ()  # besides the file name: the record and the field


@dataclass(frozen=True)
class Variant:
    kind: str  # the kind of input (a row of the closing table)
    target: str  # the file broken, relative to the workspace
    breakage: Breakage
    command: str
    expect: str

    @property
    def id(self) -> str:
        return f"{self.kind}|{Path(self.target).name}|{self.breakage.name}|{self.command}"

    def args(self, workspace: Path, url: str) -> list[str]:
        fill = {"w": str(workspace), "url": url, "f": str(workspace / self.target)}
        return [a.format(**fill) for a in COMMANDS[self.command]]


# -- breakages ---------------------------------------------------------------------------------
def _bytes(name: str, fn: mu.Mutation, expect: str = ERROR) -> Breakage | None:
    def apply(path: Path) -> None:
        new = fn(path.read_bytes())
        assert new is not None
        path.write_bytes(new)
    return Breakage(name, apply, expect)


def _directory(path: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "inside.json").write_text("{}")


def _missing(path: Path) -> None:
    path.unlink()


def file_breakages(sample: bytes, *, text: bool = True) -> list[Breakage]:
    """What can happen to any file: empty, torn, not UTF-8, binary, a folder, missing; BOM and
    CRLF are the same text and read as such."""
    out = [Breakage("directory", _directory), Breakage("missing", _missing)]
    for name, fn in mu.BYTES.items():
        if not text and name in ("bad-utf8", "utf16", "latin1"):
            continue
        if fn(sample) is not None:
            out.append(_bytes(name, fn))  # type: ignore[arg-type]
    if text:
        out += [_bytes("bom", mu.bom, ACCEPTED), _bytes("crlf", mu.crlf, ACCEPTED)]
    return [b for b in out if b is not None]


def json_edit(name: str, edit: Callable[[Any], Any], *needles: str,
              expect: str = ERROR) -> Breakage:
    """Parse, change, write back (``edit`` returns the new document, or None to keep it)."""
    def apply(path: Path) -> None:
        doc = json.loads(path.read_text(encoding="utf-8"))
        new = edit(doc)
        path.write_bytes(mu.json_bytes(doc if new is None else new))
    return Breakage(name, apply, expect, needles)


def jsonl_edit(name: str, line: int, edit: Callable[[Any], Any], *needles: str,
               expect: str = ERROR) -> Breakage:
    """Change record ``line`` (1-based) of a JSONL file; ``needles`` name line and field."""
    def apply(path: Path) -> None:
        docs = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
        new = edit(docs[line - 1])
        if new is not None:
            docs[line - 1] = new
        path.write_bytes(mu.jsonl_bytes(docs))
    return Breakage(name, apply, expect, needles)


def raw_line(name: str, line: int, text: bytes, *needles: str, expect: str = ERROR
             ) -> Breakage:
    """Replace line ``line`` of a text file by ``text`` (bytes, as written)."""
    def apply(path: Path) -> None:
        lines = path.read_bytes().split(b"\n")
        lines[line - 1] = text
        path.write_bytes(b"\n".join(lines))
    return Breakage(name, apply, expect, needles)


def wrong_tops() -> list[Breakage]:
    return [json_edit(f"top-{k}", lambda d, v=v: v if v is not None else "null-marker")
            if v is not None else Breakage("top-null", lambda p: p.write_text("null"))
            for k, v in mu.WRONG_TOP.items()]


def setter(keys: list[Any], value: Any) -> Callable[[Any], None]:
    """An edit that sets ``doc[k0][k1]...`` to ``value`` (deletes it when value is DELETE)."""
    def edit(doc: Any) -> None:
        for k in keys[:-1]:
            doc = doc[k]
        if value is DELETE:
            del doc[keys[-1]]
        else:
            doc[keys[-1]] = value
    return edit


DELETE = object()


# -- the corpus --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Input:
    kind: str
    target: str
    commands: tuple[str, ...]
    breakages: tuple[Breakage, ...]
    accepted_by: dict[str, str] | None = None  # breakage -> outcome overriding its default


def variants(inputs: list[Input]) -> Iterator[Variant]:
    for inp in inputs:
        for b in inp.breakages:
            for command in inp.commands:
                expect = (inp.accepted_by or {}).get(f"{b.name}|{command}",
                                                     (inp.accepted_by or {}).get(b.name,
                                                                                 b.expect))
                yield Variant(inp.kind, inp.target, b, command, expect)


def copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, symlinks=True)
