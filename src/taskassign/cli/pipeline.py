"""``taskassign pipeline run``, ``pipeline export-scenario`` and ``pipeline export``: the fleet pipeline on Spark,
and its tables for spreadsheets and scripts (no Spark)."""

from __future__ import annotations

import enum
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from taskassign.cli._app import CommandGroup, app
from taskassign.cli._common import (
    EXIT_FAILED,
    handle_errors,
    new_table,
    stderr_console,
    stdout_console,
    use_plugin_limits,
)
from taskassign.cli._options import (
    Force,
    KafkaCompat,
    KafkaVersion,
    PluginMemory,
    PluginTimeout,
    SparkMaster,
    SparkRemote,
    allow_plugins_option,
    assignor_option,
    kafka_compat_option,
    out_option,
)
from taskassign.errors import UserInputError

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.progress import Progress

pipeline_app = typer.Typer(
    rich_markup_mode=None, help="Run the engine over a fleet snapshot on Spark.", no_args_is_help=True,
    cls=CommandGroup)
app.add_typer(pipeline_app, name="pipeline")

_ASSIGNOR_HELP = ("Assignor for every application (default: each application's own, else the built-in default); "
                  "A,B[,...] runs every application through each and compares them (the first is the baseline).")
_ATTENTION_HELP = "Applications per metric in the needs-attention view (worst state imbalance, standbys short, " \
                  "records to restore)."
_PLUGINS_HELP = ("Let the snapshot's applications.assignor name plug-ins (module:Class, file.py:Class). A plug-in "
                 "spec is code execution: only for snapshots you trust. Without it such applications are rejected "
                 "(PLUGIN_NOT_ALLOWED) and nothing is imported.")


def _parse_conf(entries: list[str]) -> dict[str, str]:
    conf = {}
    for entry in entries:
        key, sep, value = entry.partition("=")
        if not sep or not key.strip():
            raise UserInputError(f"--conf expects KEY=VALUE, got {entry!r}")
        conf[key.strip()] = value
    return conf


def _assignors(value: str | None) -> tuple[str | None, tuple[str, ...]]:
    """``--assignor``: one assignor (the override), or A,B,... (a comparison run)."""
    from taskassign.assignors.registry import resolve

    # Checked here; each pass sends the name to the executors (a spec crosses process boundaries, a resolved
    # class does not), where the engine resolves it once per application.
    if value is None or "," not in value:
        if value is not None:
            resolve(value)
        return value, ()
    names = tuple(name.strip() for name in value.split(","))
    if any(not name for name in names):
        raise UserInputError(f"--assignor {value!r}: an empty name between commas")
    if len(set(names)) < len(names):
        raise UserInputError(f"--assignor {value!r}: names an assignor twice")
    for name in names:
        resolve(name)
    return None, names


@contextmanager
def _spark_progress(spark: Any, progress: Progress, counter: Any) -> Iterator[None]:
    """Bars of applications done out of total and of Spark tasks (classic sessions only: Spark Connect has no
    status tracker or accumulators here)."""
    from taskassign.pipeline.progress import classic_context

    context = classic_context(spark)
    if context is None:
        yield
        return
    tracker = context.statusTracker()
    apps = progress.add_task("applications", total=None)
    bar = progress.add_task("spark tasks", total=None)
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(0.5):
            progress.update(apps, completed=counter.done() or 0, total=counter.total)
            done = total = 0
            for stage_id in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage_id)
                if info is not None:
                    done += info.numCompletedTasks
                    total += info.numTasks
            progress.update(bar, completed=done, total=total or None)

    thread = threading.Thread(target=poll, name="spark-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        progress.remove_task(bar)
        progress.remove_task(apps)


@pipeline_app.command("run")
@handle_errors
def run(
    input_dir: Path = typer.Option(..., "--input", help="Fleet snapshot directory (docs/pipeline.md)."),
    output_dir: Path = out_option("Output directory; replaced only when the run completes.", required=True),
    assignor: Annotated[str | None, assignor_option(_ASSIGNOR_HELP)] = None,
    master: SparkMaster = None,
    remote: SparkRemote = None,
    kafka_compat: KafkaCompat = False,
    kafka_version: KafkaVersion = None,
    buckets: int | None = typer.Option(None, "--buckets", min=1, help="Buckets of applications (Python calls)."),
    conf: list[str] = typer.Option([], "--conf", help="Extra Spark config KEY=VALUE (repeatable)."),
    allow_plugins: Annotated[bool, allow_plugins_option(_PLUGINS_HELP)] = False,
    attention: int = typer.Option(10, "--attention", min=0, help=_ATTENTION_HELP),
    plugin_timeout: PluginTimeout = 60.0,
    plugin_memory: PluginMemory = 2048,
) -> None:
    """Assign every application of a fleet snapshot and write assignments, metrics, errors and a manifest."""
    use_plugin_limits(plugin_timeout, plugin_memory)
    single, compared = _assignors(assignor)  # a bad name: exit 2 before Spark starts
    from taskassign.formats.output_paths import check_not_input

    check_not_input(output_dir, [input_dir], contains=True)

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from taskassign.assignors.plugin_process import plugin_limits
    from taskassign.pipeline.progress import ApplicationCounter
    from taskassign.pipeline.run import PipelineOptions, run_pipeline
    from taskassign.pipeline.session import command_session

    options = PipelineOptions(input_dir, output_dir, single, kafka_compat, buckets, allow_plugins, compared,
                              attention, kafka_version, plugin_limits())
    console, errors = stdout_console(), stderr_console()
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=errors, transient=True) as progress:
        step = progress.add_task("starting Spark", total=None)
        with command_session(master, remote, _parse_conf(conf)) as spark:
            counter = ApplicationCounter(spark)
            with _spark_progress(spark, progress, counter):
                result = run_pipeline(spark, options, lambda name: progress.update(step, description=name), counter)
    console.print(fleet_summary(result.manifest, result.output_dir))
    if not result.manifest["reconciled"]:
        errors.print("[bold red]row counts do not reconcile (rows in != used + rejected); see manifest.json[/]")
        raise typer.Exit(EXIT_FAILED)


def fleet_summary(manifest: dict[str, Any], output_dir: Path) -> RenderableType:
    """The end-of-run summary: outcome per application, fleet metrics (a comparison run: the assignor
    comparison), the applications that need attention, row accounting, errors."""
    import pyarrow.parquet as pq
    from rich.console import Group
    from rich.text import Text

    from taskassign.cli._fleet_render import attention_table, comparison_table, fleet_metrics_table
    from taskassign.fleet.reasons import REASON_CODES, STATUSES

    timings = manifest["timings"]
    apps = manifest["applications"]
    assignors: list[str] = manifest["options"].get("assignors") or []
    header = Text.assemble(
        ("fleet ", "dim"), (f"{apps['total']:,} applications", "bold"), ("  output ", "dim"), (str(output_dir), "bold"),
        ("  in ", "dim"), (f"{timings['total_seconds']:.1f} s", "bold"),
        (f" (engine {timings['engine_seconds']:.1f} s of worker time)", "dim"),
    )
    status = new_table(title="applications", title_justify="left")
    status.add_column("status")
    by_status = {name: manifest["assignors"][name]["applications"]["by_status"] for name in assignors} or \
        {"count": apps["by_status"]}
    for name in by_status:
        status.add_column(name, justify="right")
    status.add_column("meaning", style="dim")
    for name, meaning in STATUSES.items():
        counts = [per.get(name, 0) for per in by_status.values()]
        style = "green" if name == "ASSIGNED" else ("red" if any(counts) else "")
        status.add_row(Text(name, style=style), *(f"{count:,}" for count in counts), meaning)
    parts: list[RenderableType] = [header, status]
    if assignors:
        parts.append(comparison_table(pq.read_table(output_dir / "assignor_comparison").to_pylist(), assignors))
        parts.append(Text(f"each assignor's fleet metrics: {output_dir / 'fleet_metrics'}", style="dim"))
    else:
        parts.append(fleet_metrics_table(pq.read_table(output_dir / "fleet_metrics").to_pylist()))
    attention = [row for row in pq.read_table(output_dir / "needs_attention").to_pylist()
                 if not assignors or row["assignor"] == assignors[0]]
    limit = int(manifest["options"].get("attention", 10))
    if limit:
        table = attention_table(attention, limit)
        if assignors:
            table.title = f"{table.title} under {assignors[0]} (every assignor's: needs_attention)"
        parts.append(table)
    under = f" (under {assignors[0]}; every assignor's: manifest.json)" if assignors else ""
    rows = new_table(title="input rows" + under, title_justify="left")
    for column in ("table", "in", "used", "rejected"):
        rows.add_column(column, justify="left" if column == "table" else "right")
    for name, counts in manifest["rows"].items():
        rows.add_row(name, f"{counts['in']:,}", f"{counts['used']:,}", f"{counts['rejected']:,}")
    parts.append(rows)
    title = "errors table" + (f" (under {assignors[0]}; every assignor's: the errors table)" if assignors else "")
    problems = new_table(title=title, title_justify="left")
    problems.add_column("effect", no_wrap=True)
    problems.add_column("code", overflow="fold")
    problems.add_column("rows", justify="right", no_wrap=True)
    problems.add_column("reason (of the first such row)", overflow="fold", ratio=1)
    examples = _first_reasons(output_dir)
    for effect, codes in manifest["errors"].items():
        for code, count in sorted(codes.items(), key=lambda kv: -kv[1]):
            example = examples.get((effect, code))
            problems.add_row(effect, code, f"{count:,}", example or REASON_CODES.get(code, ""))
    if problems.row_count:
        parts.append(problems)
        parts.append(Text(f"list them: taskassign pipeline errors {output_dir}", style="cyan"))
    check = "rows in = used + rejected for every table" if manifest["reconciled"] else "ROW COUNTS DO NOT RECONCILE"
    parts.append(Text(check, style="green" if manifest["reconciled"] else "bold red"))
    parts.extend(Text(f"next: {step}", style="cyan") for step in _next_steps(manifest, output_dir, attention))
    return Group(*parts)


def _first_reasons(output_dir: Path) -> dict[tuple[str, str], str]:
    """The reason of the first errors row of each (effect, code), in the table's order."""
    import pyarrow.parquet as pq

    path = output_dir / "errors"
    if not path.exists():
        return {}
    first: dict[tuple[str, str], str] = {}
    for row in pq.read_table(path, columns=["effect", "reason_code", "reason", "app_id"]).to_pylist():
        key = (row["effect"], row["reason_code"])
        if key not in first and row["reason"]:
            first[key] = f"{row['app_id']}: {row['reason']}" if row["app_id"] else row["reason"]
    return first


def _next_steps(manifest: dict[str, Any], output_dir: Path, attention: list[dict[str, Any]]) -> list[str]:
    """What to do after the run: fix the rejected input, look closer at the worst application."""
    steps = []
    if any(manifest["errors"].get("rejected", {}).values()):
        steps.append(f"taskassign pipeline errors {output_dir} --effect rejected   (the rows not used, "
                     "and why; fix them in the snapshot and run again)")
    worst = next((row for row in attention if row.get("rank") == 1), None)
    source = (manifest.get("input") or {}).get("directory", "SNAPSHOT")
    if worst is not None:
        steps.append(f"taskassign pipeline export-scenario --input {source} --app {worst['app_id']}   then "
                     f"taskassign compare {worst['app_id']}.scenario.json -a high_availability,state_aware   "
                     f"(the worst on {worst['metric']}, up close)")
    if not steps:
        steps.append("nothing to fix: every row was used and no application is over a threshold")
    return steps


@pipeline_app.command("errors")
@handle_errors
def errors_command(
    output_dir: Path = typer.Argument(..., help="A pipeline run's output directory (its --output)."),
    effect: str | None = typer.Option(None, "--effect", help="Only rows with this effect: rejected or flagged."),
    code: str | None = typer.Option(None, "--code", help="Only rows with this reason code, e.g. BAD_VALUE."),
    limit: int = typer.Option(50, "--limit", min=0, help="Print at most this many rows (0: all)."),
) -> None:
    """List a run's errors table: every row not used, or flagged, with its application, code and reason."""
    import pyarrow.parquet as pq
    from rich.markup import escape

    path = output_dir / "errors"
    if not path.exists():
        raise UserInputError(f"{output_dir}: no errors table (not a `taskassign pipeline run` output directory)")
    rows = [r for r in pq.read_table(path).to_pylist()
            if (effect is None or r["effect"] == effect) and (code is None or r["reason_code"] == code)]
    from rich.text import Text

    console = stdout_console()
    console.print(Text(f"errors: {len(rows):,} row(s); each: effect code, table, application, then its reason",
                       style="bold"))
    for row in rows[:limit or None]:  # one block per row: names and reasons whole at any width
        console.print(Text.assemble((f"{row['effect']} {row['reason_code']}", "bold"),
                                    f"  {row['table']}  {row['app_id'] or '-'}"))
        console.print(Text(f"  {row['reason'] or ''}"))
    if limit and len(rows) > limit:
        console.print(f"[dim]… {len(rows) - limit:,} more rows (--limit 0 prints them all; the table: "
                      f"{escape(str(path))})[/]")


@pipeline_app.command("export-scenario")
@handle_errors
def export_scenario(
    input_dir: Path = typer.Option(..., "--input", help="Fleet snapshot directory."),
    app_id: str = typer.Option(..., "--app", help="The application to export."),
    out: Annotated[Path | None, out_option("Scenario file to write (default <app>.scenario.json).",
                                           output_alias=False)] = None,
    master: SparkMaster = None,
    remote: SparkRemote = None,
    kafka_compat: Annotated[bool, kafka_compat_option("Set taskassign.kafka.compat in its configs.")] = False,
    allow_plugins: Annotated[bool, allow_plugins_option(_PLUGINS_HELP)] = False,
    force: Force = False,
    plugin_timeout: PluginTimeout = 60.0,
    plugin_memory: PluginMemory = 2048,
) -> None:
    """Write one application's scenario file: the exact input the pipeline gives the engine for it."""
    use_plugin_limits(plugin_timeout, plugin_memory)
    from rich.markup import escape

    from taskassign.formats.json_io import dump_json
    from taskassign.formats.output_paths import OutputGuard
    from taskassign.formats.scenario import scenario_to_dict
    from taskassign.pipeline.export import export_scenarios
    from taskassign.pipeline.session import command_session

    target = OutputGuard.of(force, input_dir).file(out or Path(f"{app_id}.scenario.json"))
    errors: Console = stderr_console()
    with errors.status("starting Spark"), command_session(master, remote) as spark:
        errors.print(f"checking and deriving {escape(app_id)}")
        exported = export_scenarios(spark, input_dir, [app_id], kafka_compat=kafka_compat,
                                    allow_plugins=allow_plugins)[app_id]
    if exported.scenario is None:
        raise UserInputError(f"application {app_id!r} cannot be exported: {exported.rejection}")
    dump_json(scenario_to_dict(exported.scenario), target)
    stdout_console().print(f"wrote {escape(str(target))}")


class ExportFormat(enum.StrEnum):
    """pipeline.table_export.EXPORT_FORMATS (that module loads pyarrow; the options must not)."""

    CSV = "csv"
    JSONL = "jsonl"


@pipeline_app.command("export")
@handle_errors
def export_tables(
    input_dir: Path = typer.Option(..., "--input", help="The output directory of `taskassign pipeline run`."),
    out: Path = out_option("Directory to write <table>.csv or <table>.jsonl into.", required=True),
    fmt: ExportFormat = typer.Option(ExportFormat.CSV, "--format", help="csv (lists as JSON arrays, null as an "
                                     "empty cell) or jsonl (one JSON object per row)."),
    tables: list[str] = typer.Option([], "--table", metavar="TABLE", help="A table to write (repeatable; default: "
                                     "every table of the run)."),
    force: bool = typer.Option(False, "--force", help="Replace files in the way that an earlier export did not "
                               "write."),
) -> None:
    """Write a run's tables as CSV or JSON lines: columns in the table's order, rows in the run's order."""
    from rich.markup import escape

    from taskassign.pipeline.results import read_fleet_output
    from taskassign.pipeline.table_export import export_tables as write_tables

    errors: Console = stderr_console()
    output = read_fleet_output(input_dir)
    written = write_tables(output, out, fmt.value, tables, force=force,
                           progress=lambda name, rows: errors.print(f"writing {name} ({rows:,} rows)"))
    for file in written:
        stdout_console().print(f"wrote {escape(str(file))}")
