"""BFCL's agentic entries as a run goes through them: memory prerequisites, snapshots, prompts.

A memory category (``memory_kv``, ``memory_vector``, ``memory_rec_sum``) holds, per scenario
(``student``, ``customer``, ...), prerequisite conversations -- ``memory_prereq_conversation/
memory_<scenario>.json``, user turns only, scored by nobody -- and the questions of
``BFCL_v4_memory.json``. The model first goes through the prerequisites, one after the other,
writing what it learns to the memory backend; each prerequisite starts from the memory the
previous one left (the first from an empty one), and every question starts from the memory the
last prerequisite left, never saving what it changes. :class:`Snapshots` keeps those memories
(and, given a folder, writes them as BFCL does: ``<scenario>_final.json`` and one checkpoint
per prerequisite, so a resumed run can go on).

Ids are BFCL's: ``memory_prereq_22-student-0`` becomes ``memory_kv_prereq_22-student-0`` and
``memory_0-customer-0`` becomes ``memory_kv_0-customer-0``; ``web_search_3`` becomes
``web_search_base_3`` or ``web_search_no_snippet_3``.

What the model is sent (BFCL's system prompts, read from its release): every agentic question
(not a prerequisite) first gets the answer-format system message; then every memory entry,
prerequisites included, gets the scenario's memory instructions with the memory's current
content (:func:`memory_system_prompt`), prepended to that system message or, when there is
none, as a new one.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from toolscore.benchmarks.bfcl.data import read_lines
from toolscore.benchmarks.bfcl.multiturn.backends.memory_base import MemoryBackend
from toolscore.benchmarks.bfcl.release import constant

PREREQ_FOLDER = "memory_prereq_conversation"
_PROMPTS = "constants/default_prompts.py"


def is_memory(entry_id: str) -> bool:
    return "memory" in entry_id


def is_prereq(entry_id: str) -> bool:
    return "prereq" in entry_id


def is_first_prereq(entry_id: str) -> bool:
    return is_prereq(entry_id) and entry_id.endswith("-0")


def backend_name(category: str) -> str:
    """``memory_kv`` -> ``MemoryAPI_kv``."""
    return f"MemoryAPI_{category[len('memory_'):]}"


def scenarios(data_dir: Path) -> list[str]:
    """The scenarios that have prerequisite conversations, in file-name order."""
    names = sorted(p.stem for p in (data_dir / PREREQ_FOLDER).glob("memory_*.json"))
    return [name[len("memory_"):] for name in names]


def memory_entries(data_dir: Path, category: str
                   ) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """(prerequisite entries by scenario, in the order they run; the category's questions),
    ids and ``involved_classes`` as BFCL sets them, ``depends_on`` listing the prerequisite
    ids an entry waits for."""
    backend = backend_name(category)
    prereqs: dict[str, list[dict[str, Any]]] = {}
    for scenario in scenarios(data_dir):
        chain: list[dict[str, Any]] = []
        for entry in read_lines(data_dir / PREREQ_FOLDER / f"memory_{scenario}.json"):
            entry = copy.deepcopy(entry)
            entry["id"] = entry["id"].replace("memory", category)
            entry["depends_on"] = [e["id"] for e in chain]
            entry["involved_classes"] = [backend]
            chain.append(entry)
        prereqs[scenario] = chain
    questions = []
    for entry in read_lines(data_dir / "BFCL_v4_memory.json"):
        entry = copy.deepcopy(entry)
        entry["id"] = entry["id"].replace("memory", category)
        entry["depends_on"] = [e["id"] for e in prereqs.get(entry["scenario"], [])]
        entry["involved_classes"] = [backend]
        questions.append(entry)
    return prereqs, questions


def web_search_entries(data_dir: Path, category: str) -> list[dict[str, Any]]:
    """The web search questions of ``category`` (``web_search_base``/``_no_snippet``), with
    their ids and the backend's ``show_snippet`` setting as BFCL sets them."""
    out = []
    for entry in read_lines(data_dir / "BFCL_v4_web_search.json"):
        entry = copy.deepcopy(entry)
        entry["id"] = entry["id"].replace("web_search", category)
        entry["initial_config"] = {name: {"show_snippet": "no_snippet" not in entry["id"]}
                                   for name in entry["involved_classes"]}
        out.append(entry)
    return out


def answer_format_prompt() -> str:
    value = constant(_PROMPTS, "ADDITIONAL_SYSTEM_PROMPT_FOR_AGENTIC_RESPONSE_FORMAT")
    assert isinstance(value, str)
    return value


def memory_system_prompt(category: str, scenario: str, backend: MemoryBackend) -> str:
    """BFCL's memory instructions for ``scenario`` with the backend's memory in them."""
    settings = constant(_PROMPTS, "MEMORY_AGENT_SETTINGS")
    name = ("MEMORY_BACKEND_INSTRUCTION_UNIFIED" if "rec_sum" in category
            else "MEMORY_BACKEND_INSTRUCTION_CORE_ARCHIVAL")
    template = constant(_PROMPTS, name)
    return str(template).format(scenario_setting=settings[scenario],
                                memory_content=backend._memory_context())


def with_system_prompts(entry: dict[str, Any], backend: MemoryBackend | None = None
                        ) -> list[list[dict[str, Any]]]:
    """The entry's turns as BFCL sends them (a copy): the answer-format system message for an
    agentic question, the memory instructions for a memory entry (``backend`` = the entry's
    memory as it starts)."""
    turns: list[list[dict[str, Any]]] = copy.deepcopy(entry["question"])
    entry_id = str(entry["id"])
    if not is_prereq(entry_id):
        turns[0].insert(0, {"role": "system", "content": answer_format_prompt()})
    if is_memory(entry_id):
        if backend is None:
            raise ValueError(f"{entry_id}: a memory entry's prompt needs its memory backend")
        category = entry_id.replace("_prereq", "").rsplit("_", 1)[0]
        prompt = memory_system_prompt(category, entry["scenario"], backend)
        first = turns[0]
        if first and first[0]["role"] == "system":
            first[0]["content"] = prompt + "\n\n" + first[0]["content"]
        else:
            first.insert(0, {"role": "system", "content": prompt})
    return turns


class Snapshots:
    """The memory each entry of one memory category starts from, and what prerequisites leave.

    ``config(entry)`` is the entry's ``initial_config`` for :class:`~.execute.World`;
    ``save(entry, backend)`` is called when a prerequisite conversation ends (questions are
    never saved). With ``folder``, snapshots are also written there and read back from there.
    """

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._latest: dict[str, dict[str, Any]] = {}

    def _final_file(self, scenario: str) -> Path | None:
        return None if self.folder is None else self.folder / f"{scenario}_final.json"

    def latest(self, scenario: str) -> dict[str, Any] | None:
        if scenario in self._latest:
            return self._latest[scenario]
        path = self._final_file(scenario)
        if path is not None and path.is_file():
            value: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            self._latest[scenario] = value
            return value
        return None

    def config(self, entry: dict[str, Any]) -> dict[str, Any]:
        snapshot = None if is_first_prereq(entry["id"]) else self.latest(entry["scenario"])
        return {name: {"scenario": entry["scenario"], "snapshot": copy.deepcopy(snapshot)}
                for name in entry["involved_classes"]}

    def save(self, entry: dict[str, Any], backend: MemoryBackend) -> None:
        if not is_prereq(entry["id"]):
            return
        snapshot = backend._snapshot()
        self._latest[entry["scenario"]] = snapshot
        if self.folder is not None:
            text = json.dumps(backend._state(), indent=4)
            checkpoints = self.folder / "prereq_checkpoints"
            checkpoints.mkdir(parents=True, exist_ok=True)
            (checkpoints / f"{entry['id']}.json").write_text(text, encoding="utf-8")
            (self.folder / f"{entry['scenario']}_final.json").write_text(text, encoding="utf-8")
