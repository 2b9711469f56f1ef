"""What the ``oracle`` model replays for a BFCL entry: a call per ground-truth call, each
argument its first possible value (an optional argument whose first possible value is "" is
left out, as BFCL's answers mark "may be omitted" so), named as the model is shown the
function (dots as underscores). Relevance entries get a call to the first function (any call
counts there); irrelevance entries a reply with no call."""

from __future__ import annotations

import json
import re
from typing import Any

from toolscore.benchmarks.bfcl.categories import is_relevance

OMITTED = ""


def _value(option: Any) -> Any:
    """A possible value as a model would write it: nested dictionaries of possible values
    (BFCL's way of listing a dictionary argument's options) resolved to their first."""
    if isinstance(option, dict):
        return {k: _value(v[0] if isinstance(v, list) and v else v)
                for k, v in option.items()
                if not (isinstance(v, list) and v and v[0] == OMITTED)}
    if isinstance(option, list):
        return [_value(v) for v in option]
    return option


def _arguments(possible: dict[str, list[Any]]) -> dict[str, Any]:
    return {name: _value(options[0]) for name, options in possible.items()
            if options and options[0] != OMITTED}


def oracle_steps(category: str, entry: dict[str, Any], answer: dict[str, Any] | None
                 ) -> list[dict[str, Any]]:
    if is_relevance(category):
        if "irrelevance" in category or not entry.get("function"):
            return [{"content": "None of the functions applies.", "tool_calls": []}]
        name = re.sub(r"\.", "_", entry["function"][0]["name"])
        return [{"tool_calls": [{"name": name, "arguments": "{}"}]}]
    calls = []
    for truth in (answer or {}).get("ground_truth", []):
        for name, possible in truth.items():
            calls.append({"name": re.sub(r"\.", "_", name),
                          "arguments": json.dumps(_arguments(possible), ensure_ascii=False)})
    return [{"tool_calls": calls}]
