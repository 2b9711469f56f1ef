"""Harness cost per model call in CPU instructions (valgrind's callgrind), a figure that does
not move with the machine's speed or load, unlike the milliseconds of ``perf/throughput.py``
(this host's speed has varied by a factor of two within an hour, and by 2.5 between sessions).

ToolTalk hard runs through the real runner and ``openai/`` provider against the fake server
(its own process, not under valgrind), twice: with ``--epochs`` A and B. Imports, start-up and
other fixed costs are the same in both, so

    instructions per call = (instructions at B - instructions at A) / (calls at B - calls at A)

is the marginal cost of one call: building the request, the HTTP exchange on the harness's
side, parsing the reply, running the tools, hashing their state, scoring and writing records.
The harness runs about 50 times slower under valgrind; the per-call figure varied by 4% between
two runs of one checkout (the event loop's iterations depend a little on timing): compare
checkouts in one invocation (``--src``), and read differences under 5% as noise. About 1.5
minutes per source tree.

    .venv/bin/python perf/instructions.py                       # 32 in flight, epochs 1 and 3
    .venv/bin/python perf/instructions.py --src ../other/src    # also another checkout
    .venv/bin/python perf/instructions.py --model oracle        # no HTTP at all
    .venv/bin/python perf/instructions.py --warm --src ../other/src   # fixed costs included

``--warm`` counts everything a warm run costs, its fixed costs included (loading, the ground
truth's replay, scoring, the aggregate at the end): the instructions of two runs in one process
less those of one, per call of the second run. That is what ``perf/throughput.py``'s warm
milliseconds per call measure at one epoch. It also measures the earlier checkout c5ee324
(one epoch only, through its ``start_run``), which turns milliseconds measured on another host
with that checkout into this checkout's on that host:

    git worktree add --detach ../c5ee324 c5ee324
    .venv/bin/python perf/instructions.py --warm --src ../c5ee324/src

Under valgrind's slowdown c5ee324 ends 7 of the 50 samples in errors (the fake server finds no
scripted reply for some of its requests; it makes 384 calls instead of 415) and the script says
so; without valgrind it completes all 50.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import shutil
import subprocess
import sys
import tempfile

from throughput import serve

HARNESS = """
import json, os, sys, tempfile
os.environ.setdefault("OPENAI_API_KEY", "dummy")
try:
    from toolscore.runs.api import evaluate
except ImportError:  # a checkout from before the Python API (c5ee324)
    import openai  # (imported by the provider on first use; here, outside the runs)
    from toolscore.runs.session import RunRequest, start_run

    def evaluate(benchmark, model, *, out, split, embedder, epochs, progress, **kw):
        assert epochs == 1, "that checkout runs one epoch"
        result = start_run(RunRequest(benchmark, model, **kw,
                                      options={"split": split, "embedder": embedder}), out)
        return type("Run", (), {"summary": {"errors_now": result["summary"].get("errors", 0),
                                            **result["summary"]}})
with tempfile.TemporaryDirectory() as tmp:
    for i in range(int(sys.argv[5])):  # runs, one after the other in this process
        run = evaluate("tooltalk", sys.argv[1], base_url=sys.argv[2] or None, cache=None,
                       max_concurrency=int(sys.argv[3]), timeout=600, epochs=int(sys.argv[4]),
                       out=f"{tmp}/run{i}", split="hard", embedder="hashing", progress=False)
    print(json.dumps({"calls": run.summary["calls"], "errors": run.summary["errors_now"]}))
"""
COLLECTED = re.compile(r"Collected : (\d+)")


def measure(src: str | None, model: str, base_url: str, concurrency: int,
            epochs: int, runs: int = 1) -> tuple[int, int]:
    """(instructions, model calls of the last run) of ``runs`` runs in one process, under
    callgrind."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory(prefix="toolscore-perf-cg-") as tmp:
        env["XDG_CACHE_HOME"] = tmp
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
             sys.executable, "-c", HARNESS, model, base_url, str(concurrency), str(epochs),
             str(runs)],
            capture_output=True, text=True, env=env, check=False)
    found = COLLECTED.findall(done.stderr)
    if done.returncode != 0 or not found:
        sys.exit(f"the harness under valgrind failed ({done.returncode}): {done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["errors"]:  # (c5ee324 under valgrind: 7 of 50 samples, see the docstring)
        print(f"warning: {src or 'this checkout'}: {result['errors']} samples ended in errors; "
              "per call divides by the calls made", file=sys.stderr)
    return int(found[-1]), int(result["calls"])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--epochs", type=int, nargs=2, default=[1, 3], metavar=("A", "B"))
    p.add_argument("--model", default="openai/fake", choices=["openai/fake", "oracle"])
    p.add_argument("--src", action="append", default=[],
                   help="Also measure this source tree (another checkout's src); repeatable.")
    p.add_argument("--latency", type=float, default=0.01, help="The fake server's, seconds.")
    p.add_argument("--warm", action="store_true",
                   help="Instead: the whole cost of a warm run at epochs A, fixed costs "
                        "included (one run in a process against two), per call of that run.")
    args = p.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    trees = [None, *args.src]
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    server = ctx.Process(target=serve, daemon=True, args=(child, args.latency, "hard"))
    server.start()
    info = parent.recv()
    url = info["base_url"] if args.model != "oracle" else ""
    rows = []
    try:
        for src in trees:
            if args.warm:  # runs 1 and 2 at epochs A: the second run's instructions
                (i_a, c_a), (i_b, c_b) = (measure(src, args.model, url, args.concurrency,
                                                  args.epochs[0], runs) for runs in (1, 2))
                per = (i_b - i_a) / c_b
            else:
                (i_a, c_a), (i_b, c_b) = (measure(src, args.model, url, args.concurrency, e)
                                          for e in args.epochs)
                per = (i_b - i_a) / (c_b - c_a)
            rows.append((src or "this checkout", i_a, c_a, i_b, c_b, per))
            print(f"... {rows[-1][0]} done", file=sys.stderr)
    finally:
        parent.send("stop")
        server.join(timeout=10)
    compared = (f"epochs {args.epochs[0]}, one run against two in a process (A, B)" if args.warm
                else f"epochs {args.epochs[0]} and {args.epochs[1]} (A, B)")
    print(f"tooltalk hard, {args.model}, {args.concurrency} in flight, {compared}, under "
          "valgrind --tool=callgrind")
    print(f"{'source':<40} {'instr. at A':>14} {'calls':>6} {'instr. at B':>14} {'calls':>6}"
          f" {'instr. per call':>16}")
    for name, i_a, c_a, i_b, c_b, per in rows:
        print(f"{str(name)[-40:]:<40} {i_a:>14,} {c_a:>6} {i_b:>14,} {c_b:>6} {per:>16,.0f}")
    if len(rows) > 1:
        print(f"ratio this / {rows[1][0]}: {rows[0][5] / rows[1][5]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
