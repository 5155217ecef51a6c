"""``assign --strict`` (an incomplete assignment exits 1) and ``--debug`` (a plug-in's traceback), and the one-line
message every plug-in failure gets."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskassign.assignors.registry import PluginAssignor, create_assignor
from taskassign.cli import app
from taskassign.errors import PluginAssignorError, TaskAssignmentException
from taskassign.formats.scenario import read_scenario
from taskassign.leader.assign import assign_scenario
from tests.assignors.plugins import spec
from tests.helpers import EXAMPLES_DIR

runner = CliRunner()
EXAMPLE = EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json"


def test_strict_exits_1_when_tasks_are_unassigned() -> None:
    loose = runner.invoke(app, ["assign", str(EXAMPLE), "-a", spec("DropsEverything")])
    assert loose.exit_code == 0, loose.output  # Kafka's validation lets it through
    strict = runner.invoke(app, ["assign", str(EXAMPLE), "-a", spec("DropsEverything"), "--strict"])
    assert strict.exit_code == 1
    assert "incomplete (--strict)" in strict.output and "8 task(s) have no active owner" in strict.output


def test_strict_exits_1_when_standbys_are_missing() -> None:
    result = runner.invoke(app, ["assign", str(EXAMPLE), "-a", spec("ActivesOnly"), "--strict", "--json"])
    assert result.exit_code == 1
    assert "4 standby replica(s) missing over 4 task(s)" in result.stderr
    assert '"complete": false' in result.stdout  # the document is still printed


def test_strict_passes_a_complete_assignment() -> None:
    assert runner.invoke(app, ["assign", str(EXAMPLE), "--strict"]).exit_code == 0


def test_strict_counts_incomplete_scenarios_of_a_directory(tmp_path: Path) -> None:
    scenarios = EXAMPLES_DIR / "scenarios"
    args = ["assign", str(scenarios), "--out-dir", str(tmp_path / "out"), "-a", spec("ActivesOnly")]
    assert runner.invoke(app, args).exit_code == 0
    strict = runner.invoke(app, [*args[:3], str(tmp_path / "strict"), *args[4:], "--strict"])
    assert strict.exit_code == 1 and "or incomplete (--strict)" in strict.output


def test_strict_is_refused_under_the_streams_protocol() -> None:
    result = runner.invoke(app, ["assign", str(EXAMPLE), "-a", "streams_sticky", "--strict"])
    assert result.exit_code == 2 and "--strict" in result.output


@pytest.mark.parametrize(("plugin", "method", "detail"), [
    ("KeyErrorInAssign", "assign()", "KeyError: 'missing'"),
    ("FailsToConfigure", "configure()", "ValueError: needs my.custom.config"),
    ("CallbackCrashes", "on_assignment_computed()", "RuntimeError: callback bug"),
])
def test_a_plugin_exception_is_one_line_naming_the_assignor(plugin: str, method: str, detail: str) -> None:
    result = runner.invoke(app, ["assign", str(EXAMPLE), "-a", spec(plugin)])
    assert result.exit_code == 1
    message = " ".join(result.stderr.split())  # rich wraps long lines
    assert f"failed: plug-in assignor {spec(plugin)} failed in {method}: {detail}" in message
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)


def test_debug_adds_the_plugins_traceback() -> None:
    result = runner.invoke(app, ["assign", str(EXAMPLE), "-a", spec("KeyErrorInAssign"), "--debug"])
    assert result.exit_code == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert 'return {}["missing"]' in result.stderr  # the plug-in's own line
    assert "failed: plug-in assignor" in result.stderr


def test_a_plugin_failure_in_a_directory_fails_that_case_only(tmp_path: Path) -> None:
    result = runner.invoke(app, ["assign", str(EXAMPLES_DIR / "scenarios"), "--out-dir", str(tmp_path / "out"),
                                 "-a", spec("KeyErrorInAssign")])
    assert result.exit_code == 1
    cases = len(list((EXAMPLES_DIR / "scenarios").glob("*.scenario.json")))
    assert cases >= 3
    assert result.output.count("KeyError: 'missing'") == cases  # each case failed alone, none stopped the run
    assert "Traceback" not in result.output


def test_plugins_are_wrapped_and_builtins_are_not() -> None:
    plugin = create_assignor(spec("ActivesOnly"))
    assert isinstance(plugin, PluginAssignor) and plugin.name == spec("ActivesOnly")
    assert not isinstance(create_assignor("identity"), PluginAssignor)


def test_task_assignment_exception_still_keeps_the_previous_assignment(tmp_path: Path) -> None:
    from tests.fleet.assignors import spec as fleet_spec

    result = assign_scenario(read_scenario(EXAMPLE), fleet_spec("GivesUp"))
    assert result.fallback_reason == "not today"
    with pytest.raises(PluginAssignorError) as raised:
        assign_scenario(read_scenario(EXAMPLE), spec("KeyErrorInAssign"))
    assert raised.value.method == "assign()" and isinstance(raised.value.exception, KeyError)
    assert isinstance(raised.value.__cause__, KeyError) and not isinstance(raised.value, TaskAssignmentException)
