"""Every concrete ``taskassign`` command the README, docs/commands.md and docs/assignors.md show runs as written
(in that order, in one scratch directory, so an example may use what an earlier one wrote: ``report sim/`` after
``simulate --out sim/``).

A command with placeholders (``SCENARIO``, ``GROUP.json``, ``[--json]``, ``a|b``) is a synopsis, not an example.
``pipeline run`` needs Spark (the quickstart's own CI runs it) and ``capture`` a live cluster: both are listed,
not run here.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskassign.cli import app

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
#: The README and the pages that hold what used to be its catalogue: their examples must run too.
DOCUMENTS = (README, ROOT / "docs" / "commands.md", ROOT / "docs" / "assignors.md")
NOT_RUN_HERE = ("pipeline run", "capture")
_PLACEHOLDER = re.compile(r"(^|[/=])[A-Z][A-Z_]*[A-Z](\.|$|[^a-z])|[|\[\]…]|\.\.\.")


def _candidates(text: str) -> list[str]:
    """Commands in inline code spans (which may wrap lines) and in fenced blocks (with ``\\`` continuations)."""
    found: list[tuple[int, str]] = []
    for block in re.finditer(r"```[a-z]*\n(.*?)```", text, re.S):
        for line in block.group(1).replace("\\\n", " ").splitlines():
            found.append((block.start(), line))
    without_blocks = re.sub(r"```.*?```", lambda m: " " * len(m.group(0)), text, flags=re.S)
    for span in re.finditer(r"`([^`]+)`", without_blocks):
        if re.match(r"(\.venv/bin/)?taskassign ", span.group(1)):
            found.append((span.start(), " ".join(span.group(1).split())))
    commands = []
    for _, line in sorted(found):
        match = re.search(r"(?:^|&& )(?:\.venv/bin/)?taskassign (.+)$", line.split("#")[0].strip())
        if match:
            commands.append(match.group(1).strip())
    return commands


def readme_examples() -> list[str]:
    """The README's concrete examples: at least a command and an argument, no placeholder."""
    examples = []
    commands = [c for document in DOCUMENTS for c in _candidates(document.read_text(encoding="utf-8"))]
    for command in commands:
        tokens = command.split()
        if (len(tokens) >= 2 or tokens == ["assignors"]) and not any(_PLACEHOLDER.search(t) for t in tokens):
            examples.append(command)
    return examples


EXAMPLES = readme_examples()


def test_the_readme_has_examples_of_the_main_commands() -> None:
    firsts = {e.split()[0] for e in EXAMPLES}
    assert {"assign", "simulate", "report", "optimize", "pipeline"} <= firsts, EXAMPLES


def test_every_readme_example_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    runner = CliRunner()
    ran, failures = [], []
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for command in EXAMPLES:
            if command.startswith(NOT_RUN_HERE):
                continue
            result = runner.invoke(app, shlex.split(command))
            ran.append(command)
            if result.exit_code != 0:
                failures.append(f"taskassign {command}: exit {result.exit_code}\n{result.output[-800:]}")
    finally:
        os.chdir(cwd)
    assert ran, EXAMPLES
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("synopsis", ["assign SCENARIO", "optimize SCENARIO --active|--standby [-o OUT]",
                                      "simulate SCENARIO --events EVENTS.json [--out DIR]",
                                      "assign GROUP.streams-group.json", "decode subscription|assignment HEX"])
def test_synopses_are_not_taken_for_examples(synopsis: str) -> None:
    assert any(_PLACEHOLDER.search(t) for t in synopsis.split())
