"""A run configuration file (``toolscore run --config run.yaml``) and model roles (``--role``).

A configuration file holds what a ``toolscore run`` command line holds, as data::

    benchmark: autode
    model: openai/gpt-4o-mini
    options: {mode: dynamic, strict: true}
    model_args: {temperature: 0.0}
    roles: {user: openai/gpt-4o}
    epochs: 3
    limit: 10-20            # or 10
    sample_ids: [a, b]
    max_concurrency: 8

A run's own ``run.json`` is such a file too (``toolscore run --config runs/x/run.json`` runs
the same configuration again: without ``--out``, into the same run directory, so a complete
run is read rather than rerun); the keys a run.json records about itself (its command, when it
was created, the benchmark's resolved configuration...) are ignored. What the command line
gives wins over the file, the file over the defaults.

Roles name the model of each part a benchmark plays: ``assistant`` (the model under test,
``--model``), ``user`` (a simulated user, e.g. AutoDE's ``--user-model``), ``judge`` (a
benchmark whose model is a judge, e.g. ToolEval's). Each benchmark declares its roles
(``Benchmark.roles``: role -> ``model`` or the option that names that model), so ``--role
user=openai/x`` reaches AutoDE's user model and is a one-line error where there is no user.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

#: file key -> the ``run`` command's parameter it stands for
RUN_KEYS = {"model": "model", "epochs": "epochs", "limit": "limit", "sample_ids": "sample_id",
            "max_concurrency": "max_concurrency", "out": "out", "data": "data",
            "base_url": "base_url", "timeout": "timeout", "cache": "cache",
            "workers": "workers"}
OWN_KEYS = {"benchmark", "options", "model_args", "roles", *RUN_KEYS}
#: what a run.json records about the run itself, ignored when one is read as a configuration
RECORD_KEYS = {"benchmark_config", "command", "created", "format_version", "model_identity",
               "versions", "toolscore", "status", "shard", "protocol", "mode", "finished",
               "environment", "judges", "identity"}


def read_run_file(path: Path) -> dict[str, Any]:
    """The configuration in ``path`` (JSON, or YAML by its suffix), checked: a bad file or
    field is one ValueError line naming the file and the field."""
    from toolscore.data import read_structured

    doc = read_structured(Path(path))
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: a run configuration is a mapping (benchmark, model, "
                         "options, ...)")
    record = "format_version" in doc  # a run.json: its own records are not configuration
    for key in doc:
        if key not in OWN_KEYS and not (record and key not in OWN_KEYS):
            raise ValueError(f"{path}: field {key!r}: not a run setting (known: "
                             f"{', '.join(sorted(OWN_KEYS))})")
    if not isinstance(doc.get("benchmark"), str) or not doc["benchmark"]:
        raise ValueError(f"{path}: field 'benchmark': missing (the benchmark to run)")
    for key in ("options", "model_args", "roles"):
        if not isinstance(doc.get(key) or {}, dict):
            raise ValueError(f"{path}: field {key!r}: must be a mapping")
    return {k: v for k, v in doc.items() if k in OWN_KEYS}


def config_argument(args: list[str]) -> str | None:
    """The file of ``--config FILE`` / ``--config=FILE`` at the start of ``run``'s arguments."""
    if args and args[0] == "--config" and len(args) > 1:
        return args[1]
    if args and args[0].startswith("--config="):
        return args[0].split("=", 1)[1]
    return None


def _as_cli(key: str, value: Any) -> Any:
    """A file's value as the command's parameter holds it."""
    if key == "sample_ids":
        return tuple(str(v) for v in (value if isinstance(value, list) else [value]))
    if key in ("limit", "max_concurrency") and value is not None:
        if isinstance(value, list) and len(value) == 2:  # a range as run.json may hold it
            return f"{value[0]}-{value[1]}"
        return str(value)
    if key in ("out", "data", "cache") and value is not None:
        return Path(value)
    return value


def merge_config(path: Path, ctx: click.Context, generic: dict[str, Any],
                 options: dict[str, Any], own: set[str], given: set[str],
                 benchmark: str, has_dataset: bool = True) -> dict[str, str]:
    """Fill ``generic`` and ``options`` from the file where the command line left them at
    their defaults (``given``: benchmark options set on the command line); returns the
    file's roles. A benchmark that ships its own data (``has_dataset`` False) takes no data
    folder: a run.json's record of it is left out."""
    from click.core import ParameterSource

    doc = read_run_file(path)
    if doc["benchmark"] != benchmark:
        raise ValueError(f"{path}: field 'benchmark': {doc['benchmark']!r}, but the command "
                         f"runs {benchmark!r}")
    for key, param in RUN_KEYS.items():
        if key not in doc or ctx.get_parameter_source(param) == ParameterSource.COMMANDLINE:
            continue
        if key == "data" and not has_dataset or doc[key] is None and key != "cache":
            continue  # None: not set (for the cache: no cache)
        if key == "cache" and doc[key] is None:
            generic["no_cache"] = True
            continue
        generic[param] = _as_cli(key, doc[key])
    for name, value in (doc.get("options") or {}).items():
        if name not in own:
            raise ValueError(f"{path}: field 'options.{name}': benchmark "
                             f"{doc['benchmark']!r} has no such option")
        if name not in given:
            options[name] = value
    typed_args = {pair.split("=", 1)[0] for pair in generic.get("model_arg") or ()}
    typed_args |= {k for k in ("temperature", "max_tokens", "seed", "reasoning_effort")
                   if generic.get(k) is not None}
    from_file = tuple(f"{k}={json.dumps(v)}" for k, v in (doc.get("model_args") or {}).items()
                      if k not in typed_args)
    generic["model_arg"] = from_file + tuple(generic.get("model_arg") or ())
    return {str(k): str(v) for k, v in (doc.get("roles") or {}).items()}


def parse_roles(pairs: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``--role ROLE=MODEL`` pairs (one line for a malformed one)."""
    out: dict[str, str] = {}
    for pair in pairs:
        role, sep, model = pair.partition("=")
        if not sep or not role.strip() or not model.strip():
            raise ValueError(f"--role {pair!r}: expected ROLE=MODEL, e.g. user=openai/gpt-4o")
        out[role.strip()] = model.strip()
    return out


def apply_roles(roles: dict[str, str], declared: dict[str, str], benchmark: str,
                generic: dict[str, Any], options: dict[str, Any], typed: set[str]) -> None:
    """Each role's model to where the benchmark reads it (``declared``: role -> ``model`` or
    an option name); a role the benchmark lacks, or also given by its own flag, is one line."""
    for role, model in roles.items():
        target = declared.get(role)
        if target is None:
            raise ValueError(f"--role {role}={model}: benchmark {benchmark!r} has no {role} "
                             f"role (its roles: {', '.join(sorted(declared)) or 'none'})")
        if target in typed:
            flag = "--model" if target == "model" else "--" + target.replace("_", "-")
            raise ValueError(f"--role {role}={model} and {flag}: given twice")
        if target == "model":
            generic["model"] = model
        else:
            options[target] = model
