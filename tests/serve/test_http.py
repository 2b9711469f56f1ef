"""Episodes over HTTP (uvicorn on a free loopback port, the SDK's streamable-HTTP client in both
of its modes, and a bare JSON-RPC POST as a lean agent sends it): the same answers as
in-process, the control API, the bearer token, loopback by default, the record an ended
episode writes, and the direct path to the SDK's handler (routing, header checks kept)."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from serve.replaying import (
    as_read,
    conversation_ids,
    ground_truth_calls,
    over_mcp,
    visible_arguments,
    wrong_calls,
)

pytest.importorskip("mcp")

import uvicorn  # noqa: E402
from mcp import Client  # noqa: E402

from toolscore.benchmarks.serve.episodes import Episodes  # noqa: E402
from toolscore.benchmarks.serve.http import (  # noqa: E402
    EpisodeEndpoints,
    ServeError,
    check_host,
    create_app,
    server_config,
)
from toolscore.benchmarks.serve.world import ServedWorld, declares_header  # noqa: E402
from toolscore.env import Plugin, Tool  # noqa: E402
from toolscore.records import RunStore  # noqa: E402

MODERN = "2026-07-28"  # the per-request protocol revision the SDK's client speaks in "auto"


class Reply:
    def __init__(self, status_code: int, body: bytes) -> None:
        self.status_code = status_code
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)


CONTROL = "control-s3cret"  # the control token of the servers these tests start


def request(method: str, url: str, json_body: Any = None,
            headers: dict[str, str] | None = None) -> Reply:
    """One HTTP request with the standard library (no client library to depend on), with
    the control token unless ``headers`` carry an Authorization of their own."""
    data = None if json_body is None else json.dumps(json_body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {CONTROL}", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return Reply(resp.status, resp.read())
    except urllib.error.HTTPError as e:
        return Reply(e.code, e.read())


class http:  # noqa: N801 - reads like a client module at the call sites
    @staticmethod
    def request_method(method: str, url: str) -> Reply:
        return request(method, url, None, None)

    @staticmethod
    def post(url: str, json: Any = None, headers: dict[str, str] | None = None) -> Reply:
        return request("POST", url, json, headers)

    @staticmethod
    def get(url: str, headers: dict[str, str] | None = None) -> Reply:
        return request("GET", url, None, headers)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(episodes: Episodes, token: str | None = None) -> Iterator[str]:
    """The app (control token :data:`CONTROL`) on 127.0.0.1 in a thread; yields its base
    URL."""
    port = free_port()
    app = create_app(episodes, port=port, token=token, control_token=CONTROL)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def call_all(url: str, calls: list[tuple[str, dict[str, Any]]],
             mode: str = "auto") -> list[tuple[bool, str]]:
    async def drive() -> list[tuple[bool, str]]:
        async with Client(url, mode=mode) as client:
            return [as_read(await client.call_tool(name, args)) for name, args in calls]

    return anyio.run(drive)


def test_calls_over_http_read_as_in_process(world: Any, tmp_path: Path) -> None:
    tools = world.benchmark.tools
    with Episodes(world, tmp_path / "run") as episodes, serving(episodes) as base:
        for conv_id in conversation_ids(world)[::2]:
            conversation = world.sample(conv_id).data
            calls = ground_truth_calls(conversation)
            calls += wrong_calls(conversation, tools)
            env = world.benchmark.environment(conversation)
            want = [over_mcp(env.call(name, args)) for name, args in calls]
            created = http.post(f"{base}/episodes", json={"conversation": conv_id}).json()
            assert created["mcp_url"].startswith(f"{base}/mcp/")
            assert created["id"] not in created["mcp_url"]
            got = call_all(created["mcp_url"],
                           [(n, visible_arguments(tools[n], a)) for n, a in calls])
            assert got == want, conv_id
            log = http.get(f"{base}/episodes/{created['id']}/calls").json()["calls"]
            assert [c["tool"] for c in log] == [n for n, _ in calls]


def test_episode_lifecycle_and_record(world: Any, tmp_path: Path) -> None:
    out = tmp_path / "run"
    conversation = world.sample("AddAlarm-easy").data
    with Episodes(world, out) as episodes, serving(episodes) as base:
        first = http.post(f"{base}/episodes", json={"conversation": "AddAlarm-easy"}).json()
        assert first["turn"] == 1 and first["epoch"] == 0
        assert "Username: justinkool" in first["system_prompt"]
        url, ep = first["mcp_url"], f"{base}/episodes/{first['id']}"
        before = time.time()
        call_all(url, [("AddAlarm", {"time": "25:00:00"})])  # a mistake, then a reset
        assert http.post(f"{ep}/reset").json()["calls"] == 0
        call_all(url, [(c.name, visible_arguments(world.benchmark.tools[c.name], c.arguments))
                       for c in conversation.turns[1].apis])
        assert http.post(f"{ep}/turn").json()["turn"] == 2
        log = http.get(f"{ep}/calls").json()["calls"]
        assert [(c["episode"], c["turn"], c["tool"]) for c in log] == [
            (first["id"], 1, "AddAlarm")]
        assert before <= log[0]["time"] <= time.time()
        assert log[0]["arguments"]["session_token"] == conversation.user["session_token"]
        ended = http.post(f"{ep}/end").json()["record"]
        assert http.post(f"{ep}/end").status_code == 409
        assert http.post(f"{ep}/turn").status_code == 409
        second = http.post(f"{base}/episodes", json={"conversation": "AddAlarm-easy"}).json()
        assert second["epoch"] == 1
        assert http.get(f"{base}/episodes/nope/calls").status_code == 404
        assert http.post(f"{base}/episodes", json={"conversation": "nope"}).status_code == 400

    env = world.benchmark.environment(conversation)
    for call in conversation.turns[1].apis:
        env.call(call.name, call.arguments)
    (record,) = list(RunStore(out).records())
    assert record == json.loads(json.dumps(ended))
    assert record["output"]["state_hash"] == env.state_hash()
    assert record["id"] == "AddAlarm-easy" and record["meta"]["protocol"] == "free-running"
    assert record["scores"]["success"] is True and record["scores"]["precision"] == 1.0
    config = RunStore(out).config()
    assert config.benchmark == "tooltalk" and config.model == "mcp-client"
    assert config.benchmark_config["protocol"] == "free-running"
    from toolscore.report.view import run_view

    assert run_view(config.to_dict()).mode() == "free-running"  # the report header's label
    assert record["output"]["final_state"]["match"] is True
    assert record["scores"]["final_state_success"] is True
    assert RunStore(out).read_scores()["easy"]["success_rate"] == 1.0


def test_a_configured_token_is_required(world: Any) -> None:
    with serving(Episodes(world), token="s3cret") as base:
        auth = {"Authorization": "Bearer s3cret"}
        assert http.post(f"{base}/episodes", headers={"Authorization": ""}).status_code == 401
        assert http.post(f"{base}/episodes",
                          headers={"Authorization": "Bearer wrong"}).status_code == 401
        # the agents' token reaches the tools, not the control API
        assert http.post(f"{base}/episodes", headers=auth).status_code == 401
        created = http.post(f"{base}/episodes", json={"conversation": "AddAlarm-easy"}).json()
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        mcp = http.post(created["mcp_url"], json=listing, headers={"Authorization": ""})
        assert mcp.status_code == 401
        assert http.post(created["mcp_url"], json=listing).status_code == 401  # control token
        assert http.get(f"{base}/episodes/{created['id']}/calls").status_code == 200


def test_beyond_loopback_only_with_a_token(world: Any) -> None:
    for host in ("0.0.0.0", "192.168.1.20", "example.org", "::"):
        with pytest.raises(ServeError, match="needs --token"):
            check_host(host, None)
        with pytest.raises(ServeError):
            create_app(Episodes(world), host=host)
        check_host(host, "t")
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        check_host(host, None)


def post_call(url: str, name: str, arguments: dict[str, Any],
              headers: dict[str, str] | None = None) -> Reply:
    """One ``tools/call`` as a bare JSON-RPC POST (the 2026-07-28 per-request envelope)."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {}}
    return http.post(url, json={"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                "params": {"name": name, "arguments": arguments,
                                           "_meta": meta}},
                     headers={"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
                              "Mcp-Name": name, **(headers or {})})


def test_a_bare_json_rpc_post_and_a_handshake_client_read_as_in_process(world: Any) -> None:
    conv_id = "CreateEvent-easy"
    conversation = world.sample(conv_id).data
    tools = world.benchmark.tools
    calls = ground_truth_calls(conversation) + wrong_calls(conversation, tools)
    env = world.benchmark.environment(conversation)
    want = [over_mcp(env.call(name, args)) for name, args in calls]
    shown = [(n, visible_arguments(tools[n], a)) for n, a in calls]
    with serving(Episodes(world)) as base:
        bare = http.post(f"{base}/episodes", json={"conversation": conv_id}).json()["mcp_url"]
        got = []
        for name, args in shown:
            reply = post_call(bare, name, args)
            assert reply.status_code == 200
            result = reply.json()["result"]
            got.append((result["isError"], result["content"][0]["text"]))
        assert got == want
        legacy = http.post(f"{base}/episodes", json={"conversation": conv_id}).json()["mcp_url"]
        assert call_all(legacy, shown, mode="legacy") == want  # initialize + session id
        assert http.request_method("PUT", bare).status_code == 405
        gone = post_call(f"{base}/mcp/nope", *shown[0]).json()
        assert gone["error"]["message"] == "no episode at this address"


def test_the_front_sends_only_episode_mcp_paths_to_the_sdk() -> None:
    seen: list[tuple[str, Any]] = []

    def recorder(label: str) -> Any:
        async def app(scope: Any, receive: Any, send: Any) -> None:
            seen.append((label, scope.get("path_params")))
        return app

    front = EpisodeEndpoints(recorder("control"), recorder("mcp"))

    def visit(kind: str, method: str = "POST", path: str = "", root: str = "") -> Any:
        anyio.run(front, {"type": kind, "method": method, "path": root + path,
                          "root_path": root}, None, None)
        return seen.pop()

    assert visit("http", path="/mcp/ab_1-2") == ("mcp", {"key": "ab_1-2"})
    assert visit("http", "GET", "/mcp/ab12", "/tools") == ("mcp", {"key": "ab12"})
    assert visit("http", "PUT", "/mcp/ab12")[0] == "control"  # its 405
    for path in ("/episodes/ab12/calls", "/mcp/ab12/x", "/mcp/", "/episodes/ab12/mcp",
                 "/episodes", "/x/mcp/ab12"):
        assert visit("http", path=path)[0] == "control", path
    assert visit("lifespan")[0] == "control"


def test_uvicorn_is_configured_without_per_request_logging() -> None:
    config = server_config(object(), port=1234)
    assert (config.access_log, config.proxy_headers, config.port) == (False, False, 1234)


def region_world() -> ServedWorld:
    """A tool whose ``region`` argument is mirrored in an ``Mcp-Param-Region`` header."""
    schema = {"type": "object", "required": ["region"], "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"}, "q": {"type": "string"}}}
    lookup = Tool("Lookup", "Look something up in a region.", schema,
                  lambda env, region, q="": {"region": region, "q": q})
    plain = Tool("Echo", "Repeat.", {"type": "object", "properties": {"q": {"type": "string"}}},
                 lambda env, q="": {"q": q})
    return ServedWorld("regions", plugins=[Plugin("Regions", [lookup, plain])])


def test_declared_parameter_headers_are_still_checked() -> None:
    world = region_world()
    assert world.input_schema("Lookup") is not None and world.input_schema("Echo") is None
    assert declares_header({"anyOf": [{"properties": {"a": {"x-mcp-header": "A"}}}]})
    assert not declares_header({"type": "object", "properties": {"a": {"type": "string"}}})
    with serving(Episodes(world)) as base:
        url = http.post(f"{base}/episodes").json()["mcp_url"]
        ok = post_call(url, "Lookup", {"region": "eu"}, {"Mcp-Param-Region": "eu"})
        assert ok.status_code == 200 and not ok.json()["result"]["isError"]
        wrong = post_call(url, "Lookup", {"region": "eu"}, {"Mcp-Param-Region": "us"})
        assert wrong.status_code == 400 and "Mcp-Param-Region" in wrong.json()["error"]["message"]
        missing = post_call(url, "Lookup", {"region": "eu"})
        assert missing.status_code == 400
        assert post_call(url, "Echo", {"q": "x"}, {"Mcp-Param-Q": "y"}).status_code == 200
        assert call_all(url, [("Lookup", {"region": "eu", "q": "x"})]) == [
            (False, json.dumps({"region": "eu", "q": "x"}))]  # the SDK client sends it
