from __future__ import annotations

import random

import pytest

from taskassign.rack import graph as graph_module
from taskassign.rack.graph import Graph, GraphError
from tests.rack.kafka_graph_reference import ReferenceGraph


@pytest.fixture(params=["node by node", "block by block"])
def search(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a test under both negative-cycle searches: the block search on every graph, or on none."""
    threshold = 0 if request.param == "block by block" else 10**12
    monkeypatch.setattr(graph_module, "BLOCK_SEARCH_MIN_EDGES", threshold)
    return str(request.param)


def _edges(g: Graph | ReferenceGraph) -> dict[tuple[int, int], tuple[int, int]]:
    return {(u, v): (e.flow, e.residual_flow) for u, es in g.adj.items() for v, e in es.items()}


def _both(edges: list[tuple[int, int, int, int, int]], source: int, sink: int) -> tuple[Graph, ReferenceGraph]:
    g, ref = Graph(), ReferenceGraph()
    for u, v, cap, cost, flow in edges:
        g.add_edge(u, v, cap, cost, flow)
        ref.add_edge(u, v, cap, cost, flow)
    g.set_source_node(source)
    g.set_sink_node(sink)
    ref.source, ref.sink = source, sink
    return g, ref


def test_e7a_cycle_cancelling_reduces_cost_from_5_to_2() -> None:
    g, _ = _both([(0, 1, 1, 3, 1), (0, 3, 1, 1, 0), (2, 1, 1, 1, 0), (2, 3, 1, 2, 1), (-1, 0, 1, 0, 1),
                  (-1, 2, 1, 0, 1), (1, 99, 1, 0, 1), (3, 99, 1, 0, 1)], -1, 99)
    assert g.total_cost() == 5
    g.solve_min_cost_flow()
    assert g.total_cost() == 2
    assert g.adj[0][3].flow == 1 and g.adj[2][1].flow == 1
    assert g.adj[0][1].flow == 0 and g.adj[2][3].flow == 0


def test_e7b_ties_go_through_the_smallest_node_whatever_the_insertion_order() -> None:
    edges = [(0, 1, 1, 2, 1), (0, 2, 1, 1, 0), (0, 3, 1, 1, 0), (0, 4, 1, 1, 0), (1, 5, 1, 1, 1),
             (2, 5, 1, 1, 0), (3, 5, 1, 1, 0), (4, 5, 1, 1, 0)]
    rng = random.Random(7)
    for _ in range(5):
        rng.shuffle(edges)
        g, _ = _both(edges, 0, 5)
        g.solve_min_cost_flow()
        assert g.total_cost() == 2
        assert g.adj[0][2].flow == 1 and g.adj[2][5].flow == 1


def test_e7c_max_flow_of_a_single_edge() -> None:
    g, _ = _both([(0, 1, 100, 0, 0)], 0, 1)
    assert g.calculate_max_flow() == 100


def test_rejects_anti_parallel_edges_negative_capacity_and_overflow() -> None:
    g = Graph()
    g.add_edge(0, 1, 1, 1, 0)
    with pytest.raises(GraphError, match="already an edge from 0 to 1"):
        g.add_edge(1, 0, 1, 1, 0)
    with pytest.raises(GraphError, match="capacity must be >= 0"):
        g.add_edge(0, 2, -1, 1, 0)
    with pytest.raises(GraphError, match="exceeds capacity"):
        g.add_edge(0, 2, 1, 1, 2)


def test_rejects_invalid_flows_and_terminals() -> None:
    g, _ = _both([(0, 1, 1, 1, 1), (1, 2, 1, 1, 0)], 0, 2)
    with pytest.raises(GraphError, match="not conserved at node 1"):
        g.solve_min_cost_flow()
    g, _ = _both([(0, 1, 1, 1, 0), (1, 2, 1, 1, 0), (2, 3, 1, 0, 0)], 0, 2)
    with pytest.raises(GraphError, match="sink 2 has outgoing edges"):
        g.solve_min_cost_flow()
    g, _ = _both([(0, 1, 1, 1, 0), (3, 0, 1, 1, 0), (1, 2, 1, 0, 0)], 0, 2)
    with pytest.raises(GraphError, match="source 0 has incoming edges"):
        g.solve_min_cost_flow()
    g = Graph()
    g.add_edge(0, 1, 1, 1, 0)
    with pytest.raises(GraphError, match="source and sink"):
        g.solve_min_cost_flow()


def _random_assignment_graph(rng: random.Random) -> tuple[list[tuple[int, int, int, int, int]], int, int]:
    """Kafka's min_traffic shape: tasks -> clients with the current assignment as the flow."""
    tasks, clients = rng.randint(1, 9), rng.randint(1, 5)
    holder = [rng.randrange(clients) for _ in range(tasks)]
    edges = []
    for i in range(tasks):
        for j in range(clients):
            edges.append((i, tasks + j, 1, rng.randint(0, 12), int(holder[i] == j)))
        edges.append((-1, i, 1, 0, 1))
    for j in range(clients):
        orig = holder.count(j)
        edges.append((tasks + j, tasks + clients, orig, 0, orig))
    return edges, -1, tasks + clients


def _random_layered_graph(rng: random.Random) -> tuple[list[tuple[int, int, int, int, int]], int, int]:
    """Source -> two layers -> sink with random capacities and costs, zero flow."""
    a, b = rng.randint(1, 5), rng.randint(1, 5)
    sink = 1 + a + b
    edges = [(0, 1 + i, rng.randint(0, 3), rng.randint(-3, 5), 0) for i in range(a)]
    for i in range(a):
        for j in range(b):
            if rng.random() < 0.7:
                edges.append((1 + i, 1 + a + j, rng.randint(0, 3), rng.randint(-5, 9), 0))
    edges += [(1 + a + j, sink, rng.randint(0, 4), rng.randint(0, 3), 0) for j in range(b)]
    return edges, 0, sink


@pytest.mark.parametrize("seed", range(400))
def test_min_cost_flow_matches_the_literal_transcription_edge_for_edge(seed: int, search: str) -> None:
    rng = random.Random(seed)
    edges, source, sink = _random_assignment_graph(rng)
    rng.shuffle(edges)
    g, ref = _both(edges, source, sink)
    g.solve_min_cost_flow()
    ref.solve_min_cost_flow()
    assert _edges(g) == _edges(ref)
    assert g.total_cost() == ref.total_cost()


@pytest.mark.parametrize("seed", range(300))
def test_max_flow_then_min_cost_matches_the_literal_transcription(seed: int, search: str) -> None:
    rng = random.Random(10_000 + seed)
    edges, source, sink = _random_layered_graph(rng)
    g, ref = _both(edges, source, sink)
    assert g.calculate_max_flow() == ref.calculate_max_flow()
    assert _edges(g) == _edges(ref)
    g.solve_min_cost_flow()
    ref.solve_min_cost_flow()
    assert _edges(g) == _edges(ref)


def _dense_assignment_graph(rng: random.Random, tasks: int, clients: int) -> list[tuple[int, int, int, int, int]]:
    holder = [rng.randrange(clients) for _ in range(tasks)]
    edges = [(i, tasks + j, 1, rng.randint(0, 30), int(holder[i] == j)) for i in range(tasks) for j in range(clients)]
    edges += [(-1, i, 1, 0, 1) for i in range(tasks)]
    edges += [(tasks + j, tasks + clients, holder.count(j), 0, holder.count(j)) for j in range(clients)]
    return edges


def test_the_periodic_shortcut_is_taken_and_changes_nothing(monkeypatch: pytest.MonkeyPatch, search: str) -> None:
    jumps = []
    fast_forward = graph_module._Search._fast_forward

    def counting(self: object, *args: object) -> int:
        skipped = fast_forward(self, *args)  # type: ignore[arg-type]
        jumps.append(skipped)
        return skipped

    monkeypatch.setattr(graph_module._Search, "_fast_forward", counting)
    for seed in range(6):
        g, ref = _both(_dense_assignment_graph(random.Random(seed), 30, 6), -1, 36)
        g.solve_min_cost_flow()
        ref.solve_min_cost_flow()
        assert _edges(g) == _edges(ref)
    assert sum(1 for skipped in jumps if skipped) >= 6


def test_the_block_search_is_chosen_by_the_size_of_the_largest_block() -> None:
    """Kafka's layered graphs split into blocks; a graph past the threshold is searched block by block."""
    edges = _dense_assignment_graph(random.Random(3), 60, 40)
    g, ref = _both(edges, -1, 100)
    residual = graph_module._Residual(g)
    # source, tasks, clients, sink: each layer has no edge inside it
    assert [(a, b - a) for a, b in residual.independent_blocks()] == [(1, 1), (2, 60), (62, 40), (102, 1)]
    assert residual.largest_block_edges() == 60 * 40 + 60 >= graph_module.BLOCK_SEARCH_MIN_EDGES
    chosen = []
    original = graph_module._BlockedNegativeCycleSearch.run

    def recording(self: graph_module._BlockedNegativeCycleSearch) -> int | None:
        chosen.append(type(self).__name__)
        return original(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(graph_module._BlockedNegativeCycleSearch, "run", recording)
        g.solve_min_cost_flow()
    ref.solve_min_cost_flow()
    assert chosen and _edges(g) == _edges(ref)
