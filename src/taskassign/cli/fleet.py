"""``taskassign fleet generate``: synthetic fleet snapshots for the pipeline (no Spark needed)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from taskassign.cli._app import CommandGroup, app
from taskassign.cli._common import handle_errors, new_table, stderr_console, stdout_console
from taskassign.cli._options import out_option
from taskassign.errors import UserInputError

if TYPE_CHECKING:
    pass

fleet_app = typer.Typer(
    rich_markup_mode=None, help="Synthetic fleets of Kafka Streams applications.", no_args_is_help=True,
    cls=CommandGroup)
app.add_typer(fleet_app, name="fleet")


@fleet_app.command("generate")
@handle_errors
def generate(
    apps: int = typer.Option(..., "--apps", min=1, help="Number of applications."),
    out: Path = out_option("Snapshot directory to write: absent, empty, or a snapshot taskassign wrote (replaced).",
                           output_alias=False, required=True),
    seed: int = typer.Option(0, "--seed", help="Same seed, same fleet."),
    tasks_per_app: int | None = typer.Option(
        None, "--tasks-per-app", min=1, help="About this many tasks per application (default: a mix of sizes)."),
    fmt: str = typer.Option("parquet", "--format", help="parquet, csv or json (JSON lines)."),
    bad_records: int = typer.Option(
        0, "--bad-records", min=0, help="Plant this many faulty rows, to see them land in the errors table."),
) -> None:
    """Write a realistic synthetic fleet snapshot: mixed sizes, racks, standbys, skewed state, churn."""
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from taskassign.fleet.generate import FleetSpec, write_fleet
    from taskassign.fleet.snapshot_files import FORMATS

    if fmt not in FORMATS:
        raise UserInputError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    spec = FleetSpec(apps=apps, seed=seed, tasks_per_app=tasks_per_app, bad_records=bad_records)
    with Progress(TextColumn("generating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=stderr_console(), transient=True) as progress:
        job = progress.add_task("apps", total=apps)
        summary = write_fleet(spec, out, fmt, on_app=lambda done: progress.update(job, completed=done))
    table = new_table()
    table.add_column("table")
    table.add_column("rows", justify="right")
    for name, rows in summary.rows.items():
        table.add_row(name, f"{rows:,}")
    console = stdout_console()
    console.print(f"wrote {apps:,} applications to {escape(str(summary.directory))} ({fmt})")
    console.print(table)
    for line in summary.planted:
        console.print(f"[yellow]planted bad record:[/] {escape(line)}")
