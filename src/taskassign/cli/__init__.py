"""The ``taskassign`` command. Each module here registers its commands on the shared app."""

from __future__ import annotations

from taskassign.cli import assign, assignors, fleet, pipeline, validate  # noqa: F401  (registers commands)
from taskassign.cli._app import app

__all__ = ("app", "main")


def main() -> None:
    app()
