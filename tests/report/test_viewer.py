"""``toolscore view`` over HTTP: the list of runs, a run's report page and its records one at a
time, the live state of a run that grows (read from the appended lines only), and requests that
name nothing the viewer serves (an unknown run, a path out of the folder, a foreign Host).

The runs are real oracle runs of the demo benchmark, and copies of one written record by
record with the project's RunStore, as a run writes them."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolscore.cli import app
from toolscore.records import SCORES_FILE, RunStore
from toolscore.report.html.page import render_html
from toolscore.report.html.samples import page_bodies
from toolscore.report.viewer import ViewerServer, make_server
from toolscore.report.viewer.runs import Tail
from toolscore.runs.api import evaluate

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    evaluate("demo", "oracle", cache=None, out=root / "sweep" / "demo-oracle",
             embedder="hashing")
    evaluate("demo", "oracle", cache=None, out=root / "demo-three", embedder="hashing", limit=3)
    (root / ".hidden" / "x").mkdir(parents=True)
    return root


@pytest.fixture()
def serve(runs: Path) -> Iterator[Any]:
    servers: list[ViewerServer] = []

    def start(root: Path = runs, apart: bool = False) -> ViewerServer:
        server = make_server(str(root), port=0, apart=apart)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def get(server: ViewerServer, path: str, host: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(server.url.rstrip("/") + path)
    if host is not None:
        request.add_header("Host", host)
    try:
        with urllib.request.urlopen(request, timeout=60) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def get_json(server: ViewerServer, path: str) -> Any:
    code, body = get(server, path)
    assert code == 200, body
    return json.loads(body)


def test_list_of_runs(serve: Any, runs: Path) -> None:
    doc = get_json(serve(), "/api/runs")
    rows = {r["id"]: r for r in doc["runs"]}
    assert sorted(rows) == ["demo-three", "sweep/demo-oracle"]  # nested, hidden skipped
    three = rows["demo-three"]
    assert (three["benchmark"], three["model"], three["status"]) == ("demo", "oracle",
                                                                      "finished")
    assert (three["done"], three["total"], three["errors"], three["records"]) == (3, 3, 0, 3)
    assert three["headline"] == {"label": "success", "kind": "rate", "value": 1.0}
    assert three["mode"] and three["created"]
    whole = rows["sweep/demo-oracle"]
    assert whole["done"] == whole["total"] == len(RunStore(runs / "sweep/demo-oracle").latest())


def test_list_page_and_run_page(serve: Any) -> None:
    server = serve()
    code, page = get(server, "/")
    assert code == 200 and b'data-page="list"' in page and b"<script nonce=" in page
    code, page = get(server, "/run?id=sweep%2Fdemo-oracle")
    assert code == 200 and b'id="report"' in page


def test_report_page_fetches_its_records(serve: Any, runs: Path) -> None:
    server = serve()
    code, body = get(server, "/report?id=sweep%2Fdemo-oracle")
    assert code == 200
    page = body.decode("utf-8")
    assert "toolscore report: demo" in page and "Benchmark metrics" in page
    assert "connect-src 'self'" in page
    assert 'class="chunk"' not in page  # no record travels in the page
    data = json.loads(page.split('id="report-data">', 1)[1].split("</script>", 1)[0])
    assert data["record_url"] == "/api/record?id=sweep%2Fdemo-oracle&n="
    # each record as the static page carries it
    static = page_bodies(render_html(runs / "sweep/demo-oracle"))
    assert len(data["samples"]) == len(static)
    for head in data["samples"]:
        record = get_json(server, data["record_url"] + str(head["idx"]))
        assert record == json.loads(json.dumps(static[head["idx"]]))
    # the static page is as it was: its records in compressed blocks, no fetching
    assert "connect-src" not in render_html(runs / "demo-three")


def _without_nonce(page: bytes) -> bytes:
    return re.sub(rb'nonce(?:-|=")[A-Za-z0-9_-]{22}', b"nonce", page)


def test_a_page_built_in_a_child_process_is_the_same(serve: Any, runs: Path) -> None:
    here, apart = serve(), serve(apart=True)
    for name in ("demo-three", "sweep%2Fdemo-oracle"):
        code, page = get(apart, f"/report?id={name}")
        assert code == 200
        assert _without_nonce(page) == _without_nonce(get(here, f"/report?id={name}")[1])
    code, body = get(apart, "/report?id=sweep%2Fdemo-oracle")
    assert code == 200 and body == page  # kept until the run changes


def _copy(source: Path, target: Path, n: int) -> tuple[RunStore, list[dict[str, Any]]]:
    src, dst = RunStore(source), RunStore(target)
    dst.write_config(src.read_config())
    records = list(src.records())
    for record in records[:n]:
        dst.append(record)
    return dst, records


def test_a_growing_run_is_followed(serve: Any, runs: Path, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "live"
    store, records = _copy(runs / "sweep/demo-oracle", root / "growing", 2)
    server = serve(root)
    read: list[int] = []
    lines = Tail._lines
    monkeypatch.setattr(Tail, "_lines", lambda self, data: (read.append(len(data)),
                                                            lines(self, data))[1])
    with store.lock():  # as a run holds it while it writes
        state = get_json(server, "/api/state?id=growing")
        assert (state["status"], state["records"], state["done"]) == ("running", 2, 2)
        assert state["total"] is None and state["headline"]["value"] == 1.0
        assert get_json(server, "/api/state?id=growing")["changed"] == state["changed"]
        store.append(records[2])
        after = get_json(server, "/api/state?id=growing")
    assert after["records"] == 3 and after["changed"] != state["changed"]
    size = len((json.dumps(records[2], ensure_ascii=False) + "\n").encode("utf-8"))
    assert read[-1] == size  # the new line only, not the whole file again
    assert get_json(server, "/api/record?id=growing&n=2")["scores"]
    code, page = get(server, "/report?id=growing")
    assert page.count(b'"idx": ') == 3
    assert get_json(server, "/api/state?id=growing")["status"] == "stopped"  # no scores.json
    shutil.copy(runs / "sweep/demo-oracle" / SCORES_FILE, root / "growing" / SCORES_FILE)
    assert get_json(server, "/api/state?id=growing")["status"] == "finished"
    # rescoring replaces the file: read again from the start
    store.rewrite(records[:1])
    assert get_json(server, "/api/state?id=growing")["records"] == 1
    code, _ = get(server, "/api/record?id=growing&n=2")
    assert code == 404


def test_only_the_pages_used_last_are_kept(serve: Any, runs: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import toolscore.report.viewer.catalog as catalog

    monkeypatch.setattr(catalog, "PAGES", 1)
    server = serve()
    assert get(server, "/report?id=demo-three")[0] == 200
    assert get(server, "/report?id=sweep%2Fdemo-oracle")[0] == 200
    kept = {name for name, e in server.catalog.entries.items() if e.page is not None}
    assert kept == {"sweep/demo-oracle"}


def test_a_partial_line_waits_for_its_end(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_bytes(b'{"id": "a", "status": "ok"}\n{"id": "b", "st')
    tail = Tail(path)
    assert tail.update() and tail.records == 1
    assert not tail.update()
    with open(path, "ab") as fh:
        fh.write(b'atus": "error"}\n')
    assert tail.update() and tail.records == 2
    assert tail.latest[("b", 0)][0] == "error" and tail.ok() == 1
    assert tail.record(1) == {"id": "b", "status": "error"}


@pytest.mark.parametrize("path", [
    "/api/record?id=..%2F..&n=0", "/api/record?id=demo-three&n=99",
    "/api/record?id=demo-three&n=-1", "/api/record?id=demo-three&n=x",
    "/report?id=..%2Fsweep", "/report?id=%2Fetc", "/report", "/api/state?id=nope",
    "/../../etc/passwd", "/run.json", "/demo-three/run.json", "/static/..%2F..%2Frun.json"])
def test_nothing_else_is_served(serve: Any, path: str) -> None:
    code, body = get(serve(), path)
    assert code == 404, path
    assert "error" in json.loads(body)


def test_a_foreign_host_is_refused(serve: Any) -> None:
    server = serve()
    assert get(server, "/api/runs", host="attacker.example")[0] == 403
    assert get(server, "/api/runs", host=f"localhost:{server.server_address[1]}")[0] == 200


def test_port_taken_falls_back_and_remote_needs_a_flag(runs: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = make_server(str(runs), port=port)
        try:
            assert server.server_address[1] != port
        finally:
            server.server_close()
    result = CliRunner().invoke(app, ["view", str(runs), "--host", "0.0.0.0"])
    assert result.exit_code == 2 and "--allow-remote" in result.output
    result = CliRunner().invoke(app, ["view", str(runs / "nope")])
    assert result.exit_code == 2 and "no such folder" in result.output


def test_command_prints_the_address_and_stops_on_ctrl_c(runs: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get(
        "PYTHONPATH", "")]), "TOOLSCORE_OUT": str(runs)}
    proc = subprocess.Popen([sys.executable, "-m", "toolscore.cli", "view", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("toolscore view: http://127.0.0.1:"), first
        url = first.split()[2]
        with urllib.request.urlopen(url + "api/runs", timeout=60) as resp:
            assert len(json.load(resp)["runs"]) == 2
        with urllib.request.urlopen(url + "report?id=demo-three", timeout=60) as resp:
            assert b"toolscore report: demo" in resp.read()  # built by a child process
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in a terminal: the whole process group
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert out == "toolscore view: stopped\n" and err == ""


def test_a_run_that_cannot_be_read_is_a_row_saying_so(serve: Any, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "run.json").write_text("{not json", encoding="utf-8")
    row = get_json(serve(tmp_path), "/api/runs")["runs"][0]
    assert row["id"] == "bad" and "invalid JSON" in row["error"]
    assert (row["status"], row["records"], row["headline"]) == ("stopped", 0, None)


def test_a_run_whose_records_cannot_be_read_says_why(serve: Any, runs: Path,
                                                      tmp_path: Path) -> None:
    store, _ = _copy(runs / "demo-three", tmp_path / "bad", 1)
    with open(store.samples_path, "a", encoding="utf-8") as fh:
        fh.write("not json\n")
    server = serve(tmp_path, apart=True)
    assert get_json(server, "/api/runs")["runs"][0]["records"] == 1  # the list still lists it
    code, body = get(server, "/report?id=bad")
    assert code == 500
    assert body.decode().startswith("bad: the report cannot be built: RunStoreError: ")
    assert "line 2: invalid JSON" in body.decode()


def test_the_list_answers_while_a_page_is_built(serve: Any, runs: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import toolscore.report.html.page as page

    release, entered = threading.Event(), threading.Event()
    build = page.build_page

    def slow(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        assert release.wait(60)
        return build(*args, **kwargs)

    monkeypatch.setattr(page, "build_page", slow)
    server = serve()
    got: list[int] = []
    reader = threading.Thread(target=lambda: got.append(get(server, "/report?id=demo-three")[0]))
    reader.start()
    try:
        assert entered.wait(60)
        assert get_json(server, "/api/state?id=demo-three")["records"] == 3
        assert len(get_json(server, "/api/runs")["runs"]) == 2
    finally:
        release.set()
        reader.join(60)
    assert got == [200]
