"""``taskassign validate``: Kafka's validation of an assignment file, plus completeness."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.text import Text

from taskassign.cli._app import app
from taskassign.cli._common import EXIT_FAILED, handle_errors, load_scenario, stdout_console
from taskassign.cli._render import completeness_text, error_text
from taskassign.formats.assignment import read_assignment
from taskassign.model import AssignmentError
from taskassign.validation import check_completeness, validate_task_assignment


@app.command()
@handle_errors
def validate(
    scenario: Path = typer.Argument(..., help="The scenario the assignment was computed for."),
    assignment: Path = typer.Argument(..., help="A *.assignment.json file."),
    strict: bool = typer.Option(False, "--strict", help="Also fail when the completeness report finds gaps."),
    kafka_compat: bool = typer.Option(False, "--kafka-compat", help="Only Kafka's own checks."),
) -> None:
    """Print the AssignmentError Kafka would report and a completeness report; exit 0 only for NONE."""
    loaded = load_scenario(scenario, kafka_compat=kafka_compat)
    document = read_assignment(assignment)
    error = validate_task_assignment(loaded.state, document.assignment)
    report = check_completeness(loaded.state, document.assignment)
    console = stdout_console()
    console.print(Text.assemble(("validation: ", "dim"), error_text(error)))
    console.print(completeness_text(report))
    if error is not AssignmentError.NONE or (strict and not report.is_complete):
        raise typer.Exit(EXIT_FAILED)
