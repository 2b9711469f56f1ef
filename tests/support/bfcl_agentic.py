"""Call sequences for BFCL's memory backends and answers for its agentic checker.

Stdlib only: imported both by ``tests/reference/bfcl/record_agentic.py`` (BFCL's own backends
and checker, in the reference environment) and by toolscore's tests, so that both sides run the
same calls and judge the same answers.

Memory: per backend and scenario, the prerequisite conversations in their order, each turned
into calls writing what its user says into the memory (with the corners: full memories,
entries too long, keys that are not snake_case, duplicates, missing keys or ids, odd ``k`` and
``top_k``, an empty search), then the first ``QUESTIONS`` questions of the scenario, each
turned into searches of the memory the prerequisites left.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

BACKENDS = ("kv", "vector", "rec_sum")
SCENARIOS = ("customer", "finance", "healthcare", "notetaker", "student")
#: questions per scenario that are run (each reloads the scenario's memory)
QUESTIONS = 4


def read_lines(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _snake(text: str) -> str:
    words = re.findall(r"[a-z]+", text.lower())
    return "_".join(words) or "note"


def state_digest(state: dict) -> str:
    """A memory backend's state (as its snapshot file holds it), hashed: the fixture keeps
    full states only where a prerequisite leaves its snapshot."""
    text = json.dumps(state, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _plain(text: str) -> str:
    # BFCL's executor rewrites its call text before evaluating it, string literals included:
    # "browser (because" is stored as "browser(because". toolscore's executor leaves literals
    # as written, so the recorded calls hold no parenthesis (not what is compared here).
    return text.replace("(", "[").replace(")", "]")


def _texts(entry: dict) -> list[str]:
    return [_plain(m["content"]) for turn in entry["question"] for m in turn
            if m["role"] == "user"]


def _kv_prereq(entry: dict, index: int) -> list[str]:
    topic = _snake(entry["topic"])
    calls = []
    for i, text in enumerate(_texts(entry)):
        key = f"{topic}_{i}"
        calls.append(f"core_memory_add(key={key!r}, value={text[:290]!r})")
        value = text * 3 if i == 0 and index == 1 else text
        calls.append(f"archival_memory_add(key={key!r}, value={value!r})")
        if i == 1:
            calls.append(f"core_memory_add(key={key!r}, value='again')")
            calls.append(f"archival_memory_add(key={'Bad Key ' + str(i)!r}, value='x')")
            calls.append(f"core_memory_replace(key={key!r}, value={text!r})")
            calls.append(f"core_memory_replace(key={key!r}, value={text[:50]!r})")
        if i == 2:
            calls.append(f"core_memory_key_search(query={text[:80]!r})")
            calls.append(f"archival_memory_key_search(query={text[:120]!r}, k=3)")
            calls.append(f"archival_memory_retrieve(key={topic + '_0'!r})")
            calls.append("core_memory_retrieve(key='missing_key')")
    if index == 2:
        calls += ["core_memory_remove(key='nothing_here')", "core_memory_list_keys()",
                  "core_memory_clear()", "core_memory_key_search(query='anything')",
                  f"core_memory_add(key={topic + '_summary'!r}, value={entry['topic']!r})"]
    if index == 3:
        calls += [f"archival_memory_remove(key={topic + '_1'!r})",
                  "archival_memory_list_keys()", "core_memory_retrieve_all()",
                  "archival_memory_key_search(query='the', k=-2)",
                  "archival_memory_key_search(query='', k=None)"]
    return calls


def _vector_prereq(entry: dict, index: int) -> list[str]:
    calls = []
    for i, text in enumerate(_texts(entry)):
        core = text if i == 0 else text[:290]
        calls.append(f"core_memory_add(text={core!r})")
        archival = text * 2 if i == 1 and index == 0 else text
        calls.append(f"archival_memory_add(text={archival!r})")
        if i == 2:
            calls.append(f"archival_memory_retrieve(query={text[:100]!r}, top_k=3)")
            calls.append(f"core_memory_retrieve(query={text[:60]!r})")
            calls.append(f"core_memory_update(vec_id=0, new_text={text[:200]!r})")
            calls.append("core_memory_update(vec_id=99, new_text='x')")
    if index == 1:
        calls += ["core_memory_remove(vec_id=1)", "core_memory_remove(vec_id=1)",
                  "core_memory_retrieve_all()", "archival_memory_retrieve(query='x', top_k=0)",
                  "archival_memory_retrieve(query='x', top_k=None)",
                  "archival_memory_retrieve(query='x', top_k=2.5)",
                  "archival_memory_retrieve(query=7)", "core_memory_add(text=5)"]
    if index == 2:
        calls += ["core_memory_clear()", "core_memory_retrieve(query='anything')",
                  f"core_memory_add(text={entry['topic']!r})",
                  f"core_memory_add(text={entry['topic']!r})",
                  f"core_memory_retrieve(query={entry['topic']!r}, top_k=100)"]
    return calls


def _rec_sum_prereq(entry: dict, index: int) -> list[str]:
    calls = [] if index else ["memory_retrieve()"]
    texts = _texts(entry)
    for i, text in enumerate(texts):
        calls.append(f"memory_append(text={text[:700] + ' '!r})")
        if i == 2:
            calls.append("memory_retrieve()")
            calls.append(f"memory_replace(old_text={text[:30]!r}, new_text={text[:30].upper()!r})")
            calls.append("memory_replace(old_text='no such text anywhere', new_text='x')")
    if index == 1:
        calls += [f"memory_update(text={'y' * 10001!r})", "memory_clear()",
                  f"memory_update(text={texts[0]!r})"]
    return calls


PREREQ_CALLS = {"kv": _kv_prereq, "vector": _vector_prereq, "rec_sum": _rec_sum_prereq}


def question_calls(backend: str, question: str) -> list[str]:
    question = _plain(question)
    if backend == "kv":
        return [f"archival_memory_key_search(query={question!r})",
                f"core_memory_key_search(query={question!r}, k=2)", "core_memory_list_keys()"]
    if backend == "vector":
        return [f"archival_memory_retrieve(query={question!r})",
                f"core_memory_retrieve(query={question!r}, top_k=2)"]
    return ["memory_retrieve()", f"memory_append(text={question!r})"]


def prereq_entries(root: Path, scenario: str) -> list[dict]:
    return read_lines(root / "memory_prereq_conversation" / f"memory_{scenario}.json")


def question_ids(root: Path, scenario: str) -> list[str]:
    """The raw ids of the questions run for ``scenario``."""
    ids = [e["id"] for e in read_lines(root / "BFCL_v4_memory.json") if e["scenario"] == scenario]
    return ids[:QUESTIONS]


# -- answers for the agentic checker ---------------------------------------------------------
CALL = [{"core_memory_retrieve": '{"key": "name"}'}]


def _reply(answer: str) -> str:
    return "{'answer': '" + answer + "', 'context': 'From what you told me earlier.'}"


def answer_variants(truth: list[str]) -> dict[str, object]:
    """Raw results (as BFCL's result file holds them) for one question with accepted
    ``truth``: right, wrong and malformed in the ways BFCL's evaluator tells apart."""
    first = truth[0]
    return {
        "right": [[CALL, _reply(first)]],
        "right_only_text": [[_reply(first)]],
        "right_last_of_many": [["thinking", CALL, _reply(first)]],
        "right_shouted": [[_reply(first.upper().replace(" ", " - "))]],
        "right_second": [[_reply(truth[-1])]],
        "right_list_step": [[[_reply(first)]]],
        "right_then_calls": [[_reply(first), CALL]],
        "right_inside_word": [[_reply("x" + first + "y")]],
        "wrong": [[CALL, _reply("I do not know")]],
        "wrong_after_right": [[_reply(first), _reply("I cannot answer this question")]],
        "calls_only": [[CALL, CALL]],
        "empty_last": [[_reply(first), ""]],
        "empty_call_step_last": [[_reply(first), []]],
        "bad_arguments_step": [[[{"core_memory_retrieve": "not json " + first}]]],
        "number_step": [[35]],
        "two_turns": [[_reply(first)], [_reply(first)]],
        "no_turns": [],
        "not_a_list": _reply(first),
    }
