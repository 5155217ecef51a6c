"""The typer application every command module registers on."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="taskassign",
    help="Kafka Streams task assignment: assign, validate, optimise, simulate, and run fleets on Spark.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


@app.callback()
def _group() -> None:
    # A callback keeps the app a command group when ``main`` has registered a single command's module
    # (typer would otherwise run that lone command without its name).
    pass
