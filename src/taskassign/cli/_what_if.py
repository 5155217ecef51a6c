"""The what-if flags every command that reads a scenario or group file takes (api/what_if.py does the work)."""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from taskassign.api.what_if import WhatIf, parse_what_if

__all__ = ("add_clients_option", "announce_what_if", "rack_down_option", "remove_client_option", "set_option",
           "what_if_from_flags")


def set_option() -> Any:
    return typer.Option(
        None, "--set", metavar="CONFIG=VALUE",
        help="What-if: set a Kafka Streams config as a properties file holds it (repeatable), e.g. "
             "num.standby.replicas=1, rack.aware.assignment.tags=zone,cell, task.assignor.class=sticky.")


def add_clients_option() -> Any:
    return typer.Option(
        None, "--add-clients", metavar="N[:threads=T,rack=R,tag.K=V]",
        help="What-if: add N new empty clients (repeatable); unspecified threads, rack and tags are those of the "
             "most common existing client. Their process ids are derived from the input's name (deterministic).")


def remove_client_option() -> Any:
    return typer.Option(None, "--remove-client", metavar="ID",
                        help="What-if: remove the client whose process id is (or starts with) ID (repeatable).")


def rack_down_option() -> Any:
    return typer.Option(None, "--rack-down", metavar="RACK",
                        help="What-if: remove every client on RACK (repeatable).")


def what_if_from_flags(sets: list[str] | None, add_clients: list[str] | None, remove_clients: list[str] | None,
                       racks_down: list[str] | None) -> WhatIf:
    return parse_what_if(sets or (), add_clients or (), remove_clients or (), racks_down or ())


def announce_what_if(console: Console, notes: tuple[str, ...]) -> None:
    """Say that the input was altered, and how, before any result computed from it."""
    if notes:
        console.print(f"[bold yellow]what-if:[/] input altered: [yellow]{escape('; '.join(notes))}[/]")
