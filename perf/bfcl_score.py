"""Scoring BFCL's whole ground truth: toolscore's checker beside the reference checker.

The predictions are the oracle's result-file rows of every offline category toolscore scores
(``tests/support/bfcl_variants``: what an OpenAI function-calling model answering the ground
truth writes; for the four multi-turn categories, each turn's ground-truth calls as one step
then a text reply), the same rows for both sides. Single-turn and multi-turn are timed apart:
a multi-turn row runs the entry's backends twice (the model's world, the ground truth's).
Each side decodes and judges every row with its own code, warm (one untimed pass first),
``--repeat`` times; the CPU time of the best pass is reported per side and as a ratio. The
reference runs in its own environment (``--reference-python``, a Python with ``bfcl-eval``
2026.3.23 installed) through the evaluator's own per-entry functions, as
``tests/reference/bfcl/make_fixtures.py`` calls them.

    .venv/bin/python perf/bfcl_score.py [--data DIR] [--reference-python PATH] [--repeat 3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import testsupport  # noqa: F401  (tests/ on the path)
from support import bfcl_variants as bv

from toolscore.benchmarks.bfcl.checker import check_entry
from toolscore.benchmarks.bfcl.data import load_category
from toolscore.benchmarks.bfcl.decode import try_decode
from toolscore.benchmarks.bfcl.multiturn.checker import check_multi_turn

MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
              "multi_turn_long_context")

REFERENCE_RUNNER = r'''
import json, os, sys, time
os.environ["OPENAI_API_KEY"] = "unused-placeholder"  # the handler's constructor wants one
from bfcl_eval.constants.enums import Language, ReturnFormat
from bfcl_eval.eval_checker import eval_runner as er
from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry

MODEL = "gpt-4.1-2025-04-14-FC"
rows, repeat = json.load(open(sys.argv[1])), int(sys.argv[2])
handler = er.get_handler(MODEL)
work = []
multi = "multi_turn_base" in rows
for category, lines in rows.items():
    prompts = {p["id"]: p for p in load_dataset_entry(
        category, include_prereq=False, include_language_specific_hint=False)}
    if category.startswith("multi_turn"):
        answers = {a["id"]: a for a in load_ground_truth_entry(category)}
        for line in lines:
            work.append((category, line, prompts[line["id"]],
                         answers[line["id"]]["ground_truth"], None, None))
        continue
    relevance = "irrelevance" in category or "relevance" in category
    answers = None if relevance else {a["id"]: a for a in load_ground_truth_entry(category)}
    lang = ("java" if category.endswith("java") else "javascript"
            if category.endswith("javascript") else "python")
    language, fmt = {"java": (Language.JAVA, ReturnFormat.JAVA),
                     "javascript": (Language.JAVASCRIPT, ReturnFormat.JAVASCRIPT),
                     "python": (Language.PYTHON, ReturnFormat.PYTHON)}[lang]
    for line in lines:
        work.append((category, line, prompts[line["id"]],
                     None if answers is None else answers[line["id"]]["ground_truth"],
                     language, fmt))

import copy
from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

def one_pass():
    valid = 0
    for category, line, prompt, truth, language, fmt in work:
        if category.startswith("multi_turn"):
            # the evaluator keeps an entry's backends in module globals: drop them, so that
            # every pass starts from the entry's initial state (as one evaluation does)
            before = set(vars(multi_turn_utils))
            out = er._evaluate_single_multi_turn_entry(
                handler, line["id"], line["result"], truth, copy.deepcopy(prompt), MODEL,
                category)
            for key in set(vars(multi_turn_utils)) - before:
                delattr(multi_turn_utils, key)
        elif truth is None:
            out = er._evaluate_single_relevance_entry(handler, line["id"], line["result"],
                                                      prompt, MODEL, category)
        else:
            out = er._evaluate_single_ast_entry(handler, line["id"], line["result"], truth,
                                                prompt, MODEL, category, language=language,
                                                return_format=fmt, has_tool_call_tag=False)
        valid += bool(out["valid"])
    return valid

one_pass()
best = None
for _ in range(repeat):
    t = time.process_time(); valid = one_pass(); t = time.process_time() - t
    best = t if best is None else min(best, t)
print(json.dumps({"cpu_s": best, "valid": valid, "rows": len(work)}))
'''


def toolscore_side(data: Path, rows: dict[str, list[dict]], repeat: int) -> dict:
    work = []
    for category, lines in rows.items():
        by_id = {str(e["id"]): (e, a) for e, a in load_category(data, category)}
        for line in lines:
            entry, answer = by_id[str(line["id"])]
            work.append((category, entry, answer, line["result"]))

    def one_pass() -> int:
        valid = 0
        for category, entry, answer, result in work:
            if category in MULTI_TURN:
                valid += check_multi_turn(category, entry, answer, result).valid
                continue
            decoded, error = try_decode(result)
            valid += check_entry(category, entry, answer, decoded, error).valid
        return valid

    one_pass()
    best = None
    for _ in range(repeat):
        t = time.process_time()
        valid = one_pass()
        t = time.process_time() - t
        best = t if best is None else min(best, t)
    return {"cpu_s": best, "valid": valid, "rows": len(work)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(os.environ.get("TOOLSCORE_DATA", ""), "bfcl"))
    ap.add_argument("--reference-python", default=os.environ.get("BFCL_REFERENCE_PYTHON"),
                    help="a Python with bfcl-eval 2026.3.23 installed (default: "
                         "$BFCL_REFERENCE_PYTHON; without it only toolscore is timed)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    data = Path(args.data)
    single = {category: bv.oracle_results(data, category) for category in bv.SINGLE_TURN}
    multi = {category: [{"id": entry["id"],
                         "result": bv.multi_turn_variants(data, entry, answer)[bv.ORACLE]}
                        for entry, answer in bv.load_category(data, category)]
             for category in MULTI_TURN}
    total = 0.0
    for label, rows in (("single-turn", single), ("multi-turn", multi)):
        ours, ref = toolscore_side(data, rows, args.repeat), reference_side(args, rows)
        total += ours["cpu_s"]
        print(f"{label}: toolscore {ours['rows']} rows, {ours['valid']} valid, "
              f"{ours['cpu_s'] * 1000:.0f} ms CPU (best of {args.repeat}, warm)")
        if ref is None:
            print(f"{label}: reference not run (no --reference-python)")
            continue
        if ref == "failed":
            return 1
        print(f"{label}: reference {ref['rows']} rows, {ref['valid']} valid, "
              f"{ref['cpu_s'] * 1000:.0f} ms CPU; ratio reference / toolscore "
              f"{ref['cpu_s'] / ours['cpu_s']:.1f}x")
    print(f"all offline categories: toolscore {total:.2f} s CPU")
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f
                    if line.startswith("model name")), cpu)
    print(f"machine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"date {time.strftime('%Y-%m-%d')}")
    return 0


def reference_side(args: argparse.Namespace, rows: dict[str, list[dict]]) -> Any:
    """The reference's best warm pass on ``rows``; None when not run, "failed" on an error."""
    if not args.reference_python or not Path(args.reference_python).exists():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "rows.json").write_text(json.dumps(rows))
        (Path(tmp) / "runner.py").write_text(REFERENCE_RUNNER)
        done = subprocess.run([args.reference_python, str(Path(tmp) / "runner.py"),
                               str(Path(tmp) / "rows.json"), str(args.repeat)],
                              capture_output=True, text=True, cwd=tmp,
                              env={**os.environ, "BFCL_PROJECT_ROOT": tmp})
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            return "failed"
        return json.loads(done.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    raise SystemExit(main())
