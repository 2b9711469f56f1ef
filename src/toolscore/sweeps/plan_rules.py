"""What a plan says beyond the full cross product: which models run which benchmark, with how
many epochs and samples, and which key each model uses.

A benchmark's entry is its options (a mapping, or a list of variants), or, in the long form,
a mapping with ``variants`` and any of::

    tooltalk:
      variants: [{split: easy}, {split: hard}]   # or one mapping of options, or {}
      models: [openai/gpt-4o-mini, oracle]       # only these of the plan's models
      exclude: [oracle]                          # or: every model but these
      epochs: 5                                  # instead of the plan's epochs
      limit: 20                                  # instead of the plan's limit

and the plan's ``exclude`` lists the units to leave out, each a mapping of ``model``,
``benchmark``, ``options`` (a subset of the variant's) and ``setting`` (a subset of the
model arguments swept in ``settings``); a unit matching every key given is left out.

A model may name the environment variable its provider's key is in (``api_key_env:
TEAM_B_OPENAI_KEY``), never the key: a plan is shared, committed and printed. The unit reads
it when it starts, where it runs, and its provider's usual variable (``OPENAI_API_KEY``...)
holds it for every call the unit makes to that provider.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from typing import Any

from toolscore.sweeps.bounds import (
    MAX_EPOCHS,
    MAX_UNIT_SAMPLES,
    field_error,
    integer,
    integer_or_null,
    mapping,
    shown,
)

LONG = ("variants", "models", "exclude", "epochs", "limit")
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
EXCLUDE_KEYS = ("model", "benchmark", "options", "setting")


def benchmark_entry(name: str, raw: Any, where: str) -> tuple[Any, dict[str, Any]]:
    """(variants as written, rules) of one benchmark's entry; rules are empty in the short
    form."""
    if not (isinstance(raw, dict) and "variants" in raw):
        return raw, {}
    unknown = sorted(set(raw) - set(LONG))
    if unknown:
        raise field_error(where, f"benchmarks.{name}.{unknown[0]}",
                          f"unknown (known: {', '.join(LONG)}; a benchmark option goes in "
                          "variants)")
    rules: dict[str, Any] = {}
    if "epochs" in raw:
        rules["epochs"] = integer(raw["epochs"], where, f"benchmarks.{name}.epochs", 1,
                                  MAX_EPOCHS)
    if "limit" in raw:
        rules["limit"] = integer_or_null(raw["limit"], where, f"benchmarks.{name}.limit", 1,
                                         MAX_UNIT_SAMPLES)
    for key in ("models", "exclude"):
        if key in raw:
            rules[key] = _names(raw[key], where, f"benchmarks.{name}.{key}")
    if "models" in rules and "exclude" in rules:
        raise field_error(where, f"benchmarks.{name}.exclude", "give models (the ones to run) "
                          "or exclude (the ones not to), not both")
    return raw["variants"], rules


def _names(raw: Any, where: str, name: str) -> list[str]:
    values = raw if isinstance(raw, list) else [raw]
    if not values or not all(isinstance(v, str) and v for v in values):
        raise field_error(where, name, f"expected a list of model names, got {shown(raw)}")
    return list(values)


def check_rule_models(rules: dict[str, dict[str, Any]], models: list[str], where: str) -> None:
    """Every model a benchmark's ``models`` or ``exclude`` names is one of the plan's."""
    for bench, rule in rules.items():
        for key in ("models", "exclude"):
            for i, model in enumerate(rule.get(key, [])):
                if model not in models:
                    raise field_error(where, f"benchmarks.{bench}.{key}[{i}]",
                                      f"{model!r} is not in models ({', '.join(models)})")


def check_excludes(raw: Any, where: str, models: list[str],
                   benchmarks: list[str]) -> list[dict[str, Any]]:
    """The plan's ``exclude`` list, each entry checked against the plan."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise field_error(where, "exclude", f"expected a list of mappings (model, benchmark, "
                                            f"options, setting), got {shown(raw)}")
    out = []
    for i, entry in enumerate(raw):
        spot = f"exclude[{i}]"
        entry = mapping(entry, where, spot)
        unknown = sorted(set(entry) - set(EXCLUDE_KEYS))
        if unknown or not entry:
            raise field_error(where, f"{spot}.{unknown[0]}" if unknown else spot,
                              f"{'unknown' if unknown else 'empty'} (known: "
                              f"{', '.join(EXCLUDE_KEYS)})")
        if "model" in entry and entry["model"] not in models:
            raise field_error(where, f"{spot}.model", f"{shown(entry['model'])} is not in "
                                                      f"models ({', '.join(models)})")
        if "benchmark" in entry and entry["benchmark"] not in benchmarks:
            raise field_error(where, f"{spot}.benchmark", f"{shown(entry['benchmark'])} is not "
                                                          f"in benchmarks")
        for key in ("options", "setting"):
            if key in entry:
                mapping(entry[key], where, f"{spot}.{key}")
        out.append(entry)
    return out


def left_out(rule: dict[str, Any], excludes: list[dict[str, Any]], model: str, bench: str,
             options: dict[str, Any], setting: dict[str, Any]) -> bool:
    """Whether the unit (model, benchmark, its parsed options, its swept setting) is out."""
    if "models" in rule and model not in rule["models"]:
        return True
    if model in rule.get("exclude", ()):
        return True
    for entry in excludes:
        if "model" in entry and entry["model"] != model:
            continue
        if "benchmark" in entry and entry["benchmark"] != bench:
            continue
        opts = {k.replace("-", "_"): v for k, v in (entry.get("options") or {}).items()}
        if any(options.get(k, object()) != v for k, v in opts.items()):
            continue
        if any(setting.get(k, object()) != v for k, v in (entry.get("setting") or {}).items()):
            continue
        return True
    return False


def key_variable(entry: dict[str, Any], provider: str, where: str, spot: str) -> str | None:
    """The ``api_key_env`` of a model entry: a variable name, for a provider that takes a key."""
    if "api_key" in entry:
        raise field_error(where, f"{spot}.api_key", "a plan names the environment variable "
                          "holding the key (api_key_env: NAME), never the key itself")
    name = entry.get("api_key_env")
    if name is None:
        return None
    if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
        raise field_error(where, f"{spot}.api_key_env", "expected the name of an environment "
                          "variable (letters, digits and _), got a value that is not one")
    if provider not in KEY_VARIABLES:
        raise field_error(where, f"{spot}.api_key_env", f"provider {provider!r} takes no key "
                          f"from the environment (providers that do: "
                          f"{', '.join(sorted(KEY_VARIABLES))})")
    return name


@contextlib.contextmanager
def unit_key(model: str, variable: str | None) -> Iterator[None]:
    """The provider's usual key variable set to ``$variable`` while the unit runs (this
    process runs one unit at a time), restored after. A ValueError if it is not set."""
    if variable is None:
        yield
        return
    provider = model.split("/", 1)[0].split(":", 1)[0]
    target = KEY_VARIABLES.get(provider)
    value = os.environ.get(variable)
    if target is None or not value:
        raise ValueError(f"the environment variable {variable} (api_key_env of {model}) is not "
                         "set where this unit runs")
    before = os.environ.get(target)
    os.environ[target] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(target, None)
        else:
            os.environ[target] = before

