"""Library entry points behind ``toolscore run`` and ``toolscore score``.

A run is reconstructed from its ``run.json`` alone (benchmark name, its options, data folder,
model), so ``--resume`` and rescoring need no flags repeated.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.benchmarks.registry import make_benchmark
from toolscore.runs.runner import RunOptions, RunSummary, execute_run, new_run_config, rescore
from toolscore.runs.store import RunStore


@dataclass
class RunRequest:
    benchmark: str
    model: str
    data: str | Path | None = None
    epochs: int = 1
    limit: int | None = None
    max_concurrency: int = 8
    cache: str | Path | None = "default"  # None disables the response cache
    base_url: str | None = None
    timeout: float = 120.0
    progress: bool = False
    options: dict[str, Any] = field(default_factory=dict)


def _cache(spec: str | Path | None) -> Any:
    if spec is None:
        return None
    from toolscore.data import cache_root
    from toolscore.models.cache import ResponseCache

    path = cache_root() / "responses.sqlite" if str(spec) == "default" else Path(spec)
    path.parent.mkdir(parents=True, exist_ok=True)
    return ResponseCache(path)


def make_client(request: RunRequest) -> Any:
    from toolscore.models import get_model
    from toolscore.models.client import ModelClient

    model_options: dict[str, Any] = {}
    if request.base_url:
        model_options["base_url"] = request.base_url
    model = get_model(request.model, **model_options)
    return ModelClient(model, cache=_cache(request.cache), max_concurrency=request.max_concurrency,
                       timeout=request.timeout, role="assistant")


def _summary_dict(summary: RunSummary) -> dict[str, Any]:
    u = summary.usage
    return {"samples": summary.total, "run_now": summary.done, "skipped": summary.skipped,
            "errors_now": summary.errors, "calls": u.calls, "cached_calls": u.cached_calls,
            "input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
            "tokens": u.total_tokens, "wall_s": round(summary.wall_s, 3),
            "tokens_by_role": {role: r.total_tokens
                               for role, r in sorted(summary.usage_by_role.items())}}


def _request_from_config(config: dict[str, Any], request: RunRequest) -> RunRequest:
    """On resume, everything that determines results comes from run.json."""
    saved = config["request"]
    return RunRequest(**{**saved, "max_concurrency": request.max_concurrency,
                         "progress": request.progress, "cache": request.cache,
                         "timeout": request.timeout})


def start_run(request: RunRequest, run_dir: str | Path, *, resume: bool = False,
              on_record: Any = None) -> dict[str, Any]:
    store = RunStore(run_dir)
    if resume:
        config = store.read_config()
        request = _request_from_config(config, request)
    elif store.exists():
        raise ValueError(f"{store.path}: already a run directory; use --resume {store.path}")
    benchmark = make_benchmark(request.benchmark, request.data, **request.options)
    client = make_client(request)
    options = RunOptions(max_concurrency=request.max_concurrency, epochs=request.epochs,
                         limit=request.limit, progress=request.progress)
    if not resume:
        saved = {k: (str(v) if isinstance(v, Path) else v)
                 for k, v in request.__dict__.items() if k not in ("progress", "cache")}
        config = new_run_config(benchmark, client.model.name, client.model.cache_identity(),
                                options, {"request": saved})
        store.write_config(config)
    summary = asyncio.run(execute_run(benchmark, client, store, options, on_record))
    records = list(store.latest().values())
    metrics = benchmark.aggregate(records)
    store.write_scores(metrics)
    return {"run_dir": str(store.path), "config": config, "metrics": metrics,
            "summary": _summary_dict(summary)}


def rescore_run(run_dir: Path, *, strict: bool | None = None,
                embedder: str | None = None) -> dict[str, Any]:
    store = RunStore(run_dir)
    config = store.read_config()
    saved = dict(config["request"])
    options = dict(saved.get("options", {}))
    if strict is not None:
        options["strict"] = strict
    if embedder is not None:
        options["embedder"] = embedder
    benchmark = make_benchmark(saved["benchmark"], saved.get("data"), **options)
    records = rescore(benchmark, store)
    metrics = benchmark.aggregate(records)
    if strict is None and embedder is None:
        store.write_scores(metrics)
    config = {**config, "benchmark_config": benchmark.config()}
    return {"run_dir": str(store.path), "config": config, "metrics": metrics}


def rescore_predictions(benchmark_name: str, predictions: Path, *, strict: bool = False,
                        embedder: str = "minilm", out: Path | None = None) -> dict[str, Any]:
    """Score prediction files written by the original ToolTalk runner."""
    if benchmark_name != "tooltalk":
        raise ValueError(f"--predictions is supported for tooltalk, not {benchmark_name!r}")
    from toolscore.benchmarks.tooltalk.rescore import score_prediction_dir

    return score_prediction_dir(predictions, strict=strict, embedder=embedder, out=out)
