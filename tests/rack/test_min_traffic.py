from __future__ import annotations

import random

import pytest

from taskassign.rack.min_traffic import MinTrafficGraph
from taskassign.rack.solve import KAFKA_SOLVER, MIN_COST_FLOW_SOLVER, solve
from tests.helpers import PID_2, PID_5
from tests.rack.instances import (
    Instance,
    active_problem,
    racked_client,
    racked_state,
    racked_task,
    random_instance,
    reference_optimum,
)
from tests.rack.kafka_graphs import solve_both


def test_kafka_graph_has_kafkas_node_numbering_and_starting_flow() -> None:
    problem = active_problem(random_instance(random.Random(5), max_tasks=4, max_clients=3))
    layout = MinTrafficGraph().kafka_graph(problem)
    t, c = len(problem.tasks), len(problem.clients)
    graph = layout.graph
    assert (graph.source_node, graph.sink_node) == (-1, t + c)
    assert layout.task_nodes == tuple(range(t))
    for i, holder in enumerate(problem.holders):
        assert [(e.destination, e.flow, e.cost) for e in graph.edges(i)] == [
            (t + j, int(j == holder), problem.cost(i, j)) for j in range(c)]
    assert [(e.capacity, e.flow) for j in range(c) for e in graph.edges(t + j)] == [(o, o) for o in problem.orig]


@pytest.mark.parametrize("seed", range(40))
def test_exact_solver_equals_the_literal_transcription_on_min_traffic_graphs(seed: int) -> None:
    problem = active_problem(random_instance(random.Random(seed), max_tasks=10, max_clients=5))
    fast, literal = solve_both(MinTrafficGraph().kafka_graph(problem).graph, max_flow_first=False)
    assert fast == literal


@pytest.mark.parametrize("seed", range(60))
def test_two_clients_are_solved_in_closed_form_at_the_optimum(seed: int) -> None:
    rng = random.Random(seed)
    instance = random_instance(rng, max_tasks=10)
    while len(instance.state.clients) != 2:
        instance = random_instance(rng, max_tasks=10)
    problem = active_problem(instance)
    solution = solve(problem, MinTrafficGraph(), MIN_COST_FLOW_SOLVER)
    assert solution.cost == reference_optimum(problem) == solve(problem, MinTrafficGraph(), KAFKA_SOLVER).cost
    assert solution.cost == problem.assignment_cost(solution.holders)  # the closed form's own sum


def test_e9_min_traffic_keeps_an_already_optimal_assignment() -> None:
    tasks = [racked_task("0_0", [["rack1"]]), racked_task("0_1", [["rack1"]]), racked_task("1_1", [["rack1"]])]
    state = racked_state(tasks, [racked_client(2, "rack1"), racked_client(5, "rack4")],
                         rack_aware_assignment_strategy="min_traffic")
    instance = Instance(state, {PID_2: {tasks[0].id, tasks[2].id}, PID_5: {tasks[1].id}}, {}, 1, 0)
    for solver in (KAFKA_SOLVER, MIN_COST_FLOW_SOLVER):
        solution = solve(active_problem(instance), MinTrafficGraph(), solver)
        assert not solution.moved and solution.cost == 1
