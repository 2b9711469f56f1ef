"""Read and write ToolTalk's own prediction files.

The reference evaluation writes one JSON file per conversation: the dataset file, with each
evaluated assistant turn carrying ``predictions`` (the model's calls as ``{"role": "api",
"request", "response", "exception", "match", "bad_action"}`` items, then its final
``{"role": "assistant", "text"}``), ``match`` flags on the ground-truth ``apis`` and the
conversation's ``metrics``. Speaking that format lets us rescore predictions made by the reference
code (and compare our metrics with its embedded ones) and hand our predictions to its tooling.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from toolscore.benchmarks.tooltalk.scoring import CallRef, ConversationScore, TurnCalls
from toolscore.data import read_text
from toolscore.env.tool import CallRecord

# Our metric name -> the reference's name for it, where they differ.
REFERENCE_NAMES = {"incorrect_action_rate": "bad_action_rate"}
METRIC_KEYS = ("predictions", "ground_truths", "matches", "actions", "valid_actions",
               "bad_actions", "precision", "recall", "action_precision", "incorrect_action_rate",
               "success", "soft_success")


class PredictionFormatError(ValueError):
    """A prediction file does not have the expected shape; the message names file and field."""


class PredictionFile(NamedTuple):
    """One conversation read from a prediction directory.

    ``conversation`` is the file's JSON as read (so unknown fields survive a rewrite),
    ``turns`` the evaluated assistant turns, ``reference`` the embedded metrics, if any,
    ``path`` where it was read from.
    """

    conversation: dict[str, Any]
    turns: list[TurnCalls]
    reference: dict[str, Any] | None
    path: Path | None = None

    @property
    def name(self) -> str:
        """The conversation's name, else the file's (results are reported by it)."""
        name = self.conversation.get("name")
        if isinstance(name, str) and name:
            return name
        return self.path.stem if self.path is not None else "?"


def _fail(path: Path, where: str, problem: str) -> PredictionFormatError:
    return PredictionFormatError(f"{path}: {where}: {problem}")


def _call(path: Path, where: str, item: Any) -> CallRecord:
    if not isinstance(item, dict):
        raise _fail(path, where, "expected an object")
    request = item.get("request")
    if not isinstance(request, dict):
        raise _fail(path, f"{where}.request", "missing or not an object")
    name = request.get("api_name")
    if not isinstance(name, str):
        raise _fail(path, f"{where}.request.api_name", "missing or not a string")
    params = request.get("parameters")
    if params is not None and not isinstance(params, dict):
        raise _fail(path, f"{where}.request.parameters", "not an object or null")
    exception = item.get("exception")
    if exception is not None and not isinstance(exception, str):
        raise _fail(path, f"{where}.exception", "not a string or null")
    return CallRecord(name, params, item.get("response"), exception)


def _turn_calls(path: Path, index: int, turn: dict[str, Any]) -> TurnCalls:
    where = f"conversation[{index}]"
    apis = turn.get("apis")
    apis = [] if apis is None else apis  # an empty {} or "" is a wrong type, not "no calls"
    if not isinstance(apis, list):
        raise _fail(path, f"{where}.apis", "not a list")
    truths = [_call(path, f"{where}.apis[{i}]", a) for i, a in enumerate(apis)]
    items = turn.get("predictions")
    items = [] if items is None else items
    if not isinstance(items, list):
        raise _fail(path, f"{where}.predictions", "not a list")
    predictions: list[CallRecord] = []
    reply: str | None = None
    for i, item in enumerate(items):
        role = item.get("role", "api") if isinstance(item, dict) else None
        if role == "assistant":
            text = item.get("text")
            if text is not None and not isinstance(text, str):
                raise _fail(path, f"{where}.predictions[{i}].text", "not a string")
            reply = text
        elif role == "api":
            predictions.append(_call(path, f"{where}.predictions[{i}]", item))
        else:
            raise _fail(path, f"{where}.predictions[{i}].role", f"unexpected {role!r}")
    return TurnCalls(index, truths, predictions, reply)


def read_prediction_file(path: str | Path) -> PredictionFile:
    """Parse one conversation file; a bad shape raises PredictionFormatError naming the field."""
    path = Path(path)
    text = read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise PredictionFormatError(f"{path}: unreadable JSON at line {e.lineno}: {e.msg}"
                                    ) from None
    if not isinstance(data, dict):
        raise _fail(path, "top level", "expected an object")
    conversation = data.get("conversation")
    if not isinstance(conversation, list):
        raise _fail(path, "conversation", "missing or not a list")
    turns: list[TurnCalls] = []
    for i, turn in enumerate(conversation):
        if not isinstance(turn, dict):
            raise _fail(path, f"conversation[{i}]", "expected an object")
        if turn.get("role") == "assistant":
            turns.append(_turn_calls(path, i, turn))
    if not isinstance(data.get("name", ""), str):
        raise _fail(path, "name", f"expected a string, got {type(data['name']).__name__}")
    reference = data.get("metrics")
    if reference is not None and not isinstance(reference, dict):
        raise _fail(path, "metrics", "not an object")
    return PredictionFile(data, turns, reference, path)


def prediction_paths(directory: str | Path) -> list[Path]:
    """The conversation files of a prediction folder, in a fixed order.

    ToolTalk's runner writes one folder per split, so a folder of such folders (``easy/``,
    ``hard/``) is read as a whole, split folders in name order; the JSON files beside them are
    summaries (e.g. error-type counts), not conversations, and are not read. A folder without
    subfolders of JSON files is read flat.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise PredictionFormatError(f"{directory}: not a directory")
    splits = [d for d in sorted(directory.iterdir()) if d.is_dir() and any(d.glob("*.json"))]
    if splits:
        return [p for d in splits for p in sorted(d.glob("*.json"))]
    return sorted(directory.glob("*.json"))


def read_predictions(directory: str | Path) -> list[PredictionFile]:
    """Every conversation of a prediction folder (see :func:`prediction_paths`).

    Two files holding the same conversation name are an error: results are reported by name.
    """
    files: list[PredictionFile] = []
    seen: dict[str, Path] = {}
    for path in prediction_paths(directory):
        f = read_prediction_file(path)
        if f.name in seen:
            raise _fail(path, "name", f"conversation {f.name!r} is also in {seen[f.name]}")
        seen[f.name] = path
        files.append(f)
    return files


def reference_metrics(score: ConversationScore) -> dict[str, Any]:
    """Our metrics under the reference's key names."""
    return {REFERENCE_NAMES.get(k, k): v for k, v in score.metrics().items()}


def annotate(conversation: dict[str, Any], turns: Sequence[TurnCalls],
             score: ConversationScore | None = None) -> dict[str, Any]:
    """A copy of ``conversation`` carrying the turns' predictions (and, given a score, the
    match/bad_action flags and metrics) in the reference's output format."""
    data = copy.deepcopy(conversation)
    convo = data.setdefault("conversation", [])
    outcomes = {o.ref: o for o in score.outcomes} if score else {}
    matched = set(score.truth_matches) if score else set()
    for t in turns:
        if not 0 <= t.turn < len(convo) or convo[t.turn].get("role") != "assistant":
            raise ValueError(f"{data.get('name', '?')}: turn {t.turn} is not an assistant turn")
        turn = convo[t.turn]
        if t.ground_truth or "apis" in turn:
            apis = []
            for i, c in enumerate(t.ground_truth):
                item = c.to_dict()
                if score is not None:
                    item["match"] = CallRef(t.turn, i) in matched
                apis.append(item)
            turn["apis"] = apis
        items: list[dict[str, Any]] = []
        for i, c in enumerate(t.predictions):
            item = {"role": "api", **c.to_dict()}
            outcome = outcomes.get(CallRef(t.turn, i))
            if outcome is not None:
                item["match"] = outcome.matched
                item["bad_action"] = outcome.bad_action
            items.append(item)
        items.append({"role": "assistant", "text": t.reply})
        turn["predictions"] = items
    if score is not None:
        data["metrics"] = reference_metrics(score)
    return data


def write_predictions(directory: str | Path,
                      items: Iterable[tuple[dict[str, Any], Sequence[TurnCalls],
                                            ConversationScore | None]]) -> list[Path]:
    """Write one ``<name>.json`` per conversation in the reference's output format."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for n, (conversation, turns, score) in enumerate(items):
        name = str(conversation.get("name") or f"conversation-{n}")
        path = directory / f"{name}.json"
        path.write_text(json.dumps(annotate(conversation, turns, score), indent=4,
                                   ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written


@dataclass(frozen=True)
class Difference:
    """One way our judgement of a conversation differs from the reference's embedded one."""

    conversation: str
    field: str
    ours: Any
    reference: Any

    def __str__(self) -> str:
        return f"{self.conversation}: {self.field}: ours={self.ours!r} reference={self.reference!r}"


def _same(a: Any, b: Any, tol: float) -> bool:
    if isinstance(a, (bool, int, float)) and isinstance(b, (bool, int, float)):
        return math.isclose(float(a), float(b), rel_tol=0.0, abs_tol=tol)
    return a == b


def compare_with_reference(files: Sequence[PredictionFile],
                           scores: Sequence[ConversationScore],
                           tol: float = 1e-9) -> list[Difference]:
    """Per-conversation differences between our metrics and the embedded reference metrics,
    then between our per-call match/bad_action flags and the file's, where the file has them.

    Metrics missing on the reference side are skipped; a file without metrics is skipped.
    """
    if len(files) != len(scores):
        raise ValueError(f"{len(files)} files but {len(scores)} scores")
    diffs: list[Difference] = []
    for f, score in zip(files, scores, strict=True):
        name = f.name
        ours = score.metrics()
        for key in METRIC_KEYS:
            ref_key = REFERENCE_NAMES.get(key, key)
            if f.reference is None or ref_key not in f.reference:
                continue
            if not _same(ours[key], f.reference[ref_key], tol):
                diffs.append(Difference(name, ref_key, ours[key], f.reference[ref_key]))
        diffs.extend(_flag_differences(name, f, score))
    return diffs


def _flag_differences(name: str, f: PredictionFile,
                      score: ConversationScore) -> list[Difference]:
    convo = f.conversation.get("conversation", [])
    outcomes = {o.ref: o for o in score.outcomes}
    diffs: list[Difference] = []
    for t in f.turns:
        turn = convo[t.turn]
        for i, item in enumerate(turn.get("apis") or []):
            if isinstance(item, dict) and "match" in item:
                ours = CallRef(t.turn, i) in score.truth_matches
                if bool(item["match"]) != ours:
                    diffs.append(Difference(name, f"conversation[{t.turn}].apis[{i}].match",
                                            ours, item["match"]))
        api_items = [p for p in turn.get("predictions") or []
                     if isinstance(p, dict) and p.get("role", "api") == "api"]
        for i, item in enumerate(api_items):
            outcome = outcomes.get(CallRef(t.turn, i))
            if outcome is None:
                continue
            for key, ours in (("match", outcome.matched), ("bad_action", outcome.bad_action)):
                if key in item and bool(item[key]) != ours:
                    diffs.append(Difference(
                        name, f"conversation[{t.turn}].predictions[api {i}].{key}",
                        ours, item[key]))
    return diffs
