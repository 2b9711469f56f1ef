"""``toolscore run BENCHMARK``, ``resume`` and ``score``.

``run`` is a group with one command per installed benchmark, built from the benchmark's
declared options, so ``toolscore run NAME --help`` shows the generic options and that
benchmark's own, and an option the benchmark does not take is click's one-line usage error.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from pathlib import Path
from typing import Any, Literal

import click

from toolscore.cli.common import (
    BUDGET_OPTIONS,
    COST_OPTIONS,
    FAIL_UNDER_HELP,
    JUNIT_HELP,
    StoppedRuns,
    UserErrors,
    cache_expiry,
    check_gate_options,
    err,
    exit_if_incomplete,
    exit_on_gates,
    fail,
    max_concurrency,
    print_run,
    progress_wanted,
    rate_budget,
    run_gates,
    runs_root,
    say_gates,
    task_options,
)
from toolscore.cli.run_config import (
    apply_roles,
    config_argument,
    merge_config,
    parse_roles,
    read_run_file,
)
from toolscore.records.paths import check_output_path

if typing.TYPE_CHECKING:
    from toolscore.benchmarks.base import Benchmark

GENERIC = [
    click.Option(["--model", "-m"], default=None, envvar="TOOLSCORE_MODEL", show_envvar=True,
                 help="provider/model, e.g. openai/gpt-4o, oracle; required when the benchmark "
                      "calls a model (the demo's default: local/smollm2)."),
    click.Option(["--epochs"], type=int, default=1, show_default=True,
                 help="Run each sample this many times (AutoDE: trials)."),
    click.Option(["--limit"], default=None, metavar="N|A-B",
                 help="Run only the first N samples, or samples A to B (counted from 1, both "
                      "included, as Inspect's --limit)."),
    click.Option(["--sample-id", "sample_id"], multiple=True, metavar="ID[,ID...]",
                 help="Run only the samples with these ids (comma-separated, repeatable)."),
    # read as text and checked by common.whole_number, so a bad value from the environment
    # is one line naming the variable, not click's usage block naming the option
    click.Option(["--max-concurrency"], default="8", show_default=True, metavar="INTEGER",
                 envvar="TOOLSCORE_MAX_CONCURRENCY", show_envvar=True,
                 help="Samples in flight."),
    click.Option(["--out"], type=click.Path(path_type=Path), default=None,
                 help="Run directory (default RUNS/<benchmark>-<model>-<hash of the "
                      "configuration>, RUNS being $TOOLSCORE_OUT or runs: the same command "
                      "again resumes that run)."),
    click.Option(["--resume"], type=click.Path(path_type=Path), default=None,
                 help="Continue this run directory (its run.json decides everything else)."),
    click.Option(["--data"], type=click.Path(path_type=Path), default=None,
                 help="Dataset folder."),
    click.Option(["--download/--no-download"], default=True, show_default=True,
                 help="Download the dataset if it is not found."),
    click.Option(["--cache"], type=click.Path(path_type=Path), default=None,
                 help="Response cache file (SQLite; default $TOOLSCORE_CACHE, a file or none, "
                      "else ~/.cache/toolscore/responses.sqlite)."),
    click.Option(["--no-cache"], is_flag=True, help="Do not cache model responses."),
    click.Option(["--cache-expiry"], default=None, metavar="DURATION",
                 envvar="TOOLSCORE_CACHE_EXPIRY", show_envvar=True,
                 help="Ask the model again for replies cached longer ago than this (90s, 30m, "
                      "12h, 7d, 2w; default never: the same command replays the cache at no "
                      "cost, which is what makes re-runs free and resumable)."),
    click.Option(["--base-url"], default=None, help="OpenAI-compatible endpoint (openai/...)."),
    click.Option(["--timeout"], type=float, default=120.0, show_default=True,
                 help="Seconds per model call before retrying."),
    click.Option(["--json", "json_out"], is_flag=True, help="Print one JSON document on stdout."),
    click.Option(["--html"], type=click.Path(path_type=Path), default=None, metavar="FILE",
                 help="Also write the run's HTML report to FILE and print where it is."),
    click.Option(["--fail-under", "fail_under"], multiple=True, metavar="METRIC=VALUE",
                 help=FAIL_UNDER_HELP),
    click.Option(["--junit"], type=click.Path(path_type=Path), default=None, metavar="FILE",
                 help=JUNIT_HELP),
    click.Option(["--shard"], default=None, metavar="K/N",
                 help="Run only the K-th of N fixed parts of the samples (local models on "
                      "several machines or GPUs); the N shards write one run directory."),
    click.Option(["--workers"], type=click.IntRange(min=1), default=1, show_default=True,
                 help="Run the samples in this many processes (the same results; for an "
                      "endpoint faster than one process can drive). --max-concurrency is "
                      "split between them."),
    click.Option(["--allow-run-commands"], is_flag=True,
                 help="With --resume: let the run directory's options start what they name "
                      "(an MCP server command, a plugin set, a model provider from another "
                      "package). Without it, repeat such an option with its stored value."),
]
# Run-level model arguments (toolscore.models.modelargs): they replace the benchmark's value
# on every call of the run's model. A benchmark that declares an option of the same name
# (ToolTalk's --max-tokens and --seed, AutoDE's --temperature) keeps the flag as its own option:
# it already sets that value for its model calls; -M KEY=VALUE always reaches the model.
MODEL_ARG_OPTIONS = [
    click.Option(["--temperature"], type=float, default=None,
                 help="Sampling temperature of every model call (default: the benchmark's)."),
    click.Option(["--max-tokens"], type=int, default=None,
                 help="Token limit of each model reply (sent as max_completion_tokens to "
                      "reasoning models; default: the benchmark's)."),
    click.Option(["--seed"], type=int, default=None,
                 help="Sampling seed sent to the model (default: the benchmark's)."),
    click.Option(["--reasoning-effort"], default=None,
                 help="Reasoning effort (e.g. low, medium, high) for models that take one."),
]
MODEL_ARG_NAMES = {p.name for p in MODEL_ARG_OPTIONS}
GENERIC.append(click.Option(
    ["-M", "--model-arg", "model_arg"], multiple=True, metavar="KEY=VALUE",
    help="A model argument, VALUE read as JSON (else text), repeatable: -M top_p=0.9 "
         "-M extra_body='{\"x\": 1}'. Replaces the benchmark's value on every model call; "
         "stored in run.json and in the cache key."))
GENERIC.extend([*BUDGET_OPTIONS, click.Option(
    ["-T", "--task-option", "task_option"], multiple=True, metavar="KEY=VALUE",
    help="A benchmark option by name, as its own flag would set it (Inspect's -T), "
         "repeatable: -T split=easy -T strict=true. A list option takes one -T per item.")])
GENERIC.append(click.Option(
    ["--role", "role"], multiple=True, metavar="ROLE=MODEL",
    help="The model of one role the benchmark has, repeatable: assistant (as --model), user "
         "(a simulated user, e.g. AutoDE's user model), judge (a benchmark whose model "
         "judges, e.g. ToolEval); a role the benchmark lacks is an error."))
GENERIC.append(click.Option(
    ["--config", "config"], type=click.Path(path_type=Path, dir_okay=False), default=None,
    metavar="FILE",
    help="A run configuration (YAML or JSON: benchmark, model, options, model_args, roles, "
         "epochs, limit, ...; a run's run.json runs it again); options given here win. "
         "`toolscore run --config FILE` takes the benchmark from the file."))
GENERIC += COST_OPTIONS
GENERIC_NAMES = {p.name for p in GENERIC}


def _click_option(f: dataclasses.Field[Any], hint: Any) -> click.Option | None:
    """A click option for one declared benchmark option (None: Python-only)."""
    meta = f.metadata
    if meta.get("cli") is False:
        return None
    flag = meta.get("flag") or "--" + f.name.replace("_", "-")
    default = (f.default if f.default is not dataclasses.MISSING
               else f.default_factory())  # type: ignore[operator]  # no default: a factory
    help_text = meta.get("help", "")
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        hint = inner[0] if len(inner) == 1 else str
        origin, args = typing.get_origin(hint), typing.get_args(hint)
    kwargs: dict[str, Any] = {"default": default, "help": help_text, "show_default": True}
    if hint is bool:
        return click.Option([f"{flag}/--no-{flag[2:]}"], **kwargs)
    if origin is Literal:
        kwargs["type"] = click.Choice([str(a) for a in args])
    elif origin in (list, tuple):
        kwargs.update(multiple=True, default=tuple(default or ()), type=str)
    elif hint in (int, float):
        kwargs["type"] = hint
    elif hint is Path:
        kwargs["type"] = click.Path(path_type=Path)
    return click.Option([flag, f.name], **kwargs)


def benchmark_params(cls: type[Benchmark]) -> list[click.Option]:
    hints = typing.get_type_hints(cls.Options)
    params = []
    for f in dataclasses.fields(cls.Options):
        if f.name in GENERIC_NAMES:
            raise click.ClickException(f"benchmark {cls.name!r}: option {f.name!r} clashes "
                                       "with a generic run option")
        p = _click_option(f, hints[f.name])
        if p is not None:
            params.append(p)
    return params


def model_args(generic: dict[str, Any]) -> dict[str, Any]:
    """The model arguments given on the command line: -M pairs, then the named flags (a named
    flag and an -M of the same name is a one-line error)."""
    from toolscore.models.modelargs import ALIASES, parse_pairs

    args = parse_pairs(generic.get("model_arg") or ())
    for name in sorted(MODEL_ARG_NAMES):
        value = generic.get(name)
        if value is None:
            continue
        if name in args or any(ALIASES.get(k) == name for k in args):
            raise ValueError(f"--{name.replace('_', '-')} and -M {name}: given twice")
        args[name] = value
    return args


def check_protocol(model: str | None, options: dict[str, Any], resume: Any = None) -> None:
    """An agent (``agent-http:URL``) runs only under ``--protocol free-running`` and that
    protocol runs only agents: said in one line before anything starts, and the label is
    always explicit on the command line."""
    if resume is not None:
        from toolscore.records import RunStore

        model = RunStore(resume).config().model
        options = {"protocol": "free-running"} if model.startswith("agent-http:") else {}
    agent = bool(model) and str(model).startswith("agent-http:")
    protocol = options.get("protocol")
    if agent and protocol != "free-running":
        raise ValueError(f"--model {model}: an agent runs its own loop; add --protocol "
                         "free-running (its figures are labelled and not comparable with the "
                         "reference protocol's)")
    if protocol == "free-running" and not agent:
        raise ValueError(f"--protocol free-running evaluates an agent: --model "
                         f"agent-http:URL (not {model or 'the default model'})")


def _run(name: str, generic: dict[str, Any], options: dict[str, Any],
         given: dict[str, Any] | None = None) -> None:
    """``given``: the benchmark options and model typed on this command line (with --resume,
    they vouch for the run's stored ones)."""
    from toolscore.runs.api import evaluate_with, resume
    from toolscore.runs.costlimit import parse_cost_limit
    from toolscore.runs.runner import parse_shard
    from toolscore.runs.settings import RunExecution

    json_out = generic["json_out"]
    cache = None if generic["no_cache"] else (generic["cache"] or "default")
    with UserErrors(), StoppedRuns(), rate_budget(generic):
        cache_expiry(generic.get("cache_expiry"))
        concurrency = max_concurrency(generic["max_concurrency"])
        check_output_path(generic["html"], "--html")  # an existing run's own file: refused now
        floors = check_gate_options(generic["fail_under"], generic["junit"], generic["shard"])
        check_protocol(generic.get("model"), options, generic["resume"])
        args = model_args(generic)
        if generic["resume"] is not None and args:
            raise ValueError("model arguments come from the run's run.json on --resume; "
                             "start a new run to change them")
        if generic["resume"] is not None:
            run = resume(generic["resume"], max_concurrency=concurrency,
                         cache=None if generic["no_cache"] else generic["cache"],
                         timeout=generic["timeout"], progress=progress_wanted(json_out),
                         shard=generic["shard"], workers=generic["workers"],
                         allow_run_commands=generic["allow_run_commands"],
                         trusted_options=given, cost_limit=generic["cost_limit"],
                         prices=generic["prices"])
        else:
            how = RunExecution(max_concurrency=concurrency, cache=cache,
                               timeout=generic["timeout"], progress=progress_wanted(json_out),
                               shard=parse_shard(generic["shard"]),
                               workers=generic["workers"], download=generic["download"],
                               cost_limit=parse_cost_limit(generic["cost_limit"]),
                               prices=generic["prices"] and str(generic["prices"]))
            run = evaluate_with(name, generic["model"], how, runs_root=runs_root(),
                                data=generic["data"], out=generic["out"],
                                epochs=generic["epochs"], limit=generic["limit"],
                                sample_ids=list(generic["sample_id"]) or None,
                                base_url=generic["base_url"], model_args=args, options=options)
    summary = run.summary or {}
    if summary.get("samples") and not summary.get("run_now"):
        err.print(f"{run.path}: this run is already complete (nothing run, no model call)",
                  highlight=False, soft_wrap=True, markup=False)
    doc = run.to_dict()
    if generic["html"] is not None:
        from toolscore.report.html.page import write_html

        with UserErrors():
            check_output_path(generic["html"], "--html")  # this run's files exist now
            doc["html_report"] = str(write_html(run.path, generic["html"]))
    with UserErrors():  # the run directory is complete: the gates read it
        gates, problem = run_gates(run.path, floors, generic["junit"], doc)
    print_run(doc, json_out)
    say_gates(gates, problem)
    exit_if_incomplete(run, "samples", "retry exactly those with: toolscore run "
                       f"{run.config.benchmark} --resume {run.path}")
    exit_on_gates(gates)


class RunGroup(click.Group):
    """One subcommand per installed benchmark, built when asked for."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """``run --config FILE ...``: the benchmark is the file's."""
        config = config_argument(args)
        if config is not None:
            with UserErrors():
                args = [read_run_file(Path(config))["benchmark"], *args]
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        from toolscore.entrypoints import BENCHMARKS

        return BENCHMARKS.names()

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        from toolscore.benchmarks.registry import benchmark_class
        from toolscore.entrypoints import ExtensionError

        try:
            cls = benchmark_class(name)
        except ExtensionError as e:
            if name not in self.list_commands(ctx):
                fail(str(e))
            message = str(e)  # installed but broken: listed, and says why when run
            return click.Command(name, callback=lambda: fail(message),
                                 short_help=f"(cannot be loaded: {message})")
        params = benchmark_params(cls)
        own = {p.name for p in params}
        model_flags = [p for p in MODEL_ARG_OPTIONS if p.name not in own]

        def callback(**kwargs: Any) -> None:
            generic = {k: v for k, v in kwargs.items()
                       if k in GENERIC_NAMES or (k in MODEL_ARG_NAMES and k not in own)}
            options = {k: (list(v) if isinstance(v, tuple) else v)
                       for k, v in kwargs.items() if k in own}
            ctx = click.get_current_context()
            typed = typed_here(ctx, [*own, "model"])
            with UserErrors():
                by_pair = task_options(generic.get("task_option") or (), own, typed)
                options.update(by_pair)
                # what the command line itself says wins over the file and the roles (the
                # environment's defaults do not)
                set_here = {*typed_here(ctx, [*own, "model"], environment=False), *by_pair}
                roles = {} if generic.get("config") is None else merge_config(
                    generic["config"], ctx, generic, options, own, set_here, name,
                    cls.dataset is not None)
                roles.update(parse_roles(generic.get("role") or ()))
                apply_roles(roles, cls.roles, name, generic, options, set_here)
            given = {k: generic["model"] if k == "model" else options[k]
                     for k in [*typed, *by_pair]}
            _run(name, generic, options, given)

        doc = (cls.description or cls.__doc__ or "").strip().splitlines()[0:1]
        return click.Command(name, params=[*GENERIC, *model_flags, *params], callback=callback,
                             help=f"Run {name}: {doc[0] if doc else ''}",
                             short_help=doc[0] if doc else "")


def typed_here(ctx: click.Context, names: list[str], environment: bool = True) -> list[str]:
    """The parameters among ``names`` given on the command line (or through the
    environment), not left at their defaults."""
    from click.core import ParameterSource as Src

    typed = (Src.COMMANDLINE, Src.ENVIRONMENT) if environment else (Src.COMMANDLINE,)
    return [n for n in names if ctx.get_parameter_source(n) in typed]


run_group = RunGroup("run", help="Run a benchmark with a model and write a run directory. "
                                 "`toolscore run NAME --help` lists its options.")
