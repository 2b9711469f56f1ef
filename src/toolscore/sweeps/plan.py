"""A sweep plan: models x benchmarks (with their option variants) x settings x judges, expanded
into a manifest of run units, each with a run directory named by its configuration.

A team comparing models runs hundreds of runs; typing each ``toolscore run`` by hand loses
track of what is done, and a timestamped directory makes a repeated command start over. Here
one file describes the matrix, and every unit's directory is ``<out>/<slug>-<hash>``, the hash
being that of the run's identity (:class:`toolscore.runs.settings.RunIdentity`), so
submitting the same plan again finds the same directories and resumes them. The plan is JSON
or YAML::

    out: runs/sweep              # root of the run directories (relative to the plan file)
    models: [oracle, {model: openai/gpt-4o-mini, base_url: http://127.0.0.1:8000/v1}]
    benchmarks:
      demo: {embedder: hashing}              # one variant
      tooltalk: [{split: easy}, {split: hard}]  # two variants
    settings: {temperature: [0.0, 1.0]}      # model arguments, crossed
    judges: [{judge_config: judge.yaml}]     # options given to benchmarks that declare them
    epochs: 3
    limit: null
    limits: {openai: 16}         # connections in flight per provider, across the sweep, or
                                 # {openai: {concurrency: 16, rpm: 600, tpm: 200000}}
    max_concurrency: 8           # per run (Ray, --index: cut to a share of the limits)
    cache: default               # or none, or a file
    timeout: 120
    data: {tooltalk: /data/tooltalk}
    shards: 1                    # local/* units only: N tasks share one run directory
    ray: {api_cpus: 0.5, local_cpus: 1, local_gpus: 0, max_retries: 3}

Every mistake is one line naming the file and the field, found before anything is planned;
what a plan may ask is bounded (:mod:`.bounds`), and its run directories are inside ``out``.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import OptionError, option_fields, options_to_json, parse_options
from toolscore.benchmarks.registry import benchmark_class, make_benchmark
from toolscore.data import DataNotFound
from toolscore.models.cache import sha256_json
from toolscore.models.modelargs import ModelArgs
from toolscore.models.providers import split_name
from toolscore.runs.api import slug
from toolscore.runs.settings import RunIdentity
from toolscore.sweeps.bounds import (
    MAX_CONCURRENCY,
    MAX_EPOCHS,
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
    text,
)
from toolscore.sweeps.manifest import (
    MANIFEST_VERSION,
    RAY_DEFAULTS,
    Manifest,
    Unit,
    check_budgets,
    check_cache,
    check_limits,
    check_ray,
)
from toolscore.sweeps.plan_file import read_document
from toolscore.sweeps.plan_rules import (
    benchmark_entry,
    check_excludes,
    check_rule_models,
    key_variable,
    left_out,
)

__all__ = ["MANIFEST_VERSION", "RAY_DEFAULTS", "Manifest", "PlanError", "Unit", "expand",
           "limit_group", "load_plan"]

KNOWN = {"out", "models", "benchmarks", "settings", "judges", "epochs", "limit", "limits",
         "max_concurrency", "cache", "timeout", "data", "shards", "ray", "exclude"}


def load_plan(path: str | Path, allow_outside: bool = False) -> Manifest:
    """A plan file (YAML or JSON) expanded, or a manifest written by ``sweep plan --out``
    (whose run directories must be inside its ``out`` unless ``allow_outside``)."""
    path = Path(path)
    if not path.is_file():
        raise PlanError(f"{path}: no such sweep file")
    doc = read_document(path)
    if isinstance(doc, dict) and "manifest_version" in doc:
        return Manifest.from_dict(doc, str(path), path.parent, allow_outside)
    return expand(doc, str(path), base=path.parent)


def expand(doc: Any, where: str = "sweep", base: Path | None = None) -> Manifest:
    """The manifest of a plan document; relative paths are taken from ``base``. Every field
    is checked before any unit is made."""
    if not isinstance(doc, dict):
        raise PlanError(f"{where}: expected a mapping at the top, got {type(doc).__name__}")
    unknown = sorted(set(doc) - KNOWN)
    if unknown:
        raise PlanError(f"{where}: field {unknown[0]!r}: unknown "
                        f"(known: {', '.join(sorted(KNOWN))})")
    base = base or Path(".")
    out = _resolve(base, str(text(doc.get("out", "runs/sweep"), where, "out")))
    plan_epochs = integer(doc.get("epochs", 1), where, "epochs", 1, MAX_EPOCHS)
    plan_limit = integer_or_null(doc.get("limit"), where, "limit", 1, MAX_UNIT_SAMPLES)
    shards = integer(doc.get("shards", 1), where, "shards", 1, MAX_SHARDS)
    concurrency = integer(doc.get("max_concurrency", 8), where, "max_concurrency", 1,
                          MAX_CONCURRENCY)
    timeout = number(doc.get("timeout", 120.0), where, "timeout", 0, MAX_TIMEOUT, above=True)
    limits = check_limits(doc.get("limits") or {}, where)
    ray = check_ray(doc.get("ray") or {}, where)
    cache = check_cache(doc.get("cache", "default"), where)
    data = mapping(doc.get("data") or {}, where, "data")
    for name, folder in data.items():
        text(folder, where, f"data.{name}")
    models = _models(doc.get("models"), where)
    variants, rules = _benchmarks(doc.get("benchmarks"), where)
    names = [m[0] for m in models]
    check_rule_models(rules, names, where)
    excludes = check_excludes(doc.get("exclude"), where, names, [n for n, _ in variants])
    setting_names, setting_lists = _settings(doc.get("settings") or {}, where)
    judges = _judges(doc.get("judges"), variants, where)
    _matrix(where, models=len(models), benchmarks=len(variants), judges=len(judges),
            settings=math.prod(len(v) for v in setting_lists))
    settings = [dict(zip(setting_names, combo, strict=True))
                for combo in itertools.product(*setting_lists)]
    counted: dict[str, tuple[int, list[int] | None]] = {}
    units: list[Unit] = []
    for (model, url, margs, key_env), (name, opts), setting, judge in itertools.product(
            models, variants, settings, judges):
        cls = benchmark_class(name)
        declared = {f.name for f in option_fields(cls.Options)}
        given = {**opts, **{k: v for k, v in judge.items() if k in declared}}
        if judge and not set(judge) & declared:
            continue  # this judge setting does not apply to this benchmark: one unit, not N
        context = f"{where}: benchmarks.{name}"
        try:
            options = options_to_json(parse_options(cls.Options, given, context))
            args = ModelArgs.from_dict({**margs, **setting}, f"{where}: model argument").to_dict()
        except (OptionError, ValueError, TypeError) as e:  # TypeError: a required option
            raise PlanError(f"{context}: {' '.join(str(e).split())}" if isinstance(e, TypeError)
                            else str(e)) from None
        rule = rules.get(name, {})
        if left_out(rule, excludes, model, name, options, setting):
            continue
        epochs, limit = rule.get("epochs", plan_epochs), rule.get("limit", plan_limit)
        folder = data.get(name)
        folder = None if folder is None else str(_resolve(base, str(folder)))
        ident = RunIdentity(name, model, options=options, model_args=args, epochs=epochs,
                            limit=limit, base_url=url, data=folder).to_json()
        key = json.dumps([name, options, folder], sort_keys=True, default=str)
        if key not in counted:
            counted[key] = _count(name, given, folder, context)
        count, calls = counted[key]
        samples = min(count, limit or count) * epochs
        if samples > MAX_UNIT_SAMPLES:
            raise field_error(where, "epochs" if "epochs" not in rule else
                              f"benchmarks.{name}.epochs",
                              f"benchmarks.{name} has {count:,} samples"
                              f" x {epochs:,} epochs = {samples:,} records in one run; a run may"
                              f" hold at most {MAX_UNIT_SAMPLES:,} (fewer epochs, or a limit)")
        label = "-".join(slug(f"{k}{v}") for k, v in sorted(setting.items()))
        run_dir = out / f"{slug(name)}-{slug(model)}{'-' + label if label else ''}-" \
                        f"{sha256_json(ident)[:10]}"
        # Sharding splits an embedded model's work over CPUs or GPUs; an API-model run is
        # bounded by its provider's limit instead, so it stays one task.
        local = split_name(model)[0] == "local"
        units.append(Unit(len(units), str(run_dir), name, model, options, args, epochs, limit,
                          samples, limit_group(model, limits), url, folder, setting, judge,
                          shards if local else 1, key_env,
                          None if calls is None else sum(calls[:limit]) * epochs))
    if not units:
        raise PlanError(f"{where}: field 'exclude': every unit of the plan is left out")
    dirs = [u.run_dir for u in units]
    if len(set(dirs)) != len(dirs):
        dup = next(d for d in dirs if dirs.count(d) > 1)
        raise PlanError(f"{where}: two units have the same configuration ({dup}); remove the "
                        "repeated model, benchmark variant or setting")
    cache = None if cache in (None, "none", False) else (
        "default" if cache == "default" else str(_resolve(base, str(cache))))
    return Manifest(where, units, limits, concurrency, cache, timeout, ray, str(out),
                    check_budgets(doc.get("limits") or {}, where))


def _matrix(where: str, **sizes: int) -> None:
    """Refuse a matrix of more than MAX_UNITS units before making any of it."""
    total = math.prod(sizes.values())
    if total > MAX_UNITS:
        biggest = max(sizes, key=lambda k: sizes[k])
        parts = " x ".join(f"{n:,} {k}" for k, n in sizes.items())
        raise field_error(where, biggest, f"the matrix has {parts} = {total:,} units; a plan "
                                          f"may have at most {MAX_UNITS:,}")


def _resolve(base: Path, value: str) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else Path(os.path.normpath(base / p))


def _models(raw: Any, where: str) -> list[tuple[str, str | None, dict[str, Any], str | None]]:
    if not isinstance(raw, list) or not raw:
        raise PlanError(f"{where}: field 'models': expected a non-empty list of model names")
    out = []
    for i, m in enumerate(raw):
        spot = f"{where}: field 'models[{i}]'"
        if isinstance(m, str):
            m = {"model": m}
        if not isinstance(m, dict) or not isinstance(m.get("model"), str):
            raise PlanError(f"{spot}: expected a model name or {{model: NAME, ...}}")
        extra = sorted(set(m) - {"model", "base_url", "model_args", "api_key_env", "api_key"})
        if extra:
            raise PlanError(f"{spot}: unknown key {extra[0]!r} (known: model, base_url, "
                            "model_args, api_key_env)")
        try:
            provider = split_name(m["model"])[0]
        except ValueError as e:
            raise PlanError(f"{spot}: {e}") from None
        key_env = key_variable(m, provider, where, f"models[{i}]")
        text(m.get("base_url"), where, f"models[{i}].base_url", nullable=True)
        args = m.get("model_args") or {}
        if not isinstance(args, dict):
            raise PlanError(f"{spot}.model_args: expected a mapping")
        try:
            ModelArgs.from_dict(args, f"{where}: field 'models[{i}].model_args'")
        except ValueError as e:
            raise PlanError(" ".join(str(e).split())) from None
        out.append((m["model"], m.get("base_url"), args, key_env))
    return out


def _benchmarks(raw: Any, where: str
                ) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, dict[str, Any]]]:
    """The (benchmark, options) variants in order, and each benchmark's rules (long form, see
    :mod:`.plan_rules`)."""
    if isinstance(raw, list):  # [demo, tooltalk]: default options
        if not all(isinstance(name, str) for name in raw):
            raise PlanError(f"{where}: field 'benchmarks': expected benchmark names")
        raw = {name: {} for name in raw}
    if not isinstance(raw, dict) or not raw:
        raise PlanError(f"{where}: field 'benchmarks': expected a mapping of benchmark name "
                        "to options (or to a list of option variants)")
    out = []
    rules = {}
    for name, entry in raw.items():
        try:
            cls = benchmark_class(str(name))
        except LookupError as e:
            raise PlanError(f"{where}: field 'benchmarks.{name}': {e}") from None
        opts, rules[str(name)] = benchmark_entry(str(name), entry, where)
        for i, variant in enumerate(opts if isinstance(opts, list) else [opts or {}]):
            if not isinstance(variant, dict):
                raise PlanError(f"{where}: field 'benchmarks.{name}[{i}]': expected a mapping "
                                "of option to value")
            given = {k.replace("-", "_"): v for k, v in variant.items()}
            try:
                parse_options(cls.Options, given, f"{where}: benchmarks.{name}")
            except (OptionError, ValueError) as e:
                raise PlanError(" ".join(str(e).split())) from None
            except TypeError:  # a required option, which a judge setting may give
                pass
            out.append((str(name), given))
    return out, rules


def _settings(raw: Any, where: str) -> tuple[list[str], list[list[Any]]]:
    """The names and value lists of ``{argument: [values]}`` (a single value is a list of
    one), crossed only once their product is known to be within bounds."""
    if not isinstance(raw, dict):
        raise PlanError(f"{where}: field 'settings': expected a mapping of model argument to "
                        "a list of values")
    names = sorted(raw)
    lists = [v if isinstance(v, list) else [v] for v in (raw[n] for n in names)]
    if any(not v for v in lists):
        raise PlanError(f"{where}: field 'settings.{names[[len(v) for v in lists].index(0)]}'"
                        ": an empty list leaves nothing to run")
    for name, values in zip(names, lists, strict=True):
        for i, value in enumerate(values):
            try:
                ModelArgs.from_dict({name: value}, f"{where}: field 'settings.{name}[{i}]'")
            except ValueError as e:
                raise PlanError(" ".join(str(e).split())) from None
    return names, lists


def _judges(raw: Any, variants: list[tuple[str, dict[str, Any]]],
            where: str) -> list[dict[str, Any]]:
    if raw is None:
        return [{}]
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(j, dict) for j in raw):
        raise PlanError(f"{where}: field 'judges': expected a list of option mappings")
    declared = set().union(*({f.name for f in option_fields(benchmark_class(n).Options)}
                             for n, _ in variants))
    for i, judge in enumerate(raw):
        for key in judge:
            if key not in declared:
                raise PlanError(f"{where}: field 'judges[{i}].{key}': no benchmark of this "
                                "plan takes that option")
    return [{k: v for k, v in j.items()} for j in raw] or [{}]


def limit_group(model: str, limits: dict[str, int]) -> str:
    """Which limit a model counts against: its own name if limited, else its provider."""
    return model if model in limits else split_name(model)[0]


def _count(name: str, options: dict[str, Any], data: str | None,
           where: str) -> tuple[int, list[int] | None]:
    """The number of samples of a benchmark variant, and the model calls of each when the
    benchmark can tell (loading it also checks its data now, before a long sweep starts,
    rather than in its hundredth unit)."""
    try:
        bench = make_benchmark(name, data, download=False, **options)
        bench.check()
        samples = bench.samples()
        calls = [bench.expected_calls(s) for s in samples]
        return len(samples), None if any(c is None for c in calls) else \
            [int(c) for c in calls if c is not None]
    except (OSError, LookupError, ValueError, DataNotFound) as e:
        raise PlanError(f"{where}: {' '.join(str(e).split())}") from None
