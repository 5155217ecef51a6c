"""``taskassign diff BEFORE AFTER``: what changes between two assignment files (analysis/diff.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from taskassign.cli._app import app
from taskassign.cli._common import handle_errors, load_scenario, stdout_console
from taskassign.cli._options import json_option
from taskassign.errors import UserInputError

if TYPE_CHECKING:
    from taskassign.analysis.metrics import AssignmentMetrics
    from taskassign.formats.assignment import AssignmentDocument
    from taskassign.formats.scenario import Scenario


@app.command()
@handle_errors
def diff(
    before: Path = typer.Argument(..., help="The assignment file before (*.assignment.json)."),
    after: Path = typer.Argument(..., help="The assignment file after."),
    scenario: Path | None = typer.Option(
        None, "--scenario", "-s",
        help="The application (scenario or GROUP.json) AFTER was computed for: prices the data to move (state "
             "bytes, records to restore) and computes the metrics the files do not carry."),
    as_json: Annotated[bool, json_option("Print the diff as JSON (full values) instead of tables.")] = False,
) -> None:
    """Before -> after, per client: tasks gained and lost (active and standby) and the metrics that changed,
    after the totals (replicas moved, actives moved, data to move), as Cruise Control summarises a proposal."""
    from taskassign.analysis.diff import diff_assignments
    from taskassign.cli._diff_render import diff_text
    from taskassign.cli._metrics_render import state_in_bytes
    from taskassign.formats.assignment import WHAT_IF, check_assignment, read_assignment
    from taskassign.formats.client_names import names_for_states, with_client_names
    from taskassign.formats.json_io import to_json_text

    old, new = read_assignment(before), read_assignment(after)
    application = load_scenario(scenario) if scenario is not None else None
    state = application.state if application is not None else None
    for path, document in ((before, old), (after, new)):  # what validate refuses, diff refuses too
        of_application = state is not None and WHAT_IF not in document.extras
        check_assignment(document, source=str(path), tasks=state.tasks if of_application and state else None)
    result = diff_assignments(
        old.assignment.by_process(), new.assignment.by_process(), state=state,
        before_metrics=_metrics(old, application, before), after_metrics=_metrics(new, application, after),
    )
    names = names_for_states(state) if state is not None else {}
    console = stdout_console()
    if as_json:
        console.out(to_json_text(with_client_names(result.to_document(), names)), end="")
        return
    in_bytes = state_in_bytes(state) if state is not None else False
    console.print(diff_text(result, title=f"{before.name} -> {after.name}", in_bytes=in_bytes, names=names))


def _metrics(document: AssignmentDocument, application: Scenario | None,
             path: Path) -> AssignmentMetrics | dict[str, Any] | None:
    """The side's metrics: computed on the application when given (per client too), else the file's own. A file
    computed on an altered input (``what_if``) is not of ``application``: its own metrics are used."""
    from taskassign.analysis.metrics import compute_metrics
    from taskassign.formats.assignment import WHAT_IF

    if application is not None and WHAT_IF not in document.extras:
        try:
            return compute_metrics(application.state, document.assignment)
        except UserInputError as exc:
            raise UserInputError(f"{path}: {exc} (is --scenario the application of both files?)") from None
    carried = document.extras.get("metrics")
    return dict(carried) if isinstance(carried, dict) else None
