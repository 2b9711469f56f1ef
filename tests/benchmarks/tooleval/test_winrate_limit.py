"""``toolscore tooleval winrate --limit N`` compares the first N queries of each subset, whatever
the sides are: answer files in different orders, or tooleval runs (whose stored records are
the pass labels reused). The limit is taken on the compared pairs, so a query one side lists
later is never turned into a missing answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.cli import json_doc, toolscore
from support.data import dataset, needs
from support.testing.openai_server import FakeOpenAIServer, reply_to_completion

from toolscore.types import Message

pytestmark = needs("tooleval")


def judge(seen: list[dict[str, Any]]) -> Any:
    """Stable-mode verdicts: every answer solved, every task solvable, attempt A preferred."""
    def responder(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        user = request["messages"][1]["content"]
        text = ('{"reason": "r", "preference": "A"}' if '"preference"' in user else
                '{"reason": "r", "task_status": "Solvable"}' if '"task_status"' in user else
                '{"reason": "r", "answer_status": "Solved"}')
        return reply_to_completion(Message(role="assistant", content=text), prompt_tokens=3)
    return responder


def answers(tmp_path: Path, name: str, reverse: bool = False) -> Path:
    """G1_tool's released answers, the queries in their order or reversed."""
    doc = json.loads((dataset("tooleval") / "converted" / "gpt-3.5-turbo_CoT" /
                      "G1_tool.json").read_text())
    items = list(doc.items())
    folder = tmp_path / name
    folder.mkdir()
    (folder / "G1_tool.json").write_text(json.dumps(dict(items[::-1] if reverse else items)))
    return folder


def ids(run_dir: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (run_dir / "samples.jsonl").read_text()
            .splitlines()]


def test_limit_takes_the_first_queries_of_the_comparison(tmp_path: Path) -> None:
    first = answers(tmp_path, "first")
    last = answers(tmp_path, "last", reverse=True)
    order = list(json.loads((first / "G1_tool.json").read_text()))
    seen: list[dict[str, Any]] = []
    with FakeOpenAIServer(judge(seen)) as srv:
        common = ("--judge", "openai/fake", "--base-url", srv.base_url, "--mode", "stable",
                  "--votes", "1", "--no-cache", "--json")
        doc = json_doc(toolscore("tooleval", "winrate", str(first), str(last), *common,
                                 "--limit", "3", "--out", "files", cwd=tmp_path))
        # tooleval runs as sides: their stored labels are reused, the limit still holds
        for side in ("cand", "ref"):
            json_doc(toolscore("tooleval", "passrate", str(first), *common, "--limit", "5",
                               "--out", side, cwd=tmp_path))
        runs = json_doc(toolscore("tooleval", "winrate", "cand", "ref", *common, "--limit",
                                  "2", "--out", "runs", cwd=tmp_path))
    # the candidate's first three queries, each found on the other side (no missing answer)
    assert doc["overall"]["queries"] == 3
    assert sorted(ids(tmp_path / "files")) == sorted(f"G1_tool/{q}" for q in order[:3])
    records = [json.loads(x) for x in (tmp_path / "files" / "samples.jsonl").read_text()
               .splitlines()]
    assert all(r["output"]["reference"]["source"] != "missing" for r in records)
    assert runs["overall"]["queries"] == 2
    assert sorted(ids(tmp_path / "runs")) == sorted(f"G1_tool/{q}" for q in order[:2])
