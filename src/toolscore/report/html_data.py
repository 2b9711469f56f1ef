"""The numbers behind the HTML report: intervals, breakdowns and per-sample verdicts of one run.

Kept apart from the page itself (:mod:`toolscore.report.html`) so the figures can be tested and
reused without parsing HTML. Point estimates are the benchmark's own (``scores.json``, via
:func:`~toolscore.report.overview.run_overview`); what is computed here is what a reader needs
to trust and explain them: bootstrap intervals over conversations, and where the misses are
(which split, tool, plugin, error type, which tool was called instead of which).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np

from toolscore.stats import bootstrap_ci

NO_CALL = "(no call)"
NO_TRUTH = "(not expected)"
UNKNOWN_PLUGIN = "(unknown)"

# ToolTalk-style headline: (scores.json key, label, numerator score, denominator score).
# A ratio of sums, as the method aggregates it; ``None`` numerator = mean of a per-sample score.
RATIO_METRICS: list[tuple[str, str, str, str | None]] = [
    ("success_rate", "success", "success", None),
    ("precision", "precision", "matches", "predictions"),
    ("recall", "recall", "matches", "ground_truths"),
    ("action_precision", "action precision", "valid_actions", "actions"),
    ("incorrect_action_rate", "incorrect actions", "bad_actions", "actions"),
    ("soft_success", "soft success", "soft_success", None),
]


def primary_metric(records: list[dict[str, Any]]) -> str | None:
    """``success`` if scored, else the first pass/fail score of any record."""
    seen: list[str] = []
    for r in records:
        for key, value in (r.get("scores") or {}).items():
            if isinstance(value, bool) and key not in seen:
                seen.append(key)
    return "success" if "success" in seen else (seen[0] if seen else None)


def failed(record: dict[str, Any], metric: str | None) -> bool:
    """An errored record, or one whose primary pass/fail score is false."""
    if record.get("status") != "ok":
        return True
    return metric is not None and (record.get("scores") or {}).get(metric) is False


def split_of(record: dict[str, Any]) -> str:
    return str((record.get("meta") or {}).get("split") or "all")


def _value(record: dict[str, Any], key: str) -> float | None:
    v = (record.get("scores") or {}).get(key)
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)) and np.isfinite(v):
        return float(v)
    return None


def _ratio(num: np.ndarray, den: np.ndarray) -> float:
    total = den.sum()
    return float(num.sum() / total) if total else float("nan")


def _interval(records: list[dict[str, Any]], num: str, den: str | None,
              n_resamples: int, seed: int) -> tuple[float, float, int] | None:
    """(low, high, n) of the 95% bootstrap CI, resampling conversations (a sample's epochs
    together, see :func:`resampled_unit`); None if not scored."""
    if den is None:
        rows = [(v, str(r["id"])) for r in records if (v := _value(r, num)) is not None]
        if not rows:
            return None
        low, high = bootstrap_ci(np.array([v for v, _ in rows]), np.mean,
                                 n_resamples=n_resamples, seed=seed,
                                 groups=[g for _, g in rows])
        return low, high, len(rows)
    pairs = [(a, b, str(r["id"])) for r in records
             if (a := _value(r, num)) is not None and (b := _value(r, den)) is not None]
    if not pairs:
        return None
    nums = np.array([p[0] for p in pairs], dtype=float)
    dens = np.array([p[1] for p in pairs], dtype=float)
    low, high = bootstrap_ci((nums, dens), _ratio, n_resamples=n_resamples, seed=seed,
                             groups=[p[2] for p in pairs])
    return low, high, len(pairs)


def resampled_unit(records: list[dict[str, Any]]) -> str:
    """What the intervals resample: samples when some sample has several epochs (they are not
    independent), else (sample, epoch) records, which are then the same thing."""
    ids = [str(r["id"]) for r in records if r.get("status") == "ok"]
    return "samples" if len(set(ids)) < len(ids) else "records"


def _generic_metrics(records: list[dict[str, Any]]) -> list[tuple[str, str, str, str | None]]:
    """For benchmarks without ToolTalk counts: every pass/fail or [0, 1] score, as a mean."""
    keys: dict[str, None] = {}
    for r in records:
        for key, v in (r.get("scores") or {}).items():
            if isinstance(v, bool) or (isinstance(v, float) and 0.0 <= v <= 1.0):
                keys.setdefault(key, None)
    return [(k, k, k, None) for k in keys]


def headline(records: list[dict[str, Any]], metrics: dict[str, Any] | None, *,
             n_resamples: int = 2000, seed: int = 0) -> dict[str, list[dict[str, Any]]]:
    """``{split: [{key, label, value, low, high, n}]}``; ``value`` from scores.json when there."""
    ok = [r for r in records if r.get("status") == "ok"]
    by_split: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in ok:
        by_split[split_of(r)].append(r)
    if len(by_split) > 1:
        by_split["all"] = ok
    has_counts = any("matches" in (r.get("scores") or {}) for r in ok)
    specs = RATIO_METRICS if has_counts else _generic_metrics(ok)
    out: dict[str, list[dict[str, Any]]] = {}
    for split, recs in by_split.items():
        published = (metrics or {}).get(split) if isinstance((metrics or {}).get(split), dict) \
            else None
        rows = []
        for key, label, num, den in specs:
            ci = _interval(recs, num, den, n_resamples, seed)
            if ci is None and den is not None:  # no counts: the per-sample score, averaged
                num, den = key, None
                ci = _interval(recs, num, den, n_resamples, seed)
            if ci is None:
                continue
            if published is not None and isinstance(published.get(key), (int, float)):
                value = float(published[key])
            elif den is None:
                value = float(np.mean([v for r in recs if (v := _value(r, num)) is not None]))
            else:
                value = _ratio(np.array([_value(r, num) or 0.0 for r in recs]),
                               np.array([_value(r, den) or 0.0 for r in recs]))
            rows.append({"key": key, "label": label, "value": value, "low": ci[0],
                         "high": ci[1], "n": ci[2]})
        out[split] = rows
    return out


def _calls(record: dict[str, Any]) -> tuple[list[tuple[int, int, str]], set[tuple[int, int]],
                                             list[dict[str, Any]]]:
    """Ground-truth calls (turn, index, name), the matched ones, and the prediction outcomes."""
    truths = []
    for t in (record.get("output") or {}).get("turns") or []:
        for i, g in enumerate(t.get("ground_truth") or []):
            truths.append((int(t.get("turn", 0)), i, str((g.get("request") or {}).get("api_name"))))
    outcomes = list((record.get("scores") or {}).get("outcomes") or [])
    matched = {(int(o["match"][0]), int(o["match"][1])) for o in outcomes if o.get("match")}
    return truths, matched, outcomes


def tool_breakdown(records: list[dict[str, Any]], plugin_of: Callable[[str], str]
                   ) -> list[dict[str, Any]]:
    """Per tool: expected calls and how many were made, calls made and how many were right."""
    rows: dict[str, dict[str, Any]] = {}

    def row(name: str) -> dict[str, Any]:
        return rows.setdefault(name, {"tool": name, "plugin": plugin_of(name), "expected": 0,
                                      "found": 0, "called": 0, "correct": 0, "bad_actions": 0,
                                      "failed_samples": 0})

    metric = primary_metric(records)
    for r in records:
        if r.get("status") != "ok":
            continue
        truths, matched, outcomes = _calls(r)
        for turn, i, name in truths:
            row(name)["expected"] += 1
            row(name)["found"] += (turn, i) in matched
        for o in outcomes:
            if not o.get("name"):
                continue
            x = row(str(o["name"]))
            x["called"] += 1
            x["correct"] += bool(o.get("match"))
            x["bad_actions"] += bool(o.get("bad_action"))
        if failed(r, metric):
            for name in {n for _, _, n in truths}:
                row(name)["failed_samples"] += 1
    for x in rows.values():
        x["recall"] = x["found"] / x["expected"] if x["expected"] else None
        x["precision"] = x["correct"] / x["called"] if x["called"] else None
    return sorted(rows.values(), key=lambda x: (x["plugin"], x["tool"]))


def plugin_breakdown(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The per-tool counts summed per plugin."""
    sums: dict[str, dict[str, Any]] = {}
    for t in tools:
        p = sums.setdefault(t["plugin"], {"plugin": t["plugin"], "tools": 0, "expected": 0,
                                          "found": 0, "called": 0, "correct": 0,
                                          "bad_actions": 0})
        p["tools"] += 1
        for k in ("expected", "found", "called", "correct", "bad_actions"):
            p[k] += t[k]
    for p in sums.values():
        p["recall"] = p["found"] / p["expected"] if p["expected"] else None
        p["precision"] = p["correct"] / p["called"] if p["called"] else None
    return sorted(sums.values(), key=lambda p: p["plugin"])


def error_breakdown(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per error type (scored per turn): turns, samples, split counts, a few example ids."""
    rows: dict[str, dict[str, Any]] = {}
    for r in records:
        types = dict((r.get("scores") or {}).get("error_types") or {})
        if r.get("status") != "ok":
            types = {"-": "infrastructure error"}
        seen: set[str] = set()
        for etype in types.values():
            x = rows.setdefault(str(etype), {"error_type": str(etype), "turns": 0, "samples": 0,
                                             "splits": Counter(), "examples": []})
            x["turns"] += 1
            if etype not in seen:
                seen.add(etype)
                x["samples"] += 1
                x["splits"][split_of(r)] += 1
                if len(x["examples"]) < 5:
                    x["examples"].append(f"{r['id']}#{r.get('epoch', 0)}")
    for x in rows.values():
        x["splits"] = dict(sorted(x["splits"].items()))
    return sorted(rows.values(), key=lambda x: -x["turns"])


def confusion(records: list[dict[str, Any]]) -> dict[tuple[str, str], int]:
    """``{(expected tool, called tool): count}`` over the unmatched calls of each turn.

    Within a turn the unmatched ground truths and unmatched predictions are paired in order;
    leftovers pair with ``(no call)`` / ``(not expected)``. Matched calls are left out, so the
    matrix shows only the mistakes: which tool was called where another was expected.
    """
    counts: Counter[tuple[str, str]] = Counter()
    for r in records:
        if r.get("status") != "ok":
            continue
        truths, matched, outcomes = _calls(r)
        turns = sorted({t for t, _, _ in truths} | {int(o.get("turn", 0)) for o in outcomes})
        for turn in turns:
            gt = [n for t, i, n in truths if t == turn and (t, i) not in matched]
            pred = [str(o["name"]) for o in outcomes
                    if int(o.get("turn", 0)) == turn and not o.get("match") and o.get("name")]
            for k in range(max(len(gt), len(pred))):
                counts[(gt[k] if k < len(gt) else NO_TRUTH,
                        pred[k] if k < len(pred) else NO_CALL)] += 1
    return dict(counts)


def distributions(records: list[dict[str, Any]], bins: int = 10) -> dict[str, list[int]]:
    """Histograms (``bins`` equal bins over [0, 1]) of the per-sample fractional scores."""
    values: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if r.get("status") != "ok":
            continue
        for key, v in (r.get("scores") or {}).items():
            if isinstance(v, float) and 0.0 <= v <= 1.0:
                values[key].append(v)
    return {k: np.histogram(np.array(v), bins=bins, range=(0.0, 1.0))[0].tolist()
            for k, v in values.items()}


def plugin_lookup(benchmark: str | None, plugin_names: list[str]) -> Callable[[str], str]:
    """tool name -> plugin name, from the benchmark's plugin set when it can be loaded."""
    mapping: dict[str, str] = {}
    if benchmark:
        try:
            from toolscore.env.registry import available_plugin_sets, load_plugins

            if benchmark in available_plugin_sets():
                for plugin in load_plugins(benchmark):
                    for tool in plugin.tools:
                        mapping[tool.name] = plugin.name
        except Exception:  # a report must not fail because a plugin package is broken
            mapping = {}
    single = plugin_names[0] if len(plugin_names) == 1 else None
    return lambda name: mapping.get(name) or single or UNKNOWN_PLUGIN
