"""ToolEval's win rate in the reference mode (the default), branch by branch, against a judge
that answers function calls over HTTP (see ``conftest.py``): a missing answer gives the other
side the round, identical answers are a coin, statuses are tiered Solved > Unsure > Unsolved
(with the second look, or the pass-rate labels), the order is a seeded coin each round, a
query is won by taking more rounds, and win rate = wins / queries with ties apart."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.testing.openai_server import FakeOpenAIServer
from support.tooleval_release import write_release

from toolscore import evaluate
from toolscore.benchmarks.tooleval.passrate import coin
from toolscore.benchmarks.tooleval.winrate import (
    CANDIDATE,
    ERROR,
    REFERENCE,
    TIE,
    Comparison,
    summarize,
)
from toolscore.benchmarks.tooleval.winrate_benchmark import ToolEvalWinRateBenchmark
from toolscore.benchmarks.tooleval.winrate_reference import compare_rounds
from toolscore.judges.llm import make_judge
from toolscore.runs.api import score


def play(scripted: Any, cand: Any, ref: Any, rounds: int = 2, seed: int = 0,
         labels: dict[str, Any] | None = None, use_pass_rate: bool = False,
         order: Any = None) -> Comparison:
    with FakeOpenAIServer(scripted) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url)
        return asyncio.run(compare_rounds(judge, cand, ref, rounds=rounds, seed=seed,
                                          labels=labels, use_pass_rate=use_pass_rate,
                                          order=order))


def asked(scripted: Any) -> list[str]:
    return [r["tools"][0]["function"]["name"] for r in scripted.requests]


def test_a_missing_answer_gives_the_other_side_every_round(scripted: Any,
                                                           sample_of: Any) -> None:
    c = play(scripted, sample_of("1", None), sample_of("1", "plain"), rounds=3)
    assert (c.winner, c.why) == (REFERENCE, "rounds 0-3")
    assert {r["why"] for r in c.rounds} == {"missing answer"} and scripted.requests == []
    c = play(scripted, sample_of("1", "plain"), sample_of("1", None))
    assert c.winner == CANDIDATE
    c = play(scripted, sample_of("1", None), sample_of("1", None))
    assert (c.winner, c.why) == (TIE, "rounds 0-0")


def test_identical_answers_are_a_coin_per_round_without_a_preference(scripted: Any,
                                                                     sample_of: Any) -> None:
    outcomes = set()
    for seed in range(12):
        scripted.requests.clear()
        c = play(scripted, sample_of("1", "same"), sample_of("1", "same"), seed=seed)
        flips = [coin(seed, "S", "1", r, "identical") for r in range(2)]
        want = CANDIDATE if all(flips) else REFERENCE if not any(flips) else TIE
        assert c.winner == want and {r["why"] for r in c.rounds} == {"identical"}
        outcomes.add(c.winner)
        # as the reference: both statuses and the task are asked before the identity test
        assert asked(scripted) == ["check_answer_status"] * 2 + ["check_task_solvable"] + \
            ["check_answer_status"] * 2 + ["check_task_solvable"]
    assert outcomes == {CANDIDATE, REFERENCE, TIE}


@pytest.mark.parametrize(("cand", "ref", "winner", "why", "calls"), [
    # exactly one Solved wins, no preference asked
    ("#solved", "plain", CANDIDATE, "solved", ["check_answer_status"] * 2),
    ("plain", "#solved", REFERENCE, "solved", ["check_answer_status"] * 2),
    # the second look can make an answer Solved
    ("#unsure #later-solved", "plain", CANDIDATE, "solved",
     ["check_answer_status", "parse_answer_status", "check_answer_status"]),
    # none Solved: exactly one Unsure wins
    ("#unsure #still-unsure", "plain", CANDIDATE, "unsure",
     ["check_answer_status", "parse_answer_status", "check_answer_status"]),
    ("plain", "#unsure #still-unsure", REFERENCE, "unsure",
     ["check_answer_status", "check_answer_status", "parse_answer_status"]),
    # a tie within a tier goes to the judge's preference
    ("#solved #best", "#solved", CANDIDATE, "preference",
     ["check_answer_status"] * 2 + ["select_better_answer"]),
    # (none Solved: the task's solvability is asked first, and not used)
    ("#unsure #still-unsure", "#unsure #still-unsure #best", REFERENCE, "preference",
     ["check_answer_status", "parse_answer_status"] * 2 + ["check_task_solvable",
                                                            "select_better_answer"]),
    ("plain #best", "plain", CANDIDATE, "preference",
     ["check_answer_status"] * 2 + ["check_task_solvable", "select_better_answer"]),
])
def test_status_tiers_then_preference(scripted: Any, sample_of: Any, cand: str, ref: str,
                                      winner: str, why: str, calls: list[str]) -> None:
    c = play(scripted, sample_of("1", cand), sample_of("1", ref), rounds=1)
    assert (c.winner, c.rounds[0]["why"]) == (winner, why)
    assert asked(scripted) == calls


def test_a_give_up_is_unsolved_without_a_judge(scripted: Any, sample_of: Any) -> None:
    c = play(scripted, sample_of("1", "x", give_up=True), sample_of("1", "#solved"), rounds=1)
    assert (c.winner, c.rounds[0]["statuses"]) == (REFERENCE, {"candidate": "Unsolved",
                                                               "reference": "Solved"})
    assert asked(scripted) == ["check_answer_status"]


def test_the_order_is_a_seeded_coin_each_round(scripted: Any, sample_of: Any) -> None:
    seen = set()
    for seed in range(10):
        # a judge that always picks the first shown: the coin decides every round
        c = play(scripted, sample_of("1", "#solved a"), sample_of("1", "#solved b"), rounds=3,
                 seed=seed)
        firsts = [CANDIDATE if coin(seed, "S", "1", r, "order") else REFERENCE
                  for r in range(3)]
        assert [r["shown_first"] for r in c.rounds] == firsts
        assert [r["winner"] for r in c.rounds] == firsts
        assert c.first_shown_picked == [True] * 3
        seen.add(tuple(firsts))
        # a judge that sees the better answer wherever it is shown
        c = play(scripted, sample_of("1", "#solved a"), sample_of("1", "#solved b #best"),
                 rounds=3, seed=seed)
        assert c.winner == REFERENCE and c.why == "rounds 0-3"
    assert len(seen) > 2  # positions vary from round to round and seed to seed
    # the answers are shown whole, as JSON records
    pref = scripted.calls("select_better_answer")[-1]["messages"][0]["content"]
    assert '"answer_details"' in pref and '"final_answer"' in pref


def label(passed: bool | None, answer: str = "Unsolved", task: str = "Solvable") -> Any:
    return None if passed is None else {"label": passed, "last": (answer, task)}


def test_pass_labels_decide_first_whatever_use_pass_rate_says(scripted: Any,
                                                              sample_of: Any) -> None:
    cand, ref = sample_of("1", "plain"), sample_of("1", "#solved")
    for use in (False, True):
        c = play(scripted, cand, ref, labels={"candidate": label(True),
                                              "reference": label(False)}, use_pass_rate=use)
        assert c.winner == CANDIDATE and {r["why"] for r in c.rounds} == {"pass label"}
        assert scripted.requests == []
    c = play(scripted, cand, ref, labels={"candidate": None, "reference": label(True)})
    assert (c.winner, c.why) == (ERROR, "pass label missing (judge error in pass rate)")


@pytest.mark.parametrize("first", [CANDIDATE, REFERENCE])
def test_use_pass_rate_statuses_are_not_reordered_with_the_answers(
        scripted: Any, sample_of: Any, first: str) -> None:
    """Both passed, the reference side Solved and the candidate not: the reference's statuses
    stay [reference, candidate] while the answers are shuffled, so whichever is shown first
    takes the Solved status and the round."""
    cand, ref = sample_of("1", "plain"), sample_of("1", "#solved")
    labels = {"candidate": label(True, "Unsolved", "Unsolvable"),
              "reference": label(True, "Solved")}
    c = play(scripted, cand, ref, rounds=1, labels=labels, use_pass_rate=True,
             order=lambda *_: first)
    assert (c.winner, c.rounds[0]["why"]) == (first, "solved") and scripted.requests == []
    # both Unsolved: the task status is known, so only the preference is asked
    labels = {"candidate": label(True, "Unsolved", "Unsolvable"),
              "reference": label(True, "Unsolved", "Unsolvable")}
    c = play(scripted, cand, ref, rounds=1, labels=labels, use_pass_rate=True)
    assert c.rounds[0]["why"] == "preference" and asked(scripted) == ["select_better_answer"]


def test_a_judge_error_makes_the_query_an_error(scripted: Any, sample_of: Any) -> None:
    c = play(scripted, sample_of("1", "#broken"), sample_of("1", "plain"), rounds=2)
    assert (c.winner, c.why, len(c.rounds)) == (ERROR, "judge error", 1)
    s = summarize([c, Comparison("S", "2", CANDIDATE, "rounds 2-0"),
                   Comparison("S", "3", TIE, "rounds 1-1"),
                   Comparison("S", "4", REFERENCE, "rounds 0-2")], "reference")
    assert (s["queries"], s["errors"], s["evaluated"]) == (4, 1, 3)
    assert (s["win_rate"], s["tie_rate"]) == (pytest.approx(1 / 3), pytest.approx(1 / 3))
    assert summarize(s_list := [Comparison("S", "3", TIE, "x")], "stable")["win_rate"] == 0.5
    assert summarize(s_list, "reference")["win_rate"] == 0.0  # ties do not count


# -- as a run ----------------------------------------------------------------------------------
def answer_sets(tmp_path: Path, sample_of: Any, to_converted: Any) -> tuple[Path, Path]:
    cand = [sample_of("1", "#solved"), sample_of("2", "plain #best"), sample_of("3", "same"),
            sample_of("4", "plain"), sample_of("5", "#broken")]
    ref = [sample_of("1", "plain"), sample_of("2", "plain"), sample_of("3", "same"),
           sample_of("4", "#unsure #still-unsure"), sample_of("5", "plain"),
           sample_of("6", "plain")]
    out = []
    for name, samples in (("cand", cand), ("ref", ref)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "G1_tool.json").write_text(json.dumps(to_converted(samples)))
        out.append(tmp_path / name)
    return out[0], out[1]


def test_reference_winrate_run(tmp_path: Path, scripted: Any, sample_of: Any,
                               to_converted: Any) -> None:
    cand, ref = answer_sets(tmp_path, sample_of, to_converted)
    with FakeOpenAIServer(scripted) as srv:
        run = evaluate("tooleval-winrate", "openai/fake", base_url=srv.base_url, cache=None,
                       out=tmp_path / "run", candidate=cand, reference=ref, seed=3)
    assert {r["temperature"] for r in scripted.requests} == {0.2}
    # the pass labels are judged first (the reference reads its pass-rate files always)
    assert "check_task_solvable" in asked(scripted)
    winners = {r["output"]["query_id"]: r["scores"]["winner"] for r in run.records}
    identical = [coin(3, "G1_tool", "3", r, "identical") for r in range(2)]
    assert winners == {"1": CANDIDATE, "2": CANDIDATE,
                       "3": CANDIDATE if all(identical) else REFERENCE if not any(identical)
                       else TIE,
                       "4": REFERENCE, "5": ERROR, "6": REFERENCE}
    o = run.metrics["overall"]
    wins = sum(w == CANDIDATE for w in winners.values())
    ties = sum(w == TIE for w in winners.values())
    assert (o["queries"], o["errors"], o["evaluated"], o["wins"], o["ties"]) == (6, 1, 5, wins,
                                                                                  ties)
    assert o["win_rate"] == wins / 5 and o["tie_rate"] == ties / 5
    assert run.metrics["mode"] == "reference, 2 rounds"
    lines = ToolEvalWinRateBenchmark.summary_lines(run.metrics)
    assert any("ToolBench's evaluator, release: " in line for line in lines)
    assert any("stops at its second round" in line for line in lines)
    assert any("wins / queries" in line for line in lines)
    assert score(run.path).metrics == json.loads((run.path / "scores.json").read_text())


def toolscore(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["XDG_CACHE_HOME"] = str(cwd / "xdg-cache")
    # ToolBench's evaluator files where a download puts them (generated from the recorded values)
    write_release(cwd / "xdg-cache" / "toolscore" / "data" / "tooleval")
    return subprocess.run([sys.executable, "-m", "toolscore.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_cli_pass_rates_then_winrate_with_pass_rate_labels(tmp_path: Path, scripted: Any,
                                                           sample_of: Any,
                                                           to_converted: Any) -> None:
    cand, ref = answer_sets(tmp_path, sample_of, to_converted)
    with FakeOpenAIServer(scripted) as srv:
        common = ("--judge", "openai/fake", "--base-url", srv.base_url, "--votes", "2",
                  "--json")
        for side, path in (("cand-run", cand), ("ref-run", ref)):
            done = toolscore("tooleval", "passrate", str(path), *common, "--out", side,
                             cwd=tmp_path)
            assert done.returncode == 0, done.stderr[-2000:]
        before = len(scripted.requests)
        win = toolscore("tooleval", "winrate", "cand-run", "ref-run", *common, "--rounds", "3",
                        "--use-pass-rate", "--out", "w", cwd=tmp_path)
        assert win.returncode == 0, win.stderr[-2000:]
        during = asked(scripted)[before:]
    doc = json.loads(win.stdout)
    # the labels were read from the two runs: only preferences were asked
    assert set(during) == {"select_better_answer"}
    assert doc["mode"] == "reference, 3 rounds, pass-rate statuses"
    assert any("not reordered on a shuffle" in line
               for line in ToolEvalWinRateBenchmark.summary_lines(doc))
    records = [json.loads(x) for x in (tmp_path / "w" / "samples.jsonl").read_text()
               .splitlines()]
    by = {r["output"]["query_id"]: r["output"] for r in records}
    assert {o["candidate"]["source"] for o in by.values()} == {"run", "missing"}
    # query 5's pass rate was a judge error: no label, so no comparison
    assert by["5"]["comparison"]["winner"] == ERROR
    assert by["1"]["comparison"]["rounds"][0]["why"] == "pass label"  # passed vs failed
    assert doc["overall"]["queries"] == 6 and len(doc["overall"]) > 0
    shown = toolscore("report", "w", cwd=tmp_path)
    assert shown.returncode == 0 and "tie rate" in shown.stdout
