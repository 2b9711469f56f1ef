"""``--rpm`` and ``--tpm`` of ``toolscore run``: the rate budget of the run's model provider.

A sweep says its budgets in its plan (``limits: {openai: {rpm: 600, tpm: 200000}}``); a single
run says them here. Within the run, every call to that provider (the model under test, and a
simulated user or judge of the same provider, who spend the same key's quota) is charged to one
budget, and 429s narrow the requests in flight (:mod:`toolscore.models.limits.budget`); the
run's ``--max-concurrency`` is the most it lets in flight. Without either option nothing
changes. With ``--workers`` the worker processes forked from this one share the budget (the
limiter's files are in a folder of this process's).
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from toolscore.cli.common import max_concurrency, whole_number

BUDGET_OPTIONS = [
    click.Option(["--rpm"], default=None, metavar="N",
                 help="Requests per minute the model's provider allows this run (its "
                      "simulated user and judge included when they call that provider): "
                      "calls wait for the budget instead of meeting 429s."),
    click.Option(["--tpm"], default=None, metavar="N",
                 help="Tokens per minute (prompt and reply) the model's provider allows "
                      "this run; each call's tokens are estimated from its size and settled "
                      "with the usage of its reply."),
]


def model_of(generic: dict[str, Any]) -> str | None:
    """The run's model: the one given, or the one of the run being resumed."""
    if generic.get("resume") is not None:
        from toolscore.records import RunStore

        return RunStore(generic["resume"]).config().model
    return generic.get("model")


@contextlib.contextmanager
def rate_budget(generic: dict[str, Any]) -> Iterator[None]:
    """The run's calls to its provider within ``--rpm`` and ``--tpm`` (nothing without)."""
    rpm, tpm = generic.get("rpm"), generic.get("tpm")
    if rpm is None and tpm is None:
        yield
        return
    rates = [None if v is None else float(whole_number(v, f"--{k}"))
             for k, v in (("rpm", rpm), ("tpm", tpm))]
    model = model_of(generic)
    if not model:
        raise ValueError("--rpm and --tpm limit the model's provider: give --model")
    from toolscore.models.limits import shared

    permits = max_concurrency(generic["max_concurrency"])
    with tempfile.TemporaryDirectory(prefix="toolscore-budget-") as folder:
        shared.install({shared.group_of(model): (str(Path(folder) / "limit.lock"), permits,
                                                 *rates)})
        try:
            yield
        finally:
            shared.install({})
