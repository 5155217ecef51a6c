"""Min-cost flow over the balanced target: the same per-client counts, less to restore, fewer cross-rack reads.

The greedy target fixes how many tasks of each *group* every client gets; a group is a subtopology and
a weight class (weights within a factor ``CLASS_RATIO``), so any exchange inside a group keeps the
subtopology spread exactly and the weighted balance nearly. The flow then picks *which* tasks of a
group go where, at minimum total cost:

    cost(t, c) = movement_cost x restore(t, c) + traffic_cost x cross(t, c)  (+ a tie-break per move)

with restore and cross as in ``problem``. This is the compact graph of the rack optimiser
(``taskassign.rack.compact``): a task gets an arc to each client that ran it, holds a copy of its
state or was chosen by the greedy pass (exact costs), and arcs to *rack pools* for every other client
(a client without a copy restores the whole state, so its cost depends only on its rack): one pool per
rack hosting one of the task's partitions, and one "far" node for the remaining racks. Pools fan out to
the clients' group slots. Only the slots the greedy changed take part (the clients a task of the group
left or joined, with every task of the group on them); the rest stays where it is. With T tasks taking
part the graph has O(T + slots) arcs, not T x clients.
The tie-break (below one cost unit in total: 1 for every task placed elsewhere than the greedy placed
it) makes the flow keep the greedy's choice -- which moves no task without a reason -- unless another
placement is strictly cheaper. The result is used only if every client stays within
the bounds the greedy respected.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from taskassign.assignors.state_aware.actives import ActivePlan, Reason
from taskassign.assignors.state_aware.bins import EPSILON
from taskassign.assignors.state_aware.problem import Problem

__all__ = ("CLASS_RATIO", "remap_actives")

#: Tasks whose active weights are within this factor may trade places in the flow.
CLASS_RATIO = 1.25
#: Costs are rounded to 1/SCALE of a unit (the mean stateful task's state).
SCALE = 1000


def _weight_class(w: float) -> int:
    return -(10**6) if w <= EPSILON else math.floor(math.log(w) / math.log(CLASS_RATIO))


def remap_actives(p: Problem, plan: ActivePlan) -> ActivePlan:
    """``plan`` with the tasks of each group re-mapped at minimum cost (see the module docstring), or
    ``plan`` itself when that would break a bound or change nothing."""
    if plan.settled or p.num_tasks == 0 or p.num_clients < 2:
        return plan
    groups: dict[tuple[int, int], int] = {}
    group = [groups.setdefault((p.subtopology[t], _weight_class(p.active_weight[t])), len(groups))
             for t in range(p.num_tasks)]
    # Only the group slots the greedy changed can gain from an exchange: the clients a task of the group
    # left or joined. Every other task stays where it is (a stable assignment was optimal already).
    affected: set[tuple[int, int]] = set()
    for t, (new, old) in enumerate(zip(plan.owner, p.sticky_owner, strict=True)):
        if new != old:
            affected.add((group[t], new))
            if old >= 0:
                affected.add((group[t], old))
    tasks = [t for t in range(p.num_tasks) if (group[t], plan.owner[t]) in affected]
    client_racks = sorted({p.rack_of(c) for c in range(p.num_clients)}, key=lambda r: (r is None, r or 0))
    if not tasks or all(_at_lowest_cost(p, t, plan.owner[t], client_racks) for t in tasks):
        return plan  # every task already sits where it costs least: no exchange can lower the total
    placed = _solve(p, tasks, plan.owner, group)
    if placed is None:
        return plan
    owners = list(plan.owner)
    for t, c in zip(tasks, placed, strict=True):
        owners[t] = c
    if owners == plan.owner:
        return plan
    load = [0.0] * p.num_clients
    for t, c in enumerate(owners):
        load[c] += p.active_weight[t]
    bins = plan.bins
    for c in range(p.num_clients):
        if load[c] > max(bins.upper[c], bins.load[c]) + EPSILON or load[c] < min(bins.lower[c], bins.load[c]) - EPSILON:
            return plan
    reason = list(plan.reason)
    kept_instead: dict[int, list[int]] = {}  # source -> tasks the greedy moved away but the flow keeps
    moved_instead: dict[int, list[int]] = {}  # source -> tasks the greedy kept but the flow moves
    for t, (old, new) in enumerate(zip(plan.owner, owners, strict=True)):
        if new == old:
            continue
        prev = p.sticky_owner[t]
        if new == prev:
            kept_instead.setdefault(prev, []).append(t)
        elif old == prev:
            moved_instead.setdefault(prev, []).append(t)
        bins.remove(old, p.active_weight[t], p.subtopology[t])
        bins.add(new, p.active_weight[t], p.subtopology[t])
    instead_of: dict[int, int] = {}
    for source, moved in moved_instead.items():
        kept = kept_instead.get(source, [])
        for i, t in enumerate(moved):
            if i < len(kept):
                instead_of[t] = kept[i]
                reason[t] = reason[kept[i]]
            else:
                reason[t] = Reason.REMAPPED
    for kept in kept_instead.values():
        for t in kept:
            reason[t] = None
    return ActivePlan(owners, reason, bins, instead_of=instead_of)


def _at_lowest_cost(p: Problem, t: int, owner: int, client_racks: Sequence[int | None]) -> bool:
    """Whether no client at all could run ``t`` for less than ``owner``: not one holding a copy (or its
    previous client), nor any other in the rack reading fewest of its partitions across."""
    cost = p.active_cost(t, owner)
    racks = p.source_racks
    lowest = p.settings.movement_cost * p.full[t]
    if racks is not None:
        lowest += p.settings.traffic_cost * min((racks.cross_on(t, r) for r in client_racks), default=0)
    prev = p.sticky_owner[t]
    for c in (*p.copies[t], prev) if prev >= 0 else p.copies[t]:
        lowest = min(lowest, p.active_cost(t, c))
    return cost <= lowest + EPSILON


def _solve(p: Problem, tasks: Sequence[int], owner: Sequence[int], group: Sequence[int]) -> list[int] | None:
    """New clients of ``tasks`` (their greedy clients' per-group counts kept) at minimum cost; task i of
    ``tasks`` is node i."""
    s = p.settings
    n, m = len(tasks), p.num_clients
    racks = p.source_racks
    rack_of = [p.rack_of(c) for c in range(m)]
    # Slots: the greedy's count of each group on each client.
    slot_count: dict[tuple[int, int], int] = {}
    for t in tasks:
        key = (group[t], owner[t])
        slot_count[key] = slot_count.get(key, 0) + 1
    slot_keys = sorted(slot_count)
    slot_node = {key: n + i for i, key in enumerate(slot_keys)}
    next_node = n + len(slot_keys)
    # Pools: per group, every rack (None = clients without a rack) with a slot of the group.
    pool_node: dict[tuple[int, int | None], int] = {}
    pool_racks: dict[int, list[int | None]] = {}
    for g, c in slot_keys:
        pool_key = (g, rack_of[c])
        if pool_key not in pool_node:
            pool_node[pool_key] = next_node
            next_node += 1
            pool_racks.setdefault(g, []).append(rack_of[c])
    far_node: dict[int, int] = {}

    tails: list[int] = []
    heads: list[int] = []
    caps: list[int] = []
    costs: list[int] = []

    def arc(tail: int, head: int, cap: int, cost: int) -> None:
        tails.append(tail)
        heads.append(head)
        caps.append(cap)
        costs.append(cost)

    k = n + 1  # costs are scaled by k so that the tie-break (1 per move, at most n) stays below one cost unit
    movement, traffic = s.movement_cost * SCALE, s.traffic_cost * SCALE
    direct_arcs: list[tuple[int, int]] = []  # (arc index, client) for task -> slot arcs
    pool_arcs: list[tuple[int, int | None]] = []  # (arc index, rack) for task -> pool arcs
    far_arcs: list[int] = []  # arc indices of task -> far arcs
    for i, t in enumerate(tasks):
        g = group[t]
        prev = p.sticky_owner[t]
        full = movement * p.full[t]
        mine = owner[t]
        direct = {mine, *p.copies[t]}
        if prev >= 0:
            direct.add(prev)
        for c in sorted(direct):
            slot = slot_node.get((g, c))
            if slot is not None:
                direct_arcs.append((len(tails), c))
                cross = 0 if racks is None else racks.cross(t, c)
                cost = round(movement * p.restore(t, c) + traffic * cross) * k + (c != mine)
                tails.append(i)
                heads.append(slot)
                caps.append(1)
                costs.append(cost)
        uncovered = False
        for r in pool_racks[g]:
            if r is None or racks is None or r in racks.on_racks(t) or racks.known(t) == 0:
                cross = 0 if racks is None else racks.cross_on(t, r)
                pool_arcs.append((len(tails), r))
                tails.append(i)
                heads.append(pool_node[(g, r)])
                caps.append(1)
                costs.append(round(full + traffic * cross) * k + 1)
            else:
                uncovered = True
        if uncovered:
            node = far_node.get(g)
            if node is None:
                node = far_node[g] = next_node
                next_node += 1
            far_arcs.append(len(tails))
            cross = racks.known(t) if racks is not None else 0
            arc(i, node, 1, round(full + traffic * cross) * k + 1)
    group_size: dict[int, int] = {}
    for t in tasks:
        group_size[group[t]] = group_size.get(group[t], 0) + 1
    far_pool_arcs: list[tuple[int, int, int | None]] = []  # (arc index, group, rack)
    for g, node in sorted(far_node.items()):
        for r in pool_racks[g]:
            far_pool_arcs.append((len(tails), g, r))
            arc(node, pool_node[(g, r)], group_size[g], 0)
    pool_slot_arcs: list[tuple[int, int, int]] = []  # (arc index, group, client)
    for (g, c), count in slot_count.items():
        pool_slot_arcs.append((len(tails), g, c))
        arc(pool_node[(g, rack_of[c])], slot_node[(g, c)], count, 0)

    from ortools.graph.python import min_cost_flow  # here, not at the top: most runs never solve (startup)

    smcf = min_cost_flow.SimpleMinCostFlow()
    smcf.add_arcs_with_capacity_and_unit_cost(
        np.asarray(tails, dtype=np.int32), np.asarray(heads, dtype=np.int32),
        np.asarray(caps, dtype=np.int64), np.asarray(costs, dtype=np.int64))
    supplies = np.zeros(next_node, dtype=np.int64)
    supplies[:n] = 1
    for key, node in slot_node.items():
        supplies[node] = -slot_count[key]
    smcf.set_nodes_supplies(np.arange(next_node, dtype=np.int32), supplies)
    if smcf.solve() != smcf.OPTIMAL:  # pragma: no cover - the greedy's own placement is feasible
        return None
    flows = smcf.flows(np.arange(len(tails), dtype=np.int32))

    result = [-1] * n
    for index, c in direct_arcs:
        if flows[index] > 0:
            result[tails[index]] = c
    in_pool: dict[tuple[int, int | None], list[int]] = {}
    for index, r in pool_arcs:
        if flows[index] > 0:
            i = tails[index]
            in_pool.setdefault((group[tasks[i]], r), []).append(i)
    far_tasks: dict[int, list[int]] = {}
    for index in far_arcs:
        if flows[index] > 0:
            i = tails[index]
            far_tasks.setdefault(group[tasks[i]], []).append(i)
    for g, tasks in far_tasks.items():
        tasks.sort()
        for index, g2, r in far_pool_arcs:
            if g2 == g:
                for _ in range(int(flows[index])):
                    in_pool.setdefault((g, r), []).append(tasks.pop(0))
    for index, g, c in sorted(pool_slot_arcs, key=lambda a: (a[1], a[2])):
        tasks = in_pool.get((g, rack_of[c]), [])
        tasks.sort()
        for _ in range(int(flows[index])):
            result[tasks.pop(0)] = c
    if any(c < 0 for c in result):  # pragma: no cover - a flow always places every task
        return None
    return result
