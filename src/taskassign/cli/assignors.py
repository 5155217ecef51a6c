"""``taskassign assignors``: the built-in assignors."""

from __future__ import annotations

from taskassign.cli._app import app
from taskassign.cli._common import handle_errors, new_table, stdout_console


@app.command("assignors")
@handle_errors
def list_assignors() -> None:
    """List the built-in assignors (any module:Class or file.py:Class works too)."""
    from taskassign.assignors.registry import BUILTIN_ASSIGNORS, DEFAULT_ASSIGNOR, STREAMS_GROUP_ASSIGNORS

    table = new_table()
    table.add_column("name")
    table.add_column("what it does")
    for name, (_, description) in sorted(BUILTIN_ASSIGNORS.items()):
        table.add_row(name + (" (default)" if name == DEFAULT_ASSIGNOR else ""), description)
    for name, (_, description) in STREAMS_GROUP_ASSIGNORS.items():
        table.add_row(name, description)
    stdout_console().print(table)
