"""Size, write time, memory and opening time of the HTML report of a large run.

Targets for a report of 10,000 records: a page under 10 MB, written in under 3 s, that opens in
headless Chromium in under 2 s. By default the run is ToolTalk's easy split replayed by the
oracle for 357 epochs (9,996 records; about 80 s to build, kept under the temporary folder for
the next time)::

    toolscore run tooltalk -m oracle --split easy --epochs 357 --embedder hashing --no-cache

then this prints:

- the page's size, and how much of it is the records' compressed blocks and the index;
- the time ``write_html`` takes in this process (median of ``--repeat``, wall and CPU), how
  much of it is the run overview (statistics shared with the terminal report), and the time
  when the overview is handed over (``overview=``: the page's own cost);
- wall time, CPU time and peak RSS of ``toolscore report RUN --html FILE`` as a subprocess
  (median of ``--repeat``; the command also prints the terminal report, from the overview the
  page computed: the run is read once), next to the writer's, with the share of its wall time
  spent importing modules (from a separate run under ``python -X importtime``), what it costs
  beyond the writer, and its verdict against the 3 s target (the target is the command's: a
  user waits for the command, not for the function); with ``--compare-src DIR`` (the ``src``
  folder of another checkout, e.g. a worktree of an earlier commit) that checkout's command is
  timed too, alternating with this one's so that both see the same load;
- the time headless Chromium takes from navigation to the report's script signalling ready
  (the ``report-ready`` performance mark, milliseconds since navigation start, as the page
  measures it; the wall time seen from here over the DevTools protocol is printed too), and to
  unpack and show one record once it is clicked.

    .venv/bin/python perf/report.py [--run DIR] [--epochs N] [--repeat N] [--keep FILE]
                                    [--compare-src DIR] [--no-browser]

On a shared machine wall times measure the load as much as the code: the load average is
printed with them.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from toolscore.records import SCORES_FILE, RunStore  # noqa: E402
from toolscore.report.html.page import write_html  # noqa: E402
from toolscore.report.overview import run_overview  # noqa: E402

TARGETS = {"size_mb": 10.0, "write_s": 3.0, "open_s": 2.0}


def child_env(src: Path = ROOT / "src") -> dict[str, str]:
    path = os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]).rstrip(":")
    return {**os.environ, "PYTHONPATH": path}


def build_run(epochs: int) -> Path:
    """The oracle run of ToolTalk's easy split, ``epochs`` times, cached in the temp folder."""
    out = Path(tempfile.gettempdir()) / "toolscore-perf-report" / f"tooltalk-easy-{epochs}"
    if (out / SCORES_FILE).is_file():
        return out
    if out.exists():
        sys.exit(f"{out}: an unfinished run is in the way; remove it and start again")
    print(f"building the run in {out} (oracle, {epochs} epochs)...", flush=True)
    started = time.monotonic()
    xdg = out.parent / "xdg"  # private caches: the user's ~/.cache/toolscore is left alone
    done = subprocess.run(
        [sys.executable, "-m", "toolscore.cli", "run", "tooltalk", "-m", "oracle", "--split",
         "easy", "--epochs", str(epochs), "--embedder", "hashing", "--no-cache", "--out",
         str(out)], env={**child_env(), "XDG_CACHE_HOME": str(xdg)}, capture_output=True,
        text=True)
    if done.returncode != 0:
        sys.exit(f"the run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    print(f"  built in {time.monotonic() - started:.0f} s", flush=True)
    return out


def timed(fn: object, repeat: int) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()  # type: ignore[operator]
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return walls, cpus


def report_command(run: Path, page: Path) -> list[str]:
    return [sys.executable, "-m", "toolscore.cli", "report", str(run), "--html", str(page)]


def cli_report(run: Path, page: Path, src: Path = ROOT / "src") -> tuple[float, float, float]:
    """Wall s, CPU s and peak RSS (MB) of ``toolscore report RUN --html PAGE``."""
    started = time.perf_counter()
    with open(os.devnull, "w") as null:
        proc = subprocess.Popen(report_command(run, page), env=child_env(src), stdout=null,
                                stderr=subprocess.PIPE)
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"toolscore report failed ({proc.returncode}): {err.decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def import_time(run: Path, page: Path, src: Path = ROOT / "src") -> tuple[float, float]:
    """(seconds spent importing, wall seconds) of one run of the command under ``-X
    importtime``: the sum of the outermost imports' cumulative times (nested ones are inside
    them). The flag itself slows imports a little, so the share is a slight overestimate."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-X", "importtime", *report_command(run, page)[1:]],
                          env=child_env(src), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"toolscore report failed ({done.returncode}): {done.stderr[-2000:]}")
    total = 0
    for line in done.stderr.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if line.startswith("import time:") and len(fields) == 3 and fields[1].strip().isdigit() \
                and not fields[2].startswith("  "):  # outermost: no indentation after "| "
            total += int(fields[1])
    return total / 1e6, wall


def time_command(run: Path, tmp: Path, repeat: int, write_wall: float, write_cpu: float,
                 other: Path | None) -> None:
    """The command's wall, CPU and peak RSS next to the writer's, with its import share and
    verdict; with ``other``, that source tree's command timed in alternation with this one."""
    trees = {"this checkout": ROOT / "src", **({f"{other}": other} if other else {})}
    timings: dict[str, list[tuple[float, float, float]]] = {name: [] for name in trees}
    for _ in range(repeat):  # alternating: both trees see the same load
        for name, src in trees.items():
            timings[name].append(cli_report(run, tmp / "cli.html", src))
    for name, src in trees.items():
        walls = [t[0] for t in timings[name]]
        wall, cpu = statistics.median(walls), statistics.median(t[1] for t in timings[name])
        rss = max(t[2] for t in timings[name])
        imports, i_wall = import_time(run, tmp / "cli.html", src)
        verdict = "met" if wall < TARGETS["write_s"] else "missed"
        print(f"toolscore report --html ({name}): wall {wall:.2f} s, CPU {cpu:.2f} s (median "
              f"of {repeat}; walls {', '.join(f'{w:.2f}' for w in walls)}), peak RSS "
              f"{rss:.0f} MB  [target < {TARGETS['write_s']:.0f} s: {verdict}]")
        print(f"  imports {imports:.2f} s of a {i_wall:.2f} s run under -X importtime "
              f"({imports / i_wall:.0%}); beyond write_html in this process: wall "
              f"{wall - write_wall:+.2f} s, CPU {cpu - write_cpu:+.2f} s; load average "
              f"{os.getloadavg()[0]:.1f}")


def open_in_chromium(url: str | Path, repeat: int, profile: Path,
                     doc: str = "document") -> dict[str, list[float]]:
    """Open a report page ``repeat`` times from a blank tab: the wall time until the report
    says it is ready, its own 'report-ready' mark, and the time to open the first record.
    ``doc`` is the JavaScript expression of the report's document (the page's own, or that of
    a frame holding it)."""
    from support.browser import CHROMIUM, Browser

    if CHROMIUM is None:
        sys.exit("chromium is not installed")
    target = url.resolve().as_uri() if isinstance(url, Path) else url
    ready = (f"(() => {{ try {{ const d = {doc}; return !!d && !!d.body && "
             "d.body.dataset.ready === '1'; } catch (e) { return false; } })()")
    times: dict[str, list[float]] = {"mark": [], "wall": [], "record": []}
    browser = Browser(profile)
    try:
        for _ in range(repeat):
            browser.events.clear()  # leave the page: the next load starts afresh
            browser.call("Page.navigate", url="about:blank")
            browser.wait_for("Page.loadEventFired")
            started = time.perf_counter()
            browser.call("Page.navigate", url=target)
            while not browser.js(ready):
                time.sleep(0.005)
            times["wall"].append(time.perf_counter() - started)
            times["mark"].append(browser.js(
                f"{doc}.defaultView.performance.getEntriesByName('report-ready')[0]"
                ".startTime") / 1000)
            started = time.perf_counter()
            browser.js(f"{doc}.querySelector('details.sample summary').click()")
            while browser.js(f"{doc}.querySelector('details.sample').dataset.loaded") != "1":
                time.sleep(0.002)
            times["record"].append(time.perf_counter() - started)
            if browser.errors():
                sys.exit(f"the page logged errors: {browser.errors()}")
    finally:
        browser.close()
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, help="an existing run directory (default: build one)")
    ap.add_argument("--epochs", type=int, default=357, help="epochs of the built run")
    ap.add_argument("--repeat", type=int, default=3, help="timings per measure (median shown)")
    ap.add_argument("--keep", type=Path, help="also copy the page here")
    ap.add_argument("--compare-src", type=Path, help="also time the command of this source "
                    "tree (another checkout's src folder), alternating with this one's")
    ap.add_argument("--no-browser", action="store_true", help="skip the Chromium timings")
    args = ap.parse_args()
    run = args.run or build_run(args.epochs)
    n = len(RunStore(run).latest())
    print(f"run {run}: {n} records, samples.jsonl "
          f"{RunStore(run).samples_path.stat().st_size / 1e6:.1f} MB; load average "
          f"{os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="toolscore-perf-report-") as tmp:
        page = Path(tmp) / "report.html"
        walls, cpus = timed(lambda: write_html(run, page), args.repeat)
        doc = run_overview(run)
        o_walls, o_cpus = timed(lambda: run_overview(run), 1)
        p_walls, p_cpus = timed(lambda: write_html(run, page, overview=doc), args.repeat)
        text = page.read_text(encoding="utf-8")
        blocks = sum(map(len, re.findall(r'class="chunk">([^<]*)<', text)))
        index = len(text.split('id="report-data">', 1)[1].split("</script>", 1)[0])
        size = page.stat().st_size / 1e6
        print(f"page: {size:.2f} MB (records' compressed blocks {blocks / 1e6:.2f} MB, index "
              f"{index / 1e6:.2f} MB, the rest {(len(text) - blocks - index) / 1e6:.2f} MB)"
              f"  [target < {TARGETS['size_mb']:.0f} MB]")
        print(f"write_html: wall {statistics.median(walls):.2f} s, CPU "
              f"{statistics.median(cpus):.2f} s (median of {args.repeat}; walls "
              f"{', '.join(f'{w:.2f}' for w in walls)})  [target < {TARGETS['write_s']:.0f} s]")
        print(f"  of which the run overview (shared with the terminal report): wall "
              f"{o_walls[0]:.2f} s, CPU {o_cpus[0]:.2f} s; load average {os.getloadavg()[0]:.1f}")
        print(f"write_html given that overview (the page's own cost): wall "
              f"{statistics.median(p_walls):.2f} s, CPU {statistics.median(p_cpus):.2f} s "
              f"(median of {args.repeat})")
        time_command(run, Path(tmp), args.repeat, statistics.median(walls),
                     statistics.median(cpus), args.compare_src)
        if args.keep:
            args.keep.write_bytes(page.read_bytes())
        if args.no_browser:
            return
        times = open_in_chromium(page, args.repeat, Path(tmp) / "chromium")
        print(f"chromium: ready {statistics.median(times['mark']):.3f} s after navigation "
              f"(page's own mark; median of {args.repeat}: "
              f"{', '.join(f'{t:.3f}' for t in times['mark'])}), "
              f"{statistics.median(times['wall']):.3f} s seen over DevTools  "
              f"[target < {TARGETS['open_s']:.0f} s]")
        print(f"  one record unpacked and shown {statistics.median(times['record']) * 1000:.0f}"
              f" ms after its click; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
