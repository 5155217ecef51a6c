"""Issue 26 point 4: the text naming an assignor is resolved once per run (``assignors.registry.resolve``), then
the resolved object travels: the registry is not re-read by the api, the leader, the fleet or the CLI."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import taskassign.assignors.registry as registry
from taskassign.api.application import read_application
from taskassign.api.assign import assign
from taskassign.api.compare import compare
from taskassign.cli import app
from taskassign.fleet import reasons as R
from taskassign.fleet.application import assign_application
from taskassign.fleet.bucket import bucket_table, process_bucket
from taskassign.fleet.tables import INPUT_TABLES
from taskassign.formats.group import read_group
from taskassign.leader.group import rebalance_group
from tests.fleet.inputs import app_input
from tests.fleet.snapshots import base_rows
from tests.helpers import EXAMPLES_DIR

SCENARIO = EXAMPLES_DIR / "scenarios" / "new-client-joins.scenario.json"
GROUP = EXAMPLES_DIR / "groups" / "orders-app.group.json"
PLUGIN = f"{EXAMPLES_DIR / 'custom_assignor.py'}:StateWeightedStickyAssignor"


@pytest.fixture
def resolutions(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every spec the registry reads (``resolve`` given a string, or ``_load`` importing a class)."""
    seen: list[str] = []
    real_resolve, real_load = registry.resolve, registry._load

    def counting_resolve(spec: Any, **kwargs: Any) -> registry.ResolvedAssignor:
        if isinstance(spec, str):
            seen.append(spec)
        return real_resolve(spec, **kwargs)

    def counting_load(target: str, spec: str) -> type[Any]:
        seen.append(f"load {spec}")
        return real_load(target, spec)

    monkeypatch.setattr(registry, "_load", counting_load)
    for module in ("taskassign.assignors.registry", "taskassign.leader.assign", "taskassign.leader.streams",
                   "taskassign.leader.group", "taskassign.api.compare", "taskassign.api.what_if",
                   "taskassign.api.streams", "taskassign.api.rebalance", "taskassign.fleet.application",
                   "taskassign.simulate.runner", "taskassign.fleet.bucket"):
        monkeypatch.setattr(f"{module}.resolve", counting_resolve)
    yield seen


@pytest.mark.parametrize("spec", ["high_availability", "streams_sticky", PLUGIN])
def test_api_assign_takes_the_resolved_assignor(resolutions: list[str], spec: str) -> None:
    scenario = read_application(SCENARIO)
    resolved = registry.resolve(spec)
    resolutions.clear()
    assign(scenario, resolved, with_metrics=True)
    assert resolutions == []


@pytest.mark.parametrize("spec", ["high_availability", "streams_sticky", PLUGIN])
def test_a_spec_given_to_the_api_is_resolved_once(resolutions: list[str], spec: str) -> None:
    assign(read_application(SCENARIO), spec)
    assert resolutions[0] == spec and len([r for r in resolutions if not r.startswith("load")]) == 1
    # a plug-in is imported in its own process (assignors.plugin_process), once: not in this one
    assert len([r for r in resolutions if r.startswith("load")]) == (1 if spec == "high_availability" else 0)


def test_the_leader_over_a_group_file_resolves_once(resolutions: list[str]) -> None:
    rebalance_group(read_group(GROUP), "sticky")
    assert resolutions == ["sticky", "load sticky"]


def test_compare_resolves_each_assignor_once(resolutions: list[str]) -> None:
    compare(read_application(SCENARIO), ["high_availability", "state_aware", "streams_sticky"])
    assert resolutions == ["high_availability", "load high_availability", "state_aware", "load state_aware",
                           "streams_sticky"]


def test_a_bucket_resolves_the_runs_assignor_once(resolutions: list[str]) -> None:
    rows = base_rows()
    second = copy.deepcopy(rows)  # the same application under another id: two applications in the bucket
    for table in second.values():
        for row in table:
            row["app_id"] = "payments-app"
    tables = {n: bucket_table(spec, rows[n] + second[n]) for n, spec in INPUT_TABLES.items()}
    result = process_bucket(tables, assignor_override="sticky")
    assert [r["status"] for r in result.results] == [R.STATUS_ASSIGNED] * 2
    assert resolutions == ["sticky", "load sticky"]


def test_a_fleet_application_resolves_its_assignor_once(resolutions: list[str]) -> None:
    assign_application(app_input(), assignor_override="sticky")
    assert resolutions == ["sticky", "load sticky"]


@pytest.mark.parametrize(("args", "expected"), [
    (["assign", str(SCENARIO), "-a", "legacy_sticky"], ["legacy_sticky", "load legacy_sticky"]),
    (["assign", str(SCENARIO), "-a", PLUGIN], [PLUGIN]),  # imported in its own process
    (["assign", str(SCENARIO), "-a", "streams_balanced"], ["streams_balanced"]),
    (["rebalance", str(GROUP), "-a", "sticky"], ["sticky", "load sticky"]),
])
def test_a_cli_run_resolves_the_users_assignor_once(resolutions: list[str], args: list[str],
                                                    expected: list[str], tmp_path: Path) -> None:
    result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "out.json")])
    assert result.exit_code == 0, result.output
    assert resolutions == expected

