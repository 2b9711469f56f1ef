"""Win rate in the stable mode: the pass-label shortcut, solved status, both answer orders, ties
and position bias; and the ``toolscore tooleval`` commands end to end against a scripted judge
server. The reference mode is tested in ``test_reference_winrate.py``."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from support.data import ROOT as _DATA_ROOT
from support.data import needs
from support.testing.openai_server import FakeOpenAIServer, reply_to_completion
from support.tooleval_release import write_release

from toolscore.benchmarks.tooleval.data import Answer, Sample, Step
from toolscore.benchmarks.tooleval.winrate import (
    CANDIDATE,
    REFERENCE,
    TIE,
    compare,
    summarize,
    win_rate,
)
from toolscore.judges.llm import make_judge
from toolscore.types import Message

DATA = _DATA_ROOT / "tooleval"
G1_TOOL = DATA / "converted" / "gpt-3.5-turbo_CoT" / "G1_tool.json"
needs_data = needs("tooleval")


def sample(qid: str, text: str) -> Sample:
    final = json.dumps({"return_type": "give_answer", "final_answer": text})
    path = [Step("user", "q"), Step("tool", "ok", name="get", arguments="{}"),
            Step("tool", "", name="Finish", arguments=final)]
    return Sample(qid, f"query {qid}", [], Answer("m", final, path), "S")


def scripted(prefer: str | None, solved: str = "Solved") -> Any:
    """Answer status: ``solved`` unless the answer says "wrong"; every task is solvable.
    Preference: the attempt whose
    answer contains ``prefer`` (None: always "A", a judge with pure position bias)."""
    def responder(request: dict[str, Any]) -> dict[str, Any]:
        user = request["messages"][1]["content"]
        if '"preference"' in user:
            a = user.split("Final answer A:\n")[1].split("=== Attempt B")[0]
            label = "A" if prefer is None or prefer in a else "B"
            text = f'{{"reason": "r", "preference": "{label}"}}'
        elif '"task_status"' in user:
            text = '{"reason": "r", "task_status": "Solvable"}'
        else:
            status = "Unsolved" if "wrong" in user.split("Final answer")[1] else solved
            text = f'{{"reason": "r", "answer_status": "{status}"}}'
        return reply_to_completion(Message(role="assistant", content=text), prompt_tokens=3)
    return responder


def run(responder: Any, cand: Sample, ref: Sample, cp: bool, rp: bool) -> tuple[Any, int]:
    with FakeOpenAIServer(responder) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url)
        c = asyncio.run(compare(judge, cand, ref, cp, rp, votes=1))
        return c, srv.requests


def test_exactly_one_passed_wins_without_a_judge() -> None:
    c, calls = run(scripted("x"), sample("1", "a"), sample("1", "b"), True, False)
    assert (c.winner, c.why, calls) == (CANDIDATE, "pass label", 0)
    c, calls = run(scripted("x"), sample("1", "a"), sample("1", "b"), False, True)
    assert (c.winner, calls) == (REFERENCE, 0)


def test_solved_status_decides_before_preference() -> None:
    c, calls = run(scripted("x"), sample("1", "good"), sample("1", "wrong"), True, True)
    assert (c.winner, c.why, calls) == (CANDIDATE, "solved status", 2)


def test_both_orders_agree_and_a_pure_position_bias_is_a_tie() -> None:
    c, calls = run(scripted("best"), sample("1", "best"), sample("1", "meh"), False, False)
    assert (c.winner, c.why, c.orders, calls) == (CANDIDATE, "preference",
                                                  [CANDIDATE, CANDIDATE], 4)
    assert c.first_shown_picked == [True, False]
    c, _ = run(scripted(None), sample("1", "best"), sample("1", "meh"), False, False)
    assert (c.winner, c.why, c.orders) == (TIE, "orders disagree", [CANDIDATE, REFERENCE])
    s = summarize([c])
    assert s["win_rate"] == 0.5 and s["ties"] == 1
    assert s["position_bias"]["first_shown_pick_rate"] == 1.0
    assert s["position_bias"]["order_agreement"] == 0.0


def test_win_rate_counts_ties_half_and_missing_answers_lose() -> None:
    cands = [sample("1", "best"), sample("2", "meh"), sample("3", "x")]
    refs = [sample("1", "meh"), sample("2", "best"), sample("4", "y")]
    passed_c = {("S", "1"): True, ("S", "2"): True, ("S", "3"): True}
    passed_r = {("S", "1"): True, ("S", "2"): True, ("S", "4"): True}
    with FakeOpenAIServer(scripted("best")) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url)
        comps = asyncio.run(win_rate(judge, cands, refs, passed_c, passed_r))
    by = {c.query_id: c.winner for c in comps}
    # 1: candidate preferred; 2: reference preferred; 3: reference has no answer;
    # 4: candidate has no answer
    assert by == {"1": CANDIDATE, "2": REFERENCE, "3": CANDIDATE, "4": REFERENCE}
    assert summarize(comps)["win_rate"] == 0.5


# -- the CLI, a subprocess against a scripted judge server ------------------------------------
def toolscore(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["XDG_CACHE_HOME"] = str(cwd / "xdg-cache")
    # ToolBench's evaluator files where a download puts them (generated from the recorded values)
    write_release(cwd / "xdg-cache" / "toolscore" / "data" / "tooleval")
    return subprocess.run([sys.executable, "-m", "toolscore.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@needs_data
def test_cli_passrate_and_winrate_on_released_answers(tmp_path: Path) -> None:
    # the reference model: the same queries, every answer replaced by a give-up
    doc = json.loads(G1_TOOL.read_text())
    for rec in doc.values():
        rec["answer"]["final_answer"] = '{"return_type": "give_up_and_restart"}'
    (tmp_path / "ref").mkdir()
    (tmp_path / "ref" / "G1_tool.json").write_text(json.dumps(doc))
    with FakeOpenAIServer(scripted("zzz-never")) as srv:
        common = ("--judge", "openai/fake", "--base-url", srv.base_url, "--limit", "12",
                  "--votes", "1", "--mode", "stable", "--json")
        done = toolscore("tooleval", "passrate", str(G1_TOOL.parent), "--subset", "G1_tool",
                         *common, "--out", "v", cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        rep = json.loads(done.stdout)
        win = toolscore("tooleval", "winrate", str(G1_TOOL.parent), str(tmp_path / "ref"),
                        "--subset", "G1_tool", *common, cwd=tmp_path)
        assert win.returncode == 0, win.stderr[-2000:]
        wdoc = json.loads(win.stdout)
    rows = [json.loads(line)["output"] for line in
            (tmp_path / "v" / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == 12 and rep["overall"]["queries"] == 12
    finished = sum(r["judgements"][0]["why"] == "judged" for r in rows)
    # this judge solves every answer that is not "wrong", so every finished answer passes
    assert rep["overall"]["passed"] == finished
    assert all(v["raw"] for r in rows for j in r["judgements"] for v in j["verdicts"])
    assert wdoc["overall"]["queries"] == 12 and wdoc["overall"]["errors"] == 0
    # reference gave up everywhere (fails: the task is judged solvable), candidate passes
    # where it finished; elsewhere both fail and neither is solved -> both orders -> "B"/"B"
    # disagree on which model, so those are ties
    assert wdoc["overall"]["wins"] == finished
    assert wdoc["overall"]["ties"] == 12 - finished
    assert wdoc["overall"]["position_bias"]["compared_in_both_orders"] == 12 - finished


def test_cli_unknown_directory_is_one_line_exit_2(tmp_path: Path) -> None:
    done = toolscore("tooleval", "passrate", str(tmp_path / "nope"), "--judge", "openai/x",
                     cwd=tmp_path)
    assert done.returncode == 2 and "no such answer directory" in done.stderr
