"""A small valid workspace holding one of every input the commands read, cut from the released
datasets so each command finishes in a second: three ToolTalk conversations and their oracle
predictions, twelve AutoDE scripts with two assistants' results, two ToolEval answers, two ACS
requests, labels, judge configurations, a price table and a ToolTalk run directory (and a copy
to compare it with). Each variant breaks one file of a fresh copy.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from support import data
from support.autode_release import write_release
from support.testing.openai_server import default_responder
from support.tooleval import judge_server

CONVERSATIONS = ("AddAlarm-easy", "DeleteAlarm-easy", "AddReminder-easy")
N_SCRIPTS = 12


def responder(seen: list[dict[str, Any]]) -> Any:
    """ToolEval's judge when the request is a judging prompt, else an assistant that answers."""
    judge = judge_server(seen)

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        user = " ".join(str(m.get("content")) for m in request.get("messages", [])[1:2])
        if "Final answer given to the user:" in user or '"task_status"' in user:
            return judge(request)
        return default_responder(request)
    return respond


def _copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)


def _jsonl(path: Path, docs: list[Any]) -> None:
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs),
                    encoding="utf-8")


def build(root: Path, url: str, run: Any) -> Path:
    """Write the workspace under ``root``; ``run(args)`` runs the CLI (to make the run dir)."""
    tt, ref = data.path("tooltalk"), data.path("tooltalk-reference")
    for db in (tt / "databases").glob("*.json"):
        _copy(db, root / "tt" / "databases" / db.name)
    for source in (tt / "src").rglob("*.py"):  # the release's files the default mode reads
        _copy(source, root / "tt" / source.relative_to(tt))
    for name in CONVERSATIONS:
        _copy(tt / "easy" / f"{name}.json", root / "tt" / "easy" / f"{name}.json")
        _copy(ref / "oracle" / "easy" / f"{name}.json", root / "pred" / "easy" / f"{name}.json")

    ad = data.path("autode")
    scripts = [json.loads(x) for x in
               (ad / "data_v1_2.jsonl").read_text(encoding="utf-8").splitlines()[:N_SCRIPTS]]
    scripts[0]["background"] += " (caf\u00e9)"  # non-ASCII text, so Latin-1 is a breakage
    (root / "ad").mkdir()
    _jsonl(root / "ad" / "data_v1_2.jsonl", scripts)
    _jsonl(root / "scripts.jsonl", scripts)
    _jsonl(root / "bt.jsonl", [s for s in scripts if s["api"] == "TurnOnBluetooth"])
    _copy(ad / "API_list.xlsx", root / "ad" / "API_list.xlsx")
    write_release(root / "ad")  # the release's files the default mode reads
    uuids = {s["uuid"] for s in scripts}
    for side, name in (("a", "a_gpt35_static_v2"), ("b", "a_claude_instant_1_2_static")):
        rows = [json.loads(x) for x in (ad / "results" / f"{name}.jsonl").read_text(
            encoding="utf-8").splitlines() if x.strip()]
        rows = [r for r in rows if r["uuid"] in uuids]
        rows[0]["reason"] = "caf\u00e9"
        _jsonl(root / f"res-{side}.jsonl", rows)
    (root / "apis.json").write_text(json.dumps([{
        "name": "TurnOnBluetooth", "description": "Turn on Bluetooth (caf\u00e9)",
        "parameters": {"deviceType": {"description": "the device", "required": True,
                                      "type": "string", "enum": ["watch", "phone"]}}}],
        ensure_ascii=False, indent=1), encoding="utf-8")
    (root / "apis.yaml").write_text(
        "- name: TurnOnBluetooth\n  description: Turn on Bluetooth (caf\u00e9)\n"
        "  parameters:\n    deviceType: {description: the device, required: true}\n",
        encoding="utf-8")

    te = data.path("tooleval")
    answers = json.loads((te / "converted" / "gpt-3.5-turbo_CoT" / "G1_tool.json").read_text(
        encoding="utf-8"))
    (root / "te" / "converted").mkdir(parents=True)
    (root / "te" / "converted" / "G1_tool.json").write_text(
        json.dumps(dict(list(answers.items())[:2]), indent=1), encoding="utf-8")
    raw = te / "raw" / "answer" / "G1_answer" / "10_ChatGPT_DFS_woFilter_w2.json"
    _copy(raw, root / "te" / "raw" / "answer" / "G1_answer" / raw.name)

    acs = (data.path("acs") / "acs_dev.csv").read_text(encoding="utf-8")
    import csv
    import io
    rows = list(csv.reader(io.StringIO(acs, newline="")))
    requests = []
    keep = [rows[0]]
    for row in rows[1:]:
        if row[1] not in requests:
            requests.append(row[1])
        if len(requests) > 2:
            break
        keep.append(row)
    keep[1][2] += " (caf\u00e9)"
    buf = io.StringIO()
    csv.writer(buf).writerows(keep)
    (root / "acs.csv").write_text(buf.getvalue(), encoding="utf-8", newline="")

    _jsonl(root / "labels.jsonl", [{"id": f"s{i}", "label": i % 2 == 0, "note": "caf\u00e9"}
                                   for i in range(6)])
    _jsonl(root / "verdicts.jsonl", [{"id": f"s{i}", "label": i % 3 == 0, "note": "\u00e9"}
                                     for i in range(6)])
    (root / "judge.json").write_text(json.dumps({
        "name": "j", "kind": "tooleval-pass", "model": "openai/fake", "base_url": url}))
    (root / "judge-acs.json").write_text(json.dumps({"name": "v", "kind": "acs-verify"}))
    (root / "prices.json").write_text(json.dumps({"oracle": {"input_per_mtok": 1,
                                                             "output_per_mtok": 2}}))
    done = run(["run", "tooltalk", "-m", "oracle", "--data", str(root / "tt"), "--embedder",
                "hashing", "--split", "easy", "--no-cache", "--out", str(root / "run")])
    assert done.exit_code == 0, done.output
    shutil.copytree(root / "run", root / "run2")
    return root
