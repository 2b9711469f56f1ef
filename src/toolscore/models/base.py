"""The model interface every provider implements, and the errors that separate
infrastructure failures (retried, never scored) from model mistakes (scored)."""

from __future__ import annotations

import functools
import re
import time
from typing import Any, Protocol, TypeVar, runtime_checkable

from toolscore.types import GenerateConfig, Message, Reply, ToolSpec


class InfraError(Exception):
    """A failure of the serving infrastructure (timeout, 429, 5xx, empty completion).

    ``retryable`` says whether trying again may help. Persistent infra errors are recorded on
    the sample as errors and excluded from scores.
    """

    def __init__(self, message: str, *, retryable: bool = True, status: int | None = None,
                 retry_after: float | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after  # seconds the server asked us to wait (Retry-After)


class ModelCrashed(Exception):
    """The process that runs a model's native code died (a segfault, an abort, the OOM killer).

    Not an infrastructure error to retry sample by sample (a crashing native library crashes
    again) and never the model's mistake: the run stops, keeps what finished, and says how to
    resume. ``signal`` is the signal number that ended the process, when one did."""

    def __init__(self, message: str, *, signal: int | None = None, exit_code: int | None = None):
        super().__init__(message)
        self.signal = signal
        self.exit_code = exit_code

    def __reduce__(self) -> tuple[Any, ...]:  # crosses process boundaries (workers)
        return (_rebuild_crash, (str(self), self.signal, self.exit_code))


def _rebuild_crash(message: str, signal: int | None, exit_code: int | None) -> ModelCrashed:
    return ModelCrashed(message, signal=signal, exit_code=exit_code)


class EndpointUnreachable(ValueError):
    """Nothing answers at a model's endpoint (connection refused, unknown host) before a run
    starts: a mistake in what was asked (a wrong ``--base-url``), said in one line at once
    rather than after every sample has spent its retries."""


E = TypeVar("E", bound=Exception)


MIN_TAIL = 8  # shortest tail of a key redacted on its own (shorter tails are not identifying)


def strip_credentials(url: str | None) -> str | None:
    """``url`` without a ``user:password@`` part: a base URL is stored in run.json, model and
    cache identities, so credentials written into it must not travel with it. The same
    endpoint therefore has the same identity whatever credentials reach it."""
    if not url or "@" not in url:
        return url
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=host))


def url_secrets(url: str | None) -> list[str]:
    """The user name and password of a URL's userinfo (secrets to redact from error text)."""
    if not url or "@" not in url:
        return []
    from urllib.parse import unquote, urlsplit

    try:
        parts = urlsplit(url)
        found = [parts.password, parts.username]
    except ValueError:
        return []
    return [unquote(s) for s in found if s]


def _base64_cores(secret: bytes) -> set[str]:
    """The base64 text that ``secret`` encodes to wherever it sits in a longer encoded string:
    for each of the three byte alignments, the groups made only of the secret's bytes."""
    import base64

    cores: set[str] = set()
    for shift in range(3):
        padded = b"\0" * shift + secret
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(padded).decode()
            first = -(-shift // 3)  # first group holding no prefix byte
            last = (len(padded)) // 3  # groups before this one hold no suffix byte
            if shift == 0:  # the secret encoded alone: blank its padded tail too
                cores |= {text, text.rstrip("=")}
            core = text[4 * first:4 * last]
            if len(core) >= MIN_TAIL:
                cores.add(core)
                cores.add(core.rstrip("="))
    return cores


@functools.lru_cache(maxsize=64)
def secret_forms(secret: str) -> list[str]:
    """Every text form of ``secret`` an endpoint has been seen to echo: as is, URL-encoded,
    base64 (standard and URL-safe, in any alignment, e.g. inside a Basic auth header) and its
    tails of at least ``MIN_TAIL`` characters ("...key ending in 3f9a0c71b2"). Longest first,
    so a longer form is blanked before a tail of it."""
    from urllib.parse import quote, quote_plus

    forms = {secret, quote(secret, safe=""), quote_plus(secret)}
    raw = secret.encode("utf-8", "surrogatepass")
    forms |= _base64_cores(raw)
    forms |= {secret[i:] for i in range(1, len(secret) - MIN_TAIL + 1)}
    return sorted((f for f in forms if len(f) >= min(MIN_TAIL, len(secret))), key=len,
                  reverse=True)


@functools.lru_cache(maxsize=64)
def _sentinels(secret: str) -> tuple[str, ...]:
    """The forms of ``secret`` that hold no shorter form: any form in a text means one of
    these is in it, so a text without them needs no more looking (most replies)."""
    forms = secret_forms(secret)
    return tuple(f for f in forms if not any(g != f and g in f for g in forms))


def redact_text(text: str, secrets: str | list[str] | tuple[str, ...] | None) -> str:
    """``text`` with every known form of each secret replaced by ``***``."""
    if isinstance(secrets, str):
        secrets = [secrets]
    for secret in secrets or []:
        if not secret or not any(f in text for f in _sentinels(secret)):
            continue
        for form in secret_forms(secret):
            if form in text:
                text = text.replace(form, "***")
    return text


def redact_value(value: Any, secrets: list[str] | tuple[str, ...]) -> Any:
    """:func:`redact_text` through every string of a JSON-like value (keys included)."""
    if not secrets:
        return value
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, list):
        return [redact_value(v, secrets) for v in value]
    if isinstance(value, dict):
        return {redact_value(k, secrets): redact_value(v, secrets) for k, v in value.items()}
    return value


def identifying(secrets: list[str] | tuple[str, ...]) -> list[str]:
    """The secrets long enough to be told apart from ordinary text (a test's key "k" would
    otherwise blank every "k" of a reply or a command line)."""
    return [s for s in secrets if len(s) >= MIN_TAIL]


def redact_reply(reply: Reply, secrets: list[str] | tuple[str, ...]) -> Reply:
    """``reply`` with the model's secrets blanked from everything an endpoint wrote in it
    (text, reasoning, tool calls, the model name it gave), in place. A reply is stored in the
    response cache, in records and reports: an endpoint that echoes the key in an ordinary
    answer must not put it there."""
    secrets = identifying(secrets)
    if not secrets:
        return reply
    message = reply.message
    message.content = redact_value(message.content, secrets)
    message.reasoning = redact_value(message.reasoning, secrets)
    if message.reasoning_items:  # a signed block so changed is refused when sent back: safe
        message.reasoning_items = redact_value(message.reasoning_items, secrets)
    for call in message.tool_calls:
        call.id = redact_value(call.id, secrets)
        call.name = redact_value(call.name, secrets)
        call.arguments = redact_value(call.arguments, secrets)
    reply.model = redact_value(reply.model, secrets)
    reply.finish_reason = redact_value(reply.finish_reason, secrets)
    return reply


# Names (of flags, KEY=VALUE pairs, JSON fields, URL parameters) whose value is a secret.
SECRET_WORDS = frozenset({"key", "apikey", "token", "secret", "password", "passwd", "pwd",
                          "passphrase", "credential", "credentials", "bearer"})
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_PAIR = re.compile(r"^(-[A-Za-z])?([A-Za-z_][\w.-]*)=(.*)$", re.DOTALL)
_JSON_FIELD = re.compile(r'("([^"\\]*)"\s*:\s*)"((?:[^"\\]|\\.)*)"')
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@\s]*@")
_QUERY = re.compile(r"([?&;])([^=&#\s]+)=([^&#\s]*)")
HIDDEN = "***"


def secret_name(name: str) -> bool:
    """Does ``name`` (``--api-key``, ``OPENAI_API_KEY``, ``apiKey``, ``hf_token``) name a
    secret? Whole words only: ``--max-tokens`` does not."""
    return any(w.lower() in SECRET_WORDS for w in _WORD.findall(name))


def redact_arg(arg: str, secrets: list[str] | tuple[str, ...] = ()) -> str:
    """One command-line argument with its secrets hidden: a secret-named ``NAME=VALUE`` (as
    ``-M api_key=...`` or ``--token=...`` give), secret-named JSON fields and URL parameters,
    a URL's ``user:password@`` and any known secret in any form."""
    pair = _PAIR.match(arg)
    if pair is not None:
        prefix, name, value = pair.groups()
        value = HIDDEN if secret_name(name) else redact_arg(value, secrets)
        arg = f"{prefix or ''}{name}={value}"
    else:
        if arg.startswith("--") and "=" in arg:
            flag, _, value = arg.partition("=")
            return f"{flag}={HIDDEN if secret_name(flag) else redact_arg(value, secrets)}"
        arg = _JSON_FIELD.sub(lambda m: m.group(1) + (f'"{HIDDEN}"' if secret_name(m.group(2))
                                                       else f'"{m.group(3)}"'), arg)
        arg = _USERINFO.sub(lambda m: m.group(1) + HIDDEN + "@", arg)
        if "://" in arg:
            arg = _QUERY.sub(lambda m: m.group(1) + m.group(2) + "=" + (
                HIDDEN if secret_name(m.group(2)) else m.group(3)), arg)
    return redact_text(arg, secrets)


def redact_argv(argv: list[str], secrets: list[str] | tuple[str, ...] = ()) -> list[str]:
    """A command line as it may be stored (run.json's ``command``): the value of every
    secret-named flag (``--token T``, ``--api-key=K``, ``--password P``), every secret-named
    ``NAME=VALUE`` and JSON field, URL credentials and the given ``secrets`` in every form
    are replaced by ``***``. The program name is kept as it is."""
    secrets = identifying(secrets)
    out: list[str] = []
    hide_next = False
    for i, arg in enumerate(argv):
        if hide_next and not arg.startswith("--"):
            out.append(HIDDEN)
            hide_next = False
            continue
        hide_next = False
        if i == 0:
            out.append(arg)
            continue
        if arg.startswith("-") and "=" not in arg and not arg.startswith("--no-"):
            hide_next = secret_name(arg)
        out.append(redact_arg(arg, secrets))
    return out


def redact(err: E, secret: str | list[str] | None) -> E:
    """The same error with ``secret`` blanked out of its message, in every form in
    :func:`secret_forms`: error text ends up in logs, run records, reports and exports, and
    some endpoints echo the credentials they rejected, often encoded or cut to a tail."""
    text = str(err)
    clean = redact_text(text, secret)
    if clean == text:
        return err
    if isinstance(err, InfraError):
        return InfraError(clean, retryable=err.retryable,  # type: ignore[return-value]
                          status=err.status, retry_after=err.retry_after)
    try:
        return type(err)(clean)
    except Exception:  # an exception type with its own constructor: keep the text safe
        return RuntimeError(clean)  # type: ignore[return-value]


def model_secrets(model: Model | None) -> list[str]:
    """What ``model`` holds that must never be written (its :meth:`Model.secrets`: API key,
    URL credentials); none for no model. A provider written before the protocol had
    ``secrets()`` keeps the protection it had: a key stored as ``_api_key`` and the credentials
    of its ``base_url``."""
    if model is None:
        return []
    held = getattr(model, "secrets", None)
    if callable(held):
        found: list[object] = list(held())
    else:
        found = [getattr(model, "_api_key", None), *url_secrets(getattr(model, "base_url", None))]
    return [s for s in found if isinstance(s, str) and s]


RETRYABLE_4XX = frozenset({408, 409, 429})


def classify_sdk_error(sdk: Any, err: Exception) -> InfraError | None:
    """Map an exception of a Stainless-generated SDK (``openai``, ``anthropic``: same exception
    names) to an InfraError; None when it is not an SDK error. 5xx (incl. 529 overloaded),
    408, 409 and 429 are retryable; other 4xx are not (retrying cannot fix the request)."""
    if isinstance(err, sdk.APITimeoutError):
        return InfraError(f"request timed out: {err}", retryable=True, status=408)
    if isinstance(err, sdk.APIConnectionError):
        return InfraError(f"connection error: {err}", retryable=True)
    if isinstance(err, sdk.APIStatusError):
        status = err.status_code
        retryable = status >= 500 or status in RETRYABLE_4XX
        return InfraError(f"HTTP {status}: {err.message}", retryable=retryable, status=status,
                          retry_after=retry_after(getattr(err, "response", None)))
    if isinstance(err, sdk.APIError):  # e.g. a response that does not validate
        return InfraError(f"API error: {err}", retryable=True)
    return None


def retry_after(response: Any) -> float | None:
    """Seconds to wait from a response's ``retry-after-ms`` or ``Retry-After`` header (seconds
    or an HTTP date); None when absent or unreadable."""
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            from email.utils import parsedate_to_datetime

            when = parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError, AttributeError):
        return None


class ContextLengthExceeded(Exception):
    """The conversation no longer fits the model's context window.

    Not an infrastructure failure (retrying cannot help) and not a crash: it happens when the
    model itself keeps the dialogue going (e.g. calls tools in a loop), so protocols end the
    turn and score what the model did.
    """


@runtime_checkable
class Model(Protocol):
    """A chat model as a provider offers it: everything :class:`~toolscore.models.client.
    ModelClient` reads from one.

    ``name`` is the full ``provider/model`` id; ``cache_identity`` is whatever besides the
    request determines the answer (model id, base URL, weights file), used in the cache key;
    ``generate`` maps one request to one reply and classifies its errors (:class:`InfraError`,
    :class:`ContextLengthExceeded`).

    The other members have defaults, which a provider gets by subclassing ``Model``:
    ``cacheable`` False for a model that is free and exact (scripted; caching it only adds
    noise); ``empty_is_error`` False when an empty reply is the model's answer rather than an
    infrastructure failure (it would come back on every retry); ``max_concurrency`` the
    requests the model serves at once (None: no limit of its own); ``base_url`` its endpoint,
    if it has one; ``secrets()`` what it holds that must never be written (API keys, URL
    credentials): every error, reply and command line the client lets out is redacted of them.
    A model whose endpoint can be checked before a run also implements :class:`Reachable`.
    (A provider written against the first three members alone still works: the client
    applies these defaults.)
    """

    name: str
    cacheable: bool = True
    empty_is_error: bool = True
    max_concurrency: int | None = None
    base_url: str | None = None

    def cache_identity(self) -> dict[str, object]: ...

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig
    ) -> Reply: ...

    def secrets(self) -> list[str]:
        """The credentials written into ``base_url``; a provider holding a key adds it."""
        return url_secrets(self.base_url)


@runtime_checkable
class Reachable(Protocol):
    """A model with an endpoint that can be checked, once before a run, without a request."""

    async def preflight(self) -> None:
        """Raise :class:`EndpointUnreachable` when nothing answers at the endpoint."""
        ...
