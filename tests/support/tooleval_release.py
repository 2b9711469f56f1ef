"""A minimal ToolBench evaluator folder, generated from the recorded values.

The project keeps no copy of ToolBench's ``config.yaml`` and ``template.txt``: the fixture
script ``tests/fixtures/tooleval_requests/release_values.py`` records what toolscore reads from
them (the function schemas, the sampling fields, each question's text), and this module writes
files holding just that, laid out where a download leaves them, for the loader to read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolscore.benchmarks.tooleval.release import EVALUATOR_DIR

VALUES = (Path(__file__).resolve().parents[1] / "fixtures" / "tooleval_requests"
          / "release_values.json")


def values() -> dict[str, Any]:
    """The recorded values (see the fixture script)."""
    return json.loads(VALUES.read_text(encoding="utf-8"))


def config_text(v: dict[str, Any]) -> str:
    """The config as YAML (JSON is YAML): the fields the loader reads, and no others."""
    kwargs = {"max_tokens": v["max_tokens"], "temperature": v["temperature"],
              "functions": v["functions"]}
    return json.dumps({"completions_kwargs": kwargs}, indent=1, ensure_ascii=False) + "\n"


def template_text(v: dict[str, Any]) -> str:
    """One ``<function>`` block per question, its recorded text as the description."""
    return "".join(f"<function>\n<name>{name}</name>\n<description>{text}</description>\n"
                   "</function>\n\n" for name, text in v["texts"].items())


def write_release(folder: Path) -> Path:
    """Write the evaluator folder under ``folder`` (a tooleval dataset folder) at the path a
    download uses; returns the evaluator folder."""
    v = values()
    target = Path(folder) / EVALUATOR_DIR
    target.mkdir(parents=True, exist_ok=True)
    (target / "config.yaml").write_bytes(config_text(v).encode("utf-8"))  # the same bytes
    (target / "template.txt").write_bytes(template_text(v).encode("utf-8"))  # on every OS
    return target
