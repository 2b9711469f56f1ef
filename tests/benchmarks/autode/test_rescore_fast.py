"""The shortcuts that make AutoDE rescoring fast give exactly what the plain definitions give:
plain-text tests standing in for regular expressions, asking sentences and dialogue counts
memoised, case scores shared, per-case means over the trial axis."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import data
from support.data import needs

from toolscore.benchmarks.autode import analysis, asking
from toolscore.benchmarks.autode.analysis import DialogueStats, case_facts, redundant_questions
from toolscore.benchmarks.autode.apidocs import load_api_docs
from toolscore.benchmarks.autode.asking import asking_sentences
from toolscore.benchmarks.autode.data import load_results, load_scripts
from toolscore.benchmarks.autode.scoring import (
    CaseScore,
    RunScore,
    TrialScore,
    case_score,
    exact_equal,
    exact_match,
    filter_arguments,
    normalise_value,
    normalised_equal,
    score_case,
    slot_counts,
)

DATA = data.path("autode")
# Characters that exercise the shortcuts: sentence ends, case, word edges, non-ASCII letters
# that match ASCII ones when case is ignored (KELVIN SIGN ~ k, LONG S ~ s, dotted I).
ALPHABET = "?.! \n\tabcdeklnoprstuwyPLKSN_0-'\u212a\u017f\u0130\u00e9"
texts = st.text(alphabet=ALPHABET, max_size=40) | st.sampled_from([
    "Please provide the date.", "PLEASE tell me", "Let me know!", "i need to know.", "ok.",
    "ple\u017fe give it", "\u212ay?", "Could you share it", "please\ntell me"])


request_texts = st.lists(st.sampled_from([
    "please", "PLEASE", "Please", " ", "  ", "\n", "\t", "x", "_", "9", ".", "tell", "provide",
    "give", "confirm", "let me know", "Let Me Know", "i need to know", "I NEED TO KNOW", "s",
    "know", "ing", "\u212a"]), max_size=8).map("".join)


@settings(max_examples=1000, deadline=None)
@given(texts | request_texts)
def test_asks_is_the_regex(text: str) -> None:
    # Any text, and request phrases put together from their parts, next to word characters
    # and edges.
    assert asking.asks(text) == (asking.ASKING.search(text) is not None)


words_texts = st.lists(st.sampled_from([
    "type", "types", "room", "9", "0", "a", "_", " ", ".", "-", "\u00e9", "\u212a", "tv",
    "x9"]), max_size=8).map("".join)


@settings(max_examples=600, deadline=None)
@given(words_texts, st.sampled_from(["type", "room", "tv", "x9", "roomtype", "types"]))
def test_has_word_is_among_the_words(text: str, word: str) -> None:
    lowered = text.lower()
    assert asking.has_word(lowered, word) == (word in asking.WORD.findall(lowered))


def plain_asking_sentences(text: str) -> list[str]:
    if not asking.ASKING.search(text):
        return []
    return [s for s in asking.SENTENCE.split(text) if asking.ASKING.search(s)]


@settings(max_examples=300, deadline=None)
@given(st.lists(texts, max_size=4).map(" ".join))
def test_asking_sentences_are_the_plain_split(text: str) -> None:
    assert asking_sentences(text) == plain_asking_sentences(text)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab.?!,\n \t\r\x0b\x1c\u2028\u00a0", max_size=30))
def test_sentences_are_the_lookbehind_split(text: str) -> None:
    # Unicode and ASCII-only whitespace (\x1c is \s in a str pattern) next to every mark.
    assert asking.sentences(text) == asking.SENTENCE.split(text)


def test_sentences_edges() -> None:
    for text in ["Hi. There? Yes!", "a.\n\n b", "a\n.  b", "?? x", "end.", ". a", "a.b c"]:
        assert asking.sentences(text) == asking.SENTENCE.split(text)
    assert asking.sentences("Hi.  Name?\nok") == ["Hi.", "Name?", "ok"]


def plain_said(value: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE) is not None


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=ALPHABET, min_size=2, max_size=4), texts)
def test_said_is_the_whole_phrase_regex(value: str, text: str) -> None:
    assert asking.said(asking.phrase_of(value), text, text.lower()) == plain_said(
        value, text)


def test_said_edges() -> None:
    for value, text, expected in [("tv", "the TV.", True), ("tv", "TVs", False),
                                  ("tv", "a_tv", False), ("tv", "tvtv tv", True),
                                  ("2", "level 2", True), ("2", "12", False),
                                  ("(a", "x (a y", True), ("(a", "x(a", False),
                                  ("a)", "a) b", True), ("ab", "\u212aab", False)]:
        assert asking.said(asking.phrase_of(value), text, text.lower()) is expected
        assert plain_said(value, text) is expected


def plain_counts(content: list[dict[str, str]], facts: analysis.CaseFacts) -> tuple[int, int]:
    """The heuristic as its docstring states it, with no shortcut."""
    questions = redundant = 0
    given_slots: list[str] = []
    for turn in content:
        text = turn.get("message") or ""
        if turn.get("role") == "User":
            given_slots += [k for k, (_, _, v) in facts.values.items()
                            if k not in given_slots and plain_said(v, text)]
            continue
        asked = plain_asking_sentences(text)
        if not asked:
            continue
        questions += 1
        if any(facts.keywords[k] & set(analysis._words(s)) and not plain_said(
                facts.values[k][2], s) for s in asked for k in given_slots):
            redundant += 1
    return questions, redundant


@needs("autode")
@pytest.mark.parametrize("stem", ["a_gpt35_static_v2", "u_llama7b_a_gpt35_complementary"])
def test_released_dialogues_counted_as_defined(stem: str) -> None:
    scripts = {s.uuid: s for s in load_scripts(DATA)}
    docs = {d.name: d for d in load_api_docs(DATA)}
    records = load_results(DATA / "results" / f"{stem}.jsonl").records
    random.Random(0).shuffle(records)
    redundant_seen = 0
    for record in records[:400]:
        script = scripts[record.uuid]
        content = [{"role": t.role, "message": t.message} for t in record.content]
        facts = case_facts(script.slots, docs.get(script.api))
        counts = redundant_questions(content, script.slots, docs.get(script.api))
        assert counts == plain_counts(content, facts), record.line
        redundant_seen += counts[1]
    assert redundant_seen > 0  # the sample has redundant questions to get right


@needs("autode")
def test_dialogue_stats_reuse_counts_and_facts() -> None:
    scripts = load_scripts(DATA)
    docs = load_api_docs(DATA)
    by_uuid = {s.uuid: s for s in scripts}
    by_name = {d.name: d for d in docs}
    records = load_results(DATA / "results" / "a_claude_instant_1_2_static.jsonl").records
    dialogues = [(r.uuid, [(t.role, t.message) for t in r.content]) for r in records]
    stats = DialogueStats(scripts, docs)
    first, again = stats(dialogues), stats(dialogues)
    assert first == again and len(stats.counted) < len(dialogues)
    one_by_one = [redundant_questions([{"role": a, "message": b} for a, b in turns],
                                      by_uuid[u].slots, by_name.get(by_uuid[u].api))
                  for u, turns in dialogues]
    assert first["questions"] == sum(q for q, _ in one_by_one)
    assert first["redundant_questions"] == sum(r for _, r in one_by_one)
    assert first["dialogues_with_redundant"] == sum(r > 0 for _, r in one_by_one) / len(records)


slots = st.dictionaries(st.sampled_from(["a", "b", "c", "functionName"]),
                        st.sampled_from(["x", "X", " x ", "", "null", True, False, 1, None]),
                        max_size=4)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "c"]), st.sampled_from(["x", "X", True]),
                       max_size=3), slots)
def test_case_scores_shortcuts(gold: dict, predicted: dict) -> None:
    generic = score_case(gold, predicted, equal=lambda g, p: exact_equal(g, p))
    assert score_case(gold, predicted) == generic
    kept = filter_arguments(predicted)
    assert score_case(gold, kept, filtered=True) == generic
    assert exact_match(gold, kept, filtered=True) == exact_match(gold, predicted)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "c"]),
                       st.sampled_from(["x", "X", True, "1,000", "1000"]), max_size=3), slots)
def test_slot_counts_are_both_views(gold: dict, predicted: dict) -> None:
    kept = filter_arguments(predicted)
    gold_forms = {k: normalise_value(v) for k, v in gold.items()}
    correct, normalised = slot_counts(gold, gold_forms, kept, normalise_value)
    assert case_score(correct, len(kept), len(gold)) == score_case(gold, kept, filtered=True)
    assert case_score(normalised, len(kept), len(gold)) == score_case(
        gold, kept, equal=normalised_equal, filtered=True)
    assert (correct == len(kept) == len(gold)) == exact_match(gold, kept, filtered=True)


@pytest.mark.parametrize("n_trials", range(1, 13))
def test_per_case_f1_is_the_mean_per_case(n_trials: int) -> None:
    rng = np.random.default_rng(n_trials)
    table = rng.random((n_trials, 50)).tolist()
    run = RunScore(0, 0, 0, 0, 0, 0, n_trials,
                   [TrialScore(0, 0, 0, [CaseScore(0, 0, f) for f in row]) for row in table])
    assert run.per_case_f1() == [float(np.mean([row[i] for row in table])) for i in range(50)]


def test_paused_gc_restores_the_collector() -> None:
    import gc

    from toolscore.benchmarks.autode.rescore import paused_gc

    assert gc.isenabled()
    with paused_gc():
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), paused_gc():
        raise RuntimeError
    assert gc.isenabled()
