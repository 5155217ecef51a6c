"""``taskassign optimize`` semantics, and golden parity on Kafka's own rack_optimize_* outputs (issue item 1)."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from taskassign.api.optimize import Api, Role, TaskSelection, optimization_document, optimize_scenario
from taskassign.configs import RACK_SOLVER
from taskassign.errors import RackAwareOptimizationError
from taskassign.formats.scenario import Scenario, read_scenario, with_config_overrides
from taskassign.model import KafkaStreamsAssignment
from taskassign.rack.balance_subtopology import groups_by_subtopology
from tests.helpers import GOLDEN_DIR, PID_1, PID_2, tid
from tests.rack.instances import racked_client, racked_state, racked_task

CASES = {
    role: sorted((GOLDEN_DIR / f"rack_optimize_{role.value}").glob("*.scenario.json"))
    for role in (Role.ACTIVE, Role.STANDBY)
}


def _golden(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.with_name(path.name.replace(".scenario.", ".assignment.")).read_text())
    return doc


def _run(path: Path, role: Role, solver: str) -> dict[str, Any]:
    scenario = with_config_overrides(read_scenario(path), {RACK_SOLVER: solver})
    return optimization_document(optimize_scenario(scenario, role))


def _tasks(doc: dict[str, Any], kind: str) -> dict[str, set[str]]:
    return {pid: set(client[kind]) for pid, client in doc["clients"].items()}


def _counts(doc: dict[str, Any], kind: str) -> dict[str, int]:
    return {pid: len(client[kind]) for pid, client in doc["clients"].items()}


@pytest.mark.parametrize("role", [Role.ACTIVE, Role.STANDBY])
def test_golden_cases_cover_both_folders(role: Role) -> None:
    assert len(CASES[role]) == {Role.ACTIVE: 61, Role.STANDBY: 36}[role]


@pytest.mark.parametrize("path", CASES[Role.ACTIVE] + CASES[Role.STANDBY], ids=lambda p: p.name.split(".")[0])
def test_kafka_solver_reproduces_kafka_exactly(path: Path) -> None:
    role = Role.ACTIVE if "rack_optimize_active" in str(path) else Role.STANDBY
    golden, ours = _golden(path), _run(path, role, "kafka")
    assert golden["golden"]["compare"] == (["active", "optimizer_cost"] if role is Role.ACTIVE
                                           else ["active", "standby", "optimizer_cost"])
    assert ours["optimizer_cost"] == golden["optimizer_cost"]
    assert _tasks(ours, "active") == _tasks(golden, "active")
    if role is Role.STANDBY:
        assert _tasks(ours, "standby") == _tasks(golden, "standby")


@pytest.mark.parametrize("path", CASES[Role.ACTIVE] + CASES[Role.STANDBY], ids=lambda p: p.name.split(".")[0])
def test_default_solver_matches_kafkas_cost_counts_and_caps(path: Path) -> None:
    role = Role.ACTIVE if "rack_optimize_active" in str(path) else Role.STANDBY
    golden, ours = _golden(path), _run(path, role, "min_cost_flow")
    assert ours["details"]["solver"] == "min_cost_flow"
    assert ours["optimizer_cost"] == golden["optimizer_cost"]
    kind = role.value
    assert _counts(ours, kind) == _counts(golden, kind)
    if role is Role.STANDBY:
        assert _tasks(ours, "active") == _tasks(golden, "active")
        return
    scenario = read_scenario(path)
    if scenario.state.configs.rack_aware_assignment_strategy == "balance_subtopology":
        _assert_within_subtopology_caps(scenario, ours)


def _assert_within_subtopology_caps(scenario: Scenario, doc: dict[str, Any]) -> None:
    """Kafka's per-subtopology capacity ceil(count / T * n_g) holds for every client and subtopology."""
    chosen = set(scenario.state.stateful_task_ids)
    total = len(chosen)
    for group in groups_by_subtopology(scenario.state.task_ids):
        members = {str(t) for t in group if t in chosen}
        for client in doc["clients"].values():
            count = len(client["active"])
            received = len(members & set(client["active"]))
            assert received <= (0 if count == 0 else math.ceil(count * 1.0 / total * len(members)))


def _scenario(**configs: object) -> Scenario:
    tasks = [racked_task("0_0", [["r2"]], [["r2"]]), racked_task("0_1", [["r1"]], [["r1"]]),
             racked_task("1_0", [["r1"]], stateful=False)]
    state = racked_state(tasks, [racked_client(1, "r1"), racked_client(2, "r2")], **configs)
    current = {PID_1: KafkaStreamsAssignment.of_tasks(PID_1, [tid("0_0"), tid("1_0")], [tid("0_1")]).
               with_followup_rebalance(7),
               PID_2: KafkaStreamsAssignment.of_tasks(PID_2, [tid("0_1")], [tid("0_0")])}
    return Scenario("tiny", state, current_assignment=current)


def test_internal_active_uses_ha_default_costs_and_swaps_roles_with_standbys() -> None:
    result = optimize_scenario(_scenario(rack_aware_assignment_strategy="min_traffic"), Role.ACTIVE)
    assert (result.traffic_cost, result.non_overlap_cost, result.initial_cost, result.cost) == (10, 1, 20, 2)
    assert result.moved_tasks == (tid("0_0"), tid("0_1"))
    p1, p2 = result.assignments[PID_1], result.assignments[PID_2]
    assert (set(p1.active_tasks()), set(p1.standby_tasks())) == ({tid("0_1"), tid("1_0")}, {tid("0_0")})
    assert (set(p2.active_tasks()), set(p2.standby_tasks())) == ({tid("0_0")}, {tid("0_1")})
    assert p1.followup_rebalance_deadline == 7
    doc = optimization_document(result)
    assert doc["assignor"] == "rack_optimize_active"
    assert doc["optimizer_cost"] == 2
    assert doc["details"]["moved_tasks"] == ["0_0", "0_1"]


def test_internal_refuses_when_rack_awareness_cannot_be_enabled() -> None:
    with pytest.raises(RackAwareOptimizationError, match="strategy is none"):
        optimize_scenario(_scenario(), Role.ACTIVE)
    with pytest.raises(RackAwareOptimizationError, match="applies to the public API only"):
        optimize_scenario(_scenario(rack_aware_assignment_strategy="min_traffic"), Role.ACTIVE,
                          tasks=TaskSelection.STATEFUL)
    no_current = Scenario("bare", _scenario().state)
    with pytest.raises(RackAwareOptimizationError, match="has no current_assignment"):
        optimize_scenario(no_current, Role.STANDBY)


def test_public_api_skips_with_a_reason_or_optimises_the_chosen_tasks() -> None:
    skipped = optimize_scenario(_scenario(rack_aware_assignment_strategy="min_traffic"), Role.ACTIVE, Api.PUBLIC)
    assert skipped.skipped_reason == "rack.aware.assignment.traffic_cost is not configured"
    assert optimization_document(skipped)["details"]["skipped_reason"] == skipped.skipped_reason
    scenario = _scenario(rack_aware_assignment_strategy="min_traffic")
    stateless = optimize_scenario(scenario, Role.ACTIVE, Api.PUBLIC, tasks=TaskSelection.STATELESS,
                                  traffic_cost=10, non_overlap_cost=1)
    assert (stateless.cost, stateless.moved_tasks) == (0, ())
    standby = optimize_scenario(scenario, Role.STANDBY, Api.PUBLIC, traffic_cost=10, non_overlap_cost=1)
    assert (standby.initial_cost, standby.cost, standby.moved_tasks) == (0, 0, ())  # both standbys are local
    assert Counter(len(a.standby_tasks()) for a in standby.assignments.values()) == Counter({1: 2})
