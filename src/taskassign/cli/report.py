"""``taskassign report``: the HTML report of a simulation."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from taskassign.cli._app import app
from taskassign.cli._common import handle_errors, stderr_console, stdout_console
from taskassign.report import write_report


@app.command("report")
@handle_errors
def report_command(
    result: Path = typer.Argument(..., help="simulation.json, or the --out directory of `taskassign simulate`."),
    out: Path = typer.Option(Path("report.html"), "--out", "-o", help="The HTML file to write."),
) -> None:
    """One self-contained HTML page (plots inlined, opens offline) of a simulation's results."""
    with stderr_console().status("drawing the plots"):
        target = write_report(result, out)
    stdout_console().print(f"wrote {escape(str(target))}")
