"""``taskassign report``: the HTML page of a simulation, of a fleet pipeline's output, or the topology page of a
group file, scenario or streams group (told apart by the input's ``format`` header)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from taskassign.cli._app import app
from taskassign.cli._common import handle_errors, stderr_console, stdout_console
from taskassign.cli._options import Force, assignor_option, out_option


@app.command("report")
@handle_errors
def report_command(
    result: Path = typer.Argument(..., help="simulation.json or the --out directory of `taskassign simulate`; the "
                                            "--output directory of `taskassign pipeline run` (the fleet page); or a "
                                            "GROUP.json, scenario or streams-group file for its topology page."),
    out: Annotated[Path, out_option("The HTML file to write.", output_alias=False)] = Path("report.html"),
    assignor: Annotated[str | None, assignor_option(
        "Topology page: the assignor whose answer is drawn against the file's own assignment (default: the "
        "file's, else high_availability; a streams group's broker-side assignor).")] = None,
    plan: Annotated[Path | None, typer.Option(
        "--plan", help="Topology page: draw this plan's assignment (`taskassign plan`) against the file's own "
                       "(Kafka's recorded one, the members' previous tasks or target assignment).")] = None,
    force: Force = False,
) -> None:
    """One self-contained HTML page (plots inlined, opens offline): a simulation's results, a fleet pipeline's
    output, or the topology with every task on the process that runs it and what moves."""
    from rich.markup import escape

    from taskassign.formats.output_paths import OutputGuard
    from taskassign.report.data import SIMULATION_FILE
    from taskassign.report.topology_page import input_kind

    OutputGuard.of(force, result, result / SIMULATION_FILE if result.is_dir() else None, plan).file(out)
    kind, doc = input_kind(result)
    if kind == "simulation":
        from taskassign.report import write_report

        with stderr_console().status("reading the tables and drawing the charts"):
            target = write_report(result, out)
    else:
        from taskassign.report.topology_page import write_topology_report

        with stderr_console().status("drawing the topology"):
            target = write_topology_report(result, out, kind, doc, assignor=assignor, plan=plan)
    stdout_console().print(f"wrote {escape(str(target))}")
