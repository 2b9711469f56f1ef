"""``toolscore export``: a run written out in any registered format (the ``toolscore.exports``
entry points, :mod:`toolscore.report.export.formats`): toolscore's own are its rows as CSV / JSONL /
Parquet and the whole run as an Inspect evaluation log (so Inspect's viewer and tools read
toolscore transcripts)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from toolscore.cli.common import USER_ERRORS, err
from toolscore.cli.common import fail as _fail
from toolscore.records.paths import check_output_path


class _FormatHelp(click.Command):
    """The --help lists the installed formats (read when help is asked, not at import)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from toolscore.report.export.formats import listing

        with formatter.section("Formats (--format)"):
            formatter.write_dl(sorted(listing().items()))


@click.command("export", cls=_FormatHelp)
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--format", "-f", "fmt", default="csv",
              help="An installed export format (listed below): csv | jsonl | parquet | "
              "inspect (an Inspect log: .json, or .eval if -o names one) | ...")
@click.option("--out", "-o", "out", default=None,
              help="Output file ('-' = stdout; default RUN_DIR/export.FORMAT, for inspect "
              "RUN_DIR/inspect/<Inspect's log name>.json).")
@click.option("--validate", is_flag=True, help="Read the written file back (formats that can: "
              "inspect, with inspect_ai).")
def export(run_dir: Path, fmt: str, out: str | None, validate: bool) -> None:
    """Write one row per (sample, epoch): id, epoch, split, status, scalar scores, tokens, time;
    with --format inspect, the run as an Inspect log (transcripts, scores, usage); with another
    installed format, what it writes."""
    from toolscore.report.export.formats import get_format

    try:
        check_output_path(out, "--out")
        form = get_format(fmt)
        if validate and (form.validate is None or out == "-"):
            raise ValueError("--validate needs --format inspect and an output file")
        if out == "-":
            if form.stream is None:
                raise ValueError(f"format {fmt!r} cannot be written to stdout; give --out FILE")
            form.stream(run_dir, sys.stdout)
            return
        target = form.write(run_dir, None if out is None else Path(out))
        if validate:
            assert form.validate is not None
            err.print(form.validate(target), highlight=False, soft_wrap=True)
    except USER_ERRORS as e:
        _fail(str(e))
        return
    err.print(f"wrote {target}", highlight=False, soft_wrap=True)


COMMANDS = [export]
