"""A sweep plan: models x benchmarks (with their option variants) x settings x judges, expanded
into a manifest of run units, each with a run directory named by its configuration.

A team comparing models runs hundreds of runs; typing each ``toolscore run`` by hand loses
track of what is done, and a timestamped directory makes a repeated command start over. Here
one file describes the matrix, and every unit's directory is ``<out>/<slug>-<hash>``, the hash
being that of the run's identity (:func:`toolscore.runs.api.run_identity`), so submitting the
same plan again finds the same directories and resumes them. The plan is JSON or YAML::

    out: runs/sweep              # root of the run directories (relative to the plan file)
    models: [oracle, {model: openai/gpt-4o-mini, base_url: http://127.0.0.1:8000/v1}]
    benchmarks:
      demo: {embedder: hashing}              # one variant
      tooltalk: [{split: easy}, {split: hard}]  # two variants
    settings: {temperature: [0.0, 1.0]}      # model arguments, crossed
    judges: [{judge_config: judge.yaml}]     # options given to benchmarks that declare them
    epochs: 3
    limit: null
    limits: {openai: 16}         # connections in flight per provider, across the sweep
    max_concurrency: 8           # per run (Ray, --index: cut to a share of the limits)
    cache: default               # or none, or a file
    timeout: 120
    data: {tooltalk: /data/tooltalk}
    shards: 1                    # local/* units only: N tasks share one run directory
    ray: {api_cpus: 0.5, local_cpus: 1, local_gpus: 0, max_retries: 3}

Every mistake is one line naming the file and the field.
"""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import OptionError, option_fields, options_to_json, parse_options
from toolscore.benchmarks.registry import benchmark_class, make_benchmark
from toolscore.data import DataNotFound
from toolscore.models.cache import sha256_json
from toolscore.models.modelargs import ModelArgs
from toolscore.models.providers import split_name
from toolscore.runs.api import run_identity, slug

MANIFEST_VERSION = 1
KNOWN = {"out", "models", "benchmarks", "settings", "judges", "epochs", "limit", "limits",
         "max_concurrency", "cache", "timeout", "data", "shards", "ray"}
RAY_DEFAULTS = {"api_cpus": 0.5, "local_cpus": 1.0, "local_gpus": 0.0, "max_retries": 3}


class PlanError(ValueError):
    """A sweep file that cannot be expanded (one line naming file and field)."""


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Manifest:
    """The expanded plan: the units in a fixed order (``--index I`` is a position in it) and
    the settings every unit runs with."""

    source: str
    units: list[Unit]
    limits: dict[str, int]
    max_concurrency: int = 8
    cache: str | None = "default"
    timeout: float = 120.0
    ray: dict[str, float] = field(default_factory=lambda: dict(RAY_DEFAULTS))

    def to_dict(self) -> dict[str, Any]:
        return {"manifest_version": MANIFEST_VERSION, "source": self.source,
                "limits": self.limits, "max_concurrency": self.max_concurrency,
                "cache": self.cache, "timeout": self.timeout, "ray": self.ray,
                "units": [u.to_dict() for u in self.units]}

    @classmethod
    def from_dict(cls, doc: dict[str, Any], where: str) -> Manifest:
        try:
            units = [Unit(**u) for u in doc["units"]]
            return cls(doc["source"], units, dict(doc["limits"]), doc["max_concurrency"],
                       doc["cache"], doc["timeout"], dict(doc["ray"]))
        except (KeyError, TypeError) as e:
            raise PlanError(f"{where}: not a sweep manifest ({type(e).__name__}: {e})") from None


def load_plan(path: str | Path) -> Manifest:
    """A plan file (YAML or JSON) expanded, or a manifest written by ``sweep plan --out``."""
    path = Path(path)
    if not path.is_file():
        raise PlanError(f"{path}: no such sweep file")
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise PlanError(f"{path}: reading YAML needs pyyaml (pip install pyyaml), or "
                            "write the plan as JSON") from None
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise PlanError(f"{path}: invalid YAML ({' '.join(str(e).split())})") from None
    else:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise PlanError(f"{path}: invalid JSON ({e})") from None
    if isinstance(doc, dict) and "manifest_version" in doc:
        return Manifest.from_dict(doc, str(path))
    return expand(doc, str(path), base=path.parent)


def expand(doc: Any, where: str = "sweep", base: Path | None = None) -> Manifest:
    """The manifest of a plan document; relative paths are taken from ``base``."""
    if not isinstance(doc, dict):
        raise PlanError(f"{where}: expected a mapping at the top, got {type(doc).__name__}")
    unknown = sorted(set(doc) - KNOWN)
    if unknown:
        raise PlanError(f"{where}: field {unknown[0]!r}: unknown "
                        f"(known: {', '.join(sorted(KNOWN))})")
    base = base or Path(".")
    out = _resolve(base, _get(doc, "out", str, where, "runs/sweep"))
    epochs = _get(doc, "epochs", int, where, 1)
    limit = _get(doc, "limit", int, where, None)
    shards = _get(doc, "shards", int, where, 1)
    if epochs < 1 or (limit is not None and limit < 1) or shards < 1:
        bad = "epochs" if epochs < 1 else "shards" if shards < 1 else "limit"
        raise PlanError(f"{where}: field {bad!r}: must be at least 1")
    limits = _limits(doc.get("limits") or {}, where)
    data = _get(doc, "data", dict, where, {})
    models = _models(doc.get("models"), where)
    variants = _benchmarks(doc.get("benchmarks"), where)
    settings = _settings(doc.get("settings") or {}, where)
    judges = _judges(doc.get("judges"), variants, where)
    counted: dict[str, int] = {}
    units: list[Unit] = []
    for (model, url, margs), (name, opts), setting, judge in itertools.product(
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
        except (OptionError, ValueError) as e:
            raise PlanError(str(e)) from None
        folder = data.get(name)
        folder = None if folder is None else str(_resolve(base, str(folder)))
        ident = run_identity(name, model, options=options, model_args=args, epochs=epochs,
                             limit=limit, base_url=url, data=folder)
        key = json.dumps([name, options, folder], sort_keys=True, default=str)
        if key not in counted:
            counted[key] = _count(name, given, folder, context)
        label = "-".join(slug(f"{k}{v}") for k, v in sorted(setting.items()))
        run_dir = out / f"{slug(name)}-{slug(model)}{'-' + label if label else ''}-" \
                        f"{sha256_json(ident)[:10]}"
        # Sharding splits an embedded model's work over CPUs or GPUs; an API-model run is
        # bounded by its provider's limit instead, so it stays one task.
        local = split_name(model)[0] == "local"
        units.append(Unit(len(units), str(run_dir), name, model, options, args, epochs, limit,
                          min(counted[key], limit or counted[key]) * epochs,
                          limit_group(model, limits), url, folder, setting, judge,
                          shards if local else 1))
    dirs = [u.run_dir for u in units]
    if len(set(dirs)) != len(dirs):
        dup = next(d for d in dirs if dirs.count(d) > 1)
        raise PlanError(f"{where}: two units have the same configuration ({dup}); remove the "
                        "repeated model, benchmark variant or setting")
    ray = {**RAY_DEFAULTS, **_get(doc, "ray", dict, where, {})}
    if set(ray) - set(RAY_DEFAULTS):
        raise PlanError(f"{where}: field 'ray.{sorted(set(ray) - set(RAY_DEFAULTS))[0]}': "
                        f"unknown (known: {', '.join(RAY_DEFAULTS)})")
    cache = doc.get("cache", "default")
    cache = None if cache in (None, "none", False) else (
        "default" if cache == "default" else str(_resolve(base, str(cache))))
    return Manifest(where, units, limits, _get(doc, "max_concurrency", int, where, 8), cache,
                    float(_get(doc, "timeout", (int, float), where, 120.0)), ray)


def _get(doc: dict[str, Any], key: str, kind: Any, where: str, default: Any) -> Any:
    value = doc.get(key, default)
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else "number"
        raise PlanError(f"{where}: field {key!r}: expected {names}, got {value!r}")
    return value


def _resolve(base: Path, value: str) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else Path(os.path.normpath(base / p))


def _models(raw: Any, where: str) -> list[tuple[str, str | None, dict[str, Any]]]:
    if not isinstance(raw, list) or not raw:
        raise PlanError(f"{where}: field 'models': expected a non-empty list of model names")
    out = []
    for i, m in enumerate(raw):
        spot = f"{where}: field 'models[{i}]'"
        if isinstance(m, str):
            m = {"model": m}
        if not isinstance(m, dict) or not isinstance(m.get("model"), str):
            raise PlanError(f"{spot}: expected a model name or {{model: NAME, ...}}")
        extra = sorted(set(m) - {"model", "base_url", "model_args"})
        if extra:
            raise PlanError(f"{spot}: unknown key {extra[0]!r} (known: model, base_url, "
                            "model_args)")
        try:
            split_name(m["model"])
        except ValueError as e:
            raise PlanError(f"{spot}: {e}") from None
        args = m.get("model_args") or {}
        if not isinstance(args, dict):
            raise PlanError(f"{spot}.model_args: expected a mapping")
        out.append((m["model"], m.get("base_url"), args))
    return out


def _benchmarks(raw: Any, where: str) -> list[tuple[str, dict[str, Any]]]:
    if isinstance(raw, list):  # [demo, tooltalk]: default options
        raw = {name: {} for name in raw}
    if not isinstance(raw, dict) or not raw:
        raise PlanError(f"{where}: field 'benchmarks': expected a mapping of benchmark name "
                        "to options (or to a list of option variants)")
    out = []
    for name, opts in raw.items():
        try:
            benchmark_class(str(name))
        except LookupError as e:
            raise PlanError(f"{where}: field 'benchmarks.{name}': {e}") from None
        for i, variant in enumerate(opts if isinstance(opts, list) else [opts or {}]):
            if not isinstance(variant, dict):
                raise PlanError(f"{where}: field 'benchmarks.{name}[{i}]': expected a mapping "
                                "of option to value")
            out.append((str(name), {k.replace("-", "_"): v for k, v in variant.items()}))
    return out


def _settings(raw: Any, where: str) -> list[dict[str, Any]]:
    """The cross product of ``{argument: [values]}``; a single value is a list of one."""
    if not isinstance(raw, dict):
        raise PlanError(f"{where}: field 'settings': expected a mapping of model argument to "
                        "a list of values")
    names = sorted(raw)
    lists = [v if isinstance(v, list) else [v] for v in (raw[n] for n in names)]
    if any(not v for v in lists):
        raise PlanError(f"{where}: field 'settings.{names[[len(v) for v in lists].index(0)]}'"
                        ": an empty list leaves nothing to run")
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*lists)]


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


def _limits(raw: Any, where: str) -> dict[str, int]:
    if not isinstance(raw, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in raw.values()):
        raise PlanError(f"{where}: field 'limits': expected provider (or model) names mapped to "
                        "connection counts >= 1, e.g. {openai: 16}")
    return {str(k): int(v) for k, v in raw.items()}


def limit_group(model: str, limits: dict[str, int]) -> str:
    """Which limit a model counts against: its own name if limited, else its provider."""
    return model if model in limits else split_name(model)[0]


def _count(name: str, options: dict[str, Any], data: str | None, where: str) -> int:
    """The number of samples of a benchmark variant (loading it also checks its data now,
    before a long sweep starts, rather than in its hundredth unit)."""
    try:
        bench = make_benchmark(name, data, download=False, **options)
        bench.check()
        return len(bench.samples())
    except (OSError, LookupError, ValueError, DataNotFound) as e:
        raise PlanError(f"{where}: {' '.join(str(e).split())}") from None
