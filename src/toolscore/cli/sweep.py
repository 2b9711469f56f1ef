"""``toolscore sweep plan | run | status``: many runs from one plan file.

``run`` is safe to repeat: every unit's run directory is named by its configuration, so a
second submission resumes what is unfinished and leaves finished runs alone. ``run --index I
--slots N`` runs one unit, which is all a SLURM job array or a Kubernetes indexed Job needs;
N (how many tasks run at once) sets the unit's fixed share of each provider limit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from toolscore.cli.common import EXIT_INCOMPLETE, UserErrors, emit_json, err, stdout

PLAN = click.argument("plan", type=click.Path(path_type=Path))
ALLOW_OUTSIDE = click.option(
    "--allow-outside", is_flag=True,
    help="Accept a manifest whose run directories are outside its out folder.")


@click.group("sweep")
def sweep_group() -> None:
    """Run a matrix of models x benchmarks x settings x epochs (locally or on Ray)."""


@sweep_group.command("plan")
@PLAN
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Write the manifest (JSON) here; `sweep run` and `status` accept it too.")
@click.option("--json", "json_out", is_flag=True, help="Print the manifest on stdout.")
@click.option("--prices", "prices_file", type=click.Path(path_type=Path), default=None,
              help="Prices (JSON/YAML, per million tokens) over the pinned price table, for "
                   "the estimate's cost.")
@ALLOW_OUTSIDE
def plan_command(plan: Path, out: Path | None, json_out: bool, prices_file: Path | None,
                 allow_outside: bool) -> None:
    """Expand PLAN (YAML or JSON) into run units, each with its run directory, and estimate
    what it takes: records, model calls, tokens and cost (measured on finished runs of the
    same benchmark and model where the results index has them)."""
    import json

    from toolscore.sweeps.plan import load_plan

    with UserErrors():
        manifest = load_plan(plan, allow_outside)
        from toolscore.models.prices import price_table

        prices = price_table(prices_file)  # the pinned table (when here) and the user's file
    doc = manifest.to_dict()
    if out is not None:
        out.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if json_out:
        emit_json(doc)
        return
    console = stdout()
    for u in manifest.units:
        setting = " ".join(f"{k}={v}" for k, v in sorted({**u.setting, **u.judge}.items()))
        console.print(f"{u.index:>4}  {u.benchmark:<12} {u.model:<28} {u.samples:>5} samples"
                      f"{'  ' + setting if setting else ''}  {u.run_dir}", highlight=False,
                      soft_wrap=True, markup=False)
    console.print(f"{len(manifest.units)} units"
                  + (f"; manifest written to {out}" if out is not None else ""),
                  highlight=False, markup=False)
    for line in plan_estimate(manifest, prices):
        console.print(line, highlight=False, markup=False, soft_wrap=True)


def plan_estimate(manifest: Any, prices: Any = None) -> list[str]:
    """The estimate's lines: usage measured on the finished runs the results index beside
    the plan's runs holds, priced by ``prices`` (a :class:`~toolscore.models.prices.PriceTable`;
    None or an empty one: unpriced)."""
    import json
    import os

    from toolscore.report.leaderboard.index import read_index
    from toolscore.sweeps.estimate import estimate, estimate_lines

    runs = []
    for folder in sorted({str(Path(u.run_dir).parent) for u in manifest.units}):
        for rows in read_index(folder).values():
            try:
                runs.append(json.loads(next(r["run_facts"] for r in rows
                                            if r.get("run_facts"))))
            except (StopIteration, TypeError, ValueError):
                continue
    def price_of(model: str | None) -> dict[str, float] | None:
        price = prices.price_of(model)
        return None if price is None else price.to_dict()

    some = prices is not None and (prices.table is not None or bool(prices.overrides))
    doc = estimate(manifest, runs, price_of if some else None)
    return estimate_lines(doc, lambda name: bool(os.environ.get(name)))


@sweep_group.command("run")
@PLAN
@click.option("--workers", type=int, default=4, show_default=True,
              help="Units run at once (local executor).")
@click.option("--index", type=int, default=None,
              help="Run only unit I (0-based), in this process: one task of a job array "
                   "(needs --slots).")
@click.option("--slots", type=int, default=None, metavar="N",
              help="With --index: how many tasks of the job array run at once, e.g. the 8 of "
                   "SLURM's --array=0-399%8 (SLURM does not export it; SLURM_ARRAY_TASK_MAX "
                   "is the highest index) or a Kubernetes indexed Job's parallelism (not "
                   "exported either). Each unit gets floor(limit / S) permits (at least 1) of "
                   "every limited provider it uses, S = min(N, limit, units of the plan using "
                   "that provider), and a concurrency of min(max_concurrency, its share of its "
                   "own model's provider), and rpm / S and tpm / S of a rate budget. Keep N "
                   "at or below the limit: past it every task still takes 1 permit.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local",
              show_default=True, help="A process pool here, or Ray tasks (extra 'ray').")
@click.option("--address", default=None,
              help="Ray cluster address (e.g. auto); default: start a local Ray instance.")
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
@ALLOW_OUTSIDE
def run_command(plan: Path, workers: int, index: int | None, slots: int | None,
                executor: str, address: str | None, json_out: bool,
                allow_outside: bool) -> None:
    """Run every unit of PLAN not yet finished (finished ones are skipped, partial ones
    resumed). Exit code 3 when some unit ended in errors or failed.

    \b
    As a job array, one unit per task: --index I --slots N. With
    `limits: {openai: 16}`, `max_concurrency: 8` and 8 tasks at once
    (--array=0-399%8, --slots 8), each unit holds 16 // 8 = 2 permits
    of openai and plays 2 samples at a time; with --slots 2, 8 permits
    and 8 samples."""
    from toolscore.sweeps.local import run_local, run_one
    from toolscore.sweeps.plan import load_plan

    def show(result: dict[str, Any]) -> None:
        _index_unit(result, json_out)
        if not json_out:
            err.print(_result_line(result), highlight=False, soft_wrap=True, markup=False)

    with UserErrors():
        if (index is None) != (slots is None):
            raise ValueError("--index I and --slots N go together: N is how many tasks of "
                             "the job array run at once (the %N of SLURM's --array, a "
                             "Kubernetes Job's parallelism), which the scheduler does not "
                             "tell its tasks" if slots is None else
                             "--slots applies to --index (a job array's tasks); the local "
                             "executor has --workers")
        manifest = load_plan(plan, allow_outside)
        if index is not None:
            results = [run_one(manifest, index, slots)]
            show(results[0])
        elif executor == "ray":
            from toolscore.sweeps.ray_executor import run_ray

            results = run_ray(manifest, address=address, on_result=show)
        else:
            results = run_local(manifest, workers=workers, on_result=show)
        if index is None:  # a job array's tasks leave their parts; `sweep index` compacts
            _compact({str(Path(u.run_dir).parent) for u in manifest.units})
    results.sort(key=lambda r: (r["index"], r.get("shard") or ""))
    states = [r["state"] for r in results]
    doc: dict[str, Any] = {"units": results,
                           "counts": {s: states.count(s) for s in sorted(set(states))}}
    if json_out:
        emit_json(doc)
    else:
        stdout().print("  ".join(f"{s}: {n}" for s, n in doc["counts"].items()),
                       highlight=False, markup=False)
    if any(s != "done" for s in states):
        raise SystemExit(EXIT_INCOMPLETE)


def _index_unit(result: dict[str, Any], quiet: bool) -> None:
    """A finished unit's row of the results index, beside its run (the leaderboard reads it
    instead of the run); a unit that cannot be indexed is only read more slowly."""
    if result.get("state") not in ("done", "error"):
        return
    from toolscore.report.leaderboard.index import index_run

    try:
        index_run(result["run_dir"], force=False)  # a unit found finished: kept as it is
    except Exception as e:  # noqa: BLE001 - the run is kept; the leaderboard walks it
        if not quiet:
            err.print(f"unit {result['index']}: not added to the results index "
                      f"({type(e).__name__}: {e})", highlight=False, markup=False,
                      soft_wrap=True)


def _compact(folders: set[str]) -> None:
    from toolscore.report.leaderboard.index import compact

    for folder in sorted(folders):
        try:
            compact(folder)
        except Exception as e:  # noqa: BLE001 - the parts are still read one by one
            err.print(f"results index of {folder}: not compacted ({type(e).__name__}: {e})",
                      highlight=False, markup=False, soft_wrap=True)


def _result_line(r: dict[str, Any]) -> str:
    where = f"unit {r['index']}" + (f" shard {r['shard']}" if r.get("shard") else "")
    if r["state"] in ("failed", "busy"):
        return f"{where}: {r['state']}: {r.get('message', '')}"
    share = "".join(f", {g} permits {n}" for g, n in sorted((r.get("permits") or {}).items()))
    if "max_concurrency" in r:
        share = f", concurrency {r['max_concurrency']}{share}"
    return (f"{where}: {r['state']} ({r.get('run_now', 0)} run, {r.get('skipped', 0)} already "
            f"done, {r.get('errors', 0)} errors, {r.get('calls', 0)} model calls, "
            f"{r.get('wall_s', 0):.1f}s{share}) {r['run_dir']}")


@sweep_group.command("status")
@PLAN
@click.option("--json", "json_out", is_flag=True,
              help="Print one JSON document: every unit (run directory, model, benchmark, "
                   "options, epochs, state, counts) and the counts per state.")
@ALLOW_OUTSIDE
def status_command(plan: Path, json_out: bool, allow_outside: bool) -> None:
    """done / partial / error / pending for every unit of PLAN, from its run directory."""
    from toolscore.sweeps.plan import load_plan
    from toolscore.sweeps.status import sweep_status

    with UserErrors():
        doc = sweep_status(load_plan(plan, allow_outside))
    if json_out:
        emit_json(doc)
        return
    console = stdout()
    for u in doc["units"]:
        console.print(f"{u['index']:>4}  {u['state']:<8} {u['ok']:>5}/{u['expected']:<5} ok "
                      f"{u['errors']:>4} errors  {u['benchmark']} {u['model']}  {u['run_dir']}",
                      highlight=False, soft_wrap=True, markup=False)
    console.print("  ".join(f"{s}: {n}" for s, n in doc["counts"].items()), highlight=False,
                  markup=False)


@sweep_group.command("index")
@click.argument("target", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Index every run again, not only the new or "
              "changed ones.")
@ALLOW_OUTSIDE
def index_command(target: Path, force: bool, allow_outside: bool) -> None:
    """Write the results index of TARGET (a plan, a manifest or a folder of runs): one row
    per finished run, split and headline metric, beside the runs, read by `toolscore
    leaderboard` instead of the runs. `sweep run` keeps it up to date; this adds runs made
    with `toolscore run` into the folder, and those of a job array's tasks, and compacts."""
    from toolscore.report.leaderboard.build import find_runs
    from toolscore.report.leaderboard.index import refresh

    with UserErrors():
        if target.is_file():
            from toolscore.sweeps.plan import load_plan

            dirs = [u.run_dir for u in load_plan(target, allow_outside).units]
        else:
            dirs = [f["run_dir"] for f in find_runs([target])]
        counts = refresh([d for d in dirs if (Path(d) / "run.json").is_file()], force=force)
    stdout().print(f"results index: {counts['indexed']} runs indexed, {counts['kept']} "
                   f"unchanged, {counts['failed']} unreadable", highlight=False, markup=False)


COMMANDS = [sweep_group]
