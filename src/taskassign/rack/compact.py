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
replicas, because in either case rerouting it would be strictly cheaper. The graph is built and decoded
with numpy, so a 10^5-task, 10^3-client application costs a few hundred thousand arcs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from taskassign.rack.cost import segments
from taskassign.rack.hub_split import split_hub_flow
from taskassign.rack.problem import FlowProblem

__all__ = ("solve_compact", "unique_rows")

_COST_LIMIT = 2**62
_I64 = np.int64


def solve_compact(
    problem: FlowProblem, groups: Sequence[Sequence[int]],
    group_caps: Sequence[Sequence[int] | None] | np.ndarray | None = None,
) -> tuple[list[int], int]:
    """The new holder of every task of ``problem`` and Kafka's cost of that assignment.

    ``groups`` partitions the task indices; ``group_caps[g][j]`` caps how many tasks of group g client j
    may receive (None for the whole argument: a single group; None for one group: that group is capped
    only by each client's current count, like min_traffic's single group; an array: every group capped).
    """
    if not problem.tasks:
        return [], 0
    return _Compact(problem, groups, group_caps).solve()


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0, return_inverse=True, return_counts=True)`` for a 2-d integer array, with a flat
    inverse: one lexsort instead of numpy's sort of the rows as structured records (4x faster on the ~10^3
    rows of a fleet's application, solved once per optimisation and per pair of clients)."""
    if not len(rows):
        return rows[:0], np.zeros(0, dtype=_I64), np.zeros(0, dtype=_I64)
    order = np.lexsort(rows.T[::-1])  # the first column most significant, as numpy orders rows
    ordered = rows[order]
    first = np.empty(len(ordered), dtype=bool)
    first[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=first[1:])
    inverse = np.empty(len(ordered), dtype=_I64)
    inverse[order] = np.cumsum(first) - 1
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, len(ordered)))
    return ordered[first], inverse, counts


class _Compact:
    """Node layout: tasks 0..T-1, clients T..T+C-1, then slots (balance only), rack pools, far nodes."""

    def __init__(
        self, problem: FlowProblem, groups: Sequence[Sequence[int]],
        group_caps: Sequence[Sequence[int] | None] | np.ndarray | None,
    ) -> None:
        p = self.p = problem
        t_count, c_count = self.t_count, self.c_count = len(problem.tasks), len(problem.clients)
        g_count = self.g_count = len(groups)
        self.group_of = np.zeros(t_count, dtype=_I64)
        for g, members in enumerate(groups):
            self.group_of[np.asarray(members, dtype=_I64)] = g
        self.group_size = np.bincount(self.group_of, minlength=g_count)
        self.orig = np.asarray(p.orig, dtype=_I64)
        self.client_rack = np.asarray(p.client_racks, dtype=_I64)
        if isinstance(group_caps, np.ndarray):
            uncapped = np.zeros(len(group_caps), dtype=bool)
            self.caps = group_caps.astype(_I64, copy=False)
        else:
            rows = [None] if group_caps is None else group_caps
            uncapped = np.array([row is None for row in rows], dtype=bool)
            self.caps = np.vstack([self.orig if row is None else np.asarray(row, dtype=_I64) for row in rows])
        self.nodes = t_count + c_count
        # Slots: one node per (group, client) where the client holds tasks of a capped group (its holder
        # arcs and pool arcs then share the cap); elsewhere the client itself, the pool's arc capped. With
        # 10^3 subtopologies x 10^3 clients that is ~5% of the (group, client) pairs: 553,000 nodes and
        # 1.2 million arcs became ~100,000 nodes and ~0.7 million arcs.
        self.slot = np.full((g_count, c_count), -1, dtype=_I64)
        room = self.caps > 0
        held = np.zeros((g_count, c_count), dtype=bool)
        held[self.group_of, np.asarray(problem.holders, dtype=_I64)] = True
        slotted = room & held & ~uncapped[:, None]
        self.slot[slotted] = self._allocate(int(slotted.sum()))
        direct_g, direct_j = np.nonzero(room & ~slotted)
        self.slot[direct_g, direct_j] = t_count + direct_j
        # Rack pools: per group, every rack with a client that has room there (group-major, rack ascending).
        rack_count = len(p.costs.table.racks)
        has_pool = np.zeros((g_count, rack_count), dtype=bool)
        room_g, room_j = np.nonzero(room)
        has_pool[room_g, self.client_rack[room_j]] = True
        self.pool = np.full((g_count, rack_count), -1, dtype=_I64)
        pool_count = int(has_pool.sum())
        self.pool[has_pool] = self._allocate(pool_count)
        self.pool_key = np.full((g_count, rack_count), -1, dtype=_I64)
        self.pool_key[has_pool] = np.arange(pool_count, dtype=_I64)
        self.pool_group, self.pool_rack = np.nonzero(has_pool)
        self.pools_per_group = has_pool.sum(axis=1)

    def _allocate(self, n: int) -> np.ndarray:
        ids = np.arange(self.nodes, self.nodes + n, dtype=_I64)
        self.nodes += n
        return ids

    def _scale(self, most_partitions: int) -> tuple[int, int]:
        """(K, penalty): costs are multiplied by K and a move adds ``penalty`` < K, when int64 allows it."""
        costs = self.p.costs
        worst = costs.traffic_cost * most_partitions + costs.non_overlap_cost
        k = self.t_count + 1
        if (worst * k + 1) * (self.nodes + self.g_count + 2) >= _COST_LIMIT:
            return 1, 0
        return k, 1

    def solve(self) -> tuple[list[int], int]:
        p = self.p
        table = p.costs.table
        traffic, non_overlap = p.costs.traffic_cost, p.costs.non_overlap_cost
        t_count = self.t_count
        tasks = np.arange(t_count, dtype=_I64)
        holders = np.asarray(p.holders, dtype=_I64)
        rows = np.fromiter((table.row[t] for t in p.tasks), dtype=_I64, count=t_count)
        parts = table.partition_counts[rows]
        lengths = table.indptr[rows + 1] - table.indptr[rows]
        entries = segments(table.indptr[rows], lengths)
        entry_task = np.repeat(tasks, lengths)
        entry_rack = table.rack_ids[entries]
        entry_count = table.counts[entries]
        k, penalty = self._scale(int(parts.max()))
        group_of = self.group_of

        # Holder arcs: stay, paying the traffic on the holder's rack.
        on_holder_rack = np.zeros(t_count, dtype=_I64)
        at_holder = entry_rack == self.client_rack[holders[entry_task]]
        on_holder_rack[entry_task[at_holder]] = entry_count[at_holder]
        holder_cost = k * traffic * (parts - on_holder_rack)
        # Pool arcs: to a rack hosting replicas of the task.
        entry_pool = self.pool[group_of[entry_task], entry_rack]
        local = entry_pool >= 0
        local_task = entry_task[local]
        local_key = self.pool_key[group_of[local_task], entry_rack[local]]
        local_cost = k * (traffic * (parts[local_task] - entry_count[local]) + non_overlap) + penalty
        # Far arcs: to every other rack at once, all partitions remote.
        local_per_task = np.bincount(local_task, minlength=t_count)
        far_task = tasks[local_per_task < self.pools_per_group[group_of]]
        far_node = np.full(self.g_count, -1, dtype=_I64)
        far_groups = np.unique(group_of[far_task])
        far_node[far_groups] = self._allocate(len(far_groups))
        far_cost = k * (traffic * parts[far_task] + non_overlap) + penalty
        # Far -> pool (group-major, pools ascending), pool -> slot (pool key order), slot -> client.
        far_pool = np.nonzero(far_node[self.pool_group] >= 0)[0]
        room_g, room_j = np.nonzero(self.caps > 0)
        slot_key = self.pool_key[room_g, self.client_rack[room_j]]
        by_key = np.lexsort((room_j, slot_key))
        slot_g, slot_j, slot_key = room_g[by_key], room_j[by_key], slot_key[by_key]
        pool_nodes = self.pool[self.pool_group, self.pool_rack]

        arcs_to_pools = [
            (tasks, self.slot[group_of, holders], np.ones(t_count, dtype=_I64), holder_cost),
            (local_task, self.pool[group_of[local_task], entry_rack[local]], np.ones(len(local_task), dtype=_I64),
             local_cost),
            (far_task, far_node[group_of[far_task]], np.ones(len(far_task), dtype=_I64), far_cost),
            (far_node[self.pool_group[far_pool]], pool_nodes[far_pool], self.group_size[self.pool_group[far_pool]],
             np.zeros(len(far_pool), dtype=_I64)),
        ]
        pool_tasks = (local_task, local_key, far_task, far_pool)
        # The hub graph first: it always splits for uncapped groups (min_traffic's), usually for capped ones.
        hub = self._solve_through_hubs(holders, holder_cost, (local_task, entry_rack[local], local_cost),
                                       (far_task, far_cost), k, penalty)
        if hub is not None:
            return hub
        blocks = [
            *arcs_to_pools,
            (pool_nodes[slot_key], self.slot[slot_g, slot_j], self.caps[slot_g, slot_j],
             np.zeros(len(slot_key), dtype=_I64)),
        ]
        real = self.slot[room_g, room_j] >= self.t_count + self.c_count  # a slot node, not the client
        if real.any():
            blocks.append((self.slot[room_g, room_j][real], t_count + room_j[real], self.caps[room_g, room_j][real],
                           np.zeros(int(real.sum()), dtype=_I64)))
        starts = np.cumsum([0] + [len(b[0]) for b in blocks])
        flows, optimal = self._run(*(np.concatenate([b[i] for b in blocks]) for i in range(4)))

        pooled = self._pooled_tasks(pool_tasks, flows[starts[1]:starts[2]], flows[starts[2]:starts[3]],
                                    flows[starts[3]:starts[4]])
        new_holders = holders.copy()
        new_holders[pooled] = np.repeat(slot_j, flows[starts[4]:starts[5]])
        cost = optimal // k if penalty else optimal
        return new_holders.tolist(), int(cost)

    def _pooled_tasks(self, pool_tasks: tuple[np.ndarray, ...], local_flow: np.ndarray, far_flow: np.ndarray,
                      far_pool_flow: np.ndarray) -> np.ndarray:
        """The tasks that went through a rack pool, in pool key order, then TaskId: far tasks (group
        order, then TaskId) fill their group's pools in pool order."""
        local_task, local_key, far_task, far_pool = pool_tasks
        group_of = self.group_of
        moved_far = far_task[far_flow > 0]
        moved_far = moved_far[np.lexsort((moved_far, group_of[moved_far]))]
        far_key = np.repeat(self.pool_key[self.pool_group[far_pool], self.pool_rack[far_pool]], far_pool_flow)
        pool_task = np.concatenate([local_task[local_flow > 0], moved_far])
        pool_task_key = np.concatenate([local_key[local_flow > 0], far_key])
        ordered: np.ndarray = pool_task[np.lexsort((pool_task, pool_task_key))]
        return ordered

    def _solve_through_hubs(
        self, holders: np.ndarray, holder_cost: np.ndarray, local: tuple[np.ndarray, np.ndarray, np.ndarray],
        far: tuple[np.ndarray, np.ndarray], k: int, penalty: int,
    ) -> tuple[list[int], int] | None:
        """The same problem with the (group, client) caps of the pools' arcs relaxed, or None.

        Every pool sends its flow to one hub per rack, and the hub to the rack's clients (capped by their
        counts); a task staying home goes straight to its client, through a slot only where its client
        holds more tasks of its group than the cap allows. The pools' and far nodes' arcs then carry at most
        their group's size, so they never bind: a task either stays or goes to some rack's hub at its cost
        there, and tasks with the same holder (or slot) and the same costs are interchangeable. They are
        solved as one node per such class (at 10^5 x 10^3 about 3,000 instead of 50,000 tasks, ~10,000
        arcs), and the class's flows handed to its tasks in task order. The optimum costs at most the full
        problem's. Within a rack the hub's arcs all cost nothing, so any split of each pool's flow over the
        clients the hub fed, with each client's intake kept, costs the same: if a split exists that
        respects every cap left by the tasks that stayed (a small max flow, per rack: pools with flow x
        clients with intake), the result is optimal for the full problem. No task goes to its own holder's
        rack (staying is cheaper, and its holder takes in from the hub whenever one of its tasks leaves), so
        none lands on its holder. None when no such split exists (the caller solves the full graph).
        """
        c_count, racks = self.c_count, len(self.p.costs.table.racks)
        group_of = self.group_of
        local_task, local_rack, local_cost = local
        far_task, far_cost = far
        # Each task's cost on each rack's hub; -1 where its group has no pool on that rack.
        to_rack = np.full((self.t_count, racks), -1, dtype=_I64)
        to_rack[far_task] = np.where(self.pool[group_of[far_task]] >= 0, far_cost[:, None], -1)
        to_rack[local_task, local_rack] = local_cost
        held = np.zeros((self.g_count, c_count), dtype=_I64)
        np.add.at(held, (group_of, holders), 1)
        over = held > self.caps  # the current assignment may break a cap: those tasks keep their slot
        over_g, over_j = np.nonzero(over)
        over_slot = np.full((self.g_count, c_count), -1, dtype=_I64)
        over_slot[over_g, over_j] = c_count + np.arange(len(over_g), dtype=_I64)
        head = np.where(over[group_of, holders], over_slot[group_of, holders], holders)  # client, or c_count + slot
        signature = np.column_stack([head, holder_cost, to_rack])
        kinds, kind_of, members = unique_rows(signature)
        n_kinds = len(kinds)
        # Nodes: kinds, clients, over slots, then one hub per rack with fed clients.
        fed = self.orig > 0
        clients = np.nonzero(fed)[0]
        hub = np.full(racks, -1, dtype=_I64)
        used_racks = np.unique(self.client_rack[fed])
        hub[used_racks] = n_kinds + c_count + len(over_g) + np.arange(len(used_racks), dtype=_I64)
        kind_rack, rack_of_arc = np.nonzero(kinds[:, 2:] >= 0)
        blocks = [
            (np.arange(n_kinds, dtype=_I64), n_kinds + kinds[:, 0], members, kinds[:, 1]),
            (kind_rack, hub[rack_of_arc], members[kind_rack], kinds[kind_rack, 2 + rack_of_arc]),
            (hub[self.client_rack[clients]], n_kinds + clients, self.orig[clients], np.zeros(len(clients), dtype=_I64)),
            (n_kinds + c_count + np.arange(len(over_g), dtype=_I64), n_kinds + over_j, self.caps[over_g, over_j],
             np.zeros(len(over_g), dtype=_I64)),
        ]
        starts = np.cumsum([0] + [len(b[0]) for b in blocks])
        supplies = np.zeros(n_kinds + c_count + len(over_g) + len(used_racks), dtype=_I64)
        supplies[:n_kinds] = members
        supplies[n_kinds:n_kinds + c_count] = -self.orig
        tails, heads, caps, costs = (np.concatenate([b[i] for b in blocks]) for i in range(4))
        flows, optimal = self._run(tails, heads, caps, costs, supplies=supplies)
        # Each kind's tasks, in task order: the first ones stay, the next go to its racks in rack order.
        moves = np.zeros((n_kinds, racks + 1), dtype=_I64)
        moves[:, 0] = flows[starts[0]:starts[1]]
        moves[kind_rack, 1 + rack_of_arc] = flows[starts[1]:starts[2]]
        destination = np.tile(np.arange(-1, racks, dtype=_I64), n_kinds)
        by_kind = np.lexsort((np.arange(self.t_count), kind_of))
        rack_of_task = np.empty(self.t_count, dtype=_I64)
        rack_of_task[by_kind] = np.repeat(destination, moves.ravel())
        moving = np.nonzero(rack_of_task >= 0)[0]
        staying = np.nonzero(rack_of_task < 0)[0]
        used = np.zeros((self.g_count, c_count), dtype=_I64)
        np.add.at(used, (group_of[staying], holders[staying]), 1)
        moving_key = self.pool_key[group_of[moving], rack_of_task[moving]]
        pool_flow = np.bincount(moving_key, minlength=len(self.pool_group))
        split = split_hub_flow(self.pool_group, self.pool_rack, pool_flow, clients, self.client_rack[clients],
                               flows[starts[2]:starts[3]], self.caps - used)
        if split is None:
            return None
        split_pool, split_j, split_count = split
        # Each pool's tasks (in task order) take its destinations (in client order).
        keys = self.pool_key[self.pool_group[split_pool], self.pool_rack[split_pool]]
        order = np.lexsort((split_j, keys))
        pooled = moving[np.lexsort((moving, moving_key))]
        new_holders = holders.copy()
        new_holders[pooled] = np.repeat(split_j[order], split_count[order])
        cost = optimal // k if penalty else optimal
        return new_holders.tolist(), int(cost)

    def _run(
        self, tails: np.ndarray, heads: np.ndarray, caps: np.ndarray, costs: np.ndarray,
        supplies: np.ndarray | None = None,
    ) -> tuple[np.ndarray, int]:
        """Flows per arc and the optimal cost; by default every allocated node, tasks supplying one and
        clients taking their counts (the first ``t_count + c_count`` node numbers)."""
        if supplies is None:
            supplies = np.zeros(self.nodes, dtype=_I64)
            supplies[: self.t_count] = 1
            supplies[self.t_count : self.t_count + self.c_count] = -self.orig
        from ortools.graph.python import min_cost_flow  # here, not at the top: most runs never solve (startup)

        smcf = min_cost_flow.SimpleMinCostFlow()
        smcf.add_arcs_with_capacity_and_unit_cost(
            tails.astype(np.int32), heads.astype(np.int32), caps.astype(_I64), costs.astype(_I64)
        )
        smcf.set_nodes_supplies(np.arange(len(supplies), dtype=np.int32), supplies)
        status = smcf.solve()
        if status != smcf.OPTIMAL:  # pragma: no cover - the current assignment is always feasible
            raise RuntimeError(f"OR-Tools min-cost flow returned status {status}")
        return np.asarray(smcf.flows(np.arange(len(tails), dtype=np.int32))), int(smcf.optimal_cost())
