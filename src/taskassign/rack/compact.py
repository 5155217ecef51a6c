"""The fast solver: OR-Tools min-cost flow on a compact graph whose size grows with tasks + clients.

Kafka's graph gives every task an arc to every client (T x C arcs). But a task's cost on a client other
than its holder depends only on the client's rack, so here a task gets:

* one arc to its holder (cost: traffic on the holder's rack, nothing for moving),
* one arc to each rack that hosts a replica of one of its partitions (traffic there + non-overlap),
* one arc to a "far" node standing for every other rack (all partitions remote + non-overlap),

and each rack pool fans out to its clients' slots. Tasks are grouped: one group for ``min_traffic``
(a slot is the client itself, capped by its current count), one per subtopology for
``balance_subtopology`` (a slot per group and client, capped by Kafka's per-subtopology capacity, then
an arc to the client). Moves carry a tie-break penalty below one cost unit, so among minimum-cost
assignments the one with the fewest moves wins and nothing moves without a strict gain.

Any optimal flow decomposes back into an assignment of the same cost: a task routed through a rack pool
never lands on its own holder, and a task routed through "far" never lands on a rack holding one of its
replicas, because in either case rerouting it would be strictly cheaper.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from ortools.graph.python import min_cost_flow

from taskassign.rack.problem import FlowProblem

__all__ = ("solve_compact",)

_COST_LIMIT = 2**62
_HOLDER, _POOL, _FAR = 0, 1, 2


@dataclass
class _Arcs:
    tails: list[int] = field(default_factory=list)
    heads: list[int] = field(default_factory=list)
    caps: list[int] = field(default_factory=list)
    costs: list[int] = field(default_factory=list)

    def add(self, tail: int, head: int, cap: int, cost: int) -> int:
        self.tails.append(tail)
        self.heads.append(head)
        self.caps.append(cap)
        self.costs.append(cost)
        return len(self.tails) - 1


@dataclass
class _Group:
    """One group's nodes: client slots, rack pools, the far node."""

    slot: dict[int, int]  # client -> slot node
    cap: dict[int, int]  # client -> capacity in this group
    pool: dict[int, int]  # rack -> pool node
    pool_key: dict[int, int]  # rack -> global pool key
    far: int = -1


def solve_compact(
    problem: FlowProblem, groups: Sequence[Sequence[int]], group_caps: Sequence[Sequence[int]] | None = None
) -> list[int]:
    """The new holder of every task of ``problem`` (a minimum-cost one, fewest moves among those).

    ``groups`` partitions the task indices; ``group_caps[g][j]`` caps how many tasks of group g client j
    may receive (None: a single group, capped only by each client's current count).
    """
    if not problem.tasks:
        return []
    return _Compact(problem, groups, group_caps).solve()


class _Compact:
    def __init__(
        self, problem: FlowProblem, groups: Sequence[Sequence[int]], group_caps: Sequence[Sequence[int]] | None
    ) -> None:
        self.p = problem
        self.members = groups
        self.t_count, self.c_count = len(problem.tasks), len(problem.clients)
        self.nodes = self.t_count + self.c_count
        self.pools: list[tuple[int, int]] = []  # key -> (group, rack)
        self.groups = [self._group(g, group_caps) for g in range(len(groups))]
        self.slotted = group_caps is not None

    def _node(self) -> int:
        self.nodes += 1
        return self.nodes - 1

    def _group(self, g: int, group_caps: Sequence[Sequence[int]] | None) -> _Group:
        p = self.p
        group = _Group({}, {}, {}, {})
        for j, orig in enumerate(p.orig):
            cap = orig if group_caps is None else group_caps[g][j]
            if cap > 0:
                group.slot[j] = self.t_count + j if group_caps is None else self._node()
                group.cap[j] = cap
        for rack in sorted({p.client_racks[j] for j in group.slot}):
            group.pool[rack] = self._node()
            group.pool_key[rack] = len(self.pools)
            self.pools.append((g, rack))
        return group

    def _scale(self) -> tuple[int, int]:
        """(K, penalty): costs are multiplied by K and a move adds ``penalty`` < K, when int64 allows it."""
        p = self.p
        most_partitions = max(p.costs.table.tasks[t].partitions for t in p.tasks)
        worst = p.costs.traffic_cost * most_partitions + p.costs.non_overlap_cost
        k = self.t_count + 1
        if (worst * k + 1) * (self.nodes + len(self.groups) + 2) >= _COST_LIMIT:
            return 1, 0
        return k, 1

    def solve(self) -> list[int]:
        p = self.p
        k, penalty = self._scale()
        traffic, non_overlap = p.costs.traffic_cost, p.costs.non_overlap_cost
        table = p.costs.table.tasks
        arcs = _Arcs()
        arc_task: list[int] = []
        arc_kind: list[int] = []
        arc_key: list[int] = []

        def task_arc(task: int, head: int, cost: int, kind: int, key: int) -> None:
            arcs.add(task, head, 1, cost)
            arc_task.append(task)
            arc_kind.append(kind)
            arc_key.append(key)

        for g, members in enumerate(self.members):
            group = self.groups[g]
            for i in members:
                racks = table[p.tasks[i]]
                holder = p.holders[i]
                task_arc(i, group.slot[holder], k * traffic * racks.missing(p.client_racks[holder]), _HOLDER, -1)
                for rack, count in racks.on_rack.items():
                    if rack in group.pool:
                        cost = k * (traffic * (racks.partitions - count) + non_overlap) + penalty
                        task_arc(i, group.pool[rack], cost, _POOL, group.pool_key[rack])
                if len(racks.on_rack.keys() & group.pool.keys()) < len(group.pool):
                    if group.far < 0:
                        group.far = self._node()
                    task_arc(i, group.far, k * (traffic * racks.partitions + non_overlap) + penalty, _FAR, g)
        task_arc_count = len(arcs.tails)
        far_arcs: list[list[tuple[int, int]]] = []  # group -> [(arc, pool key)]
        slot_arcs: list[list[tuple[int, int]]] = [[] for _ in self.pools]  # pool key -> [(arc, client)]
        for g, group in enumerate(self.groups):
            far_arcs.append([])
            for rack, pool in group.pool.items():
                key = group.pool_key[rack]
                if group.far >= 0:
                    far_arcs[g].append((arcs.add(group.far, pool, len(self.members[g]), 0), key))
                for j in sorted(group.slot):
                    if p.client_racks[j] == rack:
                        slot_arcs[key].append((arcs.add(pool, group.slot[j], group.cap[j], 0), j))
            if self.slotted:
                for j, slot in sorted(group.slot.items()):
                    arcs.add(slot, self.t_count + j, group.cap[j], 0)
        flows = self._run(arcs)
        used = np.nonzero(flows[:task_arc_count] > 0)[0].tolist()
        pool_tasks: list[list[int]] = [[] for _ in self.pools]
        far_tasks: list[list[int]] = [[] for _ in self.groups]
        for arc in used:
            if arc_kind[arc] == _POOL:
                pool_tasks[arc_key[arc]].append(arc_task[arc])
            elif arc_kind[arc] == _FAR:
                far_tasks[arc_key[arc]].append(arc_task[arc])
        for g, group_far_arcs in enumerate(far_arcs):
            _deal(sorted(far_tasks[g]), [(int(flows[arc]), key) for arc, key in group_far_arcs],
                  lambda task, key: pool_tasks[key].append(task))
        holders = list(p.holders)

        def place(task: int, client: int) -> None:
            holders[task] = client

        for key, members in enumerate(pool_tasks):
            _deal(sorted(members), [(int(flows[arc]), j) for arc, j in slot_arcs[key]], place)
        return holders

    def _run(self, arcs: _Arcs) -> np.ndarray:
        p = self.p
        smcf = min_cost_flow.SimpleMinCostFlow()
        smcf.add_arcs_with_capacity_and_unit_cost(
            np.asarray(arcs.tails, dtype=np.int32), np.asarray(arcs.heads, dtype=np.int32),
            np.asarray(arcs.caps, dtype=np.int64), np.asarray(arcs.costs, dtype=np.int64),
        )
        supplies = np.zeros(self.nodes, dtype=np.int64)
        supplies[: self.t_count] = 1
        supplies[self.t_count : self.t_count + self.c_count] = -np.asarray(p.orig, dtype=np.int64)
        smcf.set_nodes_supplies(np.arange(self.nodes, dtype=np.int32), supplies)
        status = smcf.solve()
        if status != smcf.OPTIMAL:  # pragma: no cover - the current assignment is always feasible
            raise RuntimeError(f"OR-Tools min-cost flow returned status {status}")
        return np.asarray(smcf.flows(np.arange(len(arcs.tails), dtype=np.int32)))


def _deal(tasks: list[int], counts: list[tuple[int, int]], give: Callable[[int, int], None]) -> None:
    """Hand ``tasks`` out in order: the first ``n`` to the first target, and so on."""
    start = 0
    for n, target in counts:
        for task in tasks[start : start + n]:
            give(task, target)
        start += n
