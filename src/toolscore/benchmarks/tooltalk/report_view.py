"""How a ToolTalk run reads in a report: its headline as the method computes it, where the
misses are, and each conversation turn by turn with the verdict of every call.

ToolTalk aggregates precision, recall and the action rates by summing counts over
conversations (micro averages, see :mod:`toolscore.benchmarks.tooltalk.scoring`), so those are
ratios of sums here too, and the report's intervals and ``compare``'s tests are on the figures
the paper publishes. The breakdowns and the per-turn view read only stored records.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from toolscore.benchmarks.base import Breakdown, Column, IntervalMetric, ReportView
from toolscore.embed.similarity import embedder_note

NO_CALL = "(no call)"
NO_TRUTH = "(not expected)"
UNKNOWN_PLUGIN = "(unknown)"

# (label, numerator, denominator, scores.json key, value when the denominator sums to zero):
# exactly toolscore.benchmarks.tooltalk.scoring.aggregate.
INTERVAL_METRICS = [
    IntervalMetric("success", "success", key="success_rate"),
    IntervalMetric("precision", "matches", "predictions", key="precision", empty=0.0),
    IntervalMetric("recall", "matches", "ground_truths", key="recall", empty=1.0),
    IntervalMetric("action precision", "valid_actions", "actions", key="action_precision",
                   empty=1.0),
    IntervalMetric("incorrect actions", "bad_actions", "actions", key="incorrect_action_rate",
                   empty=0.0, higher_is_better=False),
    IntervalMetric("soft success", "soft_success", key="soft_success"),
]
FINAL_STATE = IntervalMetric("final-state success", "final_state_success",
                             key="final_state_success_rate")
FREE_RUNNING_NOTE = ("protocol: free-running (the agent kept its own history; no ground-truth "
                     "re-injection per turn): not comparable with reference-protocol figures")
_SUMMED = ("expected", "found", "called", "correct", "bad_actions")


def calls(record: dict[str, Any]) -> tuple[list[tuple[int, int, str]], set[tuple[int, int]],
                                           list[dict[str, Any]]]:
    """Ground-truth calls (turn, index, name), the matched ones, and the prediction outcomes."""
    truths = []
    for t in (record.get("output") or {}).get("turns") or []:
        for i, g in enumerate(t.get("ground_truth") or []):
            truths.append((int(t.get("turn", 0)), i,
                           str((g.get("request") or {}).get("api_name"))))
    outcomes = list((record.get("scores") or {}).get("outcomes") or [])
    matched = {(int(o["match"][0]), int(o["match"][1])) for o in outcomes if o.get("match")}
    return truths, matched, outcomes


def _failed(record: dict[str, Any]) -> bool:
    return (record.get("scores") or {}).get("success") is False


Calls = dict[int, tuple[list[tuple[int, int, str]], set[tuple[int, int]], list[dict[str, Any]]]]


def tool_rows(records: list[dict[str, Any]], plugin_of: dict[str, str], called: Calls | None = None
              ) -> list[dict[str, Any]]:
    """Per tool: expected calls and how many were made, calls made and how many were right.
    ``called``: :func:`calls` of the records by ``id``, when the caller has them already."""
    rows: dict[str, dict[str, Any]] = {}

    def row(name: str) -> dict[str, Any]:
        return rows.setdefault(name, {"tool": name,
                                      "plugin": plugin_of.get(name, UNKNOWN_PLUGIN),
                                      **dict.fromkeys(_SUMMED, 0), "failed_samples": 0})

    for r in records:
        if r.get("status") != "ok":
            continue
        truths, matched, outcomes = called[id(r)] if called is not None else calls(r)
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
        if _failed(r):
            for name in {n for _, _, n in truths}:
                row(name)["failed_samples"] += 1
    return sorted((_rates(x) for x in rows.values()), key=lambda x: (x["plugin"], x["tool"]))


def _rates(x: dict[str, Any]) -> dict[str, Any]:
    x["recall"] = x["found"] / x["expected"] if x["expected"] else None
    x["precision"] = x["correct"] / x["called"] if x["called"] else None
    return x


def plugin_rows(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The per-tool counts summed per plugin."""
    sums: dict[str, dict[str, Any]] = {}
    for t in tools:
        p = sums.setdefault(t["plugin"], {"plugin": t["plugin"], "tools": 0,
                                          **dict.fromkeys(_SUMMED, 0)})
        p["tools"] += 1
        for k in _SUMMED:
            p[k] += t[k]
    return sorted((_rates(p) for p in sums.values()), key=lambda p: p["plugin"])


def error_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per error type: errors as the split totals count them (a turn without ground truth counts
    one over-trigger per bad action), turns, samples, samples per split, a few example ids."""
    rows: dict[str, dict[str, Any]] = {}
    for r in records:
        types = dict((r.get("scores") or {}).get("error_types") or {})
        counts = dict((r.get("scores") or {}).get("error_counts") or {})
        if r.get("status") != "ok":
            types, counts = {"-": "infrastructure error"}, {}
        seen: set[str] = set()
        for turn, etype in types.items():
            x = rows.setdefault(str(etype), {"error_type": str(etype), "errors": 0, "turns": 0,
                                             "samples": 0, "splits": Counter(),
                                             "examples": []})
            x["errors"] += int(counts.get(turn, 1))
            x["turns"] += 1
            if etype not in seen:
                seen.add(etype)
                x["samples"] += 1
                x["splits"][str((r.get("meta") or {}).get("split") or "all")] += 1
                if len(x["examples"]) < 5:
                    x["examples"].append(f"{r['id']}#{r.get('epoch', 0)}")
    for x in rows.values():
        x["splits"] = ", ".join(f"{k} {v}" for k, v in sorted(x["splits"].items()))
        x["examples"] = ", ".join(x["examples"])
    return sorted(rows.values(), key=lambda x: -x["errors"])


def confusion(records: list[dict[str, Any]], called: Calls | None = None
              ) -> dict[tuple[str, str], int]:
    """``{(expected tool, called tool): count}`` over the unmatched calls of each turn.

    Within a turn the unmatched ground truths and unmatched predictions are paired in order;
    leftovers pair with ``(no call)`` / ``(not expected)``. Matched calls are left out, so the
    matrix shows only the mistakes: which tool was called where another was expected.
    """
    counts: Counter[tuple[str, str]] = Counter()
    for r in records:
        if r.get("status") != "ok":
            continue
        truths, matched, outcomes = called[id(r)] if called is not None else calls(r)
        turns = sorted({t for t, _, _ in truths} | {int(o.get("turn", 0)) for o in outcomes})
        for turn in turns:
            gt = [n for t, i, n in truths if t == turn and (t, i) not in matched]
            pred = [str(o["name"]) for o in outcomes
                    if int(o.get("turn", 0)) == turn and not o.get("match") and o.get("name")]
            for k in range(max(len(gt), len(pred))):
                counts[(gt[k] if k < len(gt) else NO_TRUTH,
                        pred[k] if k < len(pred) else NO_CALL)] += 1
    return dict(counts)


def breakdowns(records: list[dict[str, Any]], plugin_of: dict[str, str]) -> list[Breakdown]:
    """Per plugin, per tool, per error type, and expected-vs-called over the misses."""
    called = {id(r): calls(r) for r in records if r.get("status") == "ok"}  # read once
    tools = tool_rows(records, plugin_of, called)
    counts = [Column(k, k.replace("_", " "), "count") for k in _SUMMED]
    rates = [Column("recall", "recall"), Column("precision", "precision")]
    pairs = [{"expected": e, "called": c, "count": n}
             for (e, c), n in sorted(confusion(records, called).items(),
                                     key=lambda kv: -kv[1])]
    return [
        Breakdown("Per plugin", [Column("plugin", "plugin", "number"),
                                 Column("tools", "tools", "count"), *counts, *rates],
                  plugin_rows(tools)),
        Breakdown("Per tool", [Column("tool", "tool", "number"),
                               Column("plugin", "plugin", "number"), *counts, *rates,
                               Column("failed_samples", "failed samples", "count")], tools,
                  note="expected = ground-truth calls, found = those matched by a prediction; "
                       "called = predictions, correct = those matching a ground truth; failed "
                       "samples = failed samples expecting this tool."),
        Breakdown("Error types", [Column("error_type", "error type", "number"),
                                  Column("errors", "errors", "count"),
                                  Column("turns", "turns", "count"),
                                  Column("samples", "samples", "count"),
                                  Column("splits", "samples per split", "number"),
                                  Column("examples", "examples", "number")],
                  error_rows(records),
                  note="failed conversations only; errors = the split totals' count (one "
                       "over-trigger per bad action in a turn without ground truth)"),
        Breakdown("Unmatched calls: expected tool vs tool called",
                  [Column("expected", "expected", "number"),
                   Column("called", "called", "number"), Column("count", "count", "count")],
                  pairs, note="matched calls are left out: only the mistakes",
                  matrix=("expected", "called", "count")),
    ]


def facets(record: dict[str, Any]) -> dict[str, list[str]]:
    """Tools expected or called, and error types (infrastructure errors included)."""
    names: dict[str, None] = {}
    for t in (record.get("output") or {}).get("turns") or []:
        for c in (t.get("ground_truth") or []) + (t.get("predictions") or []):
            names.setdefault(str((c.get("request") or {}).get("api_name")), None)
    errors = {str(e) for e in ((record.get("scores") or {}).get("error_types") or {}).values()}
    if record.get("status") != "ok":
        errors.add("infrastructure error")
    return {"tool": list(names), "error type": sorted(errors)}


def _by_turn(outcomes: list[dict[str, Any]]) -> dict[int, dict[int, dict[str, Any]]]:
    """The prediction outcomes per turn, by prediction index (the last one of an index wins)."""
    turns: dict[int, dict[int, dict[str, Any]]] = {}
    for o in outcomes:
        turns.setdefault(int(o.get("turn", -1)), {})[int(o.get("index", -1))] = o
    return turns


def _call_rows(turn: dict[str, Any], outcomes: dict[int, dict[int, dict[str, Any]]]
               ) -> list[list[Any]]:
    """Ground truth next to predictions, each with its verdict (``outcomes``: :func:`_by_turn`)."""
    number = int(turn.get("turn", 0))
    mine = outcomes.get(number, {})
    matched_gt = {int(o["match"][1]): i for i, o in mine.items()
                  if o.get("match") and int(o["match"][0]) == number}
    rows: list[list[Any]] = []
    for i, g in enumerate(turn.get("ground_truth") or []):
        req = g.get("request") or {}
        verdict = ({"text": f"found (prediction {matched_gt[i] + 1})", "tone": "ok"}
                   if i in matched_gt else {"text": "missed", "tone": "bad"})
        rows.append([f"expected {i + 1}", {"text": req.get("api_name"), "tone": "strong"},
                     {"json": req.get("parameters")},
                     {"json": g.get("exception") or g.get("response")}, [verdict]])
    for i, p in enumerate(turn.get("predictions") or []):
        req = p.get("request") or {}
        o = mine.get(i) or {}
        verdicts = [{"text": f"matches expected {int(o['match'][1]) + 1}", "tone": "ok"}
                    if o.get("match") else {"text": "unmatched", "tone": "bad"}]
        if o.get("bad_action"):
            verdicts.append({"text": "bad action", "tone": "bad"})
        elif o.get("action"):
            verdicts.append({"text": "action", "tone": "tag"})
        args = req.get("parameters")
        rows.append([f"predicted {i + 1}", {"text": req.get("api_name"), "tone": "strong"},
                     {"json": p.get("raw_arguments") if args is None else args},
                     {"json": p.get("exception") or p.get("response")}, verdicts])
    return rows


def _error_tag(scores: dict[str, Any], turn: str) -> str:
    """A turn's error type, with its count when it counts more than once (over-triggers)."""
    n = int((scores.get("error_counts") or {}).get(turn, 1))
    kind = str(scores["error_types"][turn])
    return f"{kind} ×{n}" if n > 1 else kind


def error_lines(metrics: dict[str, Any]) -> list[str]:
    """Error types per split under the headline table, with the rule that counted them."""
    lines = [f"error types ({split}, failed conversations): "
             + " · ".join(f"{kind} {n}" for kind, n in m["errors"].items())
             for split, m in metrics.items()
             if isinstance(m, dict) and isinstance(m.get("errors"), dict)]
    if lines and metrics.get("error_rule"):
        lines.append(f"error-type rule: {metrics['error_rule']}")
    for split, m in metrics.items():
        if isinstance(m, dict) and m.get("final_state_conversations"):
            lines.append(f"final-state success ({split}): {m['final_state_successes']} of "
                         f"{m['final_state_conversations']} conversations left the databases "
                         "as the ground truth does")
    if metrics.get("protocol") == "free-running":
        lines.insert(0, FREE_RUNNING_NOTE)
    if metrics.get("embedder"):
        lines.append(embedder_note(str(metrics["embedder"])))
    # what the model was sent, where it departs from or follows the reference's runner
    for key, name in (("prompt_source", "system prompt"), ("documents_source", "tool documents"),
                      ("sampling", "sampling"), ("turn_protocol", "turns")):
        if metrics.get(key):
            lines.append(f"{name}: {metrics[key]}")
    if metrics.get("turns_at_call_cap"):
        lines.append(f"{metrics['turns_at_call_cap']} turn(s) stopped at the call cap (the "
                     "model kept calling tools; its calls up to the cap are scored)")
    return lines


def _state_tags(turn: dict[str, Any]) -> list[dict[str, str]]:
    if "expected_state_hash" not in turn or turn.get("state_hash") == turn[
            "expected_state_hash"]:
        return []
    return [{"text": "state differs", "tone": "bad"}]


def _state_details(output: dict[str, Any]) -> dict[str, str]:
    """Where the world the assistant left differs from the ground truth's, as text."""
    diffs = [(str(t.get("turn")), t["state_diff"]) for t in output.get("turns") or []
             if isinstance(t, dict) and isinstance(t.get("state_diff"), dict)]
    check = output.get("final_state")
    if isinstance(check, dict) and isinstance(check.get("diff"), dict):
        diffs.append(("end", check["diff"]))
    out = {}
    for where, diff in diffs:
        lines = [f"{e.get('database')}/{e.get('path')}: {e.get('change')}; expected "
                 f"{e.get('expected')}, found {e.get('found')}" for e in diff.get("entries", [])]
        if diff.get("more"):
            lines.append(f"... and {diff['more']} more")
        out[f"state diff ({'turn ' + where if where != 'end' else 'end of conversation'})"] = (
            "\n".join(lines))
    return out


def record_view(record: dict[str, Any]) -> dict[str, Any]:
    """The conversation turn by turn: calls with verdicts, the transcript, the final answer."""
    scores = record.get("scores") or {}
    output = record.get("output") or {}
    errors = scores.get("error_types") or {}
    turns = output.get("turns") or []
    outcomes = _by_turn(list(scores.get("outcomes") or [])) if turns else {}
    sections: list[dict[str, Any]] = []
    for turn in turns:
        n = turn.get("turn")
        tags = [{"text": _error_tag(scores, str(n)), "tone": "bad"}] if str(n) in errors else []
        if turn.get("stop"):
            tags.append({"text": f"stop: {turn['stop']}", "tone": "tag"})
        tags += _state_tags(turn)
        transcript = [m for m in turn.get("transcript") or [] if isinstance(m, dict)]
        asked = turn.get("user") if isinstance(turn.get("user"), list) else []
        transcript = [{"role": "user", "content": str(t)} for t in asked] + transcript
        said = [m.get("content") for m in transcript if m.get("role") == "assistant"]
        final = turn.get("text") if turn.get("text") and (
            not said or said[-1] != turn["text"]) else None
        sections.append({"title": f"turn {n}", "tags": tags,
                         "columns": ["", "tool", "arguments", "result", "verdict"],
                         "rows": _call_rows(turn, outcomes),
                         "empty": "no calls expected, none made",
                         "messages": transcript, "text": final, "text_label": "final answer"})
    details = {}
    if output.get("system_prompt"):
        details["system prompt"] = output["system_prompt"]
    if output.get("tools_offered"):
        details["tools offered"] = ", ".join(map(str, output["tools_offered"]))
    details.update(_state_details(output))
    summary = ("success" if scores.get("success") else "failed") if scores else ""
    if "final_state_success" in scores:
        summary += (" · final state " + ("matches" if scores["final_state_success"]
                                         else "differs"))
    return {"summary": summary,
            "messages": [m for s in sections for m in s["messages"]],
            "tags": [f"turn {t}: {_error_tag(scores, t)}" for t in errors],
            "details": details, "sections": sections}


class ToolTalkView(ReportView):
    """ToolTalk's report view: how its records read (the benchmark is its run contract and
    this; ``self.plugins`` names the tools' plugins)."""

    plugins: list[Any]

    @classmethod
    def summary_output(cls, output: Any) -> Any:
        """Per turn: the tool names expected and called and how the turn stopped; what the
        aggregation, breakdowns and facets read (transcripts and results stay on disk)."""
        if not isinstance(output, dict) or not isinstance(output.get("turns"), list):
            return output

        def names(calls: Any) -> list[dict[str, Any]]:
            return [{"request": {"api_name": (c.get("request") or {}).get("api_name")}}
                    for c in calls or [] if isinstance(c, dict)]

        return {"turns": [{"turn": t.get("turn"), "stop": t.get("stop"),
                           "ground_truth": names(t.get("ground_truth")),
                           "predictions": names(t.get("predictions"))}
                          for t in output["turns"] if isinstance(t, dict)]}

    @classmethod
    def primary_metric(cls, records: list[dict[str, Any]]) -> str | None:
        return "success"

    @classmethod
    def summary_lines(cls, metrics: dict[str, Any]) -> list[str]:
        return error_lines(metrics)

    @classmethod
    def interval_metrics(cls, records: list[dict[str, Any]]) -> list[IntervalMetric]:
        """The published metrics, and final-state success when every scored record has it
        (runs recorded before the check, or over an external server's tools, do not)."""
        scored = [s for r in records if isinstance(s := r.get("scores"), dict)]
        checked = bool(scored) and all("final_state_success" in s for s in scored)
        return [*INTERVAL_METRICS, *([FINAL_STATE] if checked else [])]

    def breakdowns(self, records: list[dict[str, Any]]) -> list[Breakdown]:
        plugin_of = {t.name: p.name for p in self.plugins for t in p.tools}
        return breakdowns(records, plugin_of)

    def record_facets(self, record: dict[str, Any]) -> dict[str, list[str]]:
        return facets(record)

    def record_view(self, record: dict[str, Any]) -> dict[str, Any]:
        return record_view(record)
