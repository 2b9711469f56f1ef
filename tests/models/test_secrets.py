"""Credentials never reach disk or stderr (issue 10, item 8), in any form an endpoint echoes.

A fake endpoint rejects every request with an error body that repeats the API key and the URL
password URL-encoded, base64-encoded (alone and inside a Basic auth value) and as a tail; the
run then goes through the real SDK, client, runner, store, report and export.
"""

from __future__ import annotations

import base64
import json
import logging
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from support.testing.openai_server import FakeOpenAIServer

from toolscore.models.base import InfraError, redact, redact_text, secret_forms, strip_credentials

KEY = "sk-test-Zq8/wR+4k9=Lm2xV7pT0aYc3"
PASSWORD = "p@ss:W0rd/Secret99"


def echoes(secret: str) -> list[str]:
    b = secret.encode()
    return [secret, quote(secret, safe=""), base64.b64encode(b).decode(),
            base64.urlsafe_b64encode(b).decode().rstrip("="),
            base64.b64encode(b"Basic user:" + b).decode(),
            base64.b64encode(b"xy" + b + b"z").decode(), secret[-8:], secret[-12:]]


def leaks(text: str, secrets: tuple[str, ...] = (KEY, PASSWORD)) -> list[str]:
    """Echoed forms of the secrets found in ``text`` (a 4-char base64 group is too short to
    identify; every form checked is at least 8 characters)."""
    found = [f for s in secrets for f in echoes(s) if f in text]
    for s in secrets:  # also the stable core of base64 at any alignment
        found += [f for f in secret_forms(s) if f in text and len(f) >= 8]
    return found


@pytest.mark.parametrize("form", echoes(KEY))
def test_every_echoed_form_is_redacted(form: str) -> None:
    text = f"invalid api key: '{form}' (request 1)"
    clean = redact_text(text, KEY)
    assert not leaks(clean), clean
    assert clean.startswith("invalid api key: '") and clean.endswith("' (request 1)")


def test_redact_keeps_the_error_kind_and_unrelated_text() -> None:
    err = InfraError(f"HTTP 401: bad key {base64.b64encode(KEY.encode()).decode()}",
                     retryable=False, status=401, retry_after=3.0)
    safe = redact(err, [KEY])
    assert isinstance(safe, InfraError) and safe is not err
    assert (safe.retryable, safe.status, safe.retry_after) == (False, 401, 3.0)
    assert str(safe) == "HTTP 401: bad key ***"
    plain = InfraError("HTTP 500: overloaded")
    assert redact(plain, [KEY]) is plain
    assert redact_text("short tails like Lm2xV7pT are not blanked: T0aY", "") == \
        "short tails like Lm2xV7pT are not blanked: T0aY"


@pytest.mark.parametrize(("url", "stripped"), [
    ("http://user:secret@127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
    ("https://tok@api.example.org/v1/", "https://api.example.org/v1/"),
    ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
    ("http://127.0.0.1:8000/v1?next=a@b", "http://127.0.0.1:8000/v1?next=a@b"),
    (None, None),
])
def test_strip_credentials(url: str | None, stripped: str | None) -> None:
    assert strip_credentials(url) == stripped


def test_cache_identity_is_the_same_whatever_the_url_credentials() -> None:
    from toolscore.models import get_model

    with_creds = get_model("openai/fake", base_url="http://a:one@127.0.0.1:9/v1", api_key="k")
    other = get_model("openai/fake", base_url="http://b:two@127.0.0.1:9/v1", api_key="k")
    bare = get_model("openai/fake", base_url="http://127.0.0.1:9/v1", api_key="k")
    assert with_creds.cache_identity() == other.cache_identity() == bare.cache_identity()


class EchoingServer(FakeOpenAIServer):
    """Rejects every request with 401, echoing the credentials back in encoded forms."""

    async def handle_chat(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        forms = " | ".join(echoes(KEY) + echoes(PASSWORD))
        return 401, {"error": {"message": f"Incorrect API key provided: {forms}",
                               "type": "invalid_request_error", "code": "invalid_api_key",
                               "param": None}}


@pytest.mark.parametrize("userinfo", [False, True], ids=["key", "key+url-credentials"])
def test_no_form_of_a_secret_reaches_any_file_or_log(tmp_path: Path, monkeypatch: Any,
                                                      caplog: Any, userinfo: bool) -> None:
    from toolscore.report.export.table import export_run
    from toolscore.report.html.page import render_html
    from toolscore.report.html.samples import page_bodies
    from toolscore.runs.api import evaluate

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    caplog.set_level(logging.DEBUG)
    with EchoingServer() as srv:
        host = srv.base_url.split("//", 1)[1]
        url = f"http://user:{quote(PASSWORD, safe='')}@{host}" if userinfo else srv.base_url
        run = evaluate("demo", "openai/fake", base_url=url, cache=None, out=tmp_path / "run",
                       embedder="hashing")
    assert run.records and all(r["status"] == "error" for r in run.records)
    if not userinfo:  # (the SDK's HTTP client may refuse URL credentials before any request)
        assert "***" in run.records[0]["error"]  # the echo arrived and was blanked
    texts = {p.name: p.read_text(encoding="utf-8") for p in (tmp_path / "run").iterdir()
             if p.is_file()}
    texts["export.csv"] = export_run(tmp_path / "run", "csv").read_text(encoding="utf-8")
    texts["export.jsonl"] = export_run(tmp_path / "run", "jsonl").read_text(encoding="utf-8")
    page = render_html(tmp_path / "run")  # with the records it carries compressed
    texts["report.html"] = page + json.dumps(page_bodies(page), ensure_ascii=False)
    texts["log"] = caplog.text
    secrets = (KEY, PASSWORD) if userinfo else (KEY,)  # the echo of a password never given
    for name, text in texts.items():  # is not a leak
        assert not leaks(text, secrets), (name, leaks(text, secrets))
        assert "user:" not in text, name
        if userinfo:
            assert quote(PASSWORD, safe="") not in text, name
    assert run.config.base_url == f"http://{host}"


def test_a_key_in_the_base_url_authenticates_and_is_never_sent_in_the_url(
        monkeypatch: Any) -> None:
    """``--base-url http://user:KEY@host/v1``: HTTP clients do not send URL credentials, so the
    key would be dropped silently; it is sent as the bearer token (when no key is given
    otherwise), and the URL is used and stored without it (issue 10, item 8)."""
    import asyncio

    from toolscore.models.client import ModelClient
    from toolscore.models.providers import get_model
    from toolscore.types import Message

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer() as srv:
        url = srv.base_url.replace("http://", "http://me:sk-in%2Furl@")
        model = get_model("openai/fake", base_url=url)
        reply = asyncio.run(ModelClient(model).generate(
            [Message(role="system", content="s"), Message(role="user", content="hi")], []))
        assert reply.message.role == "assistant"
        assert srv.last_headers["authorization"] == "Bearer sk-in/url"
        assert "sk-in" not in json.dumps(model.cache_identity())
        monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")  # an explicit key wins
        model = get_model("openai/fake", base_url=url)
        asyncio.run(ModelClient(model).generate([Message(role="user", content="hi")], []))
        assert srv.last_headers["authorization"] == "Bearer sk-from-env"
