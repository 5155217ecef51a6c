"""Splitting a rack hub's flow over its clients within per-(group, client) caps (rack/compact.py's hubs).

The compact graph may route balance_subtopology's pooled tasks through one hub per rack instead of one
arc per (subtopology, client) pair. The hub's optimum then says how many tasks each pool sends into the
rack and how many each client of the rack takes in, but not which pool feeds which client; any split is
equally cheap. This finds one that keeps every (group, client) cap, as a max flow from the pools to the
clients (OR-Tools), or reports that none exists.
"""

from __future__ import annotations

import numpy as np

__all__ = ("split_hub_flow",)

_SOURCE, _SINK = 0, 1


def split_hub_flow(
    pool_group: np.ndarray, pool_rack: np.ndarray, pool_flow: np.ndarray,
    clients: np.ndarray, client_rack: np.ndarray, client_flow: np.ndarray, room: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(pool, client, count) triples sending every pool's flow into its rack's clients, each client
    taking exactly its flow and at most ``room[group, client]`` tasks of each group; None if impossible.

    Pools are indices into ``pool_group`` / ``pool_rack``; ``clients`` are client indices with their racks
    and the flows they take in.
    """
    empty = np.zeros(0, dtype=np.int64)
    pools = np.nonzero(pool_flow > 0)[0]
    taking = client_flow > 0
    takers, taker_flow, taker_rack = clients[taking], client_flow[taking], client_rack[taking]
    total = int(pool_flow[pools].sum())
    if total == 0:
        return empty, empty, empty
    if total != int(taker_flow.sum()):
        return None
    tails, heads, caps = [], [], []
    for rack in np.unique(pool_rack[pools]):
        in_rack = pools[pool_rack[pools] == rack]
        rack_takers = np.nonzero(taker_rack == rack)[0]
        if not len(rack_takers):
            return None
        cap = room[pool_group[in_rack]][:, takers[rack_takers]]
        pi, ti = np.nonzero(cap > 0)
        tails.append(in_rack[pi])
        heads.append(rack_takers[ti])
        caps.append(cap[pi, ti])
    arc_pool, arc_taker, arc_cap = np.concatenate(tails), np.concatenate(heads), np.concatenate(caps)
    pool_node = np.zeros(len(pool_flow), dtype=np.int64)
    pool_node[pools] = 2 + np.arange(len(pools))
    taker_node = 2 + len(pools) + np.arange(len(takers))
    from ortools.graph.python import max_flow  # here, not at the top: most runs never solve (startup)

    solver = max_flow.SimpleMaxFlow()
    middle = solver.add_arcs_with_capacity(pool_node[arc_pool], taker_node[arc_taker], arc_cap)
    solver.add_arcs_with_capacity(np.full(len(pools), _SOURCE), pool_node[pools], pool_flow[pools])
    solver.add_arcs_with_capacity(taker_node, np.full(len(takers), _SINK), taker_flow)
    if solver.solve(_SOURCE, _SINK) != solver.OPTIMAL or solver.optimal_flow() != total:
        return None
    flows = np.asarray(solver.flows(middle))
    sent = flows > 0
    return arc_pool[sent], takers[arc_taker[sent]], flows[sent]
