from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskassign.ids import ProcessId, TaskId
from taskassign.rack.cost import CostModel, PartitionScope, RackTable
from taskassign.rack.internal import RackAwareTaskAssignor
from taskassign.rack.min_traffic import MinTrafficGraph
from taskassign.rack.problem import FlowProblem
from taskassign.rack.solve import MIN_COST_FLOW_SOLVER, solve
from taskassign.rack.standby import asked_on_holders, optimize_standbys_pairwise, standby_cost
from taskassign.rack.tags import always_allowed, tag_diversity_predicate
from tests.helpers import PID, tid
from tests.rack.instances import racked_client, racked_state, racked_task, random_instance

P1, P2, P3, P4, P6, P7 = (PID[n] for n in (1, 2, 3, 4, 6, 7))
E10_RACKS = {P1: "rack0", P2: "rack1", P3: "rack2", P4: "rack3", P6: "rack0", P7: "rack1"}
E10_CHANGELOG = {"0_0": ["rack0", "rack1"], "0_1": ["rack1", "rack2"], "0_2": ["rack1", "rack2"],
                 "1_0": ["rack0", "rack2"], "1_1": ["rack1", "rack3"], "1_2": ["rack0", "rack1"]}
E10_ACTIVE = {P1: {"0_0"}, P2: {"0_1"}, P3: {"1_0"}, P4: {"1_1"}, P6: {"0_2"}, P7: {"1_2"}}
E10_STANDBY = {P1: {"0_1", "1_1"}, P2: {"0_0", "1_0"}, P3: {"0_0", "0_2"}, P4: {"0_1", "1_2"}, P6: {"1_0", "1_2"},
               P7: {"0_2", "1_1"}}


def _tasks(by_client: Mapping[ProcessId, set[str]]) -> dict[ProcessId, set[TaskId]]:
    return {pid: {tid(t) for t in tasks} for pid, tasks in by_client.items()}


def _e10(solver: str):  # type: ignore[no-untyped-def]
    tasks = [racked_task(t, [racks], [racks]) for t, racks in E10_CHANGELOG.items()]
    clients = [racked_client(n, E10_RACKS[PID[n]], tags={"rack": E10_RACKS[PID[n]]}) for n in (1, 2, 3, 4, 6, 7)]
    return racked_state(tasks, clients, rack_aware_assignment_strategy="min_traffic", num_standby_replicas=2,
                        extensions={"taskassign.rack.solver": solver})


@pytest.mark.parametrize(("tagged", "cost", "expected"), [
    (False, 20, {P1: {"1_0", "1_2"}, P2: {"0_0", "1_1"}, P3: {"0_1", "0_2"}, P4: {"0_0", "0_1"},
                 P6: {"1_0", "1_2"}, P7: {"0_2", "1_1"}}),
    (True, 50, {P1: {"0_1", "1_1"}, P2: {"0_0", "1_0"}, P3: {"0_1", "0_2"}, P4: {"0_0", "1_2"},
                P6: {"1_0", "1_2"}, P7: {"0_2", "1_1"}}),
])
def test_e10_pairwise_standby_optimisation(tagged: bool, cost: int, expected: Mapping[ProcessId, set[str]]) -> None:
    state = _e10("kafka")
    assignor = RackAwareTaskAssignor(state)
    table = RackTable.build(state, PartitionScope.CHANGELOG)
    assert standby_cost(_tasks(E10_STANDBY), CostModel(table, 10, 1)) == 60
    predicate = tag_diversity_predicate(state) if tagged else always_allowed
    result, reported = assignor.optimize_standby_tasks(_tasks(E10_ACTIVE), _tasks(E10_STANDBY), 10, 1, predicate)
    assert (result, reported) == (_tasks(expected), cost)
    fast = RackAwareTaskAssignor(_e10("min_cost_flow"))
    fast_result, fast_cost = fast.optimize_standby_tasks(_tasks(E10_ACTIVE), _tasks(E10_STANDBY), 10, 1, predicate)
    assert fast_cost == cost
    assert {p: len(t) for p, t in fast_result.items()} == dict.fromkeys(E10_RACKS, 2)


def _distinct_tags(state, active, standby, task):  # type: ignore[no-untyped-def]
    holders = [p for p in state.process_ids if task in active[p] or task in standby[p]]
    return len({kv for p in holders for kv in state.clients[p].client_tags.items()})


@settings(max_examples=100)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), tagged=st.booleans())
def test_standby_exchanges_keep_counts_and_tag_spread_and_never_raise_cost(seed: int, tagged: bool) -> None:  # P26
    instance = random_instance(random.Random(seed), max_tasks=10, max_clients=6, tags=True)
    state = instance.state
    costs = CostModel(RackTable.build(state, PartitionScope.CHANGELOG), instance.traffic_cost,
                      instance.non_overlap_cost)
    standby = {p: set(t) for p, t in instance.standby.items()}
    predicate = tag_diversity_predicate(state) if tagged else always_allowed

    can_move = asked_on_holders(predicate, instance.active, standby)

    before = {t: _distinct_tags(state, instance.active, instance.standby, t) for t in state.task_ids}
    moves = optimize_standbys_pairwise(state.process_ids, instance.active, standby, costs, MinTrafficGraph(),
                                       MIN_COST_FLOW_SOLVER, can_move)
    assert {p: len(t) for p, t in standby.items()} == {p: len(t) for p, t in instance.standby.items()}
    assert standby_cost(standby, costs) <= standby_cost(instance.standby, costs)
    for p in state.process_ids:
        assert not standby[p] & instance.active[p]
    replicas = Counter(t for tasks in standby.values() for t in tasks)
    assert replicas == Counter(t for tasks in instance.standby.values() for t in tasks)  # moved, never lost
    if tagged:
        assert all(_distinct_tags(state, instance.active, standby, t) >= before[t] for t in state.task_ids)
    assert all(state.clients[a].rack_id != state.clients[b].rack_id for _, a, b in moves)


def _literal_pairwise(clients, active, standby, costs, solver, can_move):  # type: ignore[no-untyped-def]
    """Kafka's optimizeStandbyTasks as written: every pair on different racks, movable lists, a pair graph, four
    rounds."""
    table = costs.table
    moved, rounds = True, 0
    while moved and rounds < 4:
        moved, rounds = False, rounds + 1
        for i, c1 in enumerate(clients):
            for c2 in clients[i + 1:]:
                if table.rack_of(c1) == table.rack_of(c2):
                    continue
                m1 = sorted(t for t in standby[c1] if t not in active[c2] | standby[c2] and can_move(c1, c2, t))
                m2 = sorted(t for t in standby[c2] if t not in active[c1] | standby[c1] and can_move(c2, c1, t))
                if not m1 or not m2:
                    continue
                pair = tuple(sorted((c1, c2)))
                problem = FlowProblem.of(sorted(m1 + m2), pair, standby, costs)
                solution = solve(problem, MinTrafficGraph(), solver)
                for task, old, new in zip(problem.tasks, problem.holders, solution.holders, strict=True):
                    if old != new:
                        standby[pair[old]].discard(task)
                        standby[pair[new]].add(task)
                moved |= solution.moved


@pytest.mark.parametrize("solver", ["kafka", "min_cost_flow"])
@pytest.mark.parametrize("seed", range(25))
def test_pruned_pairwise_loop_equals_the_literal_one(seed: int, solver: str) -> None:
    instance = random_instance(random.Random(seed), max_tasks=12, max_clients=6, tags=True)
    state = instance.state
    costs = CostModel(RackTable.build(state, PartitionScope.CHANGELOG), instance.traffic_cost,
                      instance.non_overlap_cost)
    predicate = tag_diversity_predicate(state) if seed % 2 else always_allowed
    ours = {p: set(t) for p, t in instance.standby.items()}
    literal = {p: set(t) for p, t in instance.standby.items()}
    optimize_standbys_pairwise(state.process_ids, instance.active, ours, costs, MinTrafficGraph(), solver,
                               asked_on_holders(predicate, instance.active, ours))
    _literal_pairwise(state.process_ids, instance.active, literal, costs, solver,
                      lambda s, d, t: predicate(s, d, t, instance.active, literal))
    assert ours == literal
