"""``taskassign`` imports only the module of the command it runs: the table it goes by must name every
command, and a lone command module must still run as ``taskassign <command> ...``."""

from __future__ import annotations

import subprocess
import sys

import typer.main

from taskassign.cli import COMMAND_MODULES, app


def test_the_command_table_names_every_registered_command_and_group() -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, typer.main.TyperGroup)
    assert sorted(group.commands) == sorted(COMMAND_MODULES)


def test_one_command_runs_with_only_its_module_imported() -> None:
    code = ("import sys; from taskassign.cli import main\n"
            "sys.argv = ['taskassign', 'assignors']\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "print(sorted(m for m in sys.modules\n"
            "             if m.startswith('taskassign.cli.') and not m.startswith('taskassign.cli._')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "high_availability" in done.stdout  # the command ran, named as a subcommand
    assert done.stdout.strip().splitlines()[-1] == "['taskassign.cli.assignors']"
