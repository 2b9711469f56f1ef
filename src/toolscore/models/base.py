"""The model interface every provider implements, and the errors that separate
infrastructure failures (retried, never scored) from model mistakes (scored)."""

from __future__ import annotations

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


E = TypeVar("E", bound=Exception)


def redact(err: E, secret: str | None) -> E:
    """The same error with ``secret`` blanked out of its message: error text ends up in logs
    and run records, and some endpoints echo the credentials they rejected."""
    text = str(err)
    if not secret or secret not in text:
        return err
    if isinstance(err, InfraError):
        return InfraError(text.replace(secret, "***"), retryable=err.retryable,  # type: ignore
                          status=err.status)
    return type(err)(text.replace(secret, "***"))


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
    """``name`` is the full ``provider/model`` id; ``cache_identity`` is whatever besides the
    request determines the answer (model id, base URL, weights file), used in the cache key."""

    name: str

    def cache_identity(self) -> dict[str, object]: ...

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig
    ) -> Reply: ...
