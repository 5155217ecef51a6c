"""The ``taskassign`` command. Each module here registers its commands on the shared app."""

from __future__ import annotations

import logging

from taskassign.cli import (  # noqa: F401  (registers commands)
    assign,
    assignors,
    capture,
    check_assignor,
    compare,
    diff,
    fleet,
    optimize,
    pipeline,
    rebalance,
    report,
    simulate,
    streams_migration,
    validate,
    wire,
)
from taskassign.cli._app import app

__all__ = ("app", "main")


class _WarningLines(logging.Handler):
    """The engine's warnings (``logging``) as ``warning: ...`` lines on stderr, instead of Python's bare
    last-resort output."""

    def emit(self, record: logging.LogRecord) -> None:
        from rich.markup import escape

        from taskassign.cli._common import stderr_console

        stderr_console().print(f"[yellow]warning:[/] {escape(record.getMessage())}")


def main() -> None:
    engine = logging.getLogger("taskassign")
    if not engine.handlers:
        engine.addHandler(_WarningLines(logging.WARNING))
        engine.propagate = False
    app()
