"""The expanded plan (units in a fixed order, the settings they run with), and the checks a
manifest read from a file goes through.

A manifest is what ``sweep plan --out`` writes and what ``sweep run`` and ``status`` accept in
place of a plan: a file that may have been edited, or written by someone else. Each of its
fields goes into a ``toolscore run`` (a unit's options and epochs into its ``run.json``, its
run directory is written to), so every field is checked for its type and range before
anything runs, as a plan's fields are: a ``run.json`` written from an epochs of ``"3"`` could
not be read back. And a unit's run directory must be inside the manifest's ``out`` (the
folder holding the manifest when it names none), unless the user allows otherwise: a line of
a manifest must not be enough to write runs anywhere on disk.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from toolscore.sweeps.bounds import (
    MAX_CONCURRENCY,
    MAX_CPUS,
    MAX_EPOCHS,
    MAX_GPUS,
    MAX_PERMITS,
    MAX_RETRIES,
    MAX_SHARDS,
    MAX_TIMEOUT,
    MAX_UNIT_SAMPLES,
    MAX_UNITS,
    PlanError,
    field_error,
    integer,
    integer_or_null,
    mapping,
    number,
    shown,
    text,
)

MANIFEST_VERSION = 1
MAX_CALLS = 10**12
RAY_DEFAULTS = {"api_cpus": 0.5, "local_cpus": 1.0, "local_gpus": 0.0, "max_retries": 3}


@dataclass
class Unit:
    """One run of the sweep: everything ``toolscore run`` would be given, and where it goes.

    ``group`` is the name its provider limit is counted under (the model name when the plan
    limits that model, else its provider); ``samples`` is how many (sample, epoch) records a
    finished run holds; ``shards`` > 1 splits a local-model run into that many tasks."""

    index: int
    run_dir: str
    benchmark: str
    model: str
    options: dict[str, Any]
    model_args: dict[str, Any]
    epochs: int
    limit: int | None
    samples: int
    group: str
    base_url: str | None = None
    data: str | None = None
    setting: dict[str, Any] = field(default_factory=dict)
    judge: dict[str, Any] = field(default_factory=dict)
    shards: int = 1
    api_key_env: str | None = None  # the variable holding its provider's key (never the key)
    expected_calls: int | None = None  # model calls if the model does as the reference does

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Manifest:
    """The expanded plan: the units in a fixed order (``--index I`` is a position in it) and
    the settings every unit runs with; ``out`` is the folder every run directory is in."""

    source: str
    units: list[Unit]
    limits: dict[str, int]
    max_concurrency: int = 8
    cache: str | None = "default"
    timeout: float = 120.0
    ray: dict[str, float] = field(default_factory=lambda: dict(RAY_DEFAULTS))
    out: str | None = None
    budgets: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        limits = {g: {"concurrency": n, **self.budgets[g]} if self.budgets.get(g) else n
                  for g, n in self.limits.items()}
        return {"manifest_version": MANIFEST_VERSION, "source": self.source, "out": self.out,
                "limits": limits, "max_concurrency": self.max_concurrency,
                "cache": self.cache, "timeout": self.timeout, "ray": self.ray,
                "units": [u.to_dict() for u in self.units]}

    @classmethod
    def from_dict(cls, doc: dict[str, Any], where: str, base: Path | None = None,
                  allow_outside: bool = False) -> Manifest:
        """A manifest document checked field by field (see the module); ``base`` is the
        folder of its file, the ``out`` of a manifest that names none."""
        return read_manifest(doc, where, base or Path("."), allow_outside)


def check_ray(raw: Any, where: str) -> dict[str, float]:
    """The ``ray`` settings: resource quantities Ray accepts (none negative, none finer than
    its 0.0001, no fraction of a GPU above one) and a bounded count of retries."""
    ray = {**RAY_DEFAULTS, **mapping(raw, where, "ray")}
    unknown = sorted(set(ray) - set(RAY_DEFAULTS))
    if unknown:
        raise field_error(where, f"ray.{unknown[0]}", f"unknown (known: {', '.join(RAY_DEFAULTS)})")
    for key in ("api_cpus", "local_cpus", "local_gpus"):
        high = MAX_GPUS if key == "local_gpus" else MAX_CPUS
        value = number(ray[key], where, f"ray.{key}", 0, high)
        if 0 < value < 0.0001 or (key == "local_gpus" and value > 1 and value != int(value)):
            raise field_error(where, f"ray.{key}", f"{shown(ray[key])}: Ray takes 0, a fraction "
                              "from 0.0001" + (" to 1, or a whole number" if key == "local_gpus"
                                               else ""))
        ray[key] = value
    ray["max_retries"] = integer(ray["max_retries"], where, "ray.max_retries", 0, MAX_RETRIES)
    return ray


LIMIT_KEYS = ("concurrency", "rpm", "tpm")
MAX_RATE = 10**9  # requests or tokens per minute


def check_limits(raw: Any, where: str) -> dict[str, int]:
    """The connections of each limited provider (or model): ``{openai: 16}``, or the
    ``concurrency`` of ``{openai: {concurrency: 16, rpm: 600, tpm: 200000}}`` (no connection
    limit but the runs' own when it names none: :data:`MAX_CONCURRENCY`)."""
    if not isinstance(raw, dict):
        raise field_error(where, "limits", "expected provider (or model) names mapped to "
                                           "connection counts, e.g. {openai: 16}, or to "
                                           "{concurrency: 16, rpm: 600, tpm: 200000}")
    out = {}
    for k, v in raw.items():
        if isinstance(v, dict):
            unknown = sorted(set(v) - set(LIMIT_KEYS))
            if unknown:
                raise field_error(where, f"limits.{k}.{unknown[0]}",
                                  f"unknown (known: {', '.join(LIMIT_KEYS)})")
            out[k] = integer(v.get("concurrency", MAX_CONCURRENCY), where,
                             f"limits.{k}.concurrency", 1, MAX_PERMITS)
        else:
            out[k] = integer(v, where, f"limits.{k}", 1, MAX_PERMITS)
    check_budgets(raw, where)
    return out


def check_budgets(raw: Any, where: str) -> dict[str, dict[str, float]]:
    """The rate budgets of the limits that give one: ``{openai: {rpm: 600.0, tpm: ...}}``."""
    out: dict[str, dict[str, float]] = {}
    for k, v in (raw.items() if isinstance(raw, dict) else ()):
        if isinstance(v, dict):
            rates = {key: number(v[key], where, f"limits.{k}.{key}", 0, MAX_RATE, above=True)
                     for key in ("rpm", "tpm") if v.get(key) is not None}
            if rates:
                out[k] = rates
    return out


def check_cache(value: Any, where: str) -> Any:
    if value is not None and value is not False and not (isinstance(value, str) and value):
        raise field_error(where, "cache", f"expected default, none or a file, got {shown(value)}")
    return value


def inside(run_dir: str, out: str) -> bool:
    """Whether ``run_dir`` is a folder inside ``out`` (links followed, as the files are)."""
    here, root = Path(os.path.realpath(run_dir)), Path(os.path.realpath(out))
    return here != root and root in here.parents


def check_inside(run_dir: str, out: str, where: str, name: str) -> None:
    if not inside(run_dir, out):
        raise field_error(where, name, f"{run_dir} is not inside the sweep's out folder {out}; "
                                       "pass --allow-outside to write runs there anyway")


UNIT_FIELDS = {f.name for f in fields(Unit)}
REQUIRED = {"index", "run_dir", "benchmark", "model", "options", "model_args", "epochs", "limit",
            "samples", "group"}


def read_manifest(doc: dict[str, Any], where: str, base: Path,
                  allow_outside: bool) -> Manifest:
    version = doc.get("manifest_version")
    if version != MANIFEST_VERSION:
        raise field_error(where, "manifest_version", f"{shown(version)}: this toolscore reads "
                                                     f"version {MANIFEST_VERSION}")
    known = {"manifest_version", "source", "out", "limits", "max_concurrency", "cache",
             "timeout", "ray", "units"}
    for key in sorted(set(doc) - known) + sorted({"source", "units"} - set(doc)):
        raise field_error(where, key, "unknown" if key in doc else "missing")
    out = text(doc.get("out"), where, "out", nullable=True)
    root = out if out is not None else str(base)
    raw_units = doc["units"]
    if not isinstance(raw_units, list) or not 0 < len(raw_units) <= MAX_UNITS:
        raise field_error(where, "units", f"expected a list of 1 to {MAX_UNITS:,} units")
    units = [_unit(u, i, where) for i, u in enumerate(raw_units)]
    seen: set[str] = set()
    for u in units:
        spot = f"units[{u.index}].run_dir"
        if not allow_outside:
            check_inside(u.run_dir, root, where, spot)
        key = os.path.normpath(u.run_dir)
        if key in seen:
            raise field_error(where, spot, f"{u.run_dir} is the run directory of an earlier unit")
        seen.add(key)
    return Manifest(
        str(text(doc["source"], where, "source")), units,
        check_limits(doc.get("limits", {}), where),
        integer(doc.get("max_concurrency", 8), where, "max_concurrency", 1, MAX_CONCURRENCY),
        check_cache(doc.get("cache", "default"), where) or None,
        number(doc.get("timeout", 120.0), where, "timeout", 0, MAX_TIMEOUT, above=True),
        check_ray(doc.get("ray", {}), where), out, check_budgets(doc.get("limits", {}), where))


def _unit(raw: Any, i: int, where: str) -> Unit:
    """One unit of a manifest, every field checked; its options and model arguments as
    ``toolscore run`` would check them (what goes into its run.json must read back)."""
    from toolscore.benchmarks.base import OptionError, options_to_json, parse_options
    from toolscore.benchmarks.registry import benchmark_class
    from toolscore.models.modelargs import ModelArgs
    from toolscore.models.providers import split_name
    from toolscore.sweeps.plan_rules import key_variable

    spot = f"units[{i}]"
    u = mapping(raw, where, spot)
    for key in sorted(set(u) - UNIT_FIELDS) + sorted(REQUIRED - set(u)):
        raise field_error(where, f"{spot}.{key}", "unknown" if key in u else "missing")
    integer(u["index"], where, f"{spot}.index", i, i)  # --index I is a position
    for key in ("run_dir", "benchmark", "model", "group"):
        text(u[key], where, f"{spot}.{key}")
    for key in ("base_url", "data", "api_key_env"):
        text(u.get(key), where, f"{spot}.{key}", nullable=True)
    epochs = integer(u["epochs"], where, f"{spot}.epochs", 1, MAX_EPOCHS)
    integer_or_null(u["limit"], where, f"{spot}.limit", 1, MAX_UNIT_SAMPLES)
    integer(u["samples"], where, f"{spot}.samples", 0, MAX_UNIT_SAMPLES)
    integer(u.get("shards", 1), where, f"{spot}.shards", 1, MAX_SHARDS)
    integer_or_null(u.get("expected_calls"), where, f"{spot}.expected_calls", 0, MAX_CALLS)
    for key in ("options", "model_args", "setting", "judge"):
        mapping(u.get(key, {}), where, f"{spot}.{key}")
    try:
        key_variable(u, split_name(u["model"])[0], where, spot)
        cls = benchmark_class(u["benchmark"])
        options = options_to_json(parse_options(cls.Options, u["options"],
                                                f"{where}: field '{spot}.options'"))
        args = ModelArgs.from_dict(u["model_args"], f"{where}: field '{spot}.model_args'")
    except (OptionError, LookupError, ValueError) as e:
        message = " ".join(str(e).split())
        raise PlanError(message if message.startswith(where)
                        else f"{where}: field '{spot}': {message}") from None
    return Unit(**{**u, "epochs": epochs, "options": options, "model_args": args.to_dict()})
