"""A run's settings are in two objects: its identity (what names the run) and how it runs; each
setting is in exactly one, and the module's table says which and why."""

from __future__ import annotations

import dataclasses

from toolscore.runs import settings
from toolscore.runs.identity import default_run_dir, run_identity
from toolscore.runs.settings import RunExecution, RunIdentity


def test_each_setting_is_in_one_object_and_in_the_table() -> None:
    identity = {f.name for f in dataclasses.fields(RunIdentity)}
    execution = {f.name for f in dataclasses.fields(RunExecution)}
    assert not identity & execution
    table = settings.__doc__ or ""
    for name in identity | execution:
        assert name in table, name
    # every identity field names the run (sample_ids only when given)
    named = RunIdentity("demo", "oracle", sample_ids=["a"]).to_json()
    assert set(named) == identity


def test_the_identity_names_the_same_directory_as_loose_values() -> None:
    run = RunIdentity("demo", "openai/x", options={"seed": 1}, model_args={"top_p": 0.5},
                      epochs=2, limit=[1, 3], base_url="http://u:secret@h/v1", data="d")
    loose = run_identity("demo", "openai/x", options={"seed": 1}, model_args={"top_p": 0.5},
                         epochs=2, limit=[1, 3], base_url="http://u:secret@h/v1", data="d")
    assert run.to_json() == loose
    assert "secret" not in str(run.to_json())
    assert default_run_dir("demo", "openai/x", run) == default_run_dir("demo", "openai/x", loose)
    assert "sample_ids" not in loose  # runs made before sample ids keep their names


def test_the_callback_is_sent_nowhere_and_compared_with_nothing() -> None:
    a = RunExecution()
    b = RunExecution(max_concurrency=1, cache=None, timeout=5.0, progress="lines",
                     shard=(1, 2), workers=3, download=False, on_record=print)
    assert a != b and b.without_callback().on_record is None
    assert b.without_callback() == b  # the callback is not a setting compared
