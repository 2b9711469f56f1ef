"""Models: providers behind one interface, and the one client every call goes through.

``get_model("openai/gpt-4o-mini")`` builds a provider from its ``provider/model`` name; wrap it
in a :class:`ModelClient` to get caching, retries, concurrency limits and usage accounting.
Provider modules are imported only when their provider is asked for, so their SDKs (openai,
anthropic, llama-cpp-python) stay optional extras.
"""

from __future__ import annotations

from toolscore.models.base import InfraError, Model
from toolscore.models.cache import ResponseCache, cache_key
from toolscore.models.client import ModelClient
from toolscore.models.factory import make_client, open_cache
from toolscore.models.limits.retry import RetryPolicy
from toolscore.models.providers import Provider, get_model, list_models

__all__ = [
    "InfraError",
    "Model",
    "ModelClient",
    "ResponseCache",
    "RetryPolicy",
    "Provider",
    "cache_key",
    "get_model",
    "list_models",
    "make_client",
    "open_cache",
]

