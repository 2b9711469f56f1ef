"""What a model is sent for a BFCL entry, against what BFCL's own OpenAI function-calling
handler sends for it (``tests/fixtures/bfcl_requests/requests.json``, recorded by
``tests/reference/bfcl/record_requests.py``): messages, tool documents and sampling fields,
request body for request body (but ``store: false``, OpenAI's default, which toolscore leaves
out)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.data import dataset

from toolscore.benchmarks.bfcl import prompting
from toolscore.benchmarks.bfcl.benchmark import BFCLBenchmark, BFCLOptions
from toolscore.benchmarks.bfcl.categories import SINGLE_TURN, category_of
from toolscore.models.openai.provider import build_request

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "bfcl_requests" / "requests.json"
RECORDED: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def samples() -> dict[str, Any]:
    bench = BFCLBenchmark(dataset("bfcl"), BFCLOptions())
    return {s.id: s for s in bench.samples()}


def test_fixture_covers_every_single_turn_category() -> None:
    assert {category_of(i) for i in RECORDED} == set(SINGLE_TURN)
    assert FIXTURE.stat().st_size < 500_000


@pytest.mark.parametrize("entry_id", sorted(RECORDED))
def test_request_is_the_reference_handlers(entry_id: str, samples: dict[str, Any]) -> None:
    sample = samples[entry_id]
    entry, category = sample.data["entry"], sample.data["category"]
    built = build_request("MODEL", prompting.messages(entry), prompting.tools(entry, category),
                          prompting.generate_config())
    recorded = dict(RECORDED[entry_id])
    # the reference's store: false is OpenAI's default, left out (see prompting.generate_config)
    assert recorded.pop("store") is False
    assert built == recorded


def test_the_released_entry_is_left_as_released(samples: dict[str, Any]) -> None:
    sample = samples["simple_java_0"]
    before = json.dumps(sample.data["entry"])
    prompting.tools(sample.data["entry"], "simple_java")
    assert json.dumps(sample.data["entry"]) == before
