"""Record the requests BFCL's OpenAI function-calling handler sends, step by step, while it
plays a few entries of each multi-turn category (``tests/fixtures/bfcl_requests/
multi_turn.json.gz``), and the raw result it keeps for each.

Run with the Python that has bfcl-eval 2026.3.23 installed (never toolscore's environment);
nothing is sent anywhere: the handler's OpenAI client gets a transport that keeps each request
body (as the SDK serialises it) and answers with a scripted completion.

    /path/to/bfcl-venv/bin/python tests/reference/bfcl/record_multi_turn_requests.py

The handler executes the calls on BFCL's own backends, so the tool messages it sends back are
BFCL's. Replies are scripted from the possible answer:

- ``oracle``: per turn, one reply with the turn's ground-truth calls (positional arguments
  named after the backend method's parameters, arguments as JSON text, call ids
  ``call_<step>_<index>``), then a text reply (toolscore's ``oracle`` model replies so);
- ``looping``: the first ground-truth call of the entry, again and again (the step limit ends
  the turn and the entry);
- ``malformed``: a call whose arguments are not JSON in the first turn (decoding fails, the
  turn ends with no tool message), then as ``oracle``.
"""

from __future__ import annotations

import ast
import copy
import gzip
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "bfcl_requests" / "multi_turn.json.gz"
#: the text every scripted turn ends with (the text toolscore's oracle model replies)
TEXT = "Done."
#: entries played (category -> (entry index, variant))
PLAYED = {
    # the first entry of each backend class, one with a turn that needs no call
    "multi_turn_base": [(0, "oracle"), (1, "oracle"), (2, "oracle"), (14, "oracle"),
                        (15, "oracle"), (50, "oracle"), (100, "oracle"), (150, "oracle"),
                        (167, "oracle"), (3, "looping"), (4, "malformed")],
    "multi_turn_miss_func": [(0, "oracle"), (1, "oracle")],
    "multi_turn_miss_param": [(0, "oracle"), (1, "oracle")],
    "multi_turn_long_context": [(0, "oracle"), (1, "oracle")],
}


def named_arguments(call: str, methods: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    name = node.func.id
    args = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
    if node.args:
        params = [p for p in inspect.signature(methods[name]).parameters if p != "self"]
        args = {**{params[i]: ast.literal_eval(a) for i, a in enumerate(node.args)}, **args}
    return name, args


def calls_message(calls: list[tuple[str, str]], step: int) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{step}_{i}", "type": "function",
         "function": {"name": name, "arguments": arguments}}
        for i, (name, arguments) in enumerate(calls)]}


def script(entry: dict[str, Any], answer: dict[str, Any], variant: str,
           methods: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The assistant messages of each turn, in the order the handler asks for them."""
    turns = []
    for turn in answer["ground_truth"]:
        calls = []
        for call in turn:
            name, args = named_arguments(call, methods)
            calls.append((name, json.dumps(args, ensure_ascii=False)))
        steps = [calls_message(calls, 0)] if calls else []
        turns.append([*steps, {"role": "assistant", "content": TEXT}])
    if variant == "looping":
        first = next(c for t in answer["ground_truth"] for c in t)
        name, args = named_arguments(first, methods)
        looped = [calls_message([(name, json.dumps(args))], k) for k in range(40)]
        turns = [looped for _ in turns]
    elif variant == "malformed":
        turns[0] = [calls_message([("ls", "{not json")], 0)]
    return turns


def main() -> None:
    os.environ.setdefault("OPENAI_API_KEY", "unused")
    import httpx
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.model_handler.api_inference.openai_completion import (
        OpenAICompletionsHandler,
    )
    from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry
    from openai import OpenAI

    methods: dict[str, Any] = {}
    for class_name, module in CLASS_FILE_PATH_MAPPING.items():
        if class_name.startswith(("Memory", "WebSearch")):
            continue
        cls = getattr(__import__(module, fromlist=[class_name]), class_name)
        methods.update({n: m for n, m in inspect.getmembers(cls, inspect.isfunction)
                        if not n.startswith("_")})

    out: dict[str, Any] = {}
    for category, played in PLAYED.items():
        entries = load_dataset_entry(category)
        answers = load_ground_truth_entry(category)
        for index, variant in played:
            entry, answer = entries[index], answers[index]
            replies = iter(script(entry, answer, variant, methods))
            turn_replies: list[Any] = []
            requests: list[dict[str, Any]] = []

            def respond(request: httpx.Request, replies: Any = replies,
                        turn_replies: list[Any] = turn_replies,
                        requests: list[dict[str, Any]] = requests) -> httpx.Response:
                body = json.loads(request.content)
                requests.append(body)
                last_user = max(i for i, m in enumerate(body["messages"])
                                if m["role"] == "user")
                step = sum(1 for m in body["messages"][last_user:] if m["role"] == "assistant")
                if step == 0:
                    turn_replies[:] = next(replies)
                message = turn_replies[step]
                return httpx.Response(200, json={
                    "id": "chatcmpl-0", "object": "chat.completion", "created": 0,
                    "model": body["model"],
                    "choices": [{"index": 0, "message": message,
                                 "finish_reason": "tool_calls" if message.get("tool_calls")
                                 else "stop"}],
                    "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})

            handler = OpenAICompletionsHandler(model_name="MODEL", temperature=0.001,
                                               registry_name="MODEL-FC", is_fc_model=True)
            handler.client = OpenAI(api_key="unused", base_url="http://recorder.invalid/v1",
                                    http_client=httpx.Client(
                                        transport=httpx.MockTransport(respond)))
            result, _ = handler.inference(copy.deepcopy(entry), False, True)
            for name in [n for n in vars(multi_turn_utils) if n.endswith("_instance")]:
                delattr(multi_turn_utils, name)
            out[entry["id"]] = {"variant": variant, "requests": requests, "result": result}
            print(f"{entry['id']} ({variant}): {len(requests)} requests", file=sys.stderr)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(out, ensure_ascii=False, sort_keys=True).encode("utf-8")
    with open(OUT, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write(text)
    print(f"{len(out)} entries -> {OUT} ({OUT.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
