"""What the what-if flags (``_options.SetConfigs``, ``AddClients``, ``RemoveClients``, ``RacksDown``) become, and
how a command says it altered its input (api/what_if.py does the work)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from taskassign.cli._common import escape

if TYPE_CHECKING:
    from rich.console import Console

    from taskassign.api.what_if import WhatIf

__all__ = ("announce_what_if", "what_if_flags_text", "what_if_from_flags")


def what_if_from_flags(sets: list[str] | None, add_clients: list[str] | None, remove_clients: list[str] | None,
                       racks_down: list[str] | None) -> WhatIf:
    from taskassign.api.what_if import parse_what_if

    return parse_what_if(sets or (), add_clients or (), remove_clients or (), racks_down or ())


def announce_what_if(console: Console, notes: tuple[str, ...]) -> None:
    """Say that the input was altered, and how, before any result computed from it."""
    if notes:
        console.print(f"[bold yellow]what-if:[/] input altered: [yellow]{escape('; '.join(notes))}[/]")


def what_if_flags_text(what_if: WhatIf) -> str:
    """The flags that give ``what_if`` again, for the command a verdict suggests next."""
    import shlex

    parts = [f"--set {shlex.quote(f'{k}={v}')}" for k, v in what_if.configs]
    parts += [f"--remove-client {shlex.quote(c)}" for c in what_if.remove_clients]
    parts += [f"--rack-down {shlex.quote(r)}" for r in what_if.racks_down]
    for batch in what_if.add_clients:
        shape = [f"threads={batch.shape.threads}"] if batch.shape.threads is not None else []
        shape += [f"rack={batch.shape.rack}"] if batch.shape.rack is not None else []
        shape += [f"tag.{k}={v}" for k, v in batch.shape.tags or ()]
        parts.append(f"--add-clients {shlex.quote(str(batch.count) + (':' + ','.join(shape) if shape else ''))}")
    return " ".join(parts)
