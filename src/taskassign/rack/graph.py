"""Kafka's own min-cost-flow solver (``Graph``), reproduced for bit-for-bit parity.

Kafka cancels negative cycles, starting from the flow already on the edges, with a Bellman-Ford search
from a dummy node that sorts before every real node; among equal-cost optima it therefore always returns
the same one, and so does this module. It knows nothing about tasks or clients: nodes are integers.

Kafka's search sweeps every edge N times per cycle (N = number of nodes). This implementation returns
exactly what those sweeps return but skips work that provably cannot change the outcome:

* a round that relaxes nothing ends the search (the state is a fixed point, so later rounds relax
  nothing either);
* within a round, a node whose distance has not changed since it was last scanned cannot relax any edge
  (every out-neighbour already satisfies ``dist[v] <= dist[u] + cost`` and distances only decrease);
* once the search repeats itself it is fast-forwarded. Let D = dist(round r) - dist(round r-p) and
  call nodes with equal D a class. Suppose every relaxation of the last p rounds went from a node to a
  node of its own class. Comparisons within a class are invariant under the class's common shift, so
  the next p rounds repeat those p rounds shifted by D -- unless some edge u -> v with residual capacity
  and D[u] < D[v] (u sinks faster) starts to relax (edges towards a faster class only lose ground).
  During the m-th next period u stays above ``dist[u] + m * D[u]`` and v below
  ``dist[v] + (m - 1) * D[v]``, so while ``dist[u] + m * D[u] + cost >= dist[v] + (m - 1) * D[v]`` on
  every such edge, round r + m * p is round r shifted by m * D, with the same parents. The search jumps
  there (never past round N-2: Kafka's round N-1, which reports a node, is always simulated) and
  carries on.

Large graphs are searched a block at a time. A block is a run of consecutive nodes with no edge between
any two of them (Kafka's graphs are layered: source, tasks, client nodes, sink), so while a block is
scanned no distance inside it changes and its relaxations do not depend on each other except through
their common targets: numpy computes every candidate ``dist[u] + cost`` of the block's dirty nodes at
once, and per target the first candidate (in Kafka's scanning order) of the lowest value wins, which is
what the node-by-node scan leaves behind. The last round returns the block's first improvement, as Kafka
does.

``tests/rack/kafka_graph_reference.py`` keeps a literal transcription; randomized tests check that both
produce the same flows on every edge.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

import numpy as np

from taskassign.errors import GraphError

__all__ = ("Graph", "GraphEdge", "GraphError")

#: Longest period the search looks for before jumping ahead (longer ones are simulated round by round).
MAX_PERIOD = 12
#: A graph whose largest block has at least this many edges is searched block by block with numpy; below
#: it numpy's cost per call outweighs the Python loop it replaces.
BLOCK_SEARCH_MIN_EDGES = 2048


class GraphEdge:
    """An edge of the flow graph as the caller sees it: capacity, cost and, after solving, the flow."""

    __slots__ = ("capacity", "cost", "destination", "flow", "residual_flow")

    def __init__(self, destination: int, capacity: int, cost: int, flow: int) -> None:
        self.destination = destination
        self.capacity = capacity
        self.cost = cost
        self.flow = flow
        self.residual_flow = capacity - flow

    def __repr__(self) -> str:
        return (f"GraphEdge(->{self.destination}, capacity={self.capacity}, cost={self.cost}, "
                f"flow={self.flow}, residual={self.residual_flow})")


class _Residual:
    """The residual graph in flat lists: edge e goes src[e] -> dst[e] (node indices in sorted order).

    Node index 0 is Kafka's dummy node; real nodes follow in ascending id order. Each original edge
    becomes a forward edge and a backward edge (cost negated) linked through ``counter``.
    """

    __slots__ = ("blocks", "cost", "counter", "dst", "edge_arrays", "flow", "forward", "incoming", "n", "node_ids",
                 "out", "positive", "residual", "residual_array", "scan", "src")

    def __init__(self, graph: Graph) -> None:
        node_ids = sorted(graph.nodes)
        index = {node: i + 1 for i, node in enumerate(node_ids)}
        self.node_ids = node_ids
        self.n = len(node_ids) + 1
        self.src: list[int] = []
        self.dst: list[int] = []
        self.cost: list[int] = []
        self.residual: list[int] = []
        self.flow: list[int] = []
        self.forward: list[bool] = []
        self.counter: list[int] = []
        for u in node_ids:
            for v, edge in sorted(graph.adj[u].items()) if u in graph.adj else ():
                iu, iv = index[u], index[v]
                e = len(self.src)
                self._append(iu, iv, edge.cost, edge.capacity - edge.flow, edge.flow, True, e + 1)
                self._append(iv, iu, -edge.cost, edge.flow, 0, False, e)
        self.out: list[list[int]] = [[] for _ in range(self.n)]
        self.incoming: list[list[int]] = [[] for _ in range(self.n)]
        for e in sorted(range(len(self.src)), key=lambda e: (self.src[e], self.dst[e])):
            self.out[self.src[e]].append(e)
            self.incoming[self.dst[e]].append(e)
        self.positive: list[list[tuple[int, int, int]]] = [self._positive_edges(u) for u in range(self.n)]
        #: (src, dst, cost) of every residual edge, and the residual capacities, for vectorised checks.
        self.edge_arrays = tuple(np.array(column, dtype=np.int64) for column in (self.src, self.dst, self.cost))
        self.residual_array = np.array(self.residual, dtype=np.int64)
        self.blocks: list[tuple[int, int]] | None = None
        self.scan: _ScanOrder | None = None

    def independent_blocks(self) -> list[tuple[int, int]]:
        """Maximal runs [a, b) of consecutive real nodes with no residual edge between two of them (found
        once: only the min-cost search asks)."""
        if self.blocks is None:
            self.blocks = self._blocks()
        return self.blocks

    def _blocks(self) -> list[tuple[int, int]]:
        blocks = []
        start = 1
        for u in range(1, self.n):
            neighbours = (self.dst[e] for e in self.out[u])
            if any(start <= v < u for v in neighbours) or any(start <= self.src[e] < u for e in self.incoming[u]):
                blocks.append((start, u))
                start = u
        blocks.append((start, self.n))
        return blocks

    def largest_block_edges(self) -> int:
        return max(sum(len(self.out[u]) for u in range(a, b)) for a, b in self.independent_blocks())

    def scan_order(self) -> _ScanOrder:
        """The edges in Kafka's scanning order as numpy arrays (built once, kept current by ``push``)."""
        if self.scan is None:
            self.scan = _ScanOrder(self)
            # From now on ``push`` keeps the scan order's open flags instead of the per-node lists, which
            # only the node-by-node searches read: emptied, so a stale read fails loudly.
            self.positive = []
        return self.scan

    def _append(self, u: int, v: int, cost: int, residual: int, flow: int, forward: bool, counter: int) -> None:
        self.src.append(u)
        self.dst.append(v)
        self.cost.append(cost)
        self.residual.append(residual)
        self.flow.append(flow)
        self.forward.append(forward)
        self.counter.append(counter)

    def _positive_edges(self, u: int) -> list[tuple[int, int, int]]:
        residual, dst, cost = self.residual, self.dst, self.cost
        return [(dst[e], cost[e], e) for e in self.out[u] if residual[e] > 0]

    def push(self, edges: list[int]) -> None:
        """Send the bottleneck along ``edges`` with Kafka's update rule; refresh the touched nodes."""
        residual, flow, forward, counter = self.residual, self.flow, self.forward, self.counter
        bottleneck = min(residual[e] for e in edges)
        for e in edges:
            residual[e] -= bottleneck
            if forward[e]:
                flow[e] += bottleneck
            c = counter[e]
            residual[c] += bottleneck
            if forward[c] and flow[c] >= bottleneck:
                flow[c] -= bottleneck
            self.residual_array[e] = residual[e]
            self.residual_array[c] = residual[c]
            if self.scan is not None:
                self.scan.update(e, residual[e])
                self.scan.update(c, residual[c])
        if self.scan is None:
            for u in {self.src[e] for e in edges} | {self.src[counter[e]] for e in edges}:
                self.positive[u] = self._positive_edges(u)

    def copy_back(self, graph: Graph) -> None:
        """Write the forward edges' flow and residual back onto the caller's edges."""
        ids = self.node_ids
        for e in range(0, len(self.src), 2):
            edge = graph.adj[ids[self.src[e] - 1]][ids[self.dst[e] - 1]]
            edge.flow = self.flow[e]
            edge.residual_flow = self.residual[e]


#: (first node, end node, first edge position, end edge position, edges per node) of a block
_Block = tuple[int, int, int, int, np.ndarray]
_NO_HITS = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))


class _ScanOrder:
    """Residual edges sorted by (source, destination), Kafka's scanning order, with each block's slice."""

    __slots__ = ("blocks", "cost", "dst", "edge", "first_edge", "open", "position", "src")

    def __init__(self, residual: _Residual) -> None:
        order = [e for u in range(residual.n) for e in residual.out[u]]
        self.edge = np.array(order, dtype=np.int64)
        self.src = residual.edge_arrays[0][self.edge]
        self.dst = residual.edge_arrays[1][self.edge]
        self.cost = residual.edge_arrays[2][self.edge]
        #: residual capacity > 0, per position in scanning order
        self.open = residual.residual_array[self.edge] > 0
        self.position = np.empty(len(order), dtype=np.int64)
        self.position[self.edge] = np.arange(len(order))
        #: position of each node's first edge (and, at n, the end)
        self.first_edge = np.searchsorted(self.src, np.arange(residual.n + 1))
        starts = self.first_edge
        self.blocks: list[_Block] = [(a, b, int(starts[a]), int(starts[b]), np.diff(starts[a:b + 1]))
                                     for a, b in residual.independent_blocks()]

    def update(self, edge: int, residual: int) -> None:
        self.open[self.position[edge]] = residual > 0


class _Search:
    """What both searches share: the periodic fast-forward and the walk round the cycle found."""

    def __init__(self, residual: _Residual) -> None:
        self.r = residual
        n = residual.n
        self.dist = [0] * n
        self.parent = [0] * n
        self.parent_edge = [-1] * n
        #: the last MAX_PERIOD + 1 rounds' distances and relaxations (sources, targets), for the fast-forward
        self.history: list[np.ndarray] = []
        self.events_by_round: list[tuple[np.ndarray, np.ndarray]] = []

    def run(self) -> int | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _set_distances(self, dist: np.ndarray) -> None:
        self.dist[:] = dist.tolist()

    def _distances(self) -> np.ndarray:
        return np.array(self.dist, dtype=np.int64)

    def _end_round(self, rnd: int, dist: np.ndarray, events: tuple[np.ndarray, np.ndarray]) -> int:
        """Record round ``rnd``'s distances and relaxations (sources, targets); returns the rounds skipped."""
        history, events_by_round = self.history, self.events_by_round
        history.append(dist)
        events_by_round.append(events)
        if len(history) > MAX_PERIOD + 1:
            del history[0]
            del events_by_round[0]
        return self._fast_forward(rnd, self.r.n - 1)

    def _fast_forward(self, rnd: int, last: int) -> int:
        """Skip whole periods of a repeating search (see the module doc); returns the rounds skipped."""
        history, events_by_round = self.history, self.events_by_round
        current = history[-1]
        for period in range(1, len(history)):
            drift = current - history[-1 - period]
            if not all((drift[us] == drift[vs]).all() for us, vs in events_by_round[-period:]):
                continue
            periods = self._safe_periods(drift, (last - rnd - 1) // period)
            if periods <= 0:
                return 0
            self._set_distances(current + periods * drift)
            history.clear()
            events_by_round.clear()
            return periods * period
        return 0

    def _safe_periods(self, drift: np.ndarray, limit: int) -> int:
        """How many periods (at most ``limit``) no edge from a faster-sinking class can relax a slower one."""
        src, dst, cost = self.r.edge_arrays
        gaining = (drift[src] < drift[dst]) & (self.r.residual_array > 0)
        if limit <= 0 or not gaining.any():
            return limit
        u, v, c = src[gaining], dst[gaining], cost[gaining]
        dist = self._distances()
        margin = dist[u] + c - dist[v] + drift[v]
        if (margin < 0).any():
            return 0
        return min(limit, int((margin // (drift[v] - drift[u])).min()))

    def cycle_edges(self, start: int) -> list[int]:
        """Walk parents from ``start`` until a node repeats; return that cycle's edges (Kafka's order)."""
        parent, parent_edge = self.parent, self.parent_edge
        seen = set()
        x = start
        while x not in seen:
            seen.add(x)
            x = parent[x]
        edges = [parent_edge[x]]
        y = parent[x]
        while y != x:
            edges.append(parent_edge[y])
            y = parent[y]
        return edges


class _NegativeCycleSearch(_Search):
    """One Bellman-Ford search from the dummy node, node by node, with the equivalence-preserving shortcuts."""

    def run(self) -> int | None:
        """The node Kafka's search returns (relaxed in round N-1), or None when no negative cycle exists."""
        r = self.r
        n = r.n
        dist, parent, parent_edge, positive = self.dist, self.parent, self.parent_edge, r.positive
        # Round 0 starts with the dummy node relaxing every node to 0; it never relaxes anything again.
        dirty = [True] * n
        dirty[0] = False
        last = n - 1
        rnd = 0
        while rnd <= last:
            is_last = rnd == last
            sources: list[int] = []
            targets: list[int] = []
            for u in range(1, n):
                if not dirty[u]:
                    continue
                dirty[u] = False
                du = dist[u]
                for v, c, e in positive[u]:
                    nd = du + c
                    if nd < dist[v]:
                        dist[v] = nd
                        parent[v] = u
                        parent_edge[v] = e
                        dirty[v] = True
                        if is_last:
                            return v
                        sources.append(u)
                        targets.append(v)
            if not sources and rnd > 0:
                return None
            if rnd > 0:
                rnd += self._end_round(rnd, np.array(dist, dtype=np.int64),
                                       (np.array(sources, dtype=np.int64), np.array(targets, dtype=np.int64)))
            rnd += 1
        return None  # pragma: no cover - the last round either returns or ended the search as quiet


class _BlockedNegativeCycleSearch(_Search):
    """The same search a block of independent nodes at a time, with numpy (see the module doc)."""

    def __init__(self, residual: _Residual) -> None:
        super().__init__(residual)
        self.scan = residual.scan_order()
        self.dist_array = np.zeros(residual.n, dtype=np.int64)

    def _set_distances(self, dist: np.ndarray) -> None:
        self.dist_array[:] = dist

    def _distances(self) -> np.ndarray:
        return self.dist_array

    def run(self) -> int | None:
        """The node Kafka's search returns (relaxed in round N-1), or None when no negative cycle exists."""
        n = self.r.n
        scan = self.scan
        s_src, s_dst, s_edge = scan.src, scan.dst, scan.edge
        dist = self.dist_array
        parent = np.zeros(n, dtype=np.int64)
        parent_edge = np.full(n, -1, dtype=np.int64)
        dirty = np.ones(n, dtype=bool)
        dirty[0] = False
        last = n - 1
        rnd = 0
        while rnd <= last:
            sources: list[np.ndarray] = []
            targets: list[np.ndarray] = []
            for block in scan.blocks:
                hits, hit_dist = self._improvements(block, dirty)
                if not hits.size:
                    continue
                hit_src, hit_dst = s_src[hits], s_dst[hits]
                if rnd == last:  # Kafka returns the round's first relaxation
                    v = int(hit_dst[0])
                    dist[v], parent[v], parent_edge[v] = hit_dist[0], hit_src[0], s_edge[hits[0]]
                    self._keep(parent, parent_edge)
                    return v
                # Per target, the first of its lowest candidates in scanning order is the one left standing.
                order = np.lexsort((hits, hit_dist, hit_dst))
                sorted_dst = hit_dst[order]
                first = np.empty(order.size, dtype=bool)
                first[0] = True
                np.not_equal(sorted_dst[1:], sorted_dst[:-1], out=first[1:])
                won = order[first]
                won_dst = hit_dst[won]
                dist[won_dst] = hit_dist[won]
                parent[won_dst] = hit_src[won]
                parent_edge[won_dst] = s_edge[hits[won]]
                dirty[won_dst] = True
                sources.append(hit_src)
                targets.append(hit_dst)
            if not sources and rnd > 0:
                return None
            if rnd > 0:
                rnd += self._end_round(rnd, dist.copy(),
                                       (np.concatenate(sources), np.concatenate(targets)))
            rnd += 1
        return None  # pragma: no cover - the last round either returns or ended the search as quiet

    def _improvements(self, block: _Block, dirty: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Scan one block: the positions (scanning order) of the open edges out of its dirty nodes whose
        candidate distance beats the target's distance before the block, with those candidates; the
        block's nodes are clean afterwards."""
        a, b, lo, hi, degree = block
        scan, dist = self.scan, self.dist_array
        dirty_here = dirty[a:b]
        count = int(np.count_nonzero(dirty_here))
        if not count or lo == hi:
            dirty_here[:] = False
            return _NO_HITS
        if count * 4 >= b - a:  # most nodes are dirty: every edge of the block, masked
            # np.repeat over the block's own nodes is a gather by source, three times faster than dist[src].
            candidate = np.repeat(dist[a:b], degree) + scan.cost[lo:hi]
            improves = candidate < np.take(dist, scan.dst[lo:hi])
            improves &= scan.open[lo:hi]
            improves &= np.repeat(dirty_here, degree)
            local = np.flatnonzero(improves)
            dirty_here[:] = False
            return local + lo, candidate[local]
        # a few dirty nodes: only their edges
        nodes = np.flatnonzero(dirty_here)
        dirty_here[:] = False
        counts = degree[nodes]
        total = int(counts.sum())
        ends = np.cumsum(counts)
        positions = np.repeat(scan.first_edge[nodes + a] - ends + counts, counts) + np.arange(total)
        candidate = np.repeat(dist[nodes + a], counts) + scan.cost[positions]
        improves = candidate < np.take(dist, scan.dst[positions])
        improves &= scan.open[positions]
        local = np.flatnonzero(improves)
        return positions[local], candidate[local]

    def _keep(self, parent: np.ndarray, parent_edge: np.ndarray) -> None:
        self.dist = self.dist_array.tolist()
        self.parent = parent.tolist()
        self.parent_edge = parent_edge.tolist()


class Graph:
    """A flow network on integer nodes with Kafka's cycle-cancelling min-cost flow and Edmonds-Karp max flow.

    ``add_edge(u, v, capacity, cost, flow)`` sets the starting flow; ``solve_min_cost_flow`` improves it
    to a minimum-cost flow of the same value; ``calculate_max_flow`` pushes a maximum flow from zero.
    """

    def __init__(self) -> None:
        self.adj: dict[int, dict[int, GraphEdge]] = {}
        self.nodes: set[int] = set()
        self.source_node: int | None = None
        self.sink_node: int | None = None

    def add_edge(self, u: int, v: int, capacity: int, cost: int, flow: int = 0) -> None:
        """Add (or replace) the edge u -> v; an edge v -> u must not exist (no anti-parallel edges)."""
        if v in self.adj and u in self.adj[v]:
            raise GraphError(f"there is already an edge from {v} to {u}; an edge from {u} to {v} would "
                             "create a cycle between two nodes")
        if capacity < 0:
            raise GraphError(f"edge {u} -> {v}: capacity must be >= 0, got {capacity}")
        if flow > capacity:
            raise GraphError(f"edge {u} -> {v}: flow {flow} exceeds capacity {capacity}")
        self.adj.setdefault(u, {})[v] = GraphEdge(v, capacity, cost, flow)
        self.nodes.add(u)
        self.nodes.add(v)

    def set_source_node(self, node: int) -> None:
        self.source_node = node

    def set_sink_node(self, node: int) -> None:
        self.sink_node = node

    def edges(self, u: int) -> Iterator[GraphEdge]:
        """The edges leaving ``u`` in ascending destination order."""
        for _, edge in sorted(self.adj.get(u, {}).items()):
            yield edge

    def total_cost(self) -> int:
        """Sum of cost x flow over every edge."""
        return sum(e.cost * e.flow for edges in self.adj.values() for e in edges.values())

    def flow(self) -> int:
        """The flow leaving the source."""
        source = self._require_terminals()[0]
        return sum(e.flow for e in self.adj.get(source, {}).values())

    def _require_terminals(self) -> tuple[int, int]:
        if self.source_node is None or self.sink_node is None:
            raise GraphError("source and sink nodes must be set first")
        if self.source_node not in self.nodes:
            raise GraphError(f"source node {self.source_node} is not a node of the graph")
        if self.sink_node not in self.nodes:
            raise GraphError(f"sink node {self.sink_node} is not a node of the graph")
        return self.source_node, self.sink_node

    def _validate_flow(self) -> None:
        source, sink = self._require_terminals()
        if self.adj.get(sink):
            raise GraphError(f"sink {sink} has outgoing edges")
        if any(source in edges for edges in self.adj.values()):
            raise GraphError(f"source {source} has incoming edges")
        balance = dict.fromkeys(self.nodes, 0)
        for u, edges in self.adj.items():
            for v, e in edges.items():
                balance[u] -= e.flow
                balance[v] += e.flow
        for node in sorted(self.nodes):
            if node not in (source, sink) and balance[node] != 0:
                raise GraphError(f"flow is not conserved at node {node}: inflow - outflow = {balance[node]}")
        if -balance[source] != balance[sink]:
            raise GraphError(f"source outflow {-balance[source]} differs from sink inflow {balance[sink]}")

    def solve_min_cost_flow(self) -> None:
        """Cancel negative cycles (Bellman-Ford from a dummy node) until the flow has minimum cost."""
        self._validate_flow()
        residual = _Residual(self)
        blocked = residual.largest_block_edges() >= BLOCK_SEARCH_MIN_EDGES
        while True:
            search: _Search = _BlockedNegativeCycleSearch(residual) if blocked else _NegativeCycleSearch(residual)
            node = search.run()
            if node is None:
                break
            residual.push(search.cycle_edges(node))
        residual.copy_back(self)

    def calculate_max_flow(self) -> int:
        """Edmonds-Karp from zero flow (BFS in ascending node order); returns the flow value."""
        source_id, sink_id = self._require_terminals()
        residual = _Residual(self)
        index = {node: i + 1 for i, node in enumerate(residual.node_ids)}
        source, sink = index[source_id], index[sink_id]
        while True:
            parent_edge = self._shortest_augmenting_path(residual, source, sink)
            if parent_edge is None:
                break
            path = []
            x = sink
            while x != source:
                e = parent_edge[x]
                path.append(e)
                x = residual.src[e]
            residual.push(path)
        residual.copy_back(self)
        return self.flow()

    @staticmethod
    def _shortest_augmenting_path(residual: _Residual, source: int, sink: int) -> dict[int, int] | None:
        parent_edge: dict[int, int] = {}
        visited = bytearray(residual.n)
        visited[source] = 1
        queue = deque([source])
        positive = residual.positive
        while queue:
            u = queue.popleft()
            for v, _, e in positive[u]:
                if visited[v]:
                    continue
                parent_edge[v] = e
                if v == sink:
                    return parent_edge
                visited[v] = 1
                queue.append(v)
        return None
