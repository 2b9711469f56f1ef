"""AutoDE slot scoring on small hand-written cases, and parsing of run names."""

from __future__ import annotations

import math

import pytest

from toolscore.benchmarks.autode import (
    CaseScore,
    TrialRecord,
    aggregate_trials,
    describe_run,
    filter_arguments,
    group_trials,
    score_case,
    score_trial,
)
from toolscore.benchmarks.autode.rescore import RunName
from toolscore.benchmarks.autode.scoring import exact_match, normalise_value, normalised_equal


def test_filter_arguments_keeps_only_strings_and_booleans() -> None:
    raw = {"functionName": "SetVolume", "deviceType": "TV", "estimateTime": False,
           "targetValue": 80, "blank": "  ", "none": None, "null": "NULL", "list": ["a"],
           "obj": {"a": 1}, "nullish": " null ", "ok": " x "}
    assert filter_arguments(raw) == {"deviceType": "TV", "estimateTime": False, "ok": " x "}
    assert filter_arguments(filter_arguments(raw)) == filter_arguments(raw)


def test_case_scores() -> None:
    gold = {"deviceType": "TV", "appName": "Spotify", "estimateTime": True}
    assert score_case({}, {}) == CaseScore(1.0, 1.0, 1.0)
    assert score_case(gold, {}) == CaseScore(0.0, 0.0, 0.0)
    assert score_case({}, {"deviceType": "TV"}) == CaseScore(0.0, 0.0, 0.0)
    assert score_case(gold, {"functionName": "PlayMedia"}) == CaseScore(0.0, 0.0, 0.0)
    # 2 correct of 4 predicted (the number is dropped, "true" is not True) and of 3 gold
    got = score_case(gold, {"deviceType": "TV", "appName": "Spotify", "estimateTime": "true",
                            "extra": "x", "volume": 3})
    assert got.precision == pytest.approx(2 / 4) and got.recall == pytest.approx(2 / 3)
    assert got.f1 == pytest.approx(2 * (1 / 2) * (2 / 3) / (1 / 2 + 2 / 3))
    assert score_case(gold, {"deviceType": "tv"}).f1 == 0.0  # no normalisation


def test_normalised_view_is_separate() -> None:
    assert normalise_value("  Living   Room ") == "living room"
    assert normalise_value("1,000.50 dollars") == "1000.5 dollars"
    assert normalise_value("10.0") == normalise_value("10")
    assert normalise_value("007") == "007"
    assert normalised_equal(True, "TRUE") and not normalised_equal("level 2", "2")
    gold = {"deviceType": "mobile phone", "price": "1000"}
    pred = {"deviceType": "Mobile  Phone", "price": "1,000"}
    assert score_case(gold, pred).f1 == 0.0
    assert score_case(gold, pred, equal=normalised_equal).f1 == 1.0
    assert exact_match(gold, {**gold, "functionName": "X"})
    assert not exact_match(gold, {"deviceType": "mobile phone"})


def test_trial_macro_average_and_missing_cases() -> None:
    gold = [{"a": "1"}, {"a": "1", "b": "2"}, {"a": "1"}]
    trial = score_trial(gold, [{"a": "1"}, {"a": "1"}, None])
    assert trial.precision == pytest.approx((1 + 1 + 0) / 3)
    assert trial.recall == pytest.approx((1 + 0.5 + 0) / 3)
    assert trial.f1 == pytest.approx((1 + 2 / 3 + 0) / 3)
    with pytest.raises(ValueError, match="gold cases"):
        score_trial(gold, [{}])


def test_aggregate_uses_sample_std() -> None:
    gold = [{"a": "1", "b": "2"}]
    trials = [score_trial(gold, [p]) for p in ({"a": "1", "b": "2"}, {"a": "1"}, {})]
    run = aggregate_trials(trials)  # F1 per trial: 1, 2/3, 0
    assert run.f1 == pytest.approx(5 / 9)
    mean = 5 / 9
    var = ((1 - mean) ** 2 + (2 / 3 - mean) ** 2 + mean**2) / 2
    assert run.f1_std == pytest.approx(math.sqrt(var))
    assert run.per_case_f1() == pytest.approx([5 / 9])
    single = aggregate_trials(trials[:1])
    assert math.isnan(single.f1_std) and single.to_dict()["f1_std"] is None
    assert str(single) == "P 100.00 / R 100.00 / F1 100.00"


def _record(uuid: str, n: int) -> TrialRecord:
    return TrialRecord(uuid=uuid, background="", content=(), api="X", slots={"n": str(n)})


def test_group_trials_takes_the_t_th_record_of_each_uuid() -> None:
    records = [_record("a", 0), _record("a", 1), _record("a", 2), _record("b", 0),
               _record("b", 1), _record("a", 3)]
    trials = group_trials(records)
    assert len(trials) == 2  # b has only two records
    assert [t["a"].slots["n"] for t in trials] == ["0", "1"]
    assert [t["b"].slots["n"] for t in trials] == ["0", "1"]
    assert group_trials([]) == []


@pytest.mark.parametrize(("name", "expected"), [
    ("a_gpt35_static_v2", RunName("gpt35", "static", None)),
    ("a_claude_instant_1_2_human", RunName("claude_instant_1_2", "human", "human")),
    ("u_human_a_gpt35_complementary", RunName("gpt35", "human", "human")),
    ("u_llama7b_a_codellama13b_oasst_5rounds", RunName("codellama13b_oasst", "dynamic",
                                                       "llama7b")),
    ("a_zephyr_7b_alpha_substitute_static_5rounds", RunName("zephyr_7b_alpha", "static", None)),
    ("a_newmodel_static", RunName(None, "static", None)),
    ("something_else", RunName(None, None, None)),
])
def test_describe_run(name: str, expected: RunName) -> None:
    assert describe_run(name) == expected
