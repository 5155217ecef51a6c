"""``taskassign report``: the HTML report of a simulation."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from taskassign.cli._app import app
from taskassign.cli._common import handle_errors, stderr_console, stdout_console
from taskassign.cli._options import Force, out_option

if TYPE_CHECKING:
    pass


@app.command("report")
@handle_errors
def report_command(
    result: Path = typer.Argument(..., help="simulation.json, or the --out directory of `taskassign simulate`."),
    out: Annotated[Path, out_option("The HTML file to write.", output_alias=False)] = Path("report.html"),
    force: Force = False,
) -> None:
    """One self-contained HTML page (plots inlined, opens offline) of a simulation's results."""
    from rich.markup import escape

    from taskassign.formats.output_paths import OutputGuard
    from taskassign.report import write_report
    from taskassign.simulate.result import SIMULATION_FILE

    OutputGuard.of(force, result, result / SIMULATION_FILE if result.is_dir() else None).file(out)
    with stderr_console().status("drawing the plots"):
        target = write_report(result, out)
    stdout_console().print(f"wrote {escape(str(target))}")
