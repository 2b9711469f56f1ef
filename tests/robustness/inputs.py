"""Every input file the commands read, with the ways each can be broken and the decided outcome.

The file-level breakages (empty, torn, not UTF-8, binary, folder, missing, wrong top-level type)
apply to all; the record-level ones name, in ``needles``, the record and the field the error
line must point at. An outcome other than ``error`` is a decision, stated next to it.
"""

from __future__ import annotations

import math
from pathlib import Path

from robustness import mutations as mu
from robustness.corpus import (
    ACCEPTED,
    DELETE,
    ERROR,
    Breakage,
    Input,
    file_breakages,
    json_edit,
    jsonl_edit,
    raw_line,
    setter,
    wrong_tops,
)

NAN = math.nan
HUGE = 10 ** 400
TEXT_SAMPLE = "caf\u00e9 {}\n".encode()  # decides which byte breakages apply (all of them)
ASCII_SAMPLE = b"{}\n"  # Latin-1 re-encoding changes nothing: not a breakage for ASCII files

RUN_COMMANDS = ("score", "report", "report --html", "compare", "export", "judge",
                "run --resume")
READ_ONLY = ("report", "report --html", "compare", "export", "judge")


def _edits(*items: tuple[str, list, object, tuple[str, ...]]) -> list[Breakage]:
    return [json_edit(name, setter(keys, value), *needles) for name, keys, value, needles
            in items]


def _lines(line: int, *items: tuple[str, list, object, tuple[str, ...]],
           by_line: bool = True) -> list[Breakage]:
    """Record edits on one line; the error names that line (or, ``by_line=False``, the
    record's id, which the needles then give)."""
    return [jsonl_edit(name, line, setter(keys, value), *((f"{line}",) if by_line else ()),
                       *needles)
            for name, keys, value, needles in items]


def _duplicate_folder(path: Path) -> None:
    """The same conversation file a second time in another sub-folder."""
    twin = path.parent.parent / "again" / path.name
    twin.parent.mkdir()
    twin.write_bytes(path.read_bytes())


def _dir_is_file(path: Path) -> None:
    import shutil
    shutil.rmtree(path)
    path.write_text("not a folder\n")


def inputs() -> list[Input]:
    ascii_json = file_breakages(ASCII_SAMPLE) + wrong_tops()
    text_json = file_breakages(TEXT_SAMPLE) + wrong_tops()
    text_lines = file_breakages(TEXT_SAMPLE)
    conversation = Input("tooltalk conversation", "tt/easy/AddAlarm-easy.json",
                         ("run tooltalk",), tuple(ascii_json + _edits(
        ("name-int", ["name"], 7, ("name",)),
        ("conversation-missing", ["conversation"], DELETE, ("conversation",)),
        ("conversation-object", ["conversation"], {}, ("conversation",)),
        ("turn-role-int", ["conversation", 1, "role"], 3, ("conversation[1]", "role")),
        ("turn-list", ["conversation", 1], [], ("conversation[1]",)),
        ("apis-object", ["conversation", 1, "apis"], {}, ("conversation[1]", "apis")),
        ("request-missing", ["conversation", 1, "apis", 0, "request"], DELETE,
         ("conversation[1]", "request")),
        ("api-name-null", ["conversation", 1, "apis", 0, "request", "api_name"], None,
         ("conversation[1]", "api_name")),
        ("parameters-list", ["conversation", 1, "apis", 0, "request", "parameters"], [],
         ("conversation[1]", "parameters")),
        ("timestamp-text", ["metadata", "timestamp"], "yesterday", ("metadata.timestamp",)),
        ("user-null", ["user"], None, ("user",)),
        ("suites-string", ["suites_used"], "Alarm", ("suites_used",)),
        ("text-nan", ["conversation", 0, "text"], NAN, ("conversation[0]", "text")),
    ) + [
        # Unused by the protocol and the scorer, as in ToolTalk's own code: read as given.
        json_edit("index-huge", setter(["conversation", 0, "index"], HUGE), expect=ACCEPTED),
    ]), accepted_by={"missing": ACCEPTED})  # a conversation less is a smaller dataset
    database = Input("tooltalk database", "tt/databases/Alarm.json",
                     ("run tooltalk", "tooltalk replay"),
                     tuple(ascii_json + _edits(
        ("user-table-list", ["ahhchiu"], [], ("ahhchiu",)),
    )),
        # A missing database is refused before the first model call (the benchmark's check).
        accepted_by={"missing|run tooltalk": ERROR, "missing|tooltalk replay": ERROR})
    # `tooltalk replay` lists JSON files that are not conversations as skipped (a folder of
    # predictions may hold a summary file) and replays each file on its own (no totals by
    # name); a file less is a smaller folder.
    replay_skips = {f"{b}|tooltalk replay": ACCEPTED for b in (
        "top-list", "top-string", "top-number", "top-null", "conversation-missing",
        "duplicate")}
    predictions = Input("tooltalk predictions", "pred/easy/AddAlarm-easy.json",
                        ("score tooltalk --predictions", "tooltalk replay"),
                        tuple(ascii_json + [Breakage("duplicate", _duplicate_folder)]
                              + _edits(
        ("conversation-missing", ["conversation"], DELETE, ("conversation",)),
        ("predictions-object", ["conversation", 1, "predictions"], {},
         ("conversation[1]", "predictions")),
        ("api-name-int", ["conversation", 1, "predictions", 0, "request", "api_name"], 5,
         ("conversation[1]", "api_name")),
        ("parameters-list", ["conversation", 1, "predictions", 0, "request", "parameters"],
         [], ("conversation[1]", "parameters")),
        ("role-unknown", ["conversation", 1, "predictions", 1, "role"], "robot",
         ("conversation[1]", "role")),
        ("apis-string", ["conversation", 1, "apis"], "x", ("conversation[1]", "apis")),
        ("metrics-list", ["metrics"], [], ("metrics",)),
        ("name-int", ["name"], 7, ("name",)),
        ("text-int", ["conversation", 1, "predictions", 1, "text"], 5,
         ("conversation[1]", "text")),
    )), accepted_by={"missing": ACCEPTED, **replay_skips})
    script_lines = _lines(
        3,
        ("uuid-missing", ["uuid"], DELETE, ("uuid",)),
        ("uuid-int", ["uuid"], 12, ("uuid",)),
        ("content-string", ["content"], "hi", ("content",)),
        ("role-bot", ["content", 0, "role"], "Bot", ("content[0].role",)),
        ("message-null", ["content", 0, "message"], None, ("content[0].message",)),
        ("slots-list", ["slots"], [], ("slots",)),
        ("slot-int", ["slots", "deviceType"], 3, ("slots.deviceType",)),
        ("background-short", ["background"], "Character: x", ("background",)),
        ("api-int", ["api"], 1, ("api",)),
        ("api-unknown", ["api"], "NoSuchApi", ("api",)),
        ("slot-nan", ["slots", "deviceType"], NAN, ("slots.deviceType",)),
    ) + [
        raw_line("line-not-json", 3, b'{"uuid": "x", ', "3"),
        raw_line("line-list", 3, b"[1, 2]", "3"),
        raw_line("line-bad-utf8", 3, b'{"uuid": "\xff"}', "3"),
        Breakage("blank-line", _blank_line, ACCEPTED),  # a blank line is skipped
        Breakage("uuid-duplicate", _duplicate_line, needles=("3", "uuid")),
    ]
    # Only a run offers the API documents to an assistant; scoring, agreement and the gap
    # compare recorded calls with the gold ones, which an undocumented API does not change.
    scripts = Input("autode scripts", "ad/data_v1_2.jsonl",
                    ("run autode", "score autode --predictions", "agree", "autode gap"),
                    tuple(text_lines + script_lines),
                    accepted_by={f"api-unknown|{c}": ACCEPTED for c in (
                        "agree", "autode gap")})
    own_scripts = Input("autode scripts", "scripts.jsonl", ("run autode --scripts",),
                        tuple(text_lines + script_lines))
    workbook = Input("autode workbook", "ad/API_list.xlsx", ("run autode", "autode gap"),
                     tuple(file_breakages(b"PK", text=False)
                           + [Breakage("not-a-zip", _write(mu.not_a_zip(b"")))]))
    api_docs = Input("autode api docs", "apis.json", ("run autode --apis",),
                     tuple(text_json + _edits(
        ("name-int", [0, "name"], 5, ("name",)),
        ("description-missing", [0, "description"], DELETE, ("description",)),
        ("parameters-string", [0, "parameters"], 5, ("parameters",)),
        ("type-number", [0, "parameters", "deviceType", "type"], "number", ("type",)),
        ("enum-string", [0, "parameters", "deviceType", "enum"], "a", ("enum",)),
        ("required-text", [0, "parameters", "deviceType", "required"], "yes", ("required",)),
        ("unknown-key", [0, "colour"], "red", ("colour",)),
    ) + [json_edit("duplicate-api", lambda d: d + d, "TurnOnBluetooth")]))
    api_yaml = Input("autode api docs", "apis.yaml", ("run autode --apis",), tuple(
        text_lines + [
            # PyYAML names the line where it noticed the fault (the next one): not pinned here
            raw_line("yaml-syntax", 2, b"  description: [unclosed", "not valid YAML"),
            raw_line("yaml-tab", 2, b"\tdescription: x", "2"),
            Breakage("yaml-scalar", _write(b"just text\n")),
        ]))
    results = Input("autode results", "res-a.jsonl",
                    ("score autode --predictions", "agree", "autode gap"),
                    tuple(text_lines + _lines(
        2,
        ("state-maybe", ["state"], "maybe", ("state",)),
        ("uuid-missing", ["uuid"], DELETE, ("uuid",)),
        ("slots-list", ["slots"], [], ("slots",)),
        ("content-string", ["content"], "x", ("content",)),
        ("trial-int", ["trial_uuid"], 5, ("trial_uuid",)),
        ("uuid-unknown", ["uuid"], "not-a-case", ("uuid",)),
    ) + [
        # A recorded slot value is the assistant's answer, whatever it is: scored (a miss).
        jsonl_edit("slot-nan", 2, setter(["slots", "deviceType"], NAN), expect=ACCEPTED),
        raw_line("line-not-json", 2, b"{", "2"),
         raw_line("line-number", 2, b"42", "2")]))
    converted = Input("tooleval answers", "te/converted/G1_tool.json",
                      ("tooleval passrate", "run tooleval"), tuple(ascii_json + _edits(
        ("record-list", ["1103"], [], ("1103",)),
        ("query-int", ["1103", "query"], 5, ("1103", "query")),
        ("tools-object", ["1103", "available_tools"], {}, ("1103", "available_tools")),
        ("final-int", ["1103", "answer", "final_answer"], 5, ("1103", "final_answer")),
        ("details-string", ["1103", "answer", "answer_details"], "x",
         ("1103", "answer_details")),
        ("details-node-int", ["1103", "answer", "answer_details", 0], 5,
         ("1103", "answer_details")),
        ("steps-text", ["1103", "answer", "total_steps"], "many", ("1103", "total_steps")),
    ) + [
        # A record without an answer is a query the method did not answer (reference mode:
        # not counted; stable mode: a fail), as tests/benchmarks/tooleval/test_data.py keeps.
        json_edit("answer-missing", setter(["1103", "answer"], DELETE), expect=ACCEPTED),
    ]))
    raw = Input("tooleval raw tree", "te/raw/answer/G1_answer/10_ChatGPT_DFS_woFilter_w2.json",
                ("tooleval passrate raw",), tuple(ascii_json + _edits(
        ("generation-missing", ["answer_generation"], DELETE, ("answer_generation",)),
        ("query-int", ["answer_generation", "query"], 5, ("query",)),
        ("messages-string", ["answer_generation", "train_messages"], "x",
         ("train_messages",)),
        ("final-int", ["answer_generation", "final_answer"], 5, ("final_answer",)),
    )))
    acs = Input("acs csv", "acs.csv", ("run acs", "judge-agreement"), tuple(
        text_lines + [
            Breakage("header-only", _keep_lines(1), needles=("no rows",)),
            raw_line("column-missing", 1,
                     b"row_id,user_request,agent_response,constraint,domain", "header",
                     "is_constraint_satisfied"),
            Breakage("label-maybe", _csv_cell(2, "is_constraint_satisfied", "maybe"),
                     needles=("line 2", "is_constraint_satisfied")),
            Breakage("domain-unknown", _csv_cell(2, "domain", "space"),
                     needles=("line 2", "domain")),
            Breakage("row-id-empty", _csv_cell(2, "row_id", ""), needles=("line 2", "row_id")),
            Breakage("row-id-duplicate", _csv_cell(3, "row_id", None),
                     needles=("line 3", "row_id")),
            Breakage("request-empty", _csv_cell(2, "user_request", ""),
                     needles=("line 2", "user_request")),
            Breakage("ragged-row", _csv_extra_cell(2), needles=("line 2",)),
            Breakage("quote-unclosed", _csv_unclosed_quote, needles=("acs.csv",)),
        ]))
    labels = Input("labels", "labels.jsonl", ("judge-agreement --labels",), tuple(
        text_lines + _lines(
            2,
            ("label-perhaps", ["label"], "perhaps", ("'s1'", "label")),
            ("id-missing", ["id"], DELETE, ("id",)),
            ("label-null", ["label"], None, ("'s1'", "label")),
            ("label-list", ["label"], [], ("'s1'", "label")), by_line=False,
        ) + [raw_line("line-not-json", 2, b"{", "2")]))
    verdicts = Input("verdicts", "verdicts.jsonl", ("judge-agreement --labels",), tuple(
        text_lines + _lines(
            2,
            ("label-perhaps", ["label"], "perhaps", ("'s1'", "label")),
            ("id-missing", ["id"], DELETE, ("id",)),
            ("label-object", ["label"], {}, ("'s1'", "label")), by_line=False,
        ) + [raw_line("line-not-json", 2, b"[", "2")]),
        # A judge's verdicts file may leave items out (abstained), even all of them.
        accepted_by={"empty": ACCEPTED})
    judge_edits = _edits(
        ("kind-unknown", ["kind"], "nope", ("kind",)),
        ("votes-text", ["votes"], "3", ("votes",)),
        ("temperature-nan", ["temperature"], NAN, ("temperature",)),
        ("name-int", ["name"], 5, ("name",)),
        ("field-unknown", ["colour"], "red", ("colour",)),
        ("model-missing", ["model"], DELETE, ("model",)),
        ("template-missing-file", ["template"], "nowhere.txt", ("template",)),
    )
    judge = Input("judge config", "judge.json", ("judge --judge-config",),
                  tuple(ascii_json + judge_edits))
    judge_acs = Input("judge config", "judge-acs.json", ("judge-agreement --judge-config",),
                      tuple(ascii_json + _edits(
        ("kind-unknown", ["kind"], "nope", ("kind",)),
        ("model-given", ["model"], "openai/x", ("model",)),
    )))
    prices = Input("prices", "prices.json", ("report --prices",), tuple(ascii_json + _edits(
        ("entry-list", ["oracle"], [], ("oracle",)),
        ("price-text", ["oracle", "input_per_mtok"], "1", ("oracle", "input_per_mtok")),
        ("price-negative", ["oracle", "output_per_mtok"], -1, ("oracle", "output_per_mtok")),
        ("price-nan", ["oracle", "input_per_mtok"], NAN, ("oracle", "input_per_mtok")),
        ("price-missing", ["oracle", "input_per_mtok"], DELETE, ("oracle", "input_per_mtok")),
    )))
    run_json = Input("run.json", "run/run.json", RUN_COMMANDS, tuple(ascii_json + _edits(
        ("benchmark-int", ["benchmark"], 3, ("benchmark",)),
        ("model-missing", ["model"], DELETE, ("model",)),
        ("version-newer", ["format_version"], 99, ("format_version",)),
        ("version-text", ["format_version"], "2", ("format_version",)),
        ("options-list", ["options"], [], ("options",)),
        ("epochs-text", ["epochs"], "x", ("epochs",)),
        ("benchmark-unknown", ["benchmark"], "nope", ("benchmark",)),
        ("option-unknown", ["options", "colour"], "red", ("colour",)),
    )))
    run_json = Input(run_json.kind, run_json.target, run_json.commands, run_json.breakages,
                     accepted_by={**{f"{b}|{c}": ACCEPTED for b in ("benchmark-unknown",
                                                                  "option-unknown")
                                     for c in ("report", "report --html", "compare", "export")},
                                  **{f"{b}|{c}": ERROR for b in ("benchmark-unknown",
                                                                 "option-unknown")
                                     for c in ("score", "judge", "run --resume")},
                                  "option-unknown|judge": ACCEPTED})
    samples = Input("samples.jsonl", "run/samples.jsonl", RUN_COMMANDS, tuple(
        [b for b in file_breakages(ASCII_SAMPLE) if b.name not in ("empty", "missing", "torn")]
        + [
            # No finished sample yet (a run just started) is a state, not a fault.
            Breakage("empty", _write(b""), ACCEPTED),
            Breakage("missing", lambda p: p.unlink(), ACCEPTED),
            Breakage("torn-tail", _torn_tail, needles=("line 3", "partial")),
            raw_line("line-not-json", 2, b'{"id": "x", ', "line 2"),
            raw_line("line-list", 2, b"[1]", "line 2"),
            raw_line("line-bad-utf8", 2, b'{"id": "\xff"}', "line 2"),
        ] + _lines(
            2,
            ("id-missing", ["id"], DELETE, ("id",)),
            ("status-done", ["status"], "done", ("status",)),
            ("epoch-text", ["epoch"], "x", ("epoch",)),
            ("output-list", ["output"], [], ("output",)),
            ("output-string", ["output"], "x", ("output",)),
            ("scores-list", ["scores"], [], ("scores",)),
            ("usage-list", ["usage"], [], ("usage",)),
            ("meta-list", ["meta"], [], ("meta",)),
            ("time-text", ["time_s"], "slow", ("time_s",)),
        ) + [jsonl_edit("id-int", 2, setter(["id"], 7), expect=ACCEPTED)]),
        # A torn last line is what a killed run leaves: readers skip it, resume cuts it off;
        # only `score`, which rewrites the run's files, refuses (and keeps them).
        # Judging a run with no finished sample is refused ("no queries to judge"). A sample's
        # output has the benchmark's shape: readers that do not look at it accept any;
        # `score` refuses an output its benchmark cannot score, naming the sample.
        accepted_by={**{f"torn-tail|{c}": ACCEPTED for c in (*READ_ONLY, "run --resume")},
                     "empty|judge": ERROR, "missing|judge": ERROR,
                     **{f"{b}|run --resume": ACCEPTED for b in ("output-list", "output-string")},
                     **{f"{b}|{c}": ACCEPTED for b in ("output-list", "output-string")
                        for c in READ_ONLY},
                     **{f"{b}|score": ERROR for b in ("output-list", "output-string")},
                     "id-int|judge": ERROR})
    # compare recomputes every metric from samples.jsonl; a run without scores.json (never
    # scored) is reported without its headline table.
    scores = Input("scores.json", "run/scores.json", ("report", "report --html"),
                   tuple(ascii_json), accepted_by={"missing": ACCEPTED})
    run_dir = Input("run directory", "run", RUN_COMMANDS, (
        Breakage("file-not-folder", _dir_is_file, needles=("run",)),
        Breakage("missing", lambda p: __import__("shutil").rmtree(p), needles=("run",)),
    ))
    return [conversation, database, predictions, scripts, own_scripts, workbook, api_docs,
            api_yaml, results, converted, raw, acs, labels, verdicts, judge, judge_acs, prices,
            run_json, samples, scores, run_dir]


def _write(data: bytes):  # noqa: ANN202
    return lambda p: p.write_bytes(data)


def _keep_lines(n: int):  # noqa: ANN202
    def apply(path: Path) -> None:
        path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:n]))
    return apply


def _blank_line(path: Path) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([*lines[:2], b"\n", *lines[2:]]))


def _duplicate_line(path: Path) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[1]
    path.write_bytes(b"".join(lines))


def _torn_tail(path: Path) -> None:
    data = path.read_bytes()
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[: last + (len(data) - last) // 2])


def _rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    import csv
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def _write_rows(path: Path, header: list[str], rows: list[dict[str, str]]) -> None:
    import csv
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, header)
        w.writeheader()
        w.writerows(rows)


def _csv_cell(row: int, column: str, value: str | None):  # noqa: ANN202
    """Set a cell of data row ``row`` (the header is row 1); None copies the row above's."""
    def apply(path: Path) -> None:
        header, rows = _rows(path)
        rows[row - 2][column] = rows[row - 3][column] if value is None else value
        _write_rows(path, header, rows)
    return apply


def _csv_extra_cell(row: int):  # noqa: ANN202
    def apply(path: Path) -> None:
        header, rows = _rows(path)
        import csv
        import io
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(header)
        for i, r in enumerate(rows, start=2):
            w.writerow([r[h] for h in header] + (["surplus"] if i == row else []))
        path.write_text(buf.getvalue(), encoding="utf-8", newline="")
    return apply


def _csv_unclosed_quote(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition("\n")
    path.write_text(head + '\n1,"never closed,x,y,1,z\n' + rest, encoding="utf-8")


__all__ = ["inputs", "ERROR", "ACCEPTED"]
