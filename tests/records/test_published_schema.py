"""The published JSON Schema of run directories (docs/run-format.schema.json) is the one the
code generates: a change of the record types must come with the published file."""

from __future__ import annotations

import json
from pathlib import Path

from toolscore.records import FORMAT_VERSION, json_schema

PUBLISHED = Path(__file__).resolve().parents[2] / "docs" / "run-format.schema.json"


def test_published_schema_is_current() -> None:
    assert json.loads(PUBLISHED.read_text()) == json.loads(json.dumps(json_schema())), (
        "regenerate with: toolscore schema > docs/run-format.schema.json")
    assert f"format version {FORMAT_VERSION}" in json_schema()["title"]
