"""Record the requests BFCL's OpenAI function-calling handler sends for a few entries of each
single-turn category (``tests/fixtures/bfcl_requests/requests.json``).

Run with the Python that has bfcl-eval 2026.3.23 installed (never toolscore's environment);
nothing is sent anywhere: the handler's query is intercepted and its keyword arguments kept.

    OPENAI_API_KEY=unused /path/to/bfcl-venv/bin/python tests/reference/bfcl/record_requests.py

Per category: its first three entries, then the first entry showing each feature of the
documents the request rewrites (a float, a list, a nested object, a dotted name, a system
message, a type outside the map) that is not already picked.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "bfcl_requests" / "requests.json"
CATEGORIES = ("simple_python", "simple_java", "simple_javascript", "multiple", "parallel",
              "parallel_multiple", "irrelevance", "live_simple", "live_multiple",
              "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance")
KNOWN = {"integer", "number", "float", "string", "boolean", "bool", "array", "list", "dict",
         "object", "tuple", "any", "byte", "short", "long", "double", "char", "ArrayList",
         "Array", "HashMap", "Hashtable", "Queue", "Stack", "Any", "String", "Bigint"}


def _params(entry: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for f in entry["function"] for p in f["parameters"]["properties"].values()]


FEATURES = {
    "float": lambda e: any(p.get("type") == "float" for p in _params(e)),
    "list": lambda e: any(p.get("type") in ("array", "ArrayList", "Array") for p in _params(e)),
    "object": lambda e: any("properties" in p for p in _params(e)),
    "dotted": lambda e: any("." in f["name"] for f in e["function"]),
    "system": lambda e: any(m["role"] == "system" for m in e["question"][0]),
    "unmapped": lambda e: any(p.get("type") not in KNOWN for p in _params(e)),
}


class Captured(Exception):
    pass


def main() -> None:
    os.environ.setdefault("OPENAI_API_KEY", "unused")
    from bfcl_eval.model_handler.api_inference.openai_completion import (
        OpenAICompletionsHandler,
    )
    from bfcl_eval.utils import load_dataset_entry

    handler = OpenAICompletionsHandler(model_name="MODEL", temperature=0.001,
                                       registry_name="MODEL-FC", is_fc_model=True)
    seen: dict[str, Any] = {}

    def capture(**kwargs: Any) -> Any:
        seen["request"] = kwargs
        raise Captured

    handler.generate_with_backoff = capture  # type: ignore[method-assign]
    out: dict[str, Any] = {}
    for category in CATEGORIES:
        entries = load_dataset_entry(category)
        picked = list(entries[:3])
        for test in FEATURES.values():
            hit = next((e for e in entries if test(e)), None)
            if hit is not None and hit not in picked:
                picked.append(hit)
        for entry in picked:
            with contextlib.suppress(Captured):
                handler.inference(json.loads(json.dumps(entry)), False, True)
            out[entry["id"]] = seen.pop("request")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(out)} requests -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
