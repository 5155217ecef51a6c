"""Solving a FlowProblem with Kafka's exact solver or the fast one, and checking the result.

``taskassign.rack.solver`` picks the solver: ``kafka`` reproduces Kafka's assignment bit for bit (its
cycle-cancelling ``Graph`` on its own T x C graph), ``min_cost_flow`` finds an assignment of the same
(optimal) cost on a compact graph with OR-Tools, preferring the fewest moves. ``auto`` means ``kafka``
under ``taskassign.kafka.compat`` and ``min_cost_flow`` otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from taskassign.configs import RACK_SOLVER, AssignmentConfigs
from taskassign.errors import RackAwareOptimizationError
from taskassign.rack.problem import FlowProblem, GraphConstructor, KafkaGraph

__all__ = ("KAFKA_SOLVER", "MIN_COST_FLOW_SOLVER", "FlowSolution", "Solver", "resolve_solver", "solve")

Solver = Literal["kafka", "min_cost_flow"]
KAFKA_SOLVER: Solver = "kafka"
MIN_COST_FLOW_SOLVER: Solver = "min_cost_flow"


def resolve_solver(configs: AssignmentConfigs) -> Solver:
    """The solver the configs ask for (``auto``: kafka under kafka_compat, else min_cost_flow)."""
    choice = configs.extension(RACK_SOLVER)
    if choice == "auto":
        return KAFKA_SOLVER if configs.kafka_compat else MIN_COST_FLOW_SOLVER
    return KAFKA_SOLVER if choice == KAFKA_SOLVER else MIN_COST_FLOW_SOLVER


@dataclass(frozen=True, slots=True)
class FlowSolution:
    """New holder per task (indices into the problem's clients) and Kafka's reported cost.

    The cost is the flow graph's total: traffic at the new holders plus ``non_overlap_cost`` per moved task.
    """

    holders: tuple[int, ...]
    cost: int
    moved: bool


def solve(problem: FlowProblem, constructor: GraphConstructor, solver: Solver) -> FlowSolution:
    if not problem.tasks:
        return FlowSolution((), 0, False)
    if solver == KAFKA_SOLVER:
        layout = constructor.kafka_graph(problem)
        holders = _solve_kafka_graph(layout, problem)
        cost = layout.graph.total_cost()
    else:
        holders, cost = constructor.solve_fast(problem)
    _check_counts(problem, holders)
    return FlowSolution(tuple(holders), cost, tuple(holders) != problem.holders)


def _solve_kafka_graph(layout: KafkaGraph, problem: FlowProblem) -> list[int]:
    graph = layout.graph
    if layout.starts_from_max_flow:
        flow = graph.calculate_max_flow()
        if flow != len(problem.tasks):
            raise RackAwareOptimizationError(f"max flow {flow} does not place all {len(problem.tasks)} tasks")
    graph.solve_min_cost_flow()
    holders = list(problem.holders)
    placed = 0
    for i, node in enumerate(layout.task_nodes):
        for edge in graph.edges(node):
            if edge.flow > 0:
                placed += 1
                holders[i] = layout.client_of_node[edge.destination]
    if placed != len(problem.tasks):
        raise RackAwareOptimizationError(f"the solved flow places {placed} of {len(problem.tasks)} tasks")
    return holders


def _check_counts(problem: FlowProblem, holders: list[int]) -> None:
    """Kafka's post-condition: every client keeps its number of tasks."""
    counts = [0] * len(problem.clients)
    for h in holders:
        counts[h] += 1
    if tuple(counts) != problem.orig:
        raise RackAwareOptimizationError(  # pragma: no cover - a solver bug, never a user error
            f"rack-aware optimisation changed per-client task counts {problem.orig} -> {tuple(counts)}"
        )
