"""``toolscore export``: a run's rows as CSV / JSONL / Parquet, or the whole run as an Inspect
evaluation log (so Inspect's viewer and tools read toolscore transcripts)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from toolscore.cli.common import USER_ERRORS, err
from toolscore.cli.common import fail as _fail
from toolscore.records.paths import check_output_path


@click.command("export")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--format", "-f", "fmt", default="csv",
              help="csv | jsonl | parquet | inspect (an Inspect log: .json, or .eval if -o "
              "names one).")
@click.option("--out", "-o", "out", default=None,
              help="Output file ('-' = stdout; default RUN_DIR/export.FORMAT, for inspect "
              "RUN_DIR/inspect/<Inspect's log name>.json).")
@click.option("--validate", is_flag=True, help="inspect: read the log back with inspect_ai.")
def export(run_dir: Path, fmt: str, out: str | None, validate: bool) -> None:
    """Write one row per (sample, epoch): id, epoch, split, status, scalar scores, tokens, time;
    with --format inspect, the run as an Inspect log (transcripts, scores, usage)."""
    from toolscore.report import export_inspect as inspect_log
    from toolscore.report.export import export_run, run_rows, write_rows

    try:
        check_output_path(out, "--out")
        if validate and (fmt != "inspect" or out == "-"):
            raise ValueError("--validate needs --format inspect and an output file")
        if out == "-":
            if fmt == "inspect":
                inspect_log.write_inspect_log(run_dir, sys.stdout)
                return
            columns, rows = run_rows(run_dir)
            write_rows(sys.stdout, fmt, columns, rows)
            return
        target = export_run(run_dir, fmt, out)
        if validate:
            err.print(inspect_log.validation_line(target), highlight=False, soft_wrap=True)
    except USER_ERRORS as e:
        _fail(str(e))
        return
    err.print(f"wrote {target}", highlight=False, soft_wrap=True)


COMMANDS = [export]
