"""BFCL's own result files, read and written.

BFCL's generation step writes, per model, ``<group>/BFCL_v4_<category>_result.json`` (one JSON
line per entry: ``{"id", "result", ...}``, ``result`` the raw reply as ``decode`` describes
it; for a multi-turn entry, per turn, the raw output of each step; for an agentic question,
one such turn) and its evaluator reads them back. A memory category's files are in
``agentic/memory/<backend>/``, its prerequisite conversations in a file of their own
(``BFCL_v4_<category>_prereq_result.json``, never scored). ``score_result_files`` scores
such files with toolscore's scorer; the export format ``bfcl`` writes a toolscore run as
such files, so BFCL's own evaluator can check the run:

    toolscore export RUN --format bfcl --out DIR
    bfcl evaluate --model openbmb/MiniCPM-SALA-FC --result-dir DIR ...

The model folder is named after a BFCL model whose handler is BFCL's OpenAI
function-calling handler itself (so the evaluator decodes the results as toolscore does) and
which reads calls to dotted functions with underscores, as the requests name them. A run in
prompting mode is filed under BFCL's prompting model ``gpt-4.1-2025-04-14``, whose evaluator
decodes reply texts as toolscore does (``prompting_mode``).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from toolscore.benchmarks.bfcl.categories import (
    AGENTIC,
    LIVE,
    MEMORY,
    MULTI_TURN,
    NON_LIVE,
    RUNNABLE,
    WEB_SEARCH,
    category_of,
)
from toolscore.benchmarks.bfcl.data import PREFIX, read_lines
from toolscore.benchmarks.bfcl.format_sensitivity import header_extra
from toolscore.benchmarks.bfcl.prompting_mode import export_model, scored_categories
from toolscore.benchmarks.options import OptionError

#: the BFCL model the exported results are filed under
BFCL_MODEL = "openbmb/MiniCPM-SALA-FC"
RESULT_FILE = re.compile(rf"{PREFIX}_(\w+?)_result\.json$")


def group_of(category: str) -> str:
    """The folder BFCL files a category's results in."""
    if category == "format_sensitivity":
        return category
    if category in NON_LIVE:
        return "non_live"
    if category in LIVE:
        return "live"
    if category.startswith("memory_"):
        return f"agentic/memory/{category[len('memory_'):].replace('_prereq', '')}"
    return "multi_turn" if category.startswith("multi_turn") else "agentic"


def result_files(path: Path) -> dict[str, Path]:
    """category -> result file, for ``path`` (a file) or every result file below it."""
    files = [path] if path.is_file() else sorted(path.rglob(f"{PREFIX}_*_result.json"))
    out: dict[str, Path] = {}
    for f in files:
        m = RESULT_FILE.search(f.name)
        if m is None:
            raise OptionError(f"{f}: not a BFCL result file ({PREFIX}_<category>_result.json)")
        if m.group(1) in out:
            raise OptionError(f"bfcl: two result files for {m.group(1)}: {out[m.group(1)]}, {f}")
        out[m.group(1)] = f
    if not out:
        raise OptionError(f"{path}: no BFCL result files ({PREFIX}_<category>_result.json)")
    return out


def score_result_files(bench: Any, path: Path, out: Path | None = None) -> dict[str, Any]:
    """Score BFCL result files with ``bench``'s data and scorer (a category's entries
    missing from its file are left out, as BFCL's partial evaluation does, and counted)."""
    files = result_files(path)
    known = scored_categories(bench.options)
    # a memory category's prerequisites are never scored (BFCL's evaluator passes them by too)
    skipped = sorted(c for c in files if c not in known and not c.endswith("_prereq"))
    wanted = [c for c in known if c in files]
    if not wanted:
        raise OptionError(f"bfcl: none of the result files is of a supported category "
                          f"({', '.join(skipped)})")
    # scoring web search results reads files only: no opt-in needed
    opt_in = {"web_search": True} if set(wanted) & set(WEB_SEARCH) else {}
    scorer = type(bench)(bench.data_dir, replace(bench.options, category=wanted, **opt_in))
    by_id = {s.id: s for s in scorer.samples()}
    records, missing, unknown = [], 0, []
    for category in wanted:
        results = {str(r["id"]): r for r in read_lines(files[category])}
        unknown += [i for i in results if i not in by_id]
        for sample in (s for s in scorer.samples() if s.data["category"] == category):
            if sample.id not in results:
                missing += 1
                continue
            output = {"category": category, "result": results[sample.id].get("result")}
            records.append({"id": sample.id, "status": "ok", "meta": sample.meta,
                            "output": output, "scores": scorer.score(output, sample)})
    if unknown:
        raise OptionError(f"bfcl: result ids not in the data: {', '.join(unknown[:5])}")
    metrics = scorer.aggregate(records)
    if out is not None:
        write_score_files(records, metrics, out)
    return {"config": {"benchmark": "bfcl", "model": f"predictions:{path}",
                       "benchmark_config": {**scorer.config(), "skipped_categories": skipped,
                                            "missing_entries": missing}},
            "metrics": metrics, "summary": None}


def write_score_files(records: list[dict[str, Any]], metrics: dict[str, Any], out: Path
                      ) -> None:
    """Per category, a file shaped as BFCL's score files: a header line (accuracy, correct
    and total counts), then one line per invalid entry (id, error, error_type)."""
    out.mkdir(parents=True, exist_ok=True)
    for category, m in metrics.items():
        if category not in RUNNABLE and category != "format_sensitivity":
            continue
        lines = [{"accuracy": m["accuracy"], "correct_count": m["correct"],
                  "total_count": m["total"], **header_extra(m)}]
        lines += [_score_line(category, r["id"], r["scores"]) for r in records
                  if r["meta"]["split"] == category and not r["scores"]["valid"]]
        (out / f"{PREFIX}_{category}_score.json").write_text(
            "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


#: multi-turn error types whose message BFCL's score file holds as a list
_LISTED = ("multi_turn:inference_error", "multi_turn:force_terminated")


def _score_line(category: str, entry_id: str, scores: dict[str, Any]) -> dict[str, Any]:
    """An invalid entry's line; a multi-turn one as BFCL writes it, the error type inside
    ``error`` beside its message (the checker's execution details left out)."""
    errors, error_type = scores["errors"], scores["error_type"]
    if category in AGENTIC:
        message: Any = errors[0] if errors else ""
        if error_type != "agentic:answer_not_found":  # BFCL lists these two messages
            message = list(errors)
        return {"id": entry_id, "test_category": category, "valid": False,
                "error": {"error_message": message, "error_type": error_type}}
    if category in MULTI_TURN:
        message = list(errors) if error_type in _LISTED else (errors[0] if errors else "")
        return {"id": entry_id, "test_category": category, "valid": False,
                "error": {"error_message": message, "error_type": error_type}}
    return {"id": entry_id, "test_category": category, "valid": False,
            "error": [_as_written(e) for e in errors], "error_type": error_type}


def _as_written(error: str) -> Any:
    """An error as BFCL's score files hold it: the parallel checker's details are objects
    there (a record keeps each error as text, those as JSON text)."""
    if error.startswith("{"):
        try:
            value = json.loads(error)
        except ValueError:
            return error
        return value if isinstance(value, dict) else error
    return error


# -- the export format ---------------------------------------------------------------------
def run_results(run_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """category -> the run's result lines (finished samples of epoch 0), in id order."""
    from toolscore.records import RunStore

    store = RunStore(run_dir)
    if store.config().benchmark != "bfcl":
        raise OptionError(f"{run_dir}: not a bfcl run (the bfcl format writes BFCL's result "
                          "files)")
    out: dict[str, list[dict[str, Any]]] = {}
    for (sample_id, epoch), r in store.latest().items():
        if epoch != 0 or r.get("status") != "ok":
            continue
        category = (r.get("output") or {}).get("category") or category_of(sample_id)
        out.setdefault(category, []).append({"id": sample_id,
                                             "result": r["output"].get("result")})
        if category in MEMORY:
            out.setdefault(f"{category}_prereq", []).extend(
                {"id": p["id"], "result": p["result"]} for p in r["output"].get("prereq", []))
    for lines in out.values():
        lines.sort(key=lambda line: entry_index(line["id"]))
    return out


def entry_index(entry_id: str) -> int:
    """An entry's position in its category (``live_simple_3-2-0`` -> 3), BFCL's file order."""
    tail = entry_id.split(":")[0].rsplit("_", 1)[-1].split("-")[0]
    return int(tail) if tail.isdigit() else -1


def write_results(run_dir: Path, out: Path | None) -> Path:
    """The run as BFCL result files under ``out`` (default ``<run>/bfcl``); returns the
    model folder written."""
    target = (Path(out) if out is not None else Path(run_dir) / "bfcl") / export_model(
        Path(run_dir), BFCL_MODEL).replace("/", "_")
    for category, lines in run_results(Path(run_dir)).items():
        folder = target / group_of(category)
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / f"{PREFIX}_{category}_result.json", "w", encoding="utf-8") as fh:
            write_lines(lines, fh)
    return target


def write_lines(lines: list[dict[str, Any]], fh: IO[str]) -> None:
    for line in lines:
        fh.write(json.dumps(line) + "\n")


def stream_results(run_dir: Path, fh: IO[str]) -> None:
    """Every result line of the run, one stream (BFCL keeps one file per category)."""
    for _category, lines in sorted(run_results(Path(run_dir)).items()):
        write_lines(lines, fh)


def validate_results(path: Path) -> str:
    files = result_files(Path(path))
    n = sum(len(read_lines(f)) for f in files.values())
    return f"{n} BFCL result lines in {len(files)} files ({', '.join(sorted(files))})"

