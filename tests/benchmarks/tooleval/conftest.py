"""A scripted ToolEval judge that answers the reference mode's function calls over HTTP.

Its verdicts follow markers written into the answers and queries, so every branch of the
reference decision procedure can be reached on purpose and its outcome derived by hand:

- first look at an answer (``check_answer_status``, shown the raw ``final_answer`` string):
  "#solved" -> Solved, "#unsure" -> Unsure, "#broken" -> a value outside the enum (every time),
  else Unsolved;
- second look (``parse_answer_status``, shown the whole answer record as JSON): "#later-solved"
  -> Solved, "#still-unsure" -> Unsure, else Unsolved;
- task (``check_task_solvable``, shown ``{"query", "available_tools"}`` as JSON): "#unsolvable"
  -> Unsolvable, "#unsure-task" -> Unsure, else Solvable;
- preference (``select_better_answer``): the attempt holding "#best" (alone), else "A" (a judge
  that always picks the first shown).

Every request is kept, so a test can count judge calls and read what the judge was shown.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.testing.tooleval_judge import ScriptedToolEvalJudge
from support.tooleval_release import write_release

from toolscore.benchmarks.tooleval.data import Answer, Sample, Step
from toolscore.benchmarks.tooleval.release import EVALUATOR_DIR, load_evaluator


def between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


class ScriptedFC(ScriptedToolEvalJudge):
    """The scripted judge with fixed verdicts for unmarked inputs (see the module doc)."""

    def __init__(self) -> None:
        super().__init__(draw=False)


def make_sample(qid: str, text: str | None, query: str = "", subset: str = "S",
                finish: bool = True, give_up: bool = False) -> Sample:
    """A query whose answer finishes with ``text`` (None: no answer at all)."""
    query = query or f"query {qid}"
    tools = [{"type": "function", "function": {"name": "get", "description": "Gets.",
                                               "parameters": {}}}]
    if text is None:
        return Sample(qid, query, tools, None, subset)
    final = json.dumps({"return_type": "give_up_and_restart"} if give_up else
                       {"return_type": "give_answer", "final_answer": text})
    path = [Step("system", "sys"), Step("user", query), Step("tool", "ok", name="get",
                                                             arguments="{}")]
    if finish:
        path.append(Step("tool", "", name="Finish", arguments=final))
    return Sample(qid, query, tools, Answer("m", final if finish else "", path, len(path)),
                  subset)


def converted_file(samples: list[Sample]) -> dict[str, Any]:
    """The samples as one converted answer file ({query_id: record})."""
    return {s.query_id: {"query": s.query, "available_tools": s.available_tools,
                         "answer": None if s.answer is None else s.answer.as_record()}
            for s in samples}


@pytest.fixture(autouse=True)
def release_evaluator(tmp_path_factory: pytest.TempPathFactory,
                      monkeypatch: pytest.MonkeyPatch) -> Path:
    """ToolBench's evaluator files where a user's download puts them (the user cache's
    tooleval folder), generated from the recorded values: the shared datasets hold the
    answers, not the evaluator."""
    cache = tmp_path_factory.getbasetemp() / "xdg-cache"
    target = cache / "toolscore" / "data" / "tooleval" / EVALUATOR_DIR
    if not target.is_dir():
        write_release(cache / "toolscore" / "data" / "tooleval")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return target


@pytest.fixture
def evaluator(release_evaluator: Path) -> Any:
    return load_evaluator(release_evaluator)


@pytest.fixture
def scripted() -> ScriptedFC:
    return ScriptedFC()


@pytest.fixture
def sample_of() -> Any:
    return make_sample


@pytest.fixture
def to_converted() -> Any:
    return converted_file
