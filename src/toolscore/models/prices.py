"""What a model's tokens cost: a dated price table of hosted models, and a user's file over it.

The table is LiteLLM's ``model_prices_and_context_window.json`` (MIT licence) as one release of
the ``litellm`` package ships it, pinned below by the wheel's address and the file's sha256. It
is never part of toolscore: it is found like a dataset named ``prices``
(``$TOOLSCORE_DATA/prices`` or the user cache) and downloaded on first need
(``toolscore data prices``, or a run given ``--cost-limit``); reports never download it.
Without it every model is "unpriced" and the report says, in one line, how to get it.

A user's price file (``--prices FILE``, JSON or YAML: ``{"provider/model" or "model":
{input_per_mtok, output_per_mtok, cached_input_per_mtok?, reasoning_per_mtok?}}``, per
million tokens) overrides the table model by model. A model that neither knows is unpriced,
never $0.

toolscore's model names map onto the table's keys: ``openai/NAME`` and ``anthropic/NAME`` are
the table's ``NAME`` when its provider is that one; ``litellm/NAME`` is LiteLLM's own model
string (``NAME``, or ``NAME`` less its provider prefix when the table lists it bare under
that provider). Tiered prices (above a context length), batch and priority rates are not read:
a call is priced at the standard per-token rates.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.data import (
    DataError,
    DataNotFound,
    DatasetSource,
    find_dataset,
    read_structured,
    read_text,
)

#: the litellm release whose price table is pinned, and the day it was built
LITELLM_VERSION = "1.110.2"
TABLE_DATE = "2026-11-20"
WHEEL = ("https://files.pythonhosted.org/packages/d3/51/"
         "825f430f07bf864ade5f58462816437bbfaa22c229f5bb474073352bffc4/"
         "litellm-1.110.2-cp310-abi3-manylinux_2_28_x86_64.whl")
#: the wheel's own sha256 (43.8 MB: the download is one-off)
WHEEL_SHA256 = "9d94d1c7d524b6fd10c14f9c8c6c4f0ac31705f9964ac59dcfd8337c046d8917"
TABLE_FILE = "model_prices_and_context_window_backup.json"
TABLE_SHA256 = "8943af58bf9f979c6a4bef815687117ffa341e462a41faed9be17b5c33d3dcc2"
FETCH_HINT = "`toolscore data prices` downloads LiteLLM's price table"

SOURCE = DatasetSource(
    name="prices", url=WHEEL, marker=TABLE_FILE, pins={TABLE_FILE: TABLE_SHA256},
    note=f"The price table is read from the litellm {LITELLM_VERSION} wheel: "
         f"{FETCH_HINT} (or pass --prices FILE).")

PRICE_KEYS = ("input_per_mtok", "output_per_mtok")
OPTIONAL_KEYS = ("cached_input_per_mtok", "reasoning_per_mtok")
#: toolscore provider -> the table's provider names its models may carry
_PROVIDERS = {"openai": ("openai", "text-completion-openai"), "anthropic": ("anthropic",)}


@dataclass(frozen=True)
class Price:
    """USD per million tokens; cached input and reasoning output when the source has them
    (else input and output rates apply)."""

    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None
    reasoning_per_mtok: float | None = None

    def to_dict(self) -> dict[str, float]:
        out = {"input_per_mtok": self.input_per_mtok, "output_per_mtok": self.output_per_mtok}
        for key in OPTIONAL_KEYS:
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out

    def cost(self, usage: dict[str, Any]) -> float:
        """USD of ``usage`` (see :meth:`split`)."""
        c_in, c_out = self.split(usage)
        return c_in + c_out

    def split(self, usage: dict[str, Any]) -> tuple[float, float]:
        """USD of ``usage``'s input and of its output (input_tokens, output_tokens and, when
        counted, the cached part of the input, ``cached_input_tokens``, and the reasoning
        part of the output, ``reasoning_tokens``)."""
        inp = int(usage.get("input_tokens") or 0)
        out = int(usage.get("output_tokens") or 0)
        cached = min(int(usage.get("cached_input_tokens") or 0), inp)
        reasoning = min(int(usage.get("reasoning_tokens") or 0), out)
        cached_rate = self.input_per_mtok if self.cached_input_per_mtok is None \
            else self.cached_input_per_mtok
        reasoning_rate = self.output_per_mtok if self.reasoning_per_mtok is None \
            else self.reasoning_per_mtok
        return (((inp - cached) * self.input_per_mtok + cached * cached_rate) / 1e6,
                ((out - reasoning) * self.output_per_mtok + reasoning * reasoning_rate) / 1e6)


@dataclass
class PriceTable:
    """The prices a report or a run uses: a user's file (``overrides``) over the pinned
    table (``table``: LiteLLM's entries, None when it is not here)."""

    overrides: dict[str, dict[str, float]] = field(default_factory=dict)
    table: dict[str, Any] | None = None
    file: str | None = None  # the user's price file, as given

    def price_of(self, model: str | None) -> Price | None:
        if not model:
            return None
        own = _override(model, self.overrides)
        if own is not None:
            return Price(**own)
        if self.table is None:
            return None
        entry = table_entry(model, self.table)
        return None if entry is None else price_of_entry(entry)

    @property
    def source(self) -> str:
        """What the prices are, as every report that shows a cost says."""
        parts = []
        if self.file is not None:
            parts.append(f"price file {self.file}")
        if self.table is not None:
            parts.append(f"LiteLLM {LITELLM_VERSION} price table of {TABLE_DATE}")
        return " over ".join(parts) if parts else "no price table"

    @property
    def missing(self) -> str | None:
        """The one line saying how to get the table, when it is not here."""
        if self.table is not None:
            return None
        return (f"no price table here: {FETCH_HINT} (litellm {LITELLM_VERSION}, "
                f"{TABLE_DATE}), or pass --prices FILE")

    def describe(self) -> dict[str, Any]:
        return {"source": self.source, "litellm_version": LITELLM_VERSION
                if self.table is not None else None,
                "date": TABLE_DATE if self.table is not None else None,
                "file": self.file, "missing": self.missing}


#: what a report takes as its prices: a table, a user's entries (over the pinned table), or
#: None (the pinned table alone, when it is here)
Prices = PriceTable | dict[str, dict[str, float]] | None


def _override(model: str, prices: dict[str, dict[str, float]]) -> dict[str, float] | None:
    """The exact ``provider/model`` entry, else the bare model name's."""
    if model in prices:
        return prices[model]
    bare = model.split("/", 1)[1] if "/" in model else None
    return prices.get(bare) if bare else None


def table_entry(model: str, table: dict[str, Any]) -> dict[str, Any] | None:
    """The table's entry for a toolscore model name (see the module), or None."""
    provider, sep, name = model.partition("/")
    if not sep or not name:
        return None
    if provider == "litellm":
        entry = table.get(name)
        if isinstance(entry, dict):
            return entry
        inner, sep, bare = name.partition("/")
        entry = table.get(bare) if sep else None
        if isinstance(entry, dict) and entry.get("litellm_provider") == inner:
            return entry
        return None
    allowed = _PROVIDERS.get(provider)
    if allowed is None:
        return None
    for key in (name, model):
        entry = table.get(key)
        if isinstance(entry, dict) and entry.get("litellm_provider") in allowed:
            return entry
    return None


def price_of_entry(entry: dict[str, Any]) -> Price | None:
    """A LiteLLM entry's per-token rates as a :class:`Price` (None without both rates)."""
    def rate(key: str) -> float | None:
        value = entry.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or value < 0:
            return None
        return round(float(value) * 1e6, 9)

    inp, out = rate("input_cost_per_token"), rate("output_cost_per_token")
    if inp is None or out is None:
        return None
    return Price(inp, out, rate("cache_read_input_token_cost"),
                 rate("output_cost_per_reasoning_token"))


def load_prices(path: str | Path) -> dict[str, dict[str, float]]:
    """A user's price file: ``{"provider/model" or "model": {input_per_mtok, output_per_mtok,
    cached_input_per_mtok?, reasoning_per_mtok?}}`` in USD per million tokens, JSON or
    YAML."""
    p = Path(path)
    table = read_structured(p)
    if not isinstance(table, dict):
        raise ValueError(f"{p}: expected a mapping of model name to prices")
    out: dict[str, dict[str, float]] = {}
    for model, entry in table.items():
        if not isinstance(entry, dict):
            raise ValueError(f"{p}: {model!r}: expected {{input_per_mtok, output_per_mtok}}")
        prices = {}
        for key in PRICE_KEYS + OPTIONAL_KEYS:
            value = entry.get(key)
            if value is None and key in OPTIONAL_KEYS:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or value < 0:
                raise ValueError(f"{p}: {model!r}: {key} must be a number >= 0, got {value!r}")
            prices[key] = float(value)
        out[str(model)] = prices
    return out


@functools.lru_cache(maxsize=2)
def _read_table(path: str, mtime: float) -> dict[str, Any]:
    try:
        table = json.loads(read_text(Path(path)))
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: not valid JSON ({e.msg})") from None
    if not isinstance(table, dict):
        raise DataError(f"{path}: expected a mapping of model name to prices")
    return table


def find_table(*, download: bool = False) -> dict[str, Any] | None:
    """The pinned table's entries when it is here (or, with ``download``, once downloaded);
    None otherwise."""
    try:
        folder = find_dataset(SOURCE, download=download)
    except DataNotFound:
        return None
    path = folder / TABLE_FILE
    return _read_table(str(path), path.stat().st_mtime)


def price_table(prices: PriceTable | dict[str, dict[str, float]] | str | Path | None = None,
                *, download: bool = False) -> PriceTable:
    """The prices to use: a user's file (a path) or its entries (a mapping) over the pinned
    table when it is here; an existing :class:`PriceTable` as it is."""
    if isinstance(prices, PriceTable):
        return prices
    table = find_table(download=download)
    if prices is None:
        return PriceTable(table=table)
    if isinstance(prices, dict):
        return PriceTable(overrides=prices, table=table, file="(given)")
    return PriceTable(overrides=load_prices(prices), table=table, file=str(prices))


def role_models(config: dict[str, Any]) -> dict[str, str | None]:
    """Which model played each role, from a run's ``run.json`` (its benchmark's config)."""
    bench = config.get("benchmark_config") or {}
    assistant = config.get("model")
    user = bench.get("user_model")
    if user == "same as assistant":
        user = assistant
    judge = bench.get("judge_model") or judge_config_model(bench) or bench.get("judge_id") \
        or bench.get("judge") or config.get("judge")
    return {"assistant": assistant, "user": user if isinstance(user, str) else None,
            "judge": judge if isinstance(judge, str) else None}


def judge_config_model(benchmark_config: dict[str, Any]) -> str | None:
    """The model of the judge configuration a benchmark names (``judge_config``), if any."""
    judge = benchmark_config.get("judge_config")
    model = judge.get("model") if isinstance(judge, dict) else None
    return model if isinstance(model, str) else None
