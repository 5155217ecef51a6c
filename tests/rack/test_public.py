"""The public TaskAssignmentUtils optimisers (with TaskAssignmentUtilsTest's cases) and the Kafka bugs they fix."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import FrozenInstanceError

import pytest

from taskassign.errors import ConfigError, RackAwareOptimizationError
from taskassign.ids import ProcessId
from taskassign.internals.java_order import hash_iteration_order
from taskassign.model import ApplicationState, KafkaStreamsAssignment
from taskassign.rack.public import (
    RackAwareOptimizationParams,
    _client_order,
    optimize_active,
    optimize_standby,
)
from taskassign.task_assignment_utils import optimize_rack_aware_active_tasks, optimize_rack_aware_standby_tasks
from tests.helpers import PID, PID_1, PID_2, PID_3, PID_4, tid
from tests.rack.instances import racked_client, racked_state, racked_task

COSTS = {"rack_aware_traffic_cost": 100, "rack_aware_non_overlap_cost": 1}


def _assign(pid: ProcessId, active: str = "", standby: str = "") -> KafkaStreamsAssignment:
    return KafkaStreamsAssignment.of_tasks(pid, [tid(t) for t in active.split()], [tid(t) for t in standby.split()])


def _view(assignments: dict[ProcessId, KafkaStreamsAssignment]) -> dict[ProcessId, tuple[list[str], list[str]]]:
    return {p: ([str(t) for t in a.active_tasks()], [str(t) for t in a.standby_tasks()])
            for p, a in assignments.items()}


def _e14a(strategy: str, **configs: object) -> ApplicationState:
    tasks = [racked_task("0_0", [["rack-2"]], stateful=False), racked_task("0_1", [["rack-1"]], stateful=False)]
    return racked_state(tasks, [racked_client(1, "rack-1"), racked_client(2, "rack-2")],
                        rack_aware_assignment_strategy=strategy, **configs)


@pytest.mark.parametrize("solver", ["kafka", "min_cost_flow"])
@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
def test_e14a_actives_swap_racks_and_a_second_run_changes_nothing(strategy: str, solver: str) -> None:
    state = _e14a(strategy, **COSTS, extensions={"taskassign.rack.solver": solver})
    params = RackAwareOptimizationParams.of(state)
    once = optimize_rack_aware_active_tasks(params, {PID_1: _assign(PID_1, "0_0"), PID_2: _assign(PID_2, "0_1")})
    assert _view(once) == {PID_1: (["0_1"], []), PID_2: (["0_0"], [])}
    assert optimize_rack_aware_active_tasks(params, once) == once


def _e14d(**configs: object) -> ApplicationState:
    tasks = [racked_task("0_0", [["rack-2"]], [["rack-2"]]), racked_task("0_1", [["rack-3"]], [["rack-3"]])]
    clients = [racked_client(1, "rack-1"), racked_client(2, "rack-2"), racked_client(3, "rack-3")]
    return racked_state(tasks, clients, rack_aware_assignment_strategy="min_traffic", **COSTS, **configs)


@pytest.mark.parametrize("solver", ["kafka", "min_cost_flow"])
def test_e14d_standbys_move_to_the_rack_of_their_changelog(solver: str) -> None:
    state = _e14d(extensions={"taskassign.rack.solver": solver})
    current = {PID_1: _assign(PID_1, "0_0 0_1"), PID_2: _assign(PID_2, standby="0_1"),
               PID_3: _assign(PID_3, standby="0_0")}
    result = optimize_standby(RackAwareOptimizationParams.of(state), current)
    assert _view(dict(result.assignments)) == {PID_1: (["0_0", "0_1"], []), PID_2: ([], ["0_0"]),
                                               PID_3: ([], ["0_1"])}
    assert result.cost == 0
    assert result.moved_tasks == (tid("0_0"), tid("0_1"))
    assert optimize_rack_aware_standby_tasks(RackAwareOptimizationParams.of(state), current) == result.assignments


def test_params_are_immutable_and_every_method_returns_a_new_value() -> None:
    state = racked_state([racked_task("0_0", [["a"]], [["a"]]), racked_task("1_0", [["a"]])],
                         [racked_client(1, "a")])
    base = RackAwareOptimizationParams.of(state)
    assert base.tasks_to_optimize is None
    stateful = base.for_stateful_tasks()
    assert list(stateful.tasks_to_optimize or ()) == [tid("0_0")]
    assert list(base.for_stateless_tasks().tasks_to_optimize or ()) == [tid("1_0")]
    assert list(base.for_tasks([tid("1_0"), tid("0_0")]).tasks_to_optimize or ()) == [tid("0_0"), tid("1_0")]
    both = stateful.with_traffic_cost_override(5).with_non_overlap_cost_override(0)
    assert (both.traffic_cost_override, both.non_overlap_cost_override, both.tasks_to_optimize) == (
        5, 0, stateful.tasks_to_optimize)
    assert base.traffic_cost_override is None
    with pytest.raises(FrozenInstanceError):
        base.traffic_cost_override = 3  # type: ignore[misc]
    with pytest.raises(ConfigError, match=r"traffic_cost.*>= 0"):
        base.with_traffic_cost_override(-1)


@pytest.mark.parametrize(("configs", "reason"), [
    ({"rack_aware_assignment_strategy": "none", **COSTS}, "rack.aware.assignment.strategy is none"),
    ({"rack_aware_assignment_strategy": "min_traffic"}, "rack.aware.assignment.traffic_cost is not configured"),
])
def test_skips_like_kafka_and_says_why(configs: dict[str, object], reason: str) -> None:
    tasks = [racked_task("0_0", [["rack-2"]]), racked_task("0_1", [["rack-1"]])]
    state = racked_state(tasks, [racked_client(1, "rack-1"), racked_client(2, "rack-2")], **configs)
    current = {PID_1: _assign(PID_1, "0_0")}
    result = optimize_active(RackAwareOptimizationParams.of(state), current)
    assert (result.assignments, result.cost, result.skipped_reason) == (current, None, reason)


def test_overriding_both_costs_is_enough_unless_kafka_compat() -> None:
    current = {PID_1: _assign(PID_1, "0_0"), PID_2: _assign(PID_2, "0_1")}
    for compat, moved in ((False, True), (True, False)):
        state = _e14a("min_traffic", extensions={"taskassign.kafka.compat": compat})
        params = RackAwareOptimizationParams.of(state).with_traffic_cost_override(10).with_non_overlap_cost_override(1)
        result = optimize_active(params, current)
        assert bool(result.moved_tasks) is moved
        assert (result.skipped_reason is None) is moved


def _with_standby_on_new_holder(compat: bool) -> ApplicationState:
    tasks = [racked_task("0_0", [["rack-2"]], [["rack-2"]]), racked_task("0_1", [["rack-1"]], [["rack-1"]])]
    return racked_state(tasks, [racked_client(1, "rack-1"), racked_client(2, "rack-2")],
                        rack_aware_assignment_strategy="min_traffic", **COSTS,
                        extensions={"taskassign.kafka.compat": compat})


@pytest.mark.parametrize(("compat", "expected"), [
    (False, {PID_1: (["0_1"], ["0_0"]), PID_2: (["0_0"], [])}),  # roles swapped, the replica survives
    (True, {PID_1: (["0_1"], []), PID_2: (["0_0"], [])}),  # Kafka bug: the standby is deleted
])
def test_an_active_moved_onto_its_standby_swaps_roles(compat: bool, expected: dict[ProcessId, object]) -> None:
    current = {PID_1: _assign(PID_1, "0_0"), PID_2: _assign(PID_2, "0_1", "0_0")}
    result = optimize_active(RackAwareOptimizationParams.of(_with_standby_on_new_holder(compat)), current)
    assert _view(dict(result.assignments)) == expected


def _tagged(compat: bool) -> ApplicationState:
    tasks = [racked_task("0_0", [["r4"]], [["r4"]]), racked_task("0_1", [["r2"]], [["r2"]])]
    clients = [racked_client(1, "r1", tags={"az": "az1"}), racked_client(2, "r2", tags={"az": "az2"}),
               racked_client(3, "r3", tags={"az": "az3"}), racked_client(4, "r4", tags={"az": "az1"})]
    return racked_state(tasks, clients, rack_aware_assignment_strategy="min_traffic", **COSTS,
                        rack_aware_assignment_tags=["az"], extensions={"taskassign.kafka.compat": compat})


def test_standby_moves_keep_the_zone_spread_unless_kafka_compat() -> None:
    current = {PID_1: _assign(PID_1, "0_0"), PID_2: _assign(PID_2, standby="0_0"), PID_3: _assign(PID_3, "0_1"),
               PID_4: _assign(PID_4, standby="0_1")}
    fixed = optimize_standby(RackAwareOptimizationParams.of(_tagged(False)), current)
    assert fixed.moved_tasks == ()  # 0_0's standby would join its active in az1
    compat = optimize_standby(RackAwareOptimizationParams.of(_tagged(True)), current)
    assert _view(dict(compat.assignments))[PID_4] == ([], ["0_0"])


def _two_subtopologies(strategy: str, compat: bool) -> ApplicationState:
    tasks = [racked_task("0_0", [["r2"]], [["r2"]]), racked_task("1_0", [["r1"]], [["r1"]])]
    clients = [racked_client(1, "r1"), racked_client(2, "r2"), racked_client(3, "r3")]
    return racked_state(tasks, clients, rack_aware_assignment_strategy=strategy, **COSTS,
                        extensions={"taskassign.kafka.compat": compat})


def test_for_tasks_limits_which_standbys_move() -> None:
    current = {PID_1: _assign(PID_1, standby="0_0"), PID_2: _assign(PID_2, standby="1_0"),
               PID_3: _assign(PID_3, "0_0 1_0")}
    only = [tid("0_0")]
    fixed = optimize_standby(RackAwareOptimizationParams.of(_two_subtopologies("min_traffic", False)).for_tasks(only),
                             current)
    assert fixed.moved_tasks == ()  # 0_0 could only move by exchanging it with 1_0, which was not chosen
    compat = optimize_standby(
        RackAwareOptimizationParams.of(_two_subtopologies("min_traffic", True)).for_tasks(only), current)
    assert compat.moved_tasks == (tid("0_0"), tid("1_0"))
    with pytest.raises(RackAwareOptimizationError, match="Task 1_0 not in tasksForTopicGroup"):
        optimize_standby(
            RackAwareOptimizationParams.of(_two_subtopologies("balance_subtopology", True)).for_tasks(only), current)


def test_clients_unknown_to_the_state_are_left_alone_unless_kafka_compat() -> None:
    stranger = PID[9]
    current = {PID_1: _assign(PID_1, standby="0_0"), PID_2: _assign(PID_2, standby="1_0"),
               PID_3: _assign(PID_3, "0_0 1_0"), stranger: _assign(stranger)}
    fixed = optimize_standby(RackAwareOptimizationParams.of(_two_subtopologies("min_traffic", False)), current)
    assert fixed.assignments[stranger] == current[stranger]
    assert fixed.moved_tasks == (tid("0_0"), tid("1_0"))
    with pytest.raises(RackAwareOptimizationError, match=r"out of bounds.*unknown to the application state"):
        optimize_standby(RackAwareOptimizationParams.of(_two_subtopologies("min_traffic", True)), current)


def test_missing_clients_are_completed_with_empty_assignments() -> None:
    state = _e14a("min_traffic", **COSTS)
    result = optimize_active(RackAwareOptimizationParams.of(state), {PID_1: _assign(PID_1, "0_0 0_1")})
    assert result.assignments[PID_2] == KafkaStreamsAssignment(PID_2)
    assert result.cost == 100  # nowhere better to go: P2 holds no active, so counts pin both tasks to P1


def test_the_kafka_solver_visits_clients_in_javas_hashmap_order() -> None:
    pids: Iterable[ProcessId] = [ProcessId.of_ints(0, n) for n in (1, 17, 33, 2)]
    state = racked_state([racked_task("0_0", [["a"]])], [racked_client(n, "a") for n in (1, 17, 33, 2)])
    assert list(_client_order(state, "kafka")) == hash_iteration_order(sorted(pids))
    assert list(_client_order(state, "kafka")) != sorted(pids)
    assert _client_order(state, "min_cost_flow") == state.process_ids
