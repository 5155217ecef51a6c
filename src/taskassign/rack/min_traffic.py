"""The ``min_traffic`` strategy (Kafka's ``MinTrafficGraphConstructor``): minimise cross-rack traffic plus movement.

Kafka's graph: task i -> client j for every pair (capacity 1, the pair's cost, flow 1 on the current
holder), source -> task, client -> sink with capacity = flow = the client's current count, so solving
keeps every client's count. The fast path solves the same problem on the compact graph; a pair of
clients (the standby optimiser's building block) is solved in closed form.
"""

from __future__ import annotations

from taskassign.rack.compact import solve_compact
from taskassign.rack.graph import Graph
from taskassign.rack.problem import FlowProblem, KafkaGraph

__all__ = ("MinTrafficGraph",)

SOURCE = -1


class MinTrafficGraph:
    """Kafka's ``MinTrafficGraphConstructor``."""

    name = "min_traffic"

    def kafka_graph(self, problem: FlowProblem) -> KafkaGraph:
        t_count, c_count = len(problem.tasks), len(problem.clients)
        sink = t_count + c_count
        graph = Graph()
        for i, holder in enumerate(problem.holders):
            for j in range(c_count):
                graph.add_edge(i, t_count + j, 1, problem.cost(i, j), 1 if j == holder else 0)
            graph.add_edge(SOURCE, i, 1, 0, 1)
        for j, orig in enumerate(problem.orig):
            graph.add_edge(t_count + j, sink, orig, 0, orig)
        graph.set_source_node(SOURCE)
        graph.set_sink_node(sink)
        return KafkaGraph(graph, tuple(range(t_count)), {t_count + j: j for j in range(c_count)}, False)

    def solve_fast(self, problem: FlowProblem) -> tuple[list[int], int]:
        if len(problem.clients) == 2:
            return _exchange_between_two_clients(problem)
        return solve_compact(problem, [range(len(problem.tasks))])


def _exchange_between_two_clients(problem: FlowProblem) -> tuple[list[int], int]:
    """Optimal re-mapping over two clients with fixed counts: swap the k best pairs; and its cost.

    Moving task i off its holder changes the cost by ``delta(i)``; with counts fixed, k tasks go each
    way, so the best exchange pairs the k smallest deltas of one side with the k smallest of the other,
    for every k whose pair still has a negative sum (zero-sum pairs stay, so nothing moves needlessly).
    The standby optimiser solves ~10^3 of these per rebalance at 10^5 tasks, so the costs are computed
    here from the rack table directly (``FlowProblem.cost`` is four calls deep): the same integers.
    """
    table, costs = problem.costs.table, problem.costs
    partitions, on_rack = table.partitions, table.on_rack
    traffic, non_overlap = costs.traffic_cost, costs.non_overlap_cost
    rack_0, rack_1 = problem.client_racks
    sides: tuple[list[tuple[int, int]], list[tuple[int, int]]] = ([], [])
    base = 0
    for i, (task, holder) in enumerate(zip(problem.tasks, problem.holders, strict=True)):
        counts = on_rack[task]
        on_0, on_1 = counts.get(rack_0, 0), counts.get(rack_1, 0)
        here, there = (on_0, on_1) if holder == 0 else (on_1, on_0)
        base += traffic * (partitions[task] - here)
        sides[holder].append((traffic * (here - there) + non_overlap, i))
    holders = list(problem.holders)
    for (gain_a, a), (gain_b, b) in zip(sorted(sides[0]), sorted(sides[1]), strict=False):
        if gain_a + gain_b >= 0:
            break
        holders[a], holders[b] = 1, 0
        base += gain_a + gain_b
    return holders, base
