"""``taskassign validate``: Kafka's validation of an assignment file, plus completeness."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from taskassign.cli._app import app
from taskassign.cli._common import EXIT_FAILED, handle_errors, load_altered, stdout_console
from taskassign.cli._options import (
    AddClients,
    RacksDown,
    RemoveClients,
    SetConfigs,
    kafka_compat_option,
    strict_option,
)
from taskassign.cli._what_if import announce_what_if, what_if_from_flags

if TYPE_CHECKING:
    pass


@app.command()
@handle_errors
def validate(
    scenario: Path = typer.Argument(..., help="The scenario the assignment was computed for."),
    assignment: Path = typer.Argument(..., help="A *.assignment.json file."),
    strict: Annotated[bool, strict_option("Also fail when the completeness report finds gaps.")] = False,
    kafka_compat: Annotated[bool, kafka_compat_option("Only Kafka's own checks.")] = False,
    sets: SetConfigs = None,
    add_clients: AddClients = None,
    remove_clients: RemoveClients = None,
    racks_down: RacksDown = None,
) -> None:
    """Print the AssignmentError Kafka would report and a completeness report; exit 0 only for NONE."""
    from rich.text import Text

    from taskassign.cli._render import completeness_text, error_text
    from taskassign.formats.assignment import read_assignment
    from taskassign.model import AssignmentError
    from taskassign.validation import check_completeness, validate_task_assignment

    loaded, notes = load_altered(
        scenario, what_if_from_flags(sets, add_clients, remove_clients, racks_down), kafka_compat=kafka_compat)
    document = read_assignment(assignment)
    error = validate_task_assignment(loaded.state, document.assignment)
    report = check_completeness(loaded.state, document.assignment)
    console = stdout_console()
    announce_what_if(console, notes)
    console.print(Text.assemble(("validation: ", "dim"), error_text(error)))
    console.print(completeness_text(report))
    if error is not AssignmentError.NONE or (strict and not report.is_complete):
        raise typer.Exit(EXIT_FAILED)
