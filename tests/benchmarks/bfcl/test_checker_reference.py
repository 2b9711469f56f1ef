"""Every verdict recorded from bfcl-eval's own evaluator (tests/fixtures/bfcl/verdicts.json.gz:
generated predictions for every single-turn entry, a ground-truth answer and perturbations
aimed at each of BFCL's verdicts) is the verdict ``check_entry`` gives: validity, error type
and messages, verbatim."""

from __future__ import annotations

from collections import Counter

import pytest
from support.data import dataset

from toolscore.benchmarks.bfcl.checker import check_entry

bv = pytest.importorskip("support.bfcl_variants", reason="the BFCL reference fixtures' reader")


def test_every_recorded_verdict_is_reproduced() -> None:
    rows: Counter[str] = Counter()
    differences = []
    for category, entry, answer, variant, raw, wanted in bv.fixture_rows(dataset("bfcl")):
        decoded, error = bv.decode_fc(raw)
        verdict = check_entry(category, entry, answer, decoded, error)
        got = {"valid": verdict.valid, "error_type": verdict.error_type,
               "errors": verdict.score_file_errors()}
        expected = {"valid": wanted["valid"], "error_type": wanted.get("error_type"),
                    "errors": wanted.get("errors", [])}
        rows[category] += 1
        if got != expected:
            differences.append((category, entry["id"], variant, got, expected))
    assert sum(rows.values()) == bv.load_manifest()["rows"]
    assert set(rows) == set(bv.SINGLE_TURN)
    assert not differences, differences[:3]
