"""Record what BFCL's prompting handler does (``tests/fixtures/bfcl_prompting/``).

Run with the Python that has bfcl-eval 2026.3.23 installed (never toolscore's environment);
nothing is sent anywhere (the handler's query is intercepted):

    /path/to/bfcl-venv/bin/python tests/reference/bfcl/record_prompting.py

It writes:

- ``requests.json.gz``: the request BFCL's OpenAI chat-completions handler sends, as a
  prompting (non-function-calling) model, for a few entries of each Python single-turn
  category (the first two, then the first showing each feature the system prompt renders: a
  system message, an enum, a default, nested properties, list items, a dotted name) and, for
  format_sensitivity, for the first entry of each source category under every configuration
  plus the first entry with a system message.
- ``decodes.json``: the handler's decoding of ``DECODE_CASES``
  (``tests/support/bfcl_prompting_replies.py``): ``repr`` of the decoded calls, or the
  exception's class and text; for the Python cases also the executable call strings its
  multi-turn decoder makes of them (``execute``, or ``execute_error``).
- ``single_turn.json.gz``: {category: {id: error type, or null when valid}}: every entry of
  the Python single-turn categories given a reply by ``single_turn_reply`` (right, or wrong
  in one of several ways) and judged by the evaluator's per-entry functions as the prompting
  model ``gpt-4.1-2025-04-14``.
- ``multi_turn_messages.json``: the user messages BFCL's multi-turn prompting loop adds: a
  step's execution results (``EXECUTION_CASES``) and a turn's added functions
  (``HOLDOUT_CASES``).
- ``format_sensitivity.json.gz`` and ``summary_data_format_sensitivity.csv``: a complete
  format_sensitivity result file (every entry's reply built by ``sensitivity_reply``), judged
  by ``bfcl evaluate`` as the prompting model ``gpt-4.1-2025-04-14``: the header of its score
  file (accuracy, per-configuration accuracy, max delta, deviation), the failed entries' error
  types, and the format-sensitivity table it writes.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
REPO = HERE.parents[3]
OUT = REPO / "tests" / "fixtures" / "bfcl_prompting"
MODEL = "gpt-4.1-2025-04-14"
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
              "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
              "live_irrelevance", "live_relevance")


def _load_replies():
    spec = importlib.util.spec_from_file_location(
        "bfcl_prompting_replies", REPO / "tests" / "support" / "bfcl_prompting_replies.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


replies = _load_replies()


def _params(entry: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for f in entry["function"] for p in f["parameters"]["properties"].values()]


FEATURES = {
    "system": lambda e: any(m["role"] == "system" for m in e["question"][0]),
    "enum": lambda e: any("enum" in p for p in _params(e)),
    "default": lambda e: any("default" in p for p in _params(e)),
    "nested": lambda e: any("properties" in p for p in _params(e)),
    "items": lambda e: any("items" in p for p in _params(e)),
    "dotted": lambda e: any("." in f["name"] for f in e["function"]),
}


class Captured(Exception):
    pass


def write_gzip_json(path: Path, value: Any) -> None:
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0,
                                                filename="") as handle:
        handle.write(json.dumps(value, ensure_ascii=False).encode())


def record_requests() -> dict[str, Any]:
    from bfcl_eval.model_handler.api_inference.openai_completion import (
        OpenAICompletionsHandler,
    )
    from bfcl_eval.utils import load_dataset_entry

    handler = OpenAICompletionsHandler(model_name="MODEL", temperature=0.001,
                                       registry_name="MODEL", is_fc_model=False)
    seen: dict[str, Any] = {}

    def capture(**kwargs: Any) -> Any:
        seen["request"] = copy.deepcopy(kwargs)
        raise Captured

    handler.generate_with_backoff = capture  # type: ignore[method-assign]
    out: dict[str, Any] = {}

    def send(entry: dict[str, Any]) -> None:
        with contextlib.suppress(Captured):
            handler.inference(copy.deepcopy(entry), False, True)
        out[entry["id"]] = seen.pop("request")

    for category in CATEGORIES:
        entries = load_dataset_entry(category)
        picked = list(entries[:2])
        for test in FEATURES.values():
            hit = next((e for e in entries if test(e)), None)
            if hit is not None and hit not in picked:
                picked.append(hit)
        for entry in picked:
            send(entry)
    entries = load_dataset_entry("format_sensitivity")
    firsts: dict[str, str] = {}
    for entry in entries:
        source = entry["id"].split(":")[-1]
        firsts.setdefault(source.rsplit("_", 1)[0], source)
    with_system = next(e["id"].split(":")[-1] for e in entries if FEATURES["system"](e))
    wanted = {*firsts.values(), with_system}
    for entry in entries:
        if entry["id"].split(":")[-1] in wanted:
            send(entry)
    return out


def record_decodes() -> list[dict[str, Any]]:
    from bfcl_eval.constants.enums import ReturnFormat
    from bfcl_eval.eval_checker import eval_runner as er

    handler = er.get_handler(MODEL)
    out = []
    for text, fmt, tag in replies.DECODE_CASES:
        row: dict[str, Any] = {"text": text, "ret_fmt": fmt, "tag": tag}
        try:
            row["decoded"] = repr(handler.decode_ast(text, ReturnFormat(fmt), tag))
        except Exception as e:  # every failure is what is recorded
            row["error"] = [type(e).__name__, str(e)]
        if fmt == "python":
            try:
                row["execute"] = handler.decode_execute(text, has_tool_call_tag=tag)
            except Exception as e:  # as above
                row["execute_error"] = [type(e).__name__, str(e)]
        out.append(row)
    return out


def record_multi_turn_messages() -> dict[str, Any]:
    from bfcl_eval.constants.default_prompts import (
        DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING,
    )
    from bfcl_eval.model_handler.utils import format_execution_results_prompting

    out: dict[str, Any] = {"results": [], "holdout": []}
    for calls, results in replies.EXECUTION_CASES:
        out["results"].append(format_execution_results_prompting(
            {}, list(results), {"model_responses_decoded": list(calls)}))
    for functions in replies.HOLDOUT_CASES:
        out["holdout"].append(
            DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING.format(functions=functions))
    return out


def record_single_turn() -> dict[str, Any]:
    from bfcl_eval.constants.enums import Language, ReturnFormat
    from bfcl_eval.eval_checker import eval_runner as er
    from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry

    handler = er.get_handler(MODEL)
    out: dict[str, Any] = {}
    for category in CATEGORIES:
        prompts = load_dataset_entry(category, include_prereq=False,
                                     include_language_specific_hint=False)
        relevance = "relevance" in category
        answers = [None] * len(prompts) if relevance else load_ground_truth_entry(category)
        table = out[category] = {}
        for index, (prompt, answer) in enumerate(zip(prompts, answers, strict=True)):
            text = replies.single_turn_reply(index, prompt, answer)
            if relevance:
                verdict = er._evaluate_single_relevance_entry(
                    handler, prompt["id"], text, prompt, MODEL, category)
            else:
                verdict = er._evaluate_single_ast_entry(
                    handler, prompt["id"], text, answer["ground_truth"], prompt, MODEL,
                    category, language=Language.PYTHON, return_format=ReturnFormat.PYTHON,
                    has_tool_call_tag=False)
            table[prompt["id"]] = None if verdict["valid"] else verdict["error_type"]
    return out


def record_sensitivity(project: Path) -> dict[str, Any]:
    from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry

    entries = load_dataset_entry("format_sensitivity")
    answers = load_ground_truth_entry("format_sensitivity")
    lines = []
    configs: list[str] = []
    for index, (entry, answer) in enumerate(zip(entries, answers, strict=True)):
        config = entry["id"].split(":")[1]
        if config not in configs:
            configs.append(config)
        lines.append({"id": entry["id"], "result": replies.sensitivity_reply(
            index, configs.index(config), config, answer)})
    folder = project / "result" / MODEL / "format_sensitivity"
    folder.mkdir(parents=True)
    with open(folder / "BFCL_v4_format_sensitivity_result.json", "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line) + "\n")
    bfcl = Path(sys.executable).with_name("bfcl")
    env = {**os.environ, "BFCL_PROJECT_ROOT": str(project)}
    subprocess.run([str(bfcl), "evaluate", "--model", MODEL, "--test-category",
                    "format_sensitivity"], cwd=project, env=env, capture_output=True,
                   text=True, check=True)
    (score,) = (project / "score").rglob("BFCL_v4_format_sensitivity_score.json")
    header, *failed = [json.loads(x) for x in score.read_text().splitlines() if x.strip()]
    shutil.copyfile(project / "score" / "data_format_sensitivity.csv",
                    OUT / "summary_data_format_sensitivity.csv")
    return {"model": MODEL, "configs": configs, "header": header,
            "failed": {row["id"]: row["error_type"] for row in failed}}


def main() -> None:
    # the handlers' constructors want a key; nothing here calls the API
    os.environ["OPENAI_API_KEY"] = "unused-placeholder"
    OUT.mkdir(parents=True, exist_ok=True)
    requests = record_requests()
    write_gzip_json(OUT / "requests.json.gz", requests)
    decodes = record_decodes()
    (OUT / "decodes.json").write_text(json.dumps(decodes, indent=1, ensure_ascii=False) + "\n",
                                      encoding="utf-8")
    write_gzip_json(OUT / "single_turn.json.gz", record_single_turn())
    (OUT / "multi_turn_messages.json").write_text(
        json.dumps(record_multi_turn_messages(), indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        sensitivity = record_sensitivity(Path(tmp))
    write_gzip_json(OUT / "format_sensitivity.json.gz", sensitivity)
    print(f"{len(requests)} requests, {len(decodes)} decodes, "
          f"{len(sensitivity['failed'])} failed format-sensitivity entries -> {OUT}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
