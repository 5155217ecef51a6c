from __future__ import annotations

import random

import pytest

from taskassign.errors import RackAwareOptimizationError
from taskassign.ids import TaskId
from taskassign.rack.balance_subtopology import (
    BalanceSubtopologyGraph,
    groups_by_subtopology,
    groups_by_subtopology_number,
)
from taskassign.rack.solve import KAFKA_SOLVER, MIN_COST_FLOW_SOLVER, solve
from tests.helpers import PID_2, PID_5, tid
from tests.rack.instances import Instance, active_problem, racked_client, racked_state, racked_task, random_instance
from tests.rack.kafka_graphs import solve_both

NAMED = [TaskId(1, 0, "b"), TaskId(0, 1, "a"), TaskId(0, 0, "b"), TaskId(0, 0, "a")]


def test_internal_groups_are_subtopologies_with_named_topologies_apart() -> None:
    assert groups_by_subtopology(NAMED) == (
        (TaskId(0, 0, "a"), TaskId(0, 1, "a")), (TaskId(0, 0, "b"),), (TaskId(1, 0, "b"),))
    assert groups_by_subtopology([tid("1_0"), tid("0_1"), tid("0_0")]) == ((tid("0_0"), tid("0_1")), (tid("1_0"),))


def test_public_groups_merge_named_topologies_by_subtopology_number() -> None:
    assert groups_by_subtopology_number(NAMED) == (
        (TaskId(0, 0, "a"), TaskId(0, 1, "a"), TaskId(0, 0, "b")), (TaskId(1, 0, "b"),))


def test_kafka_graph_numbers_task_nodes_by_group_and_caps_clients_per_group() -> None:
    instance = random_instance(random.Random(11), max_tasks=9, max_clients=4)
    problem = active_problem(instance)
    groups = groups_by_subtopology(instance.state.task_ids)
    layout = BalanceSubtopologyGraph(groups).kafka_graph(problem)
    t, c, g = len(problem.tasks), len(problem.clients), len(groups)
    order = [problem.tasks.index(task) for group in groups for task in group]
    assert [layout.task_nodes[i] for i in order] == list(range(t))
    assert layout.starts_from_max_flow
    assert layout.graph.sink_node == t + c * g + c
    for gi, group in enumerate(groups):
        for j in range(c):
            (edge,) = layout.graph.edges(t + c * gi + j)
            expected = 0 if problem.orig[j] == 0 else -(-problem.orig[j] * len(group) // t)
            assert (edge.destination, edge.capacity) == (t + c * g + j, expected)


@pytest.mark.parametrize("seed", range(40))
def test_exact_solver_equals_the_literal_transcription_on_balance_graphs(seed: int) -> None:
    instance = random_instance(random.Random(seed), max_tasks=10, max_clients=5)
    graph = BalanceSubtopologyGraph(groups_by_subtopology(instance.state.task_ids)).kafka_graph(
        active_problem(instance)).graph
    fast, literal = solve_both(graph, max_flow_first=True)
    assert fast == literal


def test_a_task_outside_every_group_is_refused() -> None:
    problem = active_problem(random_instance(random.Random(2), max_tasks=6))
    with pytest.raises(RackAwareOptimizationError, match="not in tasksForTopicGroup"):
        BalanceSubtopologyGraph([problem.tasks[1:]]).kafka_graph(problem)


def test_e9_balance_subtopology_spreads_subtopology_0_at_equal_cost() -> None:
    tasks = [racked_task("0_0", [["rack1"]]), racked_task("0_1", [["rack1"]]), racked_task("1_1", [["rack1"]])]
    state = racked_state(tasks, [racked_client(2, "rack1"), racked_client(5, "rack4")])
    groups = groups_by_subtopology(state.task_ids)
    current = {PID_2: {tid("0_0"), tid("1_1")}, PID_5: {tid("0_1")}}
    problem = active_problem(Instance(state, current, {}, 1, 0))
    kafka = solve(problem, BalanceSubtopologyGraph(groups), KAFKA_SOLVER)
    assert kafka.cost == 1
    assert [problem.clients[h] for h in kafka.holders] == [PID_2, PID_2, PID_5]
    assert solve(problem, BalanceSubtopologyGraph(groups), MIN_COST_FLOW_SOLVER).cost == 1
    problem = active_problem(Instance(state, current, {}, 10, 1))
    for solver in (KAFKA_SOLVER, MIN_COST_FLOW_SOLVER):
        solution = solve(problem, BalanceSubtopologyGraph(groups), solver)
        assert (solution.cost, solution.moved) == (10, False)


def test_group_capacities_match_kafkas_double_arithmetic_per_pair() -> None:
    import random

    from taskassign.rack.balance_subtopology import _group_capacities, _group_capacity

    rng = random.Random(7)
    for _ in range(200):
        tasks = rng.randint(1, 5000)
        orig = [rng.choice([0, rng.randint(0, tasks)]) for _ in range(rng.randint(1, 12))]
        sizes = [rng.randint(0, tasks) for _ in range(rng.randint(1, 9))]
        assert _group_capacities(orig, tasks, sizes).tolist() == [[_group_capacity(o, tasks, n) for o in orig]
                                                                  for n in sizes]
