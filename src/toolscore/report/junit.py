"""A run, or a comparison's gates, as JUnit XML: what CI servers (GitHub, GitLab, Jenkins)
read to list tests, count failures and track them from one build to the next.

A run is ``testsuites`` > one ``testsuite`` per split (one for the whole run when its records
name no split) > one ``testcase`` per (sample, epoch): classname ``BENCHMARK.SPLIT``, name the
sample id (``ID#EPOCH`` when the run has several epochs), ``time`` the sample's seconds. A
sample that failed the benchmark's pass/fail metric (``primary_metric``) has a ``failure``; one
that ended in an infrastructure error (status other than ``ok``) an ``error``, as these are not
the assistant's failures; a finished sample without the metric is ``skipped``. Each suite's
``properties`` say who and what produced it (benchmark, model, mode label, epochs, run
directory, toolscore version). Gates (``--fail-under``, ``--fail-on-regression``) add a suite
with one testcase per gate.
"""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolscore.report.gates import GateResult, RunRecords
from toolscore.text import printable

# characters XML 1.0 cannot hold, even escaped (model text may contain them)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
MAX_TEXT = 4000


def _text(value: Any, limit: int = MAX_TEXT) -> str:
    text = _NOT_XML.sub("?", str(value))
    return text if len(text) <= limit else text[:limit] + " …"


def _one_line(value: Any) -> str:
    return _text(" ".join(printable(str(value)).split()), 500)


def _properties(parent: ET.Element, props: dict[str, Any]) -> None:
    node = ET.SubElement(parent, "properties")
    for key, value in props.items():
        if value is not None and value != "":
            ET.SubElement(node, "property", name=key, value=_one_line(value))


def _count(suite: ET.Element) -> dict[str, int]:
    cases = suite.findall("testcase")
    return {"tests": len(cases),
            "failures": sum(c.find("failure") is not None for c in cases),
            "errors": sum(c.find("error") is not None for c in cases),
            "skipped": sum(c.find("skipped") is not None for c in cases)}


def _close(suite: ET.Element, seconds: float | None) -> None:
    for key, n in _count(suite).items():
        suite.set(key, str(n))
    if seconds is not None:
        suite.set("time", f"{seconds:.3f}")


def _scalars(scores: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in scores.items()
                       if isinstance(v, (bool, int, float, str)) or v is None},
                      sort_keys=True, default=str)


def _case(suite: ET.Element, record: dict[str, Any], classname: str, several_epochs: bool,
          primary: str | None) -> float | None:
    sid, epoch = str(record["id"]), int(record.get("epoch", 0))
    case = ET.SubElement(suite, "testcase", name=_one_line(f"{sid}#{epoch}" if several_epochs
                                                          else sid), classname=classname)
    raw = record.get("time_s")
    seconds = float(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) \
        and math.isfinite(raw) and raw >= 0 else None
    if seconds is not None:
        case.set("time", f"{seconds:.3f}")
    scores = record.get("scores") or {}
    shown = bool(scores)  # the scores once: in the failure, else as the case's output
    if record.get("status") != "ok":
        error = record.get("error") or record.get("status") or "error"
        node = ET.SubElement(case, "error", message=_one_line(error),
                             type=_one_line(record.get("status") or "error"))
        node.text = _text(error)
    elif primary is not None:
        value = scores.get(primary)
        if value is False:
            node = ET.SubElement(case, "failure", message=f"{primary}: false", type=primary)
            node.text, shown = _text(_scalars(scores)), False
        elif not isinstance(value, bool):
            ET.SubElement(case, "skipped", message=f"not scored by {primary}")
    if shown:
        ET.SubElement(case, "system-out").text = _text(_scalars(scores))
    return seconds


def gate_suite(root: ET.Element, name: str, classname: str, gates: Sequence[GateResult],
               props: dict[str, Any]) -> None:
    """One testsuite, one testcase per gate (``failure`` when it failed, ``error`` when there
    was nothing to judge)."""
    suite = ET.SubElement(root, "testsuite", name=name)
    _properties(suite, props)
    for g in gates:
        case = ET.SubElement(suite, "testcase", name=_one_line(f"{g.gate} {g.name}"),
                             classname=classname)
        if g.status != "pass":
            tag = "failure" if g.status == "fail" else "error"
            ET.SubElement(case, tag, message=_one_line(g.line), type=g.gate).text = _text(g.line)
        else:
            ET.SubElement(case, "system-out").text = _text(g.line)
    _close(suite, None)


def _finish(root: ET.Element) -> ET.Element:
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    seconds, timed = 0.0, False
    for suite in root.findall("testsuite"):
        for key in totals:
            totals[key] += int(suite.get(key) or 0)
        if suite.get("time") is not None:
            seconds, timed = seconds + float(suite.get("time") or 0), True
    for key, n in totals.items():
        root.set(key, str(n))
    if timed:
        root.set("time", f"{seconds:.3f}")
    return root


def run_properties(run: RunRecords) -> dict[str, Any]:
    config = run.config
    return {"benchmark": config.get("benchmark"), "model": config.get("model"),
            "mode": run.view.mode(), "epochs": config.get("epochs"), "run_dir": str(run.path),
            "toolscore": (config.get("versions") or {}).get("toolscore"),
            "primary_metric": run.view.primary_metric(run.ok)}


def run_junit(run: RunRecords, gates: Sequence[GateResult] = ()) -> ET.Element:
    """The ``testsuites`` element of a run (see the module docstring)."""
    benchmark = str(run.config.get("benchmark"))
    props = run_properties(run)
    primary = props["primary_metric"]
    records = sorted(run.records, key=lambda r: (str(r["id"]), int(r.get("epoch", 0))))
    several = len({str(r["id"]) for r in records}) < len(records)
    by_split: dict[str | None, list[dict[str, Any]]] = {}
    for r in records:
        split = (r.get("meta") or {}).get("split")
        by_split.setdefault(None if split is None else str(split), []).append(r)
    model = run.config.get("model") or ""
    root = ET.Element("testsuites", name=_one_line(f"toolscore {benchmark} {model}".strip()))
    for split, recs in by_split.items():
        name = benchmark if split is None else f"{benchmark}.{split}"
        suite = ET.SubElement(root, "testsuite", name=_one_line(name))
        created = run.config.get("created")
        if created:
            suite.set("timestamp", _one_line(created))
        _properties(suite, {**props, "split": split})
        times = [_case(suite, r, _one_line(name), several, primary) for r in recs]
        known = [t for t in times if t is not None]
        _close(suite, sum(known) if known else None)
    if gates:
        gate_suite(root, f"{benchmark}.gates", f"{benchmark}.gates", gates, props)
    return _finish(root)


def compare_junit(result: dict[str, Any], gates: Sequence[GateResult]) -> ET.Element:
    """A comparison's gates as one testsuite (one testcase per gate)."""
    a, b = result.get("run_a") or {}, result.get("run_b") or {}
    benchmark = str(b.get("benchmark") or a.get("benchmark"))
    root = ET.Element("testsuites", name=_one_line(f"toolscore compare {benchmark}"))
    props = {"benchmark": benchmark, "base": a.get("path"), "base_model": a.get("model"),
             "base_mode": a.get("mode"), "new": b.get("path"), "model": b.get("model"),
             "mode": b.get("mode"), "shared_pairs": result.get("shared"),
             "test": result.get("continuous_test")}
    gate_suite(root, f"{benchmark}.compare", f"{benchmark}.compare", gates, props)
    return _finish(root)


def write_junit(root: ET.Element, path: str | Path) -> Path:
    """Write ``root`` as an XML file (UTF-8, declared); its folder is created."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tree = ET.ElementTree(root)
    ET.indent(tree)
    tree.write(out, encoding="utf-8", xml_declaration=True)
    return out
