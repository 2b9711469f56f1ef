"""BFCL's figures from per-entry verdicts: each category's accuracy and the leaderboard's
summary (non-live, live, irrelevance, relevance, multi-turn, agentic, overall), computed as
BFCL's evaluator computes them.

A category's accuracy is its valid entries over its scored entries. The summary follows the
leaderboard's rules, quirks included:

- non-live is the plain mean of four figures (simple, itself the plain mean of Python, Java
  and JavaScript; multiple; parallel; parallel multiple): irrelevance is not part of it;
- live is the mean of its four AST categories weighted by their entry counts;
- multi-turn is the plain mean of its four categories; agentic the plain mean of web search
  and memory (each a plain mean of its categories);
- irrelevance is the plain mean of non-live and live irrelevance; relevance is live relevance;
- overall weighs non-live, live, irrelevance, multi-turn and agentic 10:10:10:30:40.

A category that was not run counts as 0 in every figure (weighted, where weights are counts,
by its released size) and makes the figures built on it "N/A" where BFCL shows N/A; the
overall, non-live, live, multi-turn and agentic figures are never N/A (BFCL prints their value
with the missing parts at 0). Here N/A is None beside the value counted (``counted``).
"""

from __future__ import annotations

from typing import Any

#: entries in each category of the pinned release (the weight of a category not run)
SIZES = {
    "simple_python": 400, "simple_java": 100, "simple_javascript": 50, "multiple": 200,
    "parallel": 200, "parallel_multiple": 200, "irrelevance": 240, "live_simple": 258,
    "live_multiple": 1053, "live_parallel": 16, "live_parallel_multiple": 24,
    "live_irrelevance": 884, "live_relevance": 16, "multi_turn_base": 200,
    "multi_turn_miss_func": 200, "multi_turn_miss_param": 200, "multi_turn_long_context": 200,
    "web_search_base": 100, "web_search_no_snippet": 100, "memory_kv": 155,
    "memory_vector": 155, "memory_rec_sum": 155,
}

#: the summary's figures, in the leaderboard's order (named apart from the categories:
#: irrelevance detection is a figure, irrelevance a category)
FIGURES = ("overall", "non_live", "live", "irrelevance_detection", "relevance_detection",
           "multi_turn", "agentic")

Score = dict[str, Any]  # accuracy (counted value), total, na (shown as N/A)


def _category(cats: dict[str, dict[str, Any]], name: str) -> Score:
    if name in cats:
        return {"accuracy": cats[name]["accuracy"], "total": cats[name]["total"], "na": False}
    return {"accuracy": 0.0, "total": SIZES.get(name, 0), "na": True}


def _mean(parts: list[Score], na_shown: bool = True) -> Score:
    return {"accuracy": sum(p["accuracy"] for p in parts) / len(parts),
            "total": sum(p["total"] for p in parts),
            "na": na_shown and any(p["na"] for p in parts)}


def _weighted(parts: list[Score], na_shown: bool = True) -> Score:
    total = sum(p["total"] for p in parts)
    return {"accuracy": sum(p["accuracy"] * p["total"] for p in parts) / total if total
            else 0.0, "total": total, "na": na_shown and any(p["na"] for p in parts)}


def _fixed(parts: list[Score], weights: list[int]) -> Score:
    s = sum(weights)
    return {"accuracy": sum(p["accuracy"] * w / s for p, w in zip(parts, weights, strict=True)),
            "total": sum(p["total"] for p in parts), "na": False}


def summary(cats: dict[str, dict[str, Any]]) -> dict[str, Score]:
    """The leaderboard's summary figures from per-category results ({category: {accuracy,
    total}}), each {accuracy (the value counted), total, na}."""
    def c(name: str) -> Score:
        return _category(cats, name)

    simple = _mean([c("simple_python"), c("simple_java"), c("simple_javascript")])
    non_live_parts = [simple, c("multiple"), c("parallel"), c("parallel_multiple")]
    non_live = _mean(non_live_parts, na_shown=False)
    live_parts = [c("live_simple"), c("live_multiple"), c("live_parallel"),
                  c("live_parallel_multiple")]
    live = _weighted(live_parts, na_shown=False)
    multi_turn = _mean([c("multi_turn_base"), c("multi_turn_miss_func"),
                        c("multi_turn_miss_param"), c("multi_turn_long_context")],
                       na_shown=False)
    web = _mean([c("web_search_base"), c("web_search_no_snippet")])
    memory = _mean([c("memory_kv"), c("memory_vector"), c("memory_rec_sum")])
    agentic = _mean([web, memory], na_shown=False)
    irrelevance = _mean([c("irrelevance"), c("live_irrelevance")])
    relevance = c("live_relevance")
    overall = _fixed([non_live, live, irrelevance, multi_turn, agentic], [10, 10, 10, 30, 40])
    return {"overall": overall, "non_live": non_live, "live": live,
            "irrelevance_detection": irrelevance, "relevance_detection": relevance,
            "multi_turn": multi_turn,
            "agentic": agentic, "non_live_ast": _mean(non_live_parts), "simple": simple,
            "live_ast": _weighted(live_parts), "web_search": web, "memory": memory}


def display(score: Score) -> str:
    """A figure as BFCL's tables print it."""
    return "N/A" if score["na"] else f"{score['accuracy'] * 100:.2f}%"


def aggregate(rows: list[tuple[str, bool]]) -> dict[str, Any]:
    """scores.json of a run from (category, valid) pairs: a group per category (accuracy,
    correct, total), the summary figures as groups (accuracy None where BFCL shows N/A,
    ``counted`` the value BFCL counts) and ``bfcl`` with every figure as BFCL prints it."""
    tally: dict[str, list[int]] = {}
    for category, valid in rows:
        t = tally.setdefault(category, [0, 0])
        t[0] += bool(valid)
        t[1] += 1
    cats = {c: {"accuracy": ok / n, "correct": ok, "total": n}
            for c, (ok, n) in sorted(tally.items(), key=lambda kv: _order(kv[0]))}
    figures = summary(cats)
    out: dict[str, Any] = dict(cats)
    for name in FIGURES:
        f = figures[name]
        # no entry count: a figure is a mean of categories, some perhaps not run
        out[name] = {"accuracy": None if f["na"] else f["accuracy"], "counted": f["accuracy"]}
    out["bfcl"] = {name: display(f) for name, f in figures.items()}
    out["bfcl"].update({c: display(_category(cats, c)) for c in cats})
    return out


def _order(category: str) -> int:
    names = list(SIZES)
    return names.index(category) if category in names else len(names)
