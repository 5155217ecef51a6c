"""``taskassign`` imports a command's module only when the command is asked for: the table it goes by
(``cli._app.COMMANDS``) must name every command, in the order of the help, with the one-line help the command
itself has, and a lone command module must still run as ``taskassign <command> ...``."""

from __future__ import annotations

import inspect
import subprocess
import sys

import typer.main

from taskassign.cli import COMMANDS, app


def test_the_command_table_names_every_registered_command_and_group() -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, typer.main.TyperGroup)
    assert list(group.commands) == list(COMMANDS)


def test_the_table_has_each_commands_own_summary() -> None:
    """What ``taskassign --help`` lists without importing a command: the first paragraph of its help."""
    group = typer.main.get_group(app)
    summaries = {name: inspect.cleandoc(command.help or "").split("\n\n")[0].strip()
                 for name, command in group.commands.items()}
    assert summaries == {name: entry.summary for name, entry in COMMANDS.items()}


def test_one_command_runs_with_only_its_module_imported() -> None:
    code = ("import sys; from taskassign.cli import main\n"
            "sys.argv = ['taskassign', 'assignors']\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "print(sorted(m for m in sys.modules\n"
            "             if m.startswith('taskassign.cli.') and not m.startswith('taskassign.cli._')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "high_availability" in done.stdout  # the command ran, named as a subcommand
    assert done.stdout.strip().splitlines()[-1] == "['taskassign.cli.assignors']"


def test_a_mistyped_command_is_told_the_near_names() -> None:
    done = subprocess.run([sys.executable, "-m", "taskassign", "asign"], capture_output=True, text=True)
    assert done.returncode == 2 and "Did you mean 'assign'" in done.stderr
