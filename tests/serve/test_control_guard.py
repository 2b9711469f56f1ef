"""What a web page, a rebinding DNS name or a careless client cannot do to the episodes' HTTP
server: a foreign Host, a browser Origin or a control POST that is not JSON is refused before
anything is created, changed or written (the MCP endpoints included); configured names and
origins pass. And what an ended episode writes: an episode without a conversation is refused
where its record could not be scored (later episodes of the run unaffected, even in a run
directory already holding such a record), and a NaN an agent sends never reaches a record
(JSON has no NaN), the record still written and answered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from serve.test_http import CONTROL, free_port, http, post_call, serving

pytest.importorskip("mcp")

import threading  # noqa: E402
import time  # noqa: E402

import uvicorn  # noqa: E402

from toolscore.benchmarks.serve.episodes import Episodes  # noqa: E402
from toolscore.benchmarks.serve.guard import allowed_hosts, host_allowed  # noqa: E402
from toolscore.benchmarks.serve.http import create_app  # noqa: E402
from toolscore.records import RunStore, SampleRecord  # noqa: E402

LISTING = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def strict_json(text: str) -> Any:
    """JSON as a strict reader reads it: a bare NaN or Infinity is an error."""
    def refuse(name: str) -> Any:
        raise ValueError(f"{name} in the file")
    return json.loads(text, parse_constant=refuse)


def test_foreign_hosts_origins_and_non_json_posts_change_nothing(world: Any,
                                                                 tmp_path: Path) -> None:
    out = tmp_path / "run"
    with Episodes(world, out) as episodes, serving(episodes) as base:
        port = base.rsplit(":", 1)[1]
        create = f"{base}/episodes"
        body = {"conversation": "AddAlarm-easy"}
        # the cross-site request a page can send without the browser asking first
        assert http.post(create, json=body, headers={
            "Host": f"evil.example:{port}", "Content-Type": "text/plain"}).status_code == 421
        assert http.post(create, json=body, headers={"Host": f"evil.example:{port}"}
                         ).status_code == 421
        assert http.post(create, json=body, headers={"Host": "127.0.0.1:1"}).status_code == 421
        for origin in ("http://evil.example", f"http://127.0.0.1:{port}", "null",
                       "http://localhost:3000"):
            assert http.post(create, json=body, headers={"Origin": origin}).status_code == 403
        assert http.post(create, json=body,
                         headers={"Content-Type": "text/plain"}).status_code == 415
        assert http.post(create, json=body, headers={
            "Content-Type": "application/x-www-form-urlencoded"}).status_code == 415
        assert episodes.open_episodes() == []

        created = http.post(create, json=body, headers={"Host": f"localhost:{port}"}).json()
        ep = f"{base}/episodes/{created['id']}"
        assert http.get(f"{ep}/calls", headers={"Host": f"evil.example:{port}"}
                        ).status_code == 421
        for url in (f"{ep}/end", f"{ep}/reset", f"{ep}/turn"):
            assert http.post(url, headers={"Content-Type": "text/plain"}).status_code == 415
            assert http.post(url, headers={"Origin": "http://evil.example"}).status_code == 403
        # the agents' endpoint: same Host and Origin rules (DNS rebinding of the tools)
        mcp = created["mcp_url"]
        assert http.post(mcp, json=LISTING, headers={"Host": f"evil.example:{port}"}
                         ).status_code == 421
        assert http.post(mcp, json=LISTING, headers={"Origin": "http://localhost:3000"}
                         ).status_code == 403
        assert post_call(mcp, "AddAlarm", {"time": "18:30:00"}).status_code == 200
        assert not (out / "samples.jsonl").exists()
        assert http.post(f"{ep}/end").status_code == 200
    assert len(list(RunStore(out).records())) == 1


def test_configured_hosts_and_origins_pass(world: Any) -> None:
    port = free_port()
    app = create_app(Episodes(world), port=port, control_token=CONTROL,
                     hosts=["proxy.example"], origins=["https://ui.example"])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.02)
        create = f"http://127.0.0.1:{port}/episodes"
        body = {"conversation": "AddAlarm-easy"}
        for host in ("proxy.example", "proxy.example:443", f"127.0.0.1:{port}"):
            assert http.post(create, json=body, headers={"Host": host}).status_code == 201
        assert http.post(create, json=body, headers={"Origin": "https://ui.example"}
                         ).status_code == 201
        assert http.post(create, json=body, headers={"Origin": "https://ui.example.evil"}
                         ).status_code == 403
        assert http.post(create, json=body, headers={"Host": "other.example"}
                         ).status_code == 421
    finally:
        server.should_exit = True
        thread.join(10)


def test_which_host_names_a_server_answers_to() -> None:
    loop = allowed_hosts("127.0.0.1", 8765, loopback=True)
    assert loop is not None
    for ok in ("127.0.0.1:8765", "localhost:8765", "LOCALHOST:8765", "[::1]:8765"):
        assert host_allowed(ok, loop), ok
    for bad in ("127.0.0.1:8766", "evil.example:8765", "localhost", "", "127.0.0.1"):
        assert not host_allowed(bad, loop), bad
    assert host_allowed("localhost:1234", allowed_hosts("127.0.0.1", None, loopback=True))
    named = allowed_hosts("10.1.2.3", 9000, ["tools.lab"], loopback=False)
    assert named is not None and host_allowed("10.1.2.3:9000", named)
    assert host_allowed("tools.lab", named) and host_allowed("tools.lab:9000", named)
    assert not host_allowed("localhost:9000", named)
    assert allowed_hosts("0.0.0.0", 9000, loopback=False) is None  # the token guards it
    wild = allowed_hosts("0.0.0.0", 9000, ["tools.lab:9000"], loopback=False)
    assert wild is not None and not host_allowed("10.1.2.3:9000", wild)


def test_an_episode_without_a_conversation_leaves_the_run_scorable(world: Any,
                                                                   tmp_path: Path) -> None:
    out = tmp_path / "run"
    with Episodes(world, out) as episodes, serving(episodes) as base:
        bare = http.post(f"{base}/episodes", json={})
        assert bare.status_code == 400 and "name a conversation" in bare.json()["error"]
        assert http.post(f"{base}/episodes").status_code == 400
        for _ in range(2):
            created = http.post(f"{base}/episodes", json={"conversation": "AddAlarm-easy"})
            ended = http.post(f"{base}/episodes/{created.json()['id']}/end")
            assert ended.status_code == 200
    assert [r["id"] for r in RunStore(out).records()] == ["AddAlarm-easy"] * 2
    assert RunStore(out).read_scores()["easy"]["conversations"] == 2

    # a run directory holding an unscored record (as an earlier version wrote one)
    RunStore(out).append(SampleRecord(id="c0ffee", meta={"episode": "c0ffee"},
                                      output={"calls": []}))
    with Episodes(world, out) as episodes, serving(episodes) as base:
        created = http.post(f"{base}/episodes", json={"conversation": "AddAlarm-easy"})
        assert http.post(f"{base}/episodes/{created.json()['id']}/end").status_code == 200
    assert RunStore(out).read_scores()["easy"]["conversations"] == 3


def test_without_a_run_directory_a_bare_tool_world_is_still_served(world: Any) -> None:
    with serving(Episodes(world)) as base:
        created = http.post(f"{base}/episodes", json={}).json()
        assert created["conversation"] is None
        ended = http.post(f"{base}/episodes/{created['id']}/end")
        assert ended.status_code == 200 and "scores" not in ended.json()["record"]


def test_a_nan_argument_never_reaches_a_record(world: Any, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with Episodes(world, out) as episodes, serving(episodes) as base:
        created = http.post(f"{base}/episodes", json={"conversation": "AddAlarm-easy"}).json()
        url, ep = created["mcp_url"], f"{base}/episodes/{created['id']}"
        for value in (float("nan"), float("inf")):
            reply = post_call(url, "AddAlarm", {"time": value})  # NaN / Infinity literals
            assert reply.status_code == 200
            result = reply.json()["result"]
            assert result["isError"] and "not a JSON number" in result["content"][0]["text"]
        assert post_call(url, "AddAlarm", {"time": "18:30:00"}).json()["result"]["isError"] \
            is False
        calls = strict_json(http.get(f"{ep}/calls").body.decode())["calls"]
        assert [c["arguments"].get("time") for c in calls] == ["NaN", "Infinity", "18:30:00"]
        assert http.post(f"{ep}/turn", json={"turn": float("nan")}).status_code == 400
        ended = http.post(f"{ep}/end")
        assert ended.status_code == 200
        record = strict_json(ended.body.decode())["record"]
        journal = (out / "mcp-journal.jsonl").read_text().splitlines()
        assert len(journal) > 4 and all(strict_json(line) for line in journal)
    text = (out / "samples.jsonl").read_text()
    (stored,) = [strict_json(line) for line in text.splitlines()]
    assert stored == record
    assert [c["exception"] is not None for c in stored["output"]["calls"]] == [True, True, False]
    assert stored["scores"]["predictions"] == 3
