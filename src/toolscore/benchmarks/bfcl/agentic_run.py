"""BFCL's agentic categories (memory, web search) played as BFCL's function-calling handler plays
them, in a runner that runs samples concurrently.

A sample is one scored question, as BFCL scores them (so a category's accuracy counts
questions, and the summary's agentic figure is built as for every other category). A web
search question stands alone. A memory question needs its scenario's prerequisite
conversations to have run first, one after the other, each starting from the memory the
previous one left: the benchmark keeps, per run (event loop), epoch, category and scenario, one
shared task that plays that chain; every question of the scenario awaits it, then starts from
the memory the last prerequisite left (:class:`~toolscore.benchmarks.bfcl.multiturn.memory.
Snapshots`, one per category and epoch; questions never save). Different scenarios' chains,
and the questions once their chain is done, run concurrently. Prerequisites are never scored.

What a question's output holds: its result (one turn of raw step outputs, what BFCL's checker
reads), the call results, whether the step limit cut it short, the messages its turn opened
with (``said``: BFCL's system prompts, with the memory the question started from, and the
question), and the ids of the prerequisites it waited for; the first question of each
scenario (in the data's order) also holds the whole chain as played (``prereq``: id, result,
call results per prerequisite; what BFCL keeps in its ``<category>_prereq`` result file).
Rescoring needs the question's result alone. A resumed run that still has questions of a
scenario to play plays that scenario's chain again (the memory earlier questions started from
is kept only as the text of their prompt), and a chain that fails is played again by the next
question that needs it.

The ``oracle`` model answers each question with its first possible answer, as a text (it makes
no call); on a prerequisite it answers each turn with a text and makes no call, so the memory
stays empty. Its questions all score 100%.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import Sample
from toolscore.benchmarks.bfcl import episode, prompting
from toolscore.benchmarks.bfcl.categories import MEMORY
from toolscore.benchmarks.bfcl.data import class_documents, read_lines
from toolscore.benchmarks.bfcl.oracle import END_OF_TURN
from toolscore.data import DataError


def samples(data_dir: Path, category: str) -> list[Sample]:
    """The category's questions, with their possible answers (paired by position as BFCL
    pairs them) and, for memory, their scenario's prerequisite chain."""
    from toolscore.benchmarks.bfcl.multiturn import memory

    if category in MEMORY:
        prereqs, questions = memory.memory_entries(data_dir, category)
        answer_name = "BFCL_v4_memory.json"
    else:
        prereqs, questions = {}, memory.web_search_entries(data_dir, category)
        answer_name = "BFCL_v4_web_search.json"
    answers = read_lines(data_dir / "possible_answer" / answer_name)
    if len(answers) != len(questions):
        raise DataError(f"bfcl: {category}: {len(questions)} questions but {len(answers)} "
                        "possible answers")
    out, seen = [], set()
    for entry, answer in zip(questions, answers, strict=True):
        data: dict[str, Any] = {"category": category, "entry": entry, "answer": answer}
        if category in MEMORY:
            data["prereqs"] = prereqs.get(entry["scenario"], [])
            data["records_chain"] = entry["scenario"] not in seen
            seen.add(entry["scenario"])
        out.append(Sample(str(entry["id"]), data, {"split": category}))
    return out


def _documents(data_dir: Path, entry: dict[str, Any]) -> list[dict[str, Any]]:
    return prompting.multi_turn_documents(entry, lambda c: class_documents(data_dir, c))[0]


async def _play_entry(data_dir: Path, entry: dict[str, Any], model: Any, epoch: int,
                      snapshots: Any, replies: list[str]
                      ) -> tuple[Any, list[list[dict[str, Any]]], episode.Played]:
    """One agentic entry played on its own world; ``replies`` the oracle's text per turn."""
    from toolscore.benchmarks.bfcl.multiturn import memory
    from toolscore.benchmarks.bfcl.multiturn.backends.memory_base import MemoryBackend
    from toolscore.benchmarks.bfcl.multiturn.execute import World

    entry = dict(entry)
    backend = None
    if snapshots is not None:
        entry["initial_config"] = snapshots.config(entry)
    world = World(entry)
    if memory.is_memory(str(entry["id"])):
        instance = world.instances[entry["involved_classes"][0]]
        assert isinstance(instance, MemoryBackend)
        backend = instance
    turns = memory.with_system_prompts(entry, backend)
    steps = [[{"content": text}] for text in replies]
    played = await episode.play(entry, _documents(data_dir, entry), {}, model,
                                prompting.generate_config(epoch), steps, world=world,
                                turns=turns)
    return backend, turns, played


class Chains:
    """The memory categories' prerequisite chains of one benchmark: played once per event
    loop, epoch, category and scenario, awaited by every question of the scenario."""

    def __init__(self) -> None:
        self._tasks: dict[tuple[int, int, str, str], asyncio.Task[list[dict[str, Any]]]] = {}
        self._snapshots: dict[tuple[int, int, str], Any] = {}

    def snapshots(self, epoch: int, category: str) -> Any:
        from toolscore.benchmarks.bfcl.multiturn.memory import Snapshots

        key = (id(asyncio.get_running_loop()), epoch, category)
        if key not in self._snapshots:
            self._snapshots[key] = Snapshots()
        return self._snapshots[key]

    async def _chain(self, data_dir: Path, chain: list[dict[str, Any]], model: Any,
                     epoch: int, snapshots: Any) -> list[dict[str, Any]]:
        out = []
        for entry in chain:
            replies = [END_OF_TURN] * len(entry["question"])
            backend, _, played = await _play_entry(data_dir, entry, model, epoch, snapshots,
                                                   replies)
            snapshots.save(entry, backend)  # even when the step limit cut it short
            out.append({"id": entry["id"], "result": played.result,
                        "executions": played.executions, "forced_quit": played.forced_quit})
        return out

    async def run(self, data_dir: Path, sample: Sample, model: Any, epoch: int
                  ) -> list[dict[str, Any]]:
        """The sample's scenario's chain as played (playing it if no question has yet)."""
        category, entry = sample.data["category"], sample.data["entry"]
        key = (id(asyncio.get_running_loop()), epoch, category, str(entry["scenario"]))
        task = self._tasks.get(key)
        if task is None or (task.done() and (task.cancelled() or task.exception())):
            task = asyncio.ensure_future(self._chain(
                data_dir, sample.data["prereqs"], model, epoch,
                self.snapshots(epoch, category)))
            self._tasks[key] = task
        return await asyncio.shield(task)


async def run_sample(data_dir: Path, chains: Chains, sample: Sample, model: Any, epoch: int
                     ) -> dict[str, Any]:
    """Play one agentic question (after its prerequisites, for memory)."""
    category, entry = sample.data["category"], sample.data["entry"]
    out: dict[str, Any] = {"category": category}
    snapshots = None
    if category in MEMORY:
        chain = await chains.run(data_dir, sample, model, epoch)
        snapshots = chains.snapshots(epoch, category)
        out["depends_on"] = list(entry["depends_on"])
        if sample.data.get("records_chain"):
            out["prereq"] = chain
    truth = sample.data["answer"]["ground_truth"]
    _, turns, played = await _play_entry(data_dir, entry, model, epoch, snapshots,
                                         [str(truth[0]) if truth else ""])
    out.update({"said": turns, "result": played.result, "executions": played.executions,
                "forced_quit": played.forced_quit})
    return out


def score(output: dict[str, Any], sample: Sample) -> dict[str, Any]:
    from toolscore.benchmarks.bfcl.agentic import check_agentic

    v = check_agentic(sample.data["entry"], sample.data["answer"], output.get("result"))
    return {"valid": bool(v.valid), "error_type": v.error_type, "errors": list(v.errors)}


def check(categories: list[str], web_search: bool) -> None:
    """What the agentic categories need before the first model call (one-line errors)."""
    from toolscore.benchmarks.options import OptionError

    if any(c.startswith("web_search") for c in categories):
        import os

        from toolscore.benchmarks.bfcl.multiturn.backends import web_search as ws

        if web_search:
            ws.allow(True)
        try:
            ws.require()
        except ws.WebSearchDisabled as e:
            raise OptionError(f"bfcl: {e}") from None
        if not os.environ.get("SERPAPI_API_KEY", "").strip():
            raise OptionError("bfcl: the web search categories need a SerpAPI key in "
                              "SERPAPI_API_KEY")
    if "memory_vector" in categories:
        from toolscore.benchmarks.bfcl.multiturn.backends.memory_vector import embedder

        try:
            embedder()
        except Exception as e:  # the embed extra or the model's weights are missing
            raise OptionError(f"bfcl: memory_vector needs the sentence embedder of the "
                              f"'embed' extra: {str(e).splitlines()[0] if str(e) else e!r}"
                              ) from None
