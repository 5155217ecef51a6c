"""Running one of Kafka's flow graphs through both the optimised solver and the literal transcription."""

from __future__ import annotations

from taskassign.rack.graph import Graph
from tests.rack.kafka_graph_reference import ReferenceGraph


def as_reference(graph: Graph) -> ReferenceGraph:
    ref = ReferenceGraph()
    for u, edges in graph.adj.items():
        for v, e in edges.items():
            ref.add_edge(u, v, e.capacity, e.cost, e.flow)
    ref.source, ref.sink = graph.source_node, graph.sink_node
    return ref


def flows(graph: Graph | ReferenceGraph) -> dict[tuple[int, int], int]:
    return {(u, v): e.flow for u, edges in graph.adj.items() for v, e in edges.items()}


def solve_both(graph: Graph, *, max_flow_first: bool) -> tuple[dict[tuple[int, int], int], dict[tuple[int, int], int]]:
    ref = as_reference(graph)
    if max_flow_first:
        assert graph.calculate_max_flow() == ref.calculate_max_flow()
    graph.solve_min_cost_flow()
    ref.solve_min_cost_flow()
    return flows(graph), flows(ref)
