"""The interface the high-availability and legacy sticky assignors call (rack_interface.md)."""

from __future__ import annotations

import random

import pytest

import taskassign.rack.internal as internal_module
from taskassign.errors import RackAwareOptimizationError
from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState
from taskassign.rack.internal import RackAwareTaskAssignor
from taskassign.rack.tags import always_allowed
from tests.helpers import PID_1, PID_2, PID_3, PID_5, tid
from tests.rack.instances import racked_client, racked_state, racked_task, random_instance

SOLVERS = ("kafka", "min_cost_flow")
STRATEGIES = ("min_traffic", "balance_subtopology")


def _e8(strategy: str, solver: str, **configs: object) -> ApplicationState:
    tasks = [racked_task("0_0", [["rack0", "rack1"]]), racked_task("0_1", [["rack1", "rack2"]]),
             racked_task("1_0", [["rack0", "rack2"]]), racked_task("1_1", [["rack1", "rack3"]])]
    clients = [racked_client(1, "rack0"), racked_client(2, "rack1"), racked_client(3, "rack2")]
    return racked_state(tasks, clients, rack_aware_assignment_strategy=strategy,
                        extensions={"taskassign.rack.solver": solver}, **configs)


def _sets(**by_client: str) -> dict[ProcessId, set[TaskId]]:
    pids = {"p1": PID_1, "p2": PID_2, "p3": PID_3, "p5": PID_5}
    return {pids[name]: {tid(t) for t in tasks.split()} for name, tasks in by_client.items()}


E8_CURRENT = _sets(p1="0_1 1_1", p2="1_0", p3="0_0")
E8_OPTIMAL = _sets(p1="0_0 1_0", p2="1_1", p3="0_1")


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize(("costs", "expected_cost"), [((10, 1), 4), ((1, 0), 0)])
def test_e8_active_optimisation(strategy: str, solver: str, costs: tuple[int, int], expected_cost: int) -> None:
    assignor = RackAwareTaskAssignor(_e8(strategy, solver))
    assert assignor.can_enable_rack_aware_assignor()
    assert assignor.solver == solver
    tasks = sorted(t for held in E8_CURRENT.values() for t in held)
    result, cost = assignor.optimize_active_tasks(tasks, E8_CURRENT, *costs)
    assert (result, cost) == (E8_OPTIMAL, expected_cost)


@pytest.mark.parametrize("solver", SOLVERS)
def test_e9_balance_subtopology_moves_at_equal_cost_min_traffic_does_not(solver: str) -> None:
    tasks = [racked_task("0_0", [["rack1"]]), racked_task("0_1", [["rack1"]]), racked_task("1_1", [["rack1"]])]
    current = _sets(p2="0_0 1_1", p5="0_1")
    chosen = sorted(tid(t) for t in ("0_0", "0_1", "1_1"))
    for strategy, expected in (("min_traffic", current), ("balance_subtopology", _sets(p2="0_0 0_1", p5="1_1"))):
        state = racked_state(tasks, [racked_client(2, "rack1"), racked_client(5, "rack4")],
                             rack_aware_assignment_strategy=strategy, extensions={"taskassign.rack.solver": solver})
        result, cost = RackAwareTaskAssignor(state).optimize_active_tasks(chosen, current, 1, 0)
        assert cost == 1
        if solver == "kafka":
            assert result == expected
        for costs in ((10, 1),):
            assert RackAwareTaskAssignor(state).optimize_active_tasks(chosen, current, *costs) == (current, 10)


@pytest.mark.parametrize("solver", SOLVERS)
def test_only_the_given_tasks_move_and_every_client_keeps_its_entry(solver: str) -> None:
    assignor = RackAwareTaskAssignor(_e8("min_traffic", solver))
    current = {**E8_CURRENT, PID_3: E8_CURRENT[PID_3] | {tid("2_0")}}
    current[PID_1] = current[PID_1] | {tid("2_1")}
    result, _ = assignor.optimize_active_tasks(tid_list("0_0 0_1 1_0 1_1"), current, 10, 1)
    assert result == {**E8_OPTIMAL, PID_1: E8_OPTIMAL[PID_1] | {tid("2_1")}, PID_3: E8_OPTIMAL[PID_3] | {tid("2_0")}}


def tid_list(text: str) -> list[TaskId]:
    return [tid(t) for t in text.split()]


def test_no_tasks_is_a_no_op() -> None:
    assignor = RackAwareTaskAssignor(_e8("min_traffic", "kafka"))
    result, cost = assignor.optimize_active_tasks([], E8_CURRENT, 10, 1)
    assert (result, cost) == (E8_CURRENT, 0)
    assert result[PID_1] is not E8_CURRENT[PID_1]  # a fresh copy the caller may mutate


def test_enablement_is_checked_once_and_strategy_none_disables(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = internal_module.internal_rack_awareness_problem

    def counting(*args: object) -> str | None:
        calls.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(internal_module, "internal_rack_awareness_problem", counting)
    assignor = RackAwareTaskAssignor(_e8("min_traffic", "kafka"))
    assert assignor.can_enable_rack_aware_assignor() and assignor.can_enable_rack_aware_assignor()
    assert len(calls) == 1
    assert not RackAwareTaskAssignor(_e8("none", "kafka")).can_enable_rack_aware_assignor()
    assert len(calls) == 1  # strategy none answers without looking at any rack
    with pytest.raises(RackAwareOptimizationError, match="strategy 'none' has no optimiser"):
        RackAwareTaskAssignor(_e8("none", "kafka")).optimize_active_tasks(tid_list("0_0"), E8_CURRENT, 1, 1)


def test_missing_racks_disable_rack_awareness_with_a_reason() -> None:
    tasks = [racked_task("0_0", [["rack0"]], [None])]
    state = racked_state(tasks, [racked_client(1, "rack0")], rack_aware_assignment_strategy="min_traffic",
                         num_standby_replicas=1)
    assignor = RackAwareTaskAssignor(state)
    assert not assignor.can_enable_rack_aware_assignor()
    assert assignor.why_disabled() == "task 0_0: changelog partition app-store0-changelog-0 has no rack information"


def test_optimising_a_task_without_rack_information_raises_kafkas_message() -> None:  # P28
    state = racked_state([racked_task("0_0", [None])], [racked_client(1, "rack0"), racked_client(2, "rack1")],
                         rack_aware_assignment_strategy="min_traffic")
    with pytest.raises(RackAwareOptimizationError, match=r"TopicPartition topic0-0 has no rack information\. Maybe "
                                                         r"forgot to call canEnableRackAwareAssignor first"):
        RackAwareTaskAssignor(state).optimize_active_tasks(tid_list("0_0"), _sets(p1="0_0", p2=""), 1, 1)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("seed", range(12))
def test_number_moves_and_standby_moves_equal_the_task_id_calls(strategy: str, solver: str, seed: int) -> None:
    rng = random.Random(seed)
    instance = random_instance(rng, max_tasks=14, max_clients=5,
                               rack_aware_assignment_strategy=strategy, extensions={"taskassign.rack.solver": solver})
    ids = instance.state.task_ids.items
    number = {t: n for n, t in enumerate(ids)}
    assignor = RackAwareTaskAssignor(instance.state)
    chosen = [t for t in ids if rng.random() < 0.8] or list(ids)
    moves, cost = assignor.active_task_moves(chosen, instance.active, 10, 1)
    by_number = {c: {number[t] for t in held} for c, held in instance.active.items()}
    numbered = assignor.active_number_moves([number[t] for t in chosen], by_number, 10, 1)
    assert numbered == ([(number[t], source, destination) for t, source, destination in moves], cost)
    standby = {c: held - instance.active[c] for c, held in instance.standby.items()}
    optimised, _ = assignor.optimize_standby_tasks(instance.active, standby, 10, 1, always_allowed)
    replayed = {c: set(held) for c, held in standby.items()}
    for task, source, destination in assignor.standby_task_moves(instance.active, standby, 10, 1, always_allowed):
        replayed[source].remove(task)
        replayed[destination].add(task)
    assert replayed == optimised


def test_number_moves_give_kafkas_error_for_a_task_held_twice() -> None:
    assignor = RackAwareTaskAssignor(_e8("min_traffic", "min_cost_flow"))
    with pytest.raises(RackAwareOptimizationError, match="Task 0_0 assigned to multiple clients"):
        assignor.active_number_moves([0, 1], {PID_1: {0}, PID_2: {0, 1}, PID_3: set()}, 10, 1)
