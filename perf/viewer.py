"""Time to first render and memory of ``toolscore view`` on a run of 10,000 records.

The run is synthetic but written as a run writes one: the demo benchmark's oracle run, its
records appended again and again with the project's RunStore under new sample ids (``--records``
/ 5 samples, 5 epochs each), then scored with the benchmark's own aggregate (kept under the
temporary folder for the next time; ``--run DIR`` measures an existing run instead, e.g. the
ToolTalk run perf/report.py builds). Then ``toolscore view`` runs as a subprocess on the run's
folder and this prints:

- the server's resident memory (VmRSS, and its peak VmHWM) after start, after the list, after
  the run's page was built, after records were opened, and after the run grew;
- in headless Chromium: the time from navigating to the run to its report signalling ready
  (the ``report-ready`` mark inside the page, and the wall time seen from here), the first
  time (page built on request) and again (page kept), and to open one record (fetched from
  the server);
- the size of the run's report page (no record bodies in it); the time and peak memory of the
  child process that builds it, and the time to build it in this process next to the static
  page's (``toolscore report --html``);
- the time of a state poll with nothing new and after one record was appended (read alone).

    .venv/bin/python perf/viewer.py [--records 10000] [--run DIR] [--repeat 3] [--no-browser]

On a shared machine wall times measure the load as much as the code: the load average is
printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from toolscore.records import RunStore  # noqa: E402

try:  # run as a script (perf/ on the path) or imported as perf.viewer
    from report import open_in_chromium  # noqa: E402
except ImportError:  # pragma: no cover
    from perf.report import open_in_chromium  # noqa: E402


def child_env() -> dict[str, str]:
    path = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]).rstrip(":")
    return {**os.environ, "PYTHONPATH": path}


EPOCHS = 5  # a run of n records: n / 5 samples (copies of the demo's), 5 epochs each


def build_run(n: int) -> Path:
    """``n`` records of the demo benchmark under the temp folder (built once)."""
    from toolscore.report.view import run_view
    from toolscore.runs.api import evaluate

    base = Path(tempfile.gettempdir()) / "toolscore-perf-viewer"
    out = base / "runs" / f"demo-{n}-x{EPOCHS}"
    if (out / "scores.json").is_file():
        return out
    print(f"building a run of {n} records in {out}...", flush=True)
    started = time.monotonic()
    seed = base / "seed"
    if not (seed / "scores.json").is_file():
        evaluate("demo", "oracle", cache=None, out=seed, embedder="hashing")
    source = RunStore(seed)
    records = list(source.records())
    store = RunStore(out)
    config = source.read_config()
    store.write_config({**config, "epochs": EPOCHS})
    per_epoch = -(-n // EPOCHS)
    for i in range(n):
        epoch, j = divmod(i, per_epoch)
        record = dict(records[j % len(records)])
        record["id"] = f"{record['id']}-{j // len(records):04d}"
        record["epoch"] = epoch
        store.append(record)
    view = run_view(store.read_config())
    store.write_scores(view.bench.aggregate(list(store.latest(view.cls.summary_output)
                                                 .values())))
    print(f"  built in {time.monotonic() - started:.0f} s", flush=True)
    return out


def rss(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of process ``pid`` in MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value
    return (int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024)


def fetch(url: str) -> tuple[float, bytes]:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=300) as resp:
        body = resp.read()
    return time.perf_counter() - started, body


def in_chromium(url: str, repeat: int, profile: Path) -> dict[str, list[float]]:
    """The run page's report (in its frame) opened as ``perf/report.py`` opens a report."""
    return open_in_chromium(url, repeat, profile,
                            doc="document.getElementById('report').contentDocument")


def show(label: str, values: list[float]) -> str:
    return (f"{label} {statistics.median(values):.2f} s (median of {len(values)}: "
            f"{', '.join(f'{v:.2f}' for v in values)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--run", type=Path, help="an existing run directory (default: build one)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()
    run = (args.run or build_run(args.records)).resolve()
    n = RunStore(run).samples_path.read_bytes().count(b"\n")
    folder = run.parent
    name = run.name
    proc = subprocess.Popen([sys.executable, "-m", "toolscore.cli", "view", str(folder),
                             "--port", "0"], env=child_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        base = proc.stdout.readline().split()[2]
        print(f"run {run}: {n} records, {run.joinpath('samples.jsonl').stat().st_size / 1e6:.1f}"
              f" MB of samples.jsonl; load average {os.getloadavg()[0]:.1f}")
        memory: list[tuple[str, tuple[float, float]]] = [("started", rss(proc.pid))]
        took, body = fetch(base + "api/runs")
        rows = json.loads(body)["runs"]
        memory.append(("list read", rss(proc.pid)))
        print(f"list of {len(rows)} runs (first, every run's lines read): {took:.2f} s")
        quoted = urllib.request.quote(name, safe="")
        if not args.no_browser:  # first: the page is built when the browser asks for it
            with tempfile.TemporaryDirectory() as profile:
                times = in_chromium(f"{base}run?id={quoted}", 1 + args.repeat, Path(profile))
            print(f"Chromium, navigation to the run's report ready, first (page built on "
                  f"request): wall {times['wall'][0]:.2f} s, report-ready mark "
                  f"{times['mark'][0]:.2f} s")
            print("  again (page kept): " + show("wall", times["wall"][1:]) + "; "
                  + show("report-ready mark", times["mark"][1:]))
            print("  " + show("one record opened (fetched)", times["record"]))
            memory.append(("report page built, records opened in Chromium", rss(proc.pid)))
        took, page = fetch(f"{base}report?id={quoted}")
        memory.append(("report page served", rss(proc.pid)))
        print(f"report page: {len(page) / 1e6:.2f} MB (no record bodies), served in "
              f"{took:.3f} s" + (" (built for this request)" if args.no_browser else ""))
        child = subprocess.Popen([sys.executable, "-m", "toolscore.report.viewer.apart",
                                  str(run), "/api/record?n="], env=child_env(),
                                 stdout=subprocess.DEVNULL)
        started = time.perf_counter()
        _, _, usage = os.wait4(child.pid, 0)
        print(f"  the child process that builds it (as the server starts it): "
              f"{time.perf_counter() - started:.2f} s, peak RSS {usage.ru_maxrss / 1024:.0f} MB"
              " (given back when it exits)")
        from toolscore.report.html.page import build_page

        started = time.perf_counter()
        "".join(build_page(run, record_url="/")[1])
        built = time.perf_counter() - started
        started = time.perf_counter()
        static = "".join(build_page(run)[1])
        print(f"  in this process: built in {built:.2f} s; the static page (toolscore report "
              f"--html, records packed in it) {time.perf_counter() - started:.2f} s, "
              f"{len(static) / 1e6:.2f} MB")
        took, _ = fetch(f"{base}api/state?id={quoted}")
        record = next(iter(RunStore(run).records()))
        RunStore(run).append({**record, "epoch": 10**6})
        grown, state = fetch(f"{base}api/state?id={quoted}")
        store = RunStore(run)  # the run as it was (scores.json written after it: finished)
        store.rewrite([r for r in store.records() if r["epoch"] != 10**6])
        if (scores := store.read_scores()) is not None:
            store.write_scores(scores)
        memory.append(("after the run grew", rss(proc.pid)))
        print(f"state poll: nothing new {1000 * took:.1f} ms; one record appended "
              f"{1000 * grown:.1f} ms ({json.loads(state)['records']} records)")
        for label, (now, peak) in memory:
            print(f"server memory {label}: RSS {now:.0f} MB (peak {peak:.0f} MB)")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
