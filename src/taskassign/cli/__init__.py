"""The ``taskassign`` command. Each module here registers its commands on the shared app.

``main`` imports only the module of the command it runs: importing all of them (capture's TLS and cluster
client, the simulator, Spark's launcher, ...) took ~0.15 s of every command's start. ``taskassign.cli.app``
(and ``main`` without a known command name, e.g. ``taskassign --help``) loads them all.
"""

from __future__ import annotations

import importlib
import logging
import sys

import typer

from taskassign.cli._app import app as _app

#: Every top-level command (or command group) and the module that registers it, in registration order
#: (the help lists them in this order; tests/cli check the table against the commands).
COMMAND_MODULES: dict[str, str] = {
    "assign": "assign", "assignors": "assignors", "capture": "capture", "check-assignor": "check_assignor",
    "compare": "compare", "diff": "diff", "fleet": "fleet", "optimize": "optimize", "pipeline": "pipeline",
    "rebalance": "rebalance", "report": "report", "simulate": "simulate", "streams-migration": "streams_migration",
    "validate": "validate", "decode": "wire", "encode": "wire", "bridge": "bridge", "serve": "serve", "plan": "plan",
    "approve": "plan",
}

__all__ = ("app", "main")


class _WarningLines(logging.Handler):
    """The engine's warnings (``logging``) as ``warning: ...`` lines on stderr, instead of Python's bare
    last-resort output."""

    def emit(self, record: logging.LogRecord) -> None:
        from rich.markup import escape

        from taskassign.cli._common import stderr_console

        stderr_console().print(f"[yellow]warning:[/] {escape(record.getMessage())}")


def load_commands(command: str | None = None) -> typer.Typer:
    """The app with ``command``'s module registered (every module when ``command`` is not a command name)."""
    modules = [COMMAND_MODULES[command]] if command in COMMAND_MODULES else COMMAND_MODULES.values()
    for module in dict.fromkeys(modules):
        importlib.import_module(f"taskassign.cli.{module}")
    return _app


def __getattr__(name: str) -> typer.Typer:
    if name == "app":
        return load_commands()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    engine = logging.getLogger("taskassign")
    if not engine.handlers:
        engine.addHandler(_WarningLines(logging.WARNING))
        engine.propagate = False
    load_commands(sys.argv[1] if len(sys.argv) > 1 else None)()
