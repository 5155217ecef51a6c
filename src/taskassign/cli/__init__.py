"""The ``taskassign`` command. Each module here registers its commands on the shared app."""

from __future__ import annotations

from taskassign.cli import (  # noqa: F401  (registers commands)
    assign,
    assignors,
    capture,
    fleet,
    optimize,
    pipeline,
    rebalance,
    report,
    simulate,
    validate,
    wire,
)
from taskassign.cli._app import app

__all__ = ("app", "main")


def main() -> None:
    app()
