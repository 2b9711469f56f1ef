"""Record what BFCL's own multi-turn backends return and hold, call by call.

Run it with the Python of an environment where ``bfcl-eval`` is installed (never toolscore's):

    /path/to/bfclenv/bin/python tests/reference/bfcl/record_backends.py \
        [--data ../shared/datasets/bfcl]

For every entry of the four multi-turn categories and every call sequence that
``tests/support/bfcl_backends.py`` builds for it (the ground truth, another entry's ground
truth, a perturbed ground truth), the sequence is run turn by turn through the evaluator's own
executor (``execute_multi_turn_func_call``, as its multi-turn checker calls it: one set of
instances per entry and sequence, kept across turns, long-context data for the long-context
category). Kept per turn: each call's result text as the executor returns it, and a digest of
each involved instance's public state (``bfcl_backends.state_snapshot``). The ground-truth
sequence of every multi_turn_base entry also keeps the full snapshots after its last turn,
so a mismatch can be read rather than only detected.

Writes ``tests/fixtures/bfcl/backends.json.gz``; its manifest entry (package version, date,
command) goes to ``tests/fixtures/bfcl/backends_manifest.json``.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import importlib.metadata
import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[3]
OUT = REPO / "tests" / "fixtures" / "bfcl"


def _load(name: str):
    # by path: the package ``support`` imports pytest, which the reference's environment lacks
    spec = importlib.util.spec_from_file_location(name, REPO / "tests" / "support" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bb = _load("bfcl_backends")


def run_sequence(execute, entry: dict, calls: list[list[str]], tag: str, full: bool) -> dict:
    category = entry["id"].rsplit("_", 1)[0]
    turns = []
    instances = {}
    for turn in calls:
        results, instances = execute(
            func_call_list=turn, initial_config=entry["initial_config"],
            involved_classes=entry["involved_classes"], model_name=f"rec_{tag}",
            test_entry_id=entry["id"], long_context=("long_context" in category),
            is_evaL_run=True)
        turns.append({"calls": list(turn), "results": list(results),
                      "state": {name: bb.digest(bb.state_snapshot(inst))
                                for name, inst in sorted(instances.items())}})
    out = {"turns": turns}
    if full:
        out["final_state"] = {name: bb.state_snapshot(inst)
                              for name, inst in sorted(instances.items())}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "datasets" / "bfcl"))
    args = ap.parse_args()
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    execute = multi_turn_utils.execute_multi_turn_func_call
    root = Path(args.data)
    rows = []
    for category in bb.MULTI_TURN:
        entries = bb.load(root, category)
        for k, (variant, entry, calls) in enumerate(bb.sequences(entries)):
            before = set(vars(multi_turn_utils))
            rec = run_sequence(execute, entry, calls, f"{variant}_{k}",
                               full=(category == "multi_turn_base" and variant == "ground_truth"))
            # the executor keeps instances as module globals: drop them, as each sequence
            # starts from the entry's initial state
            for key in set(vars(multi_turn_utils)) - before:
                delattr(multi_turn_utils, key)
            rows.append({"id": entry["id"], "variant": variant, **rec})
    OUT.mkdir(parents=True, exist_ok=True)
    with gzip.open(OUT / "backends.json.gz", "wt", encoding="utf-8") as f:
        json.dump(rows, f, sort_keys=True)
    manifest = {
        "package": "bfcl-eval", "version": importlib.metadata.version("bfcl-eval"),
        "python": sys.version.split()[0], "date": datetime.date.today().isoformat(),
        "command": "python tests/reference/bfcl/record_backends.py",
        "sequences": len(rows), "calls": sum(len(t["calls"]) for r in rows for t in r["turns"]),
    }
    (OUT / "backends_manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(json.dumps(manifest))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
