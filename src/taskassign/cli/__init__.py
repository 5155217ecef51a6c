"""The ``taskassign`` command. Each module here registers its commands on the shared app (``_app.py``), which
imports a command's module only when that command is asked for: ``taskassign --help`` and ``--version`` import
none, ``taskassign COMMAND ...`` (``-h`` included) only COMMAND's. ``taskassign.cli.app`` loads them all.
"""

from __future__ import annotations

import importlib
import logging

import typer

from taskassign.cli._app import COMMANDS
from taskassign.cli._app import app as _app

__all__ = ("COMMANDS", "app", "main")


class _WarningLines(logging.Handler):
    """The engine's warnings (``logging``) as ``warning: ...`` lines on stderr, instead of Python's bare
    last-resort output."""

    def emit(self, record: logging.LogRecord) -> None:
        from rich.markup import escape

        from taskassign.cli._common import stderr_console

        stderr_console().print(f"[yellow]warning:[/] {escape(record.getMessage())}")


def __getattr__(name: str) -> typer.Typer:
    if name == "app":  # every command registered (tests and tools walk them all)
        for module in dict.fromkeys(entry.module for entry in COMMANDS.values()):
            importlib.import_module(f"taskassign.cli.{module}")
        return _app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    engine = logging.getLogger("taskassign")
    if not engine.handlers:
        engine.addHandler(_WarningLines(logging.WARNING))
        engine.propagate = False
    _app()
