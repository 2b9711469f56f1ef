"""The BFCL reference fixtures still describe the data and the predictions the tests use.

The fixtures (tests/fixtures/bfcl/, made by make_fixtures.py with BFCL's own evaluator) hold
verdicts for rows (category, id, variant) whose predictions ``support.bfcl_variants``
regenerates from the shared dataset: if the dataset or the generator changes, the recorded
verdicts no longer apply and these tests say so (the fix is to rerun make_fixtures.py).
"""

from __future__ import annotations

import hashlib

import pytest
from support import bfcl_variants as bv
from support.data import dataset


@pytest.fixture(scope="module")
def verdicts() -> dict:
    return bv.load_verdicts()


@pytest.fixture(scope="module")
def manifest() -> dict:
    return bv.load_manifest()


def test_dataset_files_match_the_recorded_hashes(manifest):
    root = dataset("bfcl")
    found = {name: hashlib.sha256((root / name).read_bytes()).hexdigest()
             for name in manifest["datasets"]}
    changed = sorted(name for name, digest in found.items()
                     if digest != manifest["datasets"][name])
    assert not changed, f"dataset files differ (rerun make_fixtures.py): {changed}"
    assert set(manifest["datasets"]) == (
        {name for category in bv.SINGLE_TURN for name in bv.dataset_files(category)}
        | {name for category in bv.MULTI_TURN for name in bv.multi_turn_files(category)})


def test_generator_yields_exactly_the_recorded_rows(manifest, verdicts):
    rows = list(bv.all_rows(dataset("bfcl")))
    keys = {(category, id_, name) for category, id_, name, _ in rows}
    recorded = {(category, id_, name) for category, table in verdicts.items()
                for id_, by_variant in table.items() for name in by_variant}
    assert len(keys) == len(rows) == manifest["rows"]
    assert keys == recorded
    assert bv.digest(rows) == manifest["rows_sha256"], \
        "the generated predictions changed: rerun make_fixtures.py"


def test_multi_turn_generator_yields_exactly_the_recorded_rows(manifest):
    rows = list(bv.multi_turn_rows(dataset("bfcl")))
    recorded = {(category, id_, name)
                for category, table in bv.load_verdicts("verdicts_multi_turn").items()
                for id_, by_variant in table.items() for name in by_variant}
    assert {(category, id_, name) for category, id_, name, _ in rows} == recorded
    assert len(rows) == manifest["multi_turn_rows"]
    assert bv.digest(rows) == manifest["multi_turn_rows_sha256"], \
        "the generated multi-turn predictions changed: rerun make_fixtures.py"


def test_every_entry_has_an_oracle_row(verdicts):
    assert set(verdicts) == set(bv.SINGLE_TURN)
    for table in verdicts.values():
        assert all(bv.ORACLE in by_variant for by_variant in table.values())


def test_verdicts_are_well_formed(verdicts):
    for table in [*verdicts.values(), *bv.load_verdicts("verdicts_multi_turn").values()]:
        for by_variant in table.values():
            for verdict in by_variant.values():
                assert set(verdict) == {"valid", "error_type", "errors"}
                if verdict["valid"]:
                    assert verdict["error_type"] is None and verdict["errors"] == []
                else:
                    assert isinstance(verdict["error_type"], str) and verdict["errors"]


@pytest.mark.parametrize("which", ["oracle", "mixed"])
def test_summaries_agree_with_the_verdicts(which, verdicts):
    summary = bv.load_summary(which)
    root = dataset("bfcl")
    assert set(summary["categories"]) == set(bv.SINGLE_TURN)
    for category, scores in summary["categories"].items():
        lines = (bv.oracle_results(root, category) if which == "oracle"
                 else bv.mixed_results(root, category))
        chosen = {line["id"]: line.get("variant", bv.ORACLE) for line in lines}
        assert chosen == scores["variants"], category
        correct = sum(verdicts[category][id_][name]["valid"] for id_, name in chosen.items())
        assert (scores["correct_count"], scores["total_count"]) == (correct, len(chosen))
        assert scores["accuracy"] == correct / len(chosen)


def test_fc_decoding_reproduces_the_recorded_decode_failures(verdicts):
    root = dataset("bfcl")
    for category in ("simple_python", "live_relevance"):
        for entry, answer in bv.load_category(root, category):
            by_variant = verdicts[category][entry["id"]]
            for name, raw in bv.entry_variants(category, entry, answer).items():
                decoded, error = bv.decode_fc(raw)
                verdict = by_variant[name]
                if verdict["error_type"] == "ast_decoder:decoder_failed":
                    assert decoded is None
                    assert verdict["errors"] == [f"Invalid syntax. Failed to decode AST. {error}"]
                elif verdict["error_type"] == "relevance_error:decoder_failed" and error:
                    assert verdict["errors"][0].endswith(error)
