"""The typer application every command module registers on, with the habits of Kafka's own tools:
``-h`` beside ``--help`` and ``--version`` on the root and on every command."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import typer
from typer.core import TyperGroup


def _version() -> str:
    """The installed distribution's version (the package's top is above the CLI, so not ``__version__``)."""
    try:
        return importlib.metadata.version("taskassign")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _print_version(ctx: typer.Context, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        typer.echo(f"taskassign {_version()}")
        raise typer.Exit()


def _version_parameter() -> Any:
    """The ``--version`` flag as typer builds it (eager, never passed to the command), made once and shared."""
    probe = typer.Typer()

    @probe.command()
    def _probe(_version: bool = typer.Option(False, "--version", is_eager=True, expose_value=False,
                                             callback=_print_version, help="Show the version and exit.")) -> None:
        """Only its parameter is used."""

    return typer.main.get_command(probe).params[0]


_VERSION = _version_parameter()


def _with_version(command: Any) -> Any:
    """``--version`` on ``command`` (and, for a group such as ``fleet``, on each of its commands)."""
    if all(p is not _VERSION for p in command.params):
        command.params.append(_VERSION)
    for sub in getattr(command, "commands", {}).values():
        _with_version(sub)
    return command


class _KafkaToolGroup(TyperGroup):
    """The root group: it and every command it hands out take ``--version``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _with_version(self)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        return _with_version(command) if command is not None else None


app = typer.Typer(
    name="taskassign",
    help="Kafka Streams task assignment: assign, validate, optimise, simulate, and run fleets on Spark.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    cls=_KafkaToolGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _group() -> None:
    # A callback keeps the app a command group when ``main`` has registered a single command's module
    # (typer would otherwise run that lone command without its name).
    pass
