"""A literal transcription of Kafka's ``Graph`` min-cost-flow solver
(``org.apache.kafka.streams.processor.internals.assignment.Graph``), kept as the reference the optimised
``taskassign.rack.graph`` must match edge for edge.

Nothing here is optimised: every Bellman-Ford pass sweeps all N rounds over every edge, exactly as
written in Kafka's Graph.java, so it is slow; the randomized equivalence tests keep graphs small.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass(eq=False)
class RefEdge:
    destination: int
    capacity: int
    cost: int
    residual_flow: int
    flow: int
    forward: bool = True
    counter: RefEdge | None = field(default=None, repr=False)


class ReferenceGraph:
    def __init__(self, residual: bool = False) -> None:
        self.adj: dict[int, dict[int, RefEdge]] = {}
        self.nodes: set[int] = set()
        self.residual = residual
        self.source: int | None = None
        self.sink: int | None = None

    def add_edge(self, u: int, v: int, capacity: int, cost: int, flow: int) -> None:
        if not self.residual and v in self.adj and u in self.adj[v]:
            raise ValueError(f"there is already an edge from {v} to {u}")
        if capacity < 0:
            raise ValueError("negative capacity")
        if flow > capacity:
            raise ValueError("flow above capacity")
        self._put(u, RefEdge(v, capacity, cost, capacity - flow, flow))

    def _put(self, u: int, edge: RefEdge) -> None:
        self.adj.setdefault(u, {})[edge.destination] = edge
        self.nodes.add(u)
        self.nodes.add(edge.destination)

    def total_cost(self) -> int:
        return sum(e.cost * e.flow for edges in self.adj.values() for e in edges.values())

    def flow(self) -> int:
        assert self.source is not None
        return sum(e.flow for e in self.adj.get(self.source, {}).values())

    def _residual_graph(self) -> ReferenceGraph:
        g = ReferenceGraph(residual=True)
        g.source, g.sink = self.source, self.sink
        for u in sorted(self.adj):
            for v in sorted(self.adj[u]):
                e = self.adj[u][v]
                fwd = RefEdge(v, e.capacity, e.cost, e.capacity - e.flow, e.flow, True)
                bwd = RefEdge(u, e.capacity, -e.cost, e.flow, 0, False)
                fwd.counter, bwd.counter = bwd, fwd
                g._put(u, fwd)
                g._put(v, bwd)
        g.nodes |= self.nodes
        return g

    def _copy_back(self, g: ReferenceGraph) -> None:
        for u, edges in self.adj.items():
            for v, e in edges.items():
                r = g.adj[u][v]
                e.flow, e.residual_flow = r.flow, r.residual_flow

    def _validate(self) -> None:
        assert self.source is not None and self.sink is not None
        inflow: dict[int, int] = dict.fromkeys(self.nodes, 0)
        outflow: dict[int, int] = dict.fromkeys(self.nodes, 0)
        for u, edges in self.adj.items():
            for v, e in edges.items():
                outflow[u] += e.flow
                inflow[v] += e.flow
        if self.adj.get(self.sink):
            raise ValueError("sink has outgoing edges")
        if any(self.source in edges for edges in self.adj.values()):
            raise ValueError("source has incoming edges")
        for n in self.nodes:
            if n not in (self.source, self.sink) and inflow[n] != outflow[n]:
                raise ValueError(f"flow not conserved at {n}")
        if outflow[self.source] != inflow[self.sink]:
            raise ValueError("source outflow differs from sink inflow")

    @staticmethod
    def _push(edges: list[RefEdge]) -> None:
        b = min(e.residual_flow for e in edges)
        for e in edges:
            e.residual_flow -= b
            if e.forward:
                e.flow += b
            c = e.counter
            assert c is not None
            c.residual_flow += b
            if c.forward and c.flow >= b:
                c.flow -= b

    def solve_min_cost_flow(self) -> None:
        if self.residual:
            raise ValueError("cannot solve a residual graph")
        self._validate()
        g = self._residual_graph()
        dummy = min(g.nodes) - 1
        for x in sorted(g.nodes):
            g._put(dummy, RefEdge(x, 1, 0, 1, 0))
        while True:
            parent: dict[int, int] = {}
            parent_edge: dict[int, RefEdge] = {}
            v = self._bellman_ford(g, dummy, parent, parent_edge)
            if v is None:
                break
            seen: set[int] = set()
            x = v
            while x not in seen:
                seen.add(x)
                x = parent[x]
            cycle = [parent_edge[x]]
            y = parent[x]
            while y != x:
                cycle.append(parent_edge[y])
                y = parent[y]
            self._push(cycle)
        del g.adj[dummy]
        g.nodes.discard(dummy)
        self._copy_back(g)

    @staticmethod
    def _bellman_ford(
        g: ReferenceGraph, dummy: int, parent: dict[int, int], parent_edge: dict[int, RefEdge]
    ) -> int | None:
        order = sorted(g.nodes)
        n = len(order)
        dist: dict[int, int] = {dummy: 0}
        for i in range(n):
            for u in order:
                for v in sorted(g.adj.get(u, {})):
                    e = g.adj[u][v]
                    if e.residual_flow == 0:
                        continue
                    if u in dist and (v not in dist or dist[v] > dist[u] + e.cost):
                        dist[v] = dist[u] + e.cost
                        parent[v] = u
                        parent_edge[v] = e
                        if i == n - 1:
                            return v
        return None

    def calculate_max_flow(self) -> int:
        assert self.source is not None and self.sink is not None
        g = self._residual_graph()
        while True:
            parent: dict[int, int] = {}
            parent_edge: dict[int, RefEdge] = {}
            queue = deque([self.source])
            visited = {self.source}
            found = False
            while queue and not found:
                u = queue.popleft()
                for v in sorted(g.adj.get(u, {})):
                    e = g.adj[u][v]
                    if v in visited or e.residual_flow <= 0:
                        continue
                    parent[v] = u
                    parent_edge[v] = e
                    if v == self.sink:
                        found = True
                        break
                    visited.add(v)
                    queue.append(v)
            if not found:
                break
            path = []
            x = self.sink
            while x != self.source:
                path.append(parent_edge[x])
                x = parent[x]
            self._push(path)
        self._copy_back(g)
        return self.flow()
