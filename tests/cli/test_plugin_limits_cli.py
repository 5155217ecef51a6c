"""Issue 32 point 4: a plug-in that exits, hangs, allocates without bound or prints to stdout ends as one line
naming it and exit 1, in every command that runs plug-ins; check-assignor reports it as a finding. Nothing it
prints reaches taskassign's stdout."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from tests.assignors.hostile_plugins import KINDS, LIMITS, spec
from tests.helpers import EXAMPLES_DIR

SCENARIO = EXAMPLES_DIR / "scenarios" / "new-client-joins.scenario.json"
GROUP = EXAMPLES_DIR / "groups" / "orders-app.group.json"
EVENTS = EXAMPLES_DIR / "events" / "scale-out.events.json"


def _commands(plugin: str, out: Path) -> dict[str, list[str]]:
    return {
        "assign": ["assign", str(SCENARIO), "-a", plugin, "--json"],
        "compare": ["compare", str(SCENARIO), "-a", f"high_availability,{plugin}", "--json"],
        "simulate": ["simulate", str(SCENARIO), "-e", str(EVENTS), "-a", plugin, "-o", str(out / "sim")],
        "rebalance": ["rebalance", str(GROUP), "-a", plugin, "-o", str(out / "r.json")],
        "streams-migration": ["streams-migration", str(SCENARIO), "--classic", plugin, "--json"],
    }


def _one_line_error(output: str, kind: str) -> None:
    """One message, no traceback (the console is wide enough not to wrap it: the path's length varies)."""
    text = output.strip()
    assert "Traceback" not in output and text.count("plug-in assignor") == 1, output
    assert re.fullmatch(rf"(failed: )?plug-in assignor \S*hostile_plugins\.py:{kind} failed in \S+: PluginFailure: "
                        rf"its? {KINDS[kind]}.*", text), text


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("command", ["assign", "compare", "simulate", "rebalance", "streams-migration"])
def test_a_hostile_plugin_ends_the_command_with_one_line_and_exit_1(command: str, kind: str,
                                                                     tmp_path: Path) -> None:
    args = _commands(spec(kind), tmp_path)[command]
    result = CliRunner().invoke(app, [*args, *LIMITS], env={"COLUMNS": "1000"})
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert "computing the assignment" not in result.stdout  # its output never reaches ours
    _one_line_error(result.stderr, kind)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_check_assignor_reports_each_as_a_finding(kind: str) -> None:
    result = CliRunner().invoke(
        app, ["check-assignor", spec(kind), "--scenarios", str(SCENARIO), "--random", "1", "--json", *LIMITS])
    assert result.exit_code == 1, (result.stdout, result.stderr)
    report = json.loads(result.stdout)  # stdout is the document and nothing else
    raised = [f for f in report["findings"] if f["check"] == "raised"]
    assert raised and all(re.search(KINDS[kind], f["message"]) for f in raised), report["findings"]


def test_a_plugin_that_exits_while_loading_is_one_line(tmp_path: Path) -> None:
    plugin = tmp_path / "exits_on_import.py"
    plugin.write_text("import sys\nprint('loading')\nsys.exit(4)\n")
    result = CliRunner().invoke(app, ["assign", str(SCENARIO), "-a", f"{plugin}:A", "--json"])
    assert result.exit_code == 1 and result.stdout == ""
    assert re.fullmatch(r"failed: plug-in assignor \S*exits_on_import\.py:A failed in import: PluginFailure: "
                        r"it called sys\.exit\(4\).*", result.stderr.replace("\n", ""))


def test_a_well_behaved_plugin_still_runs(tmp_path: Path) -> None:
    plugin = f"{EXAMPLES_DIR / 'custom_assignor.py'}:StateWeightedStickyAssignor"
    result = CliRunner().invoke(app, ["assign", str(SCENARIO), "-a", plugin, "--json", *LIMITS])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["clients"]
