"""ACS's judge kinds applied to a stored run (``toolscore judge RUN --judge acs-llm``).

An ACS run's records are rows (request, response, constraint) judged by the judge under test
against the human label. Another kind judges the same rows (the run's finished samples, from
the same data folder or ``--csv``, grouped and resampled as the run was) in an ``acs`` run of
its own: acs-verify needs no model; acs-llm is the judge's ``--model`` (or the model its
configuration file names, which the ``acs`` benchmark then calls itself).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolscore.judges.applying import JudgeRequest, JudgeRun

KEPT = ("csv", "group", "resamples", "seed")  # how the judged run read and summarised rows
READS = "ACS rows (request, response, constraint; an acs run)"


def _plan(request: JudgeRequest, judge: str) -> JudgeRun:
    request.require_benchmark("acs", reads=READS)
    stored = request.source.get("options") or {}
    options: dict[str, Any] = {k: stored[k] for k in KEPT if stored.get(k) is not None}
    options.update(request.options)
    model = url = None
    if request.judge_config is not None:
        options["judge_config"] = Path(request.judge_config)
        if request.base_url is not None:
            options["judge_base_url"] = request.base_url
    elif judge == "llm":
        model, url = request.judge_model()
        options["judge"] = "llm"
    else:
        options["judge"] = judge
    return JudgeRun("acs", options, model, url, data=request.source.get("data"),
                    samples=list(request.samples))


def verify_plan(request: JudgeRequest) -> JudgeRun:
    return _plan(request, "acs-verify")


def llm_plan(request: JudgeRequest) -> JudgeRun:
    return _plan(request, "llm")
