"""Goldens that pin the order of Kafka's group leader: LegacyStickyTaskAssignor and FallbackPriorTaskAssignor of
Kafka 4.4, run on collections built as ``StreamsPartitionAssignor`` builds them (tests/golden/leader_order).

Each input is one of the pinned goldens where that order changes the output: the pinned golden (collections filled
in TaskId order) and this one differ. taskassign's leader order is ``ApplicationState.subtopology_walk_order``, which
a group file sets (leader.group); here it is set on the scenario's state.
"""

from __future__ import annotations

import pytest

from taskassign.formats.scenario import Scenario, with_config_overrides
from taskassign.internals.java_order import leader_subtopology_walk
from taskassign.leader.assign import assign_scenario, result_to_document
from taskassign.model import ApplicationState
from tests.golden_parity import GoldenCase, golden_cases, kafka_solver_overrides, mismatches

CASES = [(c, "legacy_sticky") for c in golden_cases("leader_order/legacy_sticky")] + [
    (c, "fallback_prior") for c in golden_cases("leader_order/fallback_prior")]
PINNED = {c.name: c for folder in ("legacy_sticky", "fallback_prior") for c in golden_cases(folder)}


def _on_the_leader(scenario: Scenario) -> Scenario:
    state = scenario.state
    walk = leader_subtopology_walk(sorted({(t.topology_name, t.subtopology) for t in state.task_ids}))
    leader = ApplicationState(tasks=state.tasks, clients=state.clients, configs=state.configs, now_ms=state.now_ms,
                              subtopology_walk_order=walk)
    return Scenario(scenario.name, leader, scenario.raw_configs, scenario.current_assignment, scenario.leader)


def test_case_counts() -> None:
    assert len(CASES) == 22


@pytest.mark.parametrize(("case", "assignor"), CASES, ids=lambda x: getattr(x, "name", x))
def test_the_leaders_order_gives_kafkas_output(case: GoldenCase, assignor: str) -> None:
    scenario = with_config_overrides(case.scenario(), kafka_solver_overrides())
    leader = result_to_document(assign_scenario(_on_the_leader(scenario), assignor))
    assert not list(mismatches(case, leader, scenario))
    offline = result_to_document(assign_scenario(scenario, assignor))
    assert list(mismatches(case, offline, scenario)), "the order should matter on this input"
    assert not list(mismatches(PINNED[case.name], offline, scenario))
