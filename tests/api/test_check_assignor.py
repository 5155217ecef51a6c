"""``taskassign check-assignor`` and its engine side: every check can fail, Kafka's own assignors pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskassign.api.check_assignor import FAILING_CHECKS, check_case, check_cases, scenario_files
from taskassign.api.random_applications import random_application, random_applications
from taskassign.assignors.registry import BUILTIN_ASSIGNORS
from taskassign.cli import app
from taskassign.cli.check_assignor import shipped_scenarios
from taskassign.formats.scenario import read_scenario, scenario_to_dict
from tests.assignors.plugins import spec
from tests.helpers import EXAMPLES_DIR

runner = CliRunner()
EXAMPLE = EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json"


def test_random_applications_are_seeded_per_index() -> None:
    assert scenario_to_dict(random_application(3, 7)) == scenario_to_dict(list(random_applications(8, 3))[7])
    assert scenario_to_dict(random_application(3, 7)) != scenario_to_dict(random_application(4, 7))
    assert [s.name for s in random_applications(2, 5)] == ["random-5-0", "random-5-1"]


def test_random_applications_cover_the_corners() -> None:
    scenarios = list(random_applications(200, 0))
    states = [s.state for s in scenarios]
    assert any(s.configs.num_standby_replicas >= len(s.clients) for s in states)  # more standbys than fit
    assert any(s.configs.rack_aware_assignment_tags for s in states)
    assert any(s.configs.rack_aware_assignment_strategy != "none" for s in states)
    assert any(not s.stateful_task_ids for s in states) or any(
        len(s.stateful_task_ids) < len(s.tasks) for s in states)
    offsets = {o for s in states for c in s.clients.values() for o in c.task_offset_sums.values()}
    assert {-2, -3, 0, 2**63 - 1} <= offsets
    assert any(all(not c.previous_active_tasks for c in s.clients.values()) for s in states)


@pytest.mark.parametrize("assignor", sorted(set(BUILTIN_ASSIGNORS) - {"identity"}))
def test_kafkas_assignors_pass_every_failing_check(assignor: str) -> None:
    report = check_cases(assignor, [*scenario_files([EXAMPLES_DIR / "scenarios"]), *random_applications(60, 1)])
    assert report.ok, report.lines()


def test_identity_fails_where_nobody_ran_a_task() -> None:
    report = check_cases("identity", random_applications(40, 0))
    assert not report.ok and report.cases_by_check()["unassigned"] > 0


@pytest.mark.parametrize(("plugin", "check"), [
    ("KeyErrorInAssign", "raised"),
    ("FailsToConfigure", "raised"),
    ("InventsTasks", "invalid"),
    ("DropsEverything", "unassigned"),
    ("ActivesOnly", "standbys"),
    ("Nondeterministic", "deterministic"),
])
def test_each_failing_check_catches_its_plugin(plugin: str, check: str) -> None:
    case = check_case(spec(plugin), read_scenario(EXAMPLE))
    assert not case.ok
    assert check in {f.check for f in case.findings if f.fails}, case.findings


def test_a_plugin_exception_names_the_assignor_and_keeps_the_exception() -> None:
    case = check_case(spec("KeyErrorInAssign"), read_scenario(EXAMPLE))
    [finding] = case.findings
    assert finding.message == f"plug-in assignor {spec('KeyErrorInAssign')} failed in assign(): KeyError: 'missing'"
    assert isinstance(case.exception, Exception)


def test_giving_up_is_noted_not_failed() -> None:
    from tests.fleet.assignors import spec as fleet_spec

    case = check_case(fleet_spec("GivesUp"), read_scenario(EXAMPLE))
    assert "gave_up" in {f.check for f in case.findings} and "gave_up" not in FAILING_CHECKS


def test_the_shipped_scenarios_are_found() -> None:
    names = [p.name for p in shipped_scenarios()]
    assert "two-racks-one-standby.scenario.json" in names and "orders-app.group.json" in names


def test_cli_passes_the_example_plugin() -> None:
    result = runner.invoke(app, ["check-assignor", f"{EXAMPLES_DIR / 'custom_assignor.py'}:StateWeightedStickyAssignor",
                                 "--random", "20"])
    assert result.exit_code == 0, result.output
    shipped = len(shipped_scenarios())
    assert f"{shipped + 20} applications ({shipped} shipped, 20 random" in result.output
    assert "every application passed" in result.output


def test_cli_fails_a_broken_plugin_and_saves_the_failures(tmp_path: Path) -> None:
    saved = tmp_path / "failing"
    result = runner.invoke(app, ["check-assignor", spec("ActivesOnly"), "--random", "20", "--seed", "3",
                                 "--save-failures", str(saved)])
    assert result.exit_code == 1
    assert "standbys" in result.output and "FAIL" in result.output
    written = sorted(p.name for p in saved.iterdir())
    assert "two-racks-one-standby.scenario.json" in written
    # a saved random case replays as the same application
    random_case = next(n for n in written if n.startswith("random-3-"))
    index = int(random_case.removesuffix(".scenario.json").rsplit("-", 1)[1])
    replayed = read_scenario(saved / random_case)
    assert replayed.state == random_application(3, index).state
    strict = runner.invoke(app, ["assign", str(saved / random_case), "-a", spec("ActivesOnly"), "--strict"])
    assert strict.exit_code == 1


def test_cli_json_lists_every_finding() -> None:
    result = runner.invoke(app, ["check-assignor", spec("DropsEverything"), "--random", "5", "--json",
                                 "--scenarios", str(EXAMPLE)])
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["ok"] is False and doc["applications"] == 6 and doc["checks"]["unassigned"]["applications"] == 6
    assert {f["check"] for f in doc["findings"] if f["fails"]} >= {"unassigned"}


def test_cli_debug_prints_the_plugins_traceback() -> None:
    result = runner.invoke(app, ["check-assignor", spec("KeyErrorInAssign"), "--random", "1", "--debug",
                                 "--scenarios", str(EXAMPLE)])
    assert result.exit_code == 1 and 'return {}["missing"]' in result.stderr
    plain = runner.invoke(app, ["check-assignor", spec("KeyErrorInAssign"), "--random", "1",
                                "--scenarios", str(EXAMPLE)])
    assert "Traceback" not in plain.output


def test_cli_bad_input_exits_2(tmp_path: Path) -> None:
    assert runner.invoke(app, ["check-assignor", "no_such_assignor"]).exit_code == 2
    missing = runner.invoke(app, ["check-assignor", "identity", "--scenarios", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "--scenarios" in missing.output
    assert runner.invoke(app, ["check-assignor", "identity", "--random", "-1"]).exit_code == 2
