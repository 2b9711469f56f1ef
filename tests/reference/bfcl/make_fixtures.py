"""Regenerate tests/fixtures/bfcl/ by running BFCL's own evaluator (the ``bfcl-eval`` package).

Run it with the Python of an environment where ``bfcl-eval`` is installed (never toolscore's):

    /path/to/bfclenv/bin/python tests/reference/bfcl/make_fixtures.py \
        [--data ../shared/datasets/bfcl]

What it does, all inside a temporary BFCL project root (``BFCL_PROJECT_ROOT``):

1. Builds every prediction row with ``tests/support/bfcl_variants.py`` (entry x variant, raw
   output of an OpenAI function-calling model) and judges each with the evaluator's own
   per-entry functions (the ones its AST and relevance runners call for each line of a
   result file), with the handler of ``MODEL``. Written to ``verdicts.json.gz``.
2. Writes two complete runs as result files (the oracle, and a mixed set where entry k gets
   its variant k mod n), runs ``bfcl evaluate`` on them, checks that the entries the score
   files list as failed are exactly the rows judged invalid in step 1, and keeps the
   per-category accuracies (``summary_<set>.json``) and the CSV tables it writes
   (``summary_<set>_<table>.csv``) verbatim.
3. Does the same for multi_turn_base (``verdicts_multi_turn.json.gz``, with the
   evaluator's per-entry multi-turn function, and ``summary_multi_turn_<set>``).
4. Records the package version, the command, the date and the sha256 of every dataset file
   used in ``manifest.json`` and ``README.md``.

The evaluator reads the dataset copy shipped inside its package; the script refuses to run
when that copy differs from the dataset given with ``--data``.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[3]
OUT = REPO / "tests" / "fixtures" / "bfcl"
MODEL = "gpt-4.1-2025-04-14-FC"
SETS = ("oracle", "mixed")


def _load_variants():
    # by path: the package ``support`` imports pytest, which the reference's environment lacks
    spec = importlib.util.spec_from_file_location(
        "bfcl_variants", REPO / "tests" / "support" / "bfcl_variants.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bv = _load_variants()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def dataset_hashes(root: Path) -> dict[str, str]:
    names = [name for category in bv.SINGLE_TURN for name in bv.dataset_files(category)]
    names += [name for category in bv.MULTI_TURN for name in bv.multi_turn_files(category)]
    return {name: sha256(root / name) for name in names}


def plain(value):
    """The value as JSON would give it back (BFCL's messages may hold tuples)."""
    return json.loads(json.dumps(value, default=repr))


def no_api_key() -> None:
    """The OpenAI handler's constructor wants a key; nothing here ever calls the API, so a
    placeholder is set (replacing any real key, which is never needed)."""
    os.environ["OPENAI_API_KEY"] = "unused-placeholder"


def judge_rows(data: Path) -> tuple[dict, Counter]:
    """{category: {id: {variant: verdict}}} from the evaluator's per-entry functions."""
    from bfcl_eval.constants.enums import Language, ReturnFormat
    from bfcl_eval.eval_checker import eval_runner as er
    from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry

    handler = er.get_handler(MODEL)  # needs OPENAI_API_KEY set; see no_api_key()
    verdicts: dict = {}
    counts: Counter = Counter()
    for category in bv.SINGLE_TURN:
        prompts = load_dataset_entry(category, include_prereq=False,
                                     include_language_specific_hint=False)
        answers = None if bv.is_relevance(category) else load_ground_truth_entry(category)
        lang = bv.language(category)
        language, fmt = {"java": (Language.JAVA, ReturnFormat.JAVA),
                         "javascript": (Language.JAVASCRIPT, ReturnFormat.JAVASCRIPT),
                         "python": (Language.PYTHON, ReturnFormat.PYTHON)}[lang]
        rows = bv.category_variants(data, category)
        assert [p["id"] for p in prompts] == [id_ for id_, _ in rows], category
        table = verdicts[category] = {}
        for index, (id_, variants) in enumerate(rows):
            table[id_] = {}
            for name, raw in variants.items():
                raw = json.loads(json.dumps(raw))
                if answers is None:
                    out = er._evaluate_single_relevance_entry(
                        handler, id_, raw, prompts[index], MODEL, category)
                else:
                    out = er._evaluate_single_ast_entry(
                        handler, id_, raw, answers[index]["ground_truth"], prompts[index],
                        MODEL, category, language=language, return_format=fmt,
                        has_tool_call_tag=False)
                valid = bool(out["valid"])
                table[id_][name] = {"valid": valid,
                                    "error_type": None if valid else out["error_type"],
                                    "errors": [] if valid else plain(out["error"])}
                counts[(category, name, valid)] += 1
    return verdicts, counts


def judge_multi_turn(data: Path) -> tuple[dict, Counter]:
    """The same for multi_turn_base, with the evaluator's per-entry multi-turn function."""
    import copy

    from bfcl_eval.eval_checker import eval_runner as er
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry

    handler = er.get_handler(MODEL)
    verdicts: dict = {}
    counts: Counter = Counter()
    for category in bv.MULTI_TURN:
        prompts = load_dataset_entry(category, include_prereq=False,
                                     include_language_specific_hint=False)
        answers = load_ground_truth_entry(category)
        table = verdicts[category] = {}
        for index, (entry, answer) in enumerate(bv.load_category(data, category)):
            assert prompts[index]["id"] == entry["id"]
            table[entry["id"]] = {}
            for name, raw in bv.multi_turn_variants(data, entry, answer).items():
                # the evaluator keeps each entry's simulated backends in module globals,
                # keyed by model and entry: drop them so that every row starts afresh
                before = set(vars(multi_turn_utils))
                out = er._evaluate_single_multi_turn_entry(
                    handler, entry["id"], json.loads(json.dumps(raw)),
                    answers[index]["ground_truth"], copy.deepcopy(prompts[index]), MODEL,
                    category)
                for key in set(vars(multi_turn_utils)) - before:
                    delattr(multi_turn_utils, key)
                table[entry["id"]][name] = multi_turn_verdict(out)
                counts[(category, name, bool(out["valid"]))] += 1
    return verdicts, counts


def multi_turn_verdict(out: dict) -> dict:
    if out["valid"]:
        return {"valid": True, "error_type": None, "errors": []}
    error = out["error"]
    message = error.get("error_message", [])
    # the execution details BFCL attaches are left out (they are large)
    return {"valid": False, "error_type": error["error_type"],
            "errors": plain(message if isinstance(message, list) else [message])}


def _write_lines(path: Path, lines: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line) + "\n")


def run_lines(data: Path, category: str, which: str) -> list[dict]:
    """A result file's lines ({"id", "variant", "result"}): every entry's oracle, or for a
    mixed set entry k's variant k mod n."""
    if category not in bv.MULTI_TURN:
        if which.endswith("oracle"):
            return [{**line, "variant": bv.ORACLE} for line in bv.oracle_results(data, category)]
        return bv.mixed_results(data, category)
    lines = []
    for k, (entry, answer) in enumerate(bv.load_category(data, category)):
        variants = list(bv.multi_turn_variants(data, entry, answer).items())
        name, raw = variants[0] if which.endswith("oracle") else variants[k % len(variants)]
        lines.append({"id": entry["id"], "variant": name, "result": raw})
    return lines


def full_run(data: Path, project: Path, which: str, verdicts: dict,
             categories=bv.SINGLE_TURN) -> dict:
    """Write a whole run's result files, evaluate them with ``bfcl evaluate``, check the
    failures against the per-row verdicts, and keep the aggregate outputs."""
    chosen: dict[str, dict[str, str]] = {}
    for category in categories:
        lines = run_lines(data, category, which)
        chosen[category] = {line["id"]: line.pop("variant") for line in lines}
        group = ("multi_turn" if category in bv.MULTI_TURN
                 else "live" if category.startswith("live_") else "non_live")
        _write_lines(project / "result" / MODEL / group / f"{bv.PREFIX}{category}_result.json",
                     lines)
    bfcl = Path(sys.executable).with_name("bfcl")
    env = {**os.environ, "BFCL_PROJECT_ROOT": str(project)}
    proc = subprocess.run([str(bfcl), "evaluate", "--model", MODEL, "--test-category",
                           ",".join(categories)], cwd=project, env=env, capture_output=True,
                          text=True, check=True)
    printed = [line for line in proc.stdout.splitlines() if "Accuracy" in line]
    summary: dict = {"set": which, "model": MODEL, "printed": printed, "categories": {}}
    for category in categories:
        (score,) = (project / "score").rglob(f"{bv.PREFIX}{category}_score.json")
        header, *failed = bv.read_lines(score)
        failures = {row["id"]: (row.get("error_type") or row["error"].get("error_type"))
                    for row in failed}
        expected = {id_: verdicts[category][id_][name]["error_type"]
                    for id_, name in chosen[category].items()
                    if not verdicts[category][id_][name]["valid"]}
        if failures != expected:
            raise SystemExit(f"{which}/{category}: bfcl evaluate disagrees with the rows")
        summary["categories"][category] = {
            "accuracy": header["accuracy"], "correct_count": header["correct_count"],
            "total_count": header["total_count"], "variants": chosen[category]}
    for table in sorted((project / "score").glob("*.csv")):
        shutil.copyfile(table, OUT / f"summary_{which}_{table.name}")
    return summary


def write_gzip_json(path: Path, value) -> None:
    # no name or time in the gzip header: the same verdicts give the same bytes
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0,
                                                filename="") as handle:
        # BFCL's own key order is kept (its error records are dicts too)
        handle.write(json.dumps(value).encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default = Path(os.environ.get("TOOLSCORE_DATA") or REPO.parent / "shared" / "datasets")
    parser.add_argument("--data", type=Path, default=default / "bfcl")
    data = parser.parse_args().data.resolve()

    project = Path(tempfile.mkdtemp(prefix="bfcl-ref."))
    # BFCL creates its result/score folders under this root as soon as it is imported
    os.environ["BFCL_PROJECT_ROOT"] = str(project / "rows")
    no_api_key()
    try:
        from importlib.metadata import version

        from bfcl_eval.constants.eval_config import PROMPT_PATH
        hashes = dataset_hashes(data)
        if hashes != dataset_hashes(PROMPT_PATH):
            raise SystemExit(f"the dataset in {data} differs from bfcl-eval's own copy")
        OUT.mkdir(parents=True, exist_ok=True)
        for old in OUT.glob("summary_*"):
            old.unlink()
        verdicts, counts = judge_rows(data)
        write_gzip_json(OUT / "verdicts.json.gz", verdicts)
        for which in SETS:
            summary = full_run(data, project / which, which, verdicts)
            (OUT / f"summary_{which}.json").write_text(json.dumps(summary, indent=1) + "\n")
        multi, multi_counts = judge_multi_turn(data)
        write_gzip_json(OUT / "verdicts_multi_turn.json.gz", multi)
        for which in ("multi_turn_oracle", "multi_turn_mixed"):
            summary = full_run(data, project / which, which, multi, bv.MULTI_TURN)
            (OUT / f"summary_{which}.json").write_text(json.dumps(summary, indent=1) + "\n")
        counts.update(multi_counts)
        multi_rows = list(bv.multi_turn_rows(data))
        rows = list(bv.all_rows(data))
        manifest = {
            "bfcl_eval": version("bfcl_eval"), "model": MODEL,
            "command": "python tests/reference/bfcl/make_fixtures.py",
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "datasets": hashes, "rows": len(rows), "rows_sha256": bv.digest(rows),
            "multi_turn_rows": len(multi_rows), "multi_turn_rows_sha256": bv.digest(multi_rows),
            "counts": {f"{c}/{v}": {"valid": counts[(c, v, True)],
                                    "invalid": counts[(c, v, False)]}
                       for c, v in sorted({(c, v) for c, v, _ in counts})},
        }
        (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
        write_readme(manifest, verdicts)
    finally:
        shutil.rmtree(project, ignore_errors=True)


def write_readme(manifest: dict, verdicts: dict) -> None:
    lines = [
        "# BFCL reference fixtures",
        "",
        f"Produced by running `bfcl-eval` {manifest['bfcl_eval']} (BFCL's own evaluator) on",
        "prediction sets generated from the dataset by `tests/support/bfcl_variants.py`, as",
        f"an OpenAI function-calling model (`{manifest['model']}`) would write them.",
        "",
        f"Command (with the reference's Python): `{manifest['command']}`, on {manifest['date']}.",
        "",
        "- `verdicts.json.gz`: {category: {id: {variant: {valid, error_type, errors}}}} for",
        f"  every row ({manifest['rows']} rows); `errors` are BFCL's messages for the entry.",
        "- `summary_oracle.json`, `summary_mixed.json`: per-category accuracy of a full",
        "  `bfcl evaluate` run over the single-turn categories (the oracle; entry k given its",
        "  variant k mod n), with the variant each entry got and the lines it printed.",
        "- `summary_<set>_data_*.csv`: the tables `bfcl evaluate` wrote for those runs.",
        "- `verdicts_multi_turn.json.gz`, `summary_multi_turn_{oracle,mixed}.json` and their",
        f"  CSVs: the same for multi_turn_base ({manifest['multi_turn_rows']} rows: the",
        "  ground-truth calls per turn, and perturbations such as a dropped call, a wrong",
        "  argument, a turn without calls, a missing turn); BFCL's execution details are left",
        "  out of the verdicts.",
        "- `manifest.json`: version, model, date, dataset sha256s, row count and digest.",
        "",
        "Ground-truth rows the reference itself judges invalid (the possible answer cannot",
        "be met as written: a parameter absent from the function document, an empty list of",
        "allowed values, a dict entry whose allowed values are a string rather than a list,",
        "Java values its converter cannot produce from any text):",
        "",
    ]
    lines += [f"- `{category}` `{id_}`: {rows[bv.ORACLE]['error_type']}"
              for category, table in verdicts.items() for id_, rows in table.items()
              if not rows[bv.ORACLE]["valid"]]
    lines += [
        "",
        "Dataset files used (sha256):",
        "",
    ]
    lines += [f"- `{name}` {digest}" for name, digest in sorted(manifest["datasets"].items())]
    (OUT / "README.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
