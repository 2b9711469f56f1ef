"""BFCL's figures, as its evaluator computes them (the expected values are what bfcl-eval
2026.3.23's leaderboard tables printed for the same per-category results)."""

from __future__ import annotations

from toolscore.benchmarks.bfcl.summary import aggregate


def _rows(counts: dict[str, tuple[int, int]]) -> list[tuple[str, bool]]:
    return [(c, i < ok) for c, (ok, n) in counts.items() for i in range(n)]


def test_every_single_turn_category() -> None:
    counts = {"simple_python": (400, 400), "simple_java": (97, 100),
              "simple_javascript": (50, 50), "multiple": (200, 200), "parallel": (200, 200),
              "parallel_multiple": (200, 200), "irrelevance": (240, 240),
              "live_simple": (256, 258), "live_multiple": (1050, 1052),
              "live_parallel": (16, 16), "live_parallel_multiple": (24, 24),
              "live_irrelevance": (884, 884), "live_relevance": (16, 16)}
    shown = aggregate(_rows(counts))["bfcl"]
    assert {k: shown[k] for k in ("overall", "non_live", "live", "irrelevance_detection",
                                  "relevance_detection", "multi_turn", "simple", "live_simple",
                                  "simple_java")} == {
        "overall": "29.95%", "non_live": "99.75%", "live": "99.70%",
        "irrelevance_detection": "100.00%",
        "relevance_detection": "100.00%", "multi_turn": "0.00%", "simple": "99.00%",
        "live_simple": "99.22%", "simple_java": "97.00%"}
    assert shown["web_search"] == "N/A" and shown["memory"] == "N/A"


def test_missing_categories_count_zero_and_show_na() -> None:
    counts = {"simple_python": (200, 400), "live_irrelevance": (9, 10),
              "live_multiple": (1, 4)}
    metrics = aggregate(_rows(counts))
    shown = metrics["bfcl"]
    assert shown["overall"] == "4.95%"
    assert shown["non_live"] == "4.17%" and shown["simple"] == "N/A"
    # live: weighted by counts, the categories not run by their released sizes
    assert shown["live"] == "0.33%"
    assert shown["irrelevance_detection"] == "N/A"
    assert metrics["irrelevance_detection"]["accuracy"] is None
    assert metrics["irrelevance_detection"]["counted"] == 0.45
    assert metrics["simple_python"] == {"accuracy": 0.5, "correct": 200, "total": 400}
