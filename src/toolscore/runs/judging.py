"""Judging as runs: any judge kind applied to a stored run, ToolEval's pass-rate judge over
answer files, and its win rate between two answer sets or runs, each written as a run directory.

A judge is a scorer that can be applied to any run (docs/design.md): the judge kind says which
benchmark run judges a stored one (:mod:`toolscore.judges.applying`; e.g. judging a ToolTalk,
demo or AutoDE run with ``tooleval-pass`` is evaluating the ``tooleval`` benchmark with that
run as its answers; an ACS run with ``acs-llm``, the ``acs`` benchmark over its rows), into
``RUN_DIR/judgements/<judge name>/``. That nested directory is an ordinary run, so judging is
resumable, cached, reportable and comparable, and judging again with the same settings only
finishes what is missing. Settings that differ from those stored there are an error (judge
under another ``name``), never a silent mix of two judges in one directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import options_to_json, parse_options
from toolscore.benchmarks.registry import benchmark_class
from toolscore.records import RunStore, RunStoreError
from toolscore.runs.api import Run, default_run_dir, evaluate, resume, run_identity

PASS_JUDGE = "tooleval-pass"
JUDGEMENTS = "judgements"


def judge_model(judge: str | None, base_url: str | None, judge_config: str | Path | None,
                kinds: tuple[str, ...]) -> tuple[str, str | None]:
    """(model, base URL) of the judge: a configuration file's win over ``judge``."""
    if judge_config is not None:
        from toolscore.judges.registry import load_judge_config

        cfg = load_judge_config(judge_config).require(*kinds)
        assert cfg.model is not None  # an LLM kind always names its model
        return cfg.model, cfg.base_url or base_url
    if not judge:
        raise ValueError("give --judge provider/model or --judge-config FILE")
    return judge, base_url


def _absolute(options: dict[str, Any]) -> dict[str, Any]:
    """Paths made absolute, so the run can be resumed or rescored from any folder."""
    return {k: (str(Path(v).resolve()) if isinstance(v, Path) else v) for k, v in options.items()}


def evaluate_or_resume(benchmark: str, model: str | None, out: str | Path, *,
                       base_url: str | None = None, cache: str | Path | None = "default",
                       timeout: float = 120.0, max_concurrency: int = 8,
                       progress: bool | str = False, selection: dict[str, Any] | None = None,
                       **options: Any) -> Run:
    """A new run into ``out``, or, when ``out`` already holds a run of the same benchmark,
    model and options, that run finished (from cache where it was judged before).
    ``selection``: ``data`` and ``sample_ids`` of a new run (a resumed one keeps its own)."""
    from toolscore.models.base import strip_credentials

    options = _absolute(options)
    store = RunStore(out)
    if not store.exists():
        return evaluate(benchmark, model, out=out, base_url=base_url, cache=cache,
                        timeout=timeout, max_concurrency=max_concurrency, progress=progress,
                        **(selection or {}), **options)
    stored = store.config()
    wanted = options_to_json(parse_options(benchmark_class(benchmark).Options, options,
                                           f"benchmark {benchmark!r}"))
    endpoint = strip_credentials(base_url)  # as run.json stores it
    if (stored.benchmark, stored.model, stored.options, stored.base_url) != (
            benchmark, model, wanted, endpoint):
        changed = sorted(k for k in set(wanted) | set(stored.options)
                         if wanted.get(k) != stored.options.get(k))
        if stored.base_url != endpoint:  # resumed, it would ask the stored endpoint
            changed.insert(0, "base_url")
        if stored.model != model:
            changed.insert(0, "model")
        raise RunStoreError(f"{store.path}: already holds a {stored.benchmark} run with other "
                            f"settings ({', '.join(changed) or 'benchmark'}); choose another "
                            "output (toolscore judge: --name)")
    trusted = {**options, "model": model} if model is not None else options
    return resume(out, cache=cache, timeout=timeout, max_concurrency=max_concurrency,
                  progress=progress, trusted_options=trusted)


RUN_SETTINGS = ("cache", "timeout", "max_concurrency", "progress")


def _default_out(benchmark: str, model: str, options: dict[str, Any]) -> Path:
    """The run directory named by what is judged and how (not by the time), so judging the
    same answers again finishes that run and other answers get their own."""
    given = _absolute({k: v for k, v in options.items() if k not in RUN_SETTINGS})
    return default_run_dir(benchmark, model, run_identity(benchmark, model, options=given))


def _run(benchmark: str, model: str | None, out: str | Path, base_url: str | None,
         options: dict[str, Any], **selection: Any) -> Run:
    """:func:`evaluate_or_resume` with run settings and benchmark options in one mapping
    (``selection``: the data folder and sample ids of a new run)."""
    settings = {k: v for k, v in options.items() if k in RUN_SETTINGS}
    bench_options = {k: v for k, v in options.items() if k not in RUN_SETTINGS}
    return evaluate_or_resume(benchmark, model, out, base_url=base_url, selection=selection,
                              **settings, **bench_options)


def pass_rate(answers: str | Path, judge: str | None = None, *, base_url: str | None = None,
              judge_config: str | Path | None = None, out: str | Path | None = None,
              **options: Any) -> Run:
    """ToolEval's pass rate of ``answers`` (answer files or a run directory), judged by
    ``judge`` (or the model of ``judge_config``), as a ``tooleval`` run in ``out``.
    ``options`` are the benchmark's (mode, votes, seed, strict, subset, test_ids, ...) and the
    run's (cache, timeout, max_concurrency, progress)."""
    model, url = judge_model(judge, base_url, judge_config, (PASS_JUDGE,))
    if judge_config is not None:
        options["judge_config"] = Path(judge_config)
    options = {**options, "answers": Path(answers)}
    return _run("tooleval", model, out or _default_out("tooleval", model, options), url,
                options)


def judgements_dir(run_dir: str | Path, name: str) -> Path:
    return Path(run_dir) / JUDGEMENTS / name


def judge_run(run_dir: str | Path, judge: str = PASS_JUDGE, model: str | None = None, *,
              base_url: str | None = None, judge_config: str | Path | None = None,
              name: str | None = None, **options: Any) -> Run:
    """Apply the judge kind ``judge`` (any ``toolscore.judges`` entry point whose kind says how
    it judges a stored run) to every finished sample of an existing run; the judgements are a
    run in ``run_dir/judgements/<name>/`` (``name``: the judge configuration's name, else the
    kind's). ``model`` judges (default: the configuration's model); ``options`` are the
    judging benchmark's (e.g. ToolEval's mode, votes; ACS's shots) and the run's (cache,
    timeout, max_concurrency, progress). A kind that cannot judge this run says why in one
    line (:class:`~toolscore.judges.applying.CannotJudge`)."""
    from toolscore.judges.applying import JudgeRequest
    from toolscore.judges.registry import get_judge, load_judge_config
    from toolscore.records.store import without_output

    source = RunStore(run_dir)
    stored = source.config()  # a one-line error when it is not a run directory
    kind = get_judge(judge)
    if kind.plan is None:
        raise ValueError(f"judge {judge!r} cannot be applied to a stored run (its kind says "
                         "no run that judges one)")
    cfg = None if judge_config is None else load_judge_config(judge_config).require(kind.name)
    settings = {k: v for k, v in options.items() if k in RUN_SETTINGS}
    finished = [str(r["id"]) for r in source.latest(without_output).values()
                if r.get("status") == "ok"]
    request = JudgeRequest(kind.name, source.path, stored.to_dict(), list(dict.fromkeys(
        finished)), model, base_url, None if judge_config is None else Path(judge_config), cfg,
        {k: v for k, v in options.items() if k not in RUN_SETTINGS})
    plan = kind.plan(request)
    out = judgements_dir(run_dir, name or (cfg.name if cfg is not None else judge))
    extra: dict[str, Any] = {}
    if plan.data is not None:
        extra["data"] = plan.data
    if plan.samples is not None:
        extra["sample_ids"] = plan.samples
    return _run(plan.benchmark, plan.model, out, plan.base_url,
                {**plan.options, **settings}, **extra)


WINRATE = "tooleval-winrate"


def win_rate(candidate: str | Path, reference: str | Path, judge: str | None = None, *,
             base_url: str | None = None, judge_config: str | Path | None = None,
             out: str | Path | None = None, **options: Any) -> Run:
    """ToolEval's win rate of ``candidate`` against ``reference`` (answer files, runs, or
    tooleval runs whose pass labels are reused) as a ``tooleval-winrate`` run in ``out``.
    ``options`` are the benchmark's (mode, rounds, use_pass_rate, votes, pref_votes, seed,
    strict, subset, ...) and the run's (cache, timeout, max_concurrency, progress)."""
    model, url = judge_model(judge, base_url, judge_config, ("tooleval-pref", PASS_JUDGE))
    if judge_config is not None:
        options["judge_config"] = Path(judge_config)
    options = {**options, "candidate": Path(candidate), "reference": Path(reference)}
    return _run(WINRATE, model, out or _default_out(WINRATE, model, options), url, options)
