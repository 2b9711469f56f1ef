"""How far the requests ``toolscore run tooltalk`` sends a model are from those ToolTalk's own
runner sends, request by request.

For each reply policy of :mod:`support.testing.tooltalk_requests` this starts the fake
OpenAI-compatible server (127.0.0.1) answering as the policy says, runs

    toolscore run tooltalk --model openai/fake-model --base-url URL --split all --tools all
                           --no-cache --embedder hashing --call-api functions --out TMP

(the default mode, both splits; ``--call-api functions``: the fake server stands in for
OpenAI's API, for which the default ``auto`` picks that shape), and pairs every request the
server records with the one ToolTalk's runner sent at the same place (conversation,
assistant turn, calls made so far), recorded in
``tests/fixtures/tooltalk_requests/<policy>.json`` (made by ``make_fixtures.py`` there). A
request differs in a category when, after the API's shape is put aside (``tools``,
``tool_calls`` and ``tool`` messages read as ``functions``, ``function_call`` and ``function``
ones), these are not equal (the last three compare messages without their framing):

==============  ==============================================================================
system          the system prompt
documents       the tool documents (names, wording, order of keys, where ``required`` sits)
sampling        the fields beside model, messages and tools (temperature, max_tokens, ...)
api shape       the API (``tools`` instead of legacy ``functions``) and the framing of messages:
                the content of a call message (null or ""), the name on a result
ground truth    the ground-truth history of earlier turns (texts, calls and their results)
echo            the model's own calls of this turn as they are sent back to it (name,
                arguments text, any text beside the call)
results         the tool results of this turn's calls as the model is shown them (content)
==============  ==============================================================================

``unpaired`` counts requests only one side sent (the reference's, then toolscore's). The table
is printed with the date, machine and command; ``--show N`` also prints N examples per
category. About 2-4 minutes for the ten policies on a 2-core machine.

    PYTHONPATH=src TOOLSCORE_DATA=/path/to/datasets python perf/tooltalk_requests.py [--policy P]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import testsupport  # noqa: F401  (tests/support on the path)
from support.testing.openai_server import FakeOpenAIServer
from support.testing.request_diff import CATEGORIES, compare
from support.testing.tooltalk_requests import (
    POLICIES,
    PolicyResponder,
    decode_requests,
    group_requests,
    load_turns,
    loop_subset,
    optional_arguments,
)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "tooltalk_requests"
def run_toolscore(policy: str, turns: dict, optional: dict, work: Path) -> list[dict[str, Any]]:
    with FakeOpenAIServer(PolicyResponder(policy, turns, optional), model="fake-model") as srv:
        cmd = [sys.executable, "-c", "from toolscore.cli import main; main()", "run", "tooltalk",
               "--model", "openai/fake-model", "--base-url", srv.base_url, "--split", "all",
               "--tools", "all", "--no-cache", "--embedder", "hashing", "--max-concurrency", "4",
               "--call-api", "functions",
               "--out", str(work / policy)]
        env = {**os.environ, "OPENAI_API_KEY": "fake"}
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            raise SystemExit(f"{policy}: toolscore failed ({done.returncode}):\n{done.stderr}")
        return list(srv.received)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    data = os.environ.get("TOOLSCORE_DATA")
    parser.add_argument("--data", type=Path, default=Path(data) if data else None,
                        required=not data, help="the datasets folder (default $TOOLSCORE_DATA)")
    parser.add_argument("--policy", action="append", choices=POLICIES)
    parser.add_argument("--show", type=int, default=0, help="examples printed per category")
    args = parser.parse_args(argv)
    turns = load_turns(args.data / "tooltalk")
    docs = json.loads((args.data / "tooltalk-reference" / "openai_docs.json").read_text())
    optional = optional_arguments(docs["docs"])
    policies = args.policy or list(POLICIES)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} {platform.node()} {platform.machine()} "
          f"{os.cpu_count()} cores, python {platform.python_version()}")
    print("# " + " ".join(["python", "perf/tooltalk_requests.py", *(argv or sys.argv[1:])]))
    print("# requests that differ, per category, of the requests paired with the reference's")
    header = ["policy", "ref", "ours", "paired", *CATEGORIES, "only ref", "only ours"]
    rows = []
    examples: dict[str, list[Any]] = {}
    with tempfile.TemporaryDirectory(prefix="tooltalk-requests-") as tmp:
        for policy in policies:
            fixture = json.loads((FIXTURES / f"{policy}.json").read_text(encoding="utf-8"))
            keep = loop_subset if policy == "loop" else None
            ours = group_requests(run_toolscore(policy, turns, optional, Path(tmp)), turns, keep)
            counts = compare(decode_requests(fixture), ours, examples, args.show)
            rows.append([policy, *counts.values()])
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    for row in [header, *rows]:
        print("| " + " | ".join(str(x).rjust(w) for x, w in zip(row, widths, strict=True)) + " |")
    for category, items in examples.items():
        for name, where, ref, got in items:
            print(f"\n## {category}: {name} turn {where[0]} call {where[1]}")
            print("reference:", json.dumps(ref)[:1500])
            print("toolscore:", json.dumps(got)[:1500])
    return 0


if __name__ == "__main__":
    sys.exit(main())
