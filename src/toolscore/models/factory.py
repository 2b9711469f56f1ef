"""The one place a model client is built, for every role (assistant, user agent, judge), with
the response cache the run uses; see :class:`~toolscore.models.client.ModelClient`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolscore.models.cache import ResponseCache
from toolscore.models.client import ModelClient
from toolscore.models.modelargs import ArgsClient, ModelArgs
from toolscore.models.providers import get_model
from toolscore.types import GenerateConfig

DEFAULT = "default"


def cache_path(spec: str | Path | None) -> Path | None:
    """The cache file a spec names: "default" is ``$TOOLSCORE_CACHE`` (a file, or "none" for
    no cache: a cluster node or CI turns caching off or moves it without changing every
    command), else ``~/.cache/toolscore/responses.sqlite``; None and "none" (as a sweep plan
    says it) are no cache, never a file called none. A folder is a one-line ValueError."""
    if spec is None or str(spec) == "none":
        return None
    if str(spec) == DEFAULT:
        import os

        env = os.environ.get("TOOLSCORE_CACHE", "").strip()
        if env:
            return _file(env, "TOOLSCORE_CACHE")
        from toolscore.data import cache_root

        return cache_root() / "responses.sqlite"
    return Path(spec)


def _file(value: str, where: str) -> Path | None:
    if value == "none":
        return None
    path = Path(value).expanduser()
    if path.is_dir():
        raise ValueError(f"{where} {value!r}: a folder; give the cache file (SQLite) or none")
    return path


def open_cache(spec: str | Path | None) -> ResponseCache | None:
    path = cache_path(spec)
    if path is None:
        return None
    return ResponseCache(path)  # never raises: an unusable cache file leaves the cache off


def make_client(model: str, *, role: str = "assistant", base_url: str | None = None,
                cache: str | Path | ResponseCache | None = DEFAULT, timeout: float = 120.0,
                max_concurrency: int = 8,
                model_args: ModelArgs | dict[str, Any] | None = None,
                **model_options: Any) -> ModelClient:
    """A client for ``model`` (``provider/model``) playing ``role``.

    ``model_args`` (see :mod:`toolscore.models.modelargs`) replace the benchmark's generation
    settings on every call of this client. A provider that cannot honour one says so here, in
    one line (its ``check_config``), before the first call, rather than failing every sample.
    """
    args = model_args if isinstance(model_args, ModelArgs) else ModelArgs.from_dict(model_args)
    if base_url:
        model_options["base_url"] = base_url
    built = get_model(model, **model_options)
    check = getattr(built, "check_config", None)
    if args and callable(check):
        check(args.apply(GenerateConfig()))
    opened = cache if isinstance(cache, ResponseCache) or cache is None else open_cache(cache)
    if not args:
        return ModelClient(built, cache=opened, timeout=timeout,
                           max_concurrency=max_concurrency, role=role)
    client = ArgsClient(built, cache=opened, timeout=timeout, max_concurrency=max_concurrency,
                        role=role)
    client.model_args = args
    return client
