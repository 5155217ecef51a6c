"""Habits of Kafka's own tools: -h and --version everywhere, one name for the output flag."""

from __future__ import annotations

from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import taskassign
from taskassign.cli import app

runner = CliRunner()


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    subs = getattr(command, "commands", None)
    if not subs:
        return [(path, command)]
    return [(path, command)] + [c for name, sub in sorted(subs.items()) for c in _commands(sub, (*path, name))]


COMMANDS = _commands(typer.main.get_command(app))


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p) or "root")
def test_h_and_version_work_everywhere(path: tuple[str, ...]) -> None:
    helped = runner.invoke(app, [*path, "-h"])
    assert helped.exit_code == 0 and "Usage" in helped.stdout, helped.output
    versioned = runner.invoke(app, [*path, "--version"])
    assert versioned.exit_code == 0 and versioned.stdout == f"taskassign {taskassign.__version__}\n", versioned.output


def test_every_output_flag_is_out_and_o() -> None:
    """Where a command writes a file or directory, ``-o/--out`` names it (``--output`` stays as an alias)."""
    wrong = []
    for path, command in COMMANDS:
        for param in command.params:
            opts = set(getattr(param, "opts", ()))
            if opts & {"--out", "--output", "-o"} and not {"--out", "-o"} <= opts:
                wrong.append(f"{' '.join(path)}: {sorted(opts)}")
    assert not wrong, wrong
