"""``taskassign report``: the HTML page of a simulation, or of a fleet pipeline's output."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from taskassign.cli._app import app
from taskassign.cli._common import handle_errors, stderr_console, stdout_console
from taskassign.cli._options import Force, out_option


@app.command("report")
@handle_errors
def report_command(
    result: Path = typer.Argument(..., help="simulation.json, the --out directory of `taskassign simulate`, or the "
                                            "--output directory of `taskassign pipeline run` (the fleet page)."),
    out: Annotated[Path, out_option("The HTML file to write.", output_alias=False)] = Path("report.html"),
    force: Force = False,
) -> None:
    """One self-contained HTML page (plots inlined, opens offline) of a simulation's results or of a fleet
    pipeline's output."""
    from rich.markup import escape

    from taskassign.formats.output_paths import OutputGuard
    from taskassign.report import write_report
    from taskassign.report.data import SIMULATION_FILE

    OutputGuard.of(force, result, result / SIMULATION_FILE if result.is_dir() else None).file(out)
    with stderr_console().status("reading the tables and drawing the charts"):
        target = write_report(result, out)
    stdout_console().print(f"wrote {escape(str(target))}")
