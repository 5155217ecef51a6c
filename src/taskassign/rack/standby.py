"""Standby optimisation: pairwise exchanges between clients on different racks
(``RackAwareTaskAssignor#optimizeStandbyTasks``).

Kafka never builds one graph over all standbys. It visits every pair of clients on different racks
(at most four rounds, until a round moves nothing), collects the standbys each may give the other (the
partner must not hold the task, the move predicate must allow it) and, when both sides have some,
re-optimises the pair with a two-client graph whose sink capacities keep both counts: k standbys go one
way, k the other.

With the min_traffic pair graph a pair is skipped without building anything when no exchange can gain.
Moving standby a from client c1 (rack r1) to c2 (rack r2) changes the cost by exactly
``traffic * (missing(a, r2) - missing(a, r1)) + non_overlap``, and an exchange of k standbys each way
gains only if some pair (a one way, b the other) has a negative sum. Each client keeps, per rack R, the
smallest ``missing(t, R) - missing(t, own rack)`` over its standbys (``_RackGains``); when the two
clients' entries for each other's racks cannot pay for two moves, every exchange costs >= 0, the pair
graph has no negative cycle and Kafka's solver (like the fast one) would move nothing. Those pairs are
filtered out per client with numpy: the 10^3-client, 10^5-task benchmark visits ~2 million pairs over its
rounds, of which a few thousand can gain. (Before this bound the pairs were pruned on each client's
worst-placed standby alone, which prunes nothing once every client has one badly placed standby: 10^4
pair problems, whose cost docs/performance.md gives.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet

import numpy as np

from taskassign.ids import ProcessId, TaskId
from taskassign.rack.cost import CostModel
from taskassign.rack.min_traffic import MinTrafficGraph
from taskassign.rack.problem import FlowProblem, GraphConstructor
from taskassign.rack.solve import Solver, solve
from taskassign.rack.tags import MoveStandbyPredicate, TagDiversityPredicate

__all__ = ("STANDBY_OPTIMIZER_MAX_ITERATION", "PairMovePredicate", "asked_on_holders", "optimize_standbys_pairwise",
           "standby_cost")

#: Kafka's ``STANDBY_OPTIMIZER_MAX_ITERATION``: rounds over all client pairs.
STANDBY_OPTIMIZER_MAX_ITERATION = 4

#: ``can_move(source, destination, task, holders)`` on the current (partly optimised) assignment, where
#: ``holders`` are the clients holding the task now (active or standby): the loop keeps them per task as it
#: moves standbys, so a tag check costs O(holders), not a scan of every client's sets per candidate move.
PairMovePredicate = Callable[[ProcessId, ProcessId, TaskId, AbstractSet[ProcessId]], bool]


def asked_on_holders(can_move: MoveStandbyPredicate, active: Mapping[ProcessId, AbstractSet[TaskId]],
                     standby: Mapping[ProcessId, AbstractSet[TaskId]]) -> PairMovePredicate:
    """Kafka's 4-argument ``isAllowedTaskMovement`` (``can_move(source, destination, task, active, standby)``)
    as a pair predicate: it is given the maps of the task's holders only, which are all a replica check reads
    (the other clients do not hold the task). The tag-aware predicate answers from the holders directly."""
    if isinstance(can_move, TagDiversityPredicate):
        return can_move.on_holders

    def on_holders(source: ProcessId, destination: ProcessId, task: TaskId, holders: AbstractSet[ProcessId]) -> bool:
        return can_move(source, destination, task, {c: active[c] for c in holders if c in active},
                        {c: standby[c] for c in holders if c in standby})

    return on_holders


def optimize_standbys_pairwise(
    clients: Sequence[ProcessId],
    active: Mapping[ProcessId, AbstractSet[TaskId]],
    standby: dict[ProcessId, set[TaskId]],
    costs: CostModel,
    constructor: GraphConstructor,
    solver: Solver,
    can_move: PairMovePredicate | None,
    eligible: AbstractSet[TaskId] | None = None,
    *,
    strict: bool = True,
) -> list[tuple[TaskId, ProcessId, ProcessId]]:
    """Exchange standbys between client pairs, in place on ``standby`` (which has an entry for every
    client); returns the moves in order as (task, from, to).

    ``clients`` is the iteration order of the pairs; ``can_move`` None allows every move; ``eligible``
    restricts the tasks that may move (None: every standby of the pair); ``strict`` as in
    ``FlowProblem.of``.
    """
    table = costs.table
    racks = {c: table.rack_of(c) for c in clients}
    held = {c: set(active.get(c, ())) | standby[c] for c in clients}
    traffic, non_overlap = costs.traffic_cost, costs.non_overlap_cost
    prune = isinstance(constructor, MinTrafficGraph) and traffic >= 0 and non_overlap >= 0
    gains = _RackGains(clients, racks, standby, costs) if prune else None
    holders: dict[TaskId, set[ProcessId]] = {}
    if can_move is not None:
        for c in clients:
            for task in held[c]:
                holders.setdefault(task, set()).add(c)

    def movable(source: ProcessId, destination: ProcessId) -> list[TaskId]:
        candidates = standby[source] - held[destination]
        if eligible is not None:
            candidates &= eligible
        if can_move is not None:
            return sorted(t for t in candidates if can_move(source, destination, t, holders[t]))
        return sorted(candidates)

    moves: list[tuple[TaskId, ProcessId, ProcessId]] = []
    moved = True
    rounds = 0
    while moved and rounds < STANDBY_OPTIMIZER_MAX_ITERATION:
        moved = False
        rounds += 1
        for i, first in enumerate(clients):
            partners = gains.partners(i) if gains is not None else [
                j for j in range(i + 1, len(clients)) if racks[clients[j]] != racks[first]]
            k = 0
            while k < len(partners):
                j = partners[k]
                k += 1
                second = clients[j]
                give = movable(first, second)
                if not give:
                    continue
                take = movable(second, first)
                if not take:
                    continue
                pair = tuple(sorted((first, second)))
                problem = FlowProblem.of(sorted(give + take), pair, standby, costs, strict=strict)
                solution = solve(problem, constructor, solver)
                if not solution.moved:
                    continue
                for task, old, new in zip(problem.tasks, problem.holders, solution.holders, strict=True):
                    if old != new:
                        source, destination = pair[old], pair[new]
                        standby[source].discard(task)
                        held[source].discard(task)
                        standby[destination].add(task)
                        held[destination].add(task)
                        if can_move is not None:
                            holders[task].discard(source)
                            holders[task].add(destination)
                        moves.append((task, source, destination))
                if gains is not None:
                    gains.update(i)
                    gains.update(j)
                    # i's bounds changed either way (the standbys it took can be badly placed too)
                    partners, k = gains.partners(i, after=j), 0
                moved = True
    return moves


class _RackGains:
    """Per client and rack R, the least ``missing(t, R) - missing(t, own rack)`` over the client's standbys
    (a bound on what moving one of them to a client on R gains; see the module docstring)."""

    __slots__ = ("_clients", "_costs", "_least", "_no_standby", "_on_racks", "_rack", "_standby")

    def __init__(self, clients: Sequence[ProcessId], racks: Mapping[ProcessId, int],
                 standby: Mapping[ProcessId, AbstractSet[TaskId]], costs: CostModel) -> None:
        self._clients = clients
        self._standby = standby
        self._costs = costs
        self._rack = np.array([racks[c] for c in clients], dtype=np.int64)
        # A client without standbys gives nothing: its bound is too large for any pair to pass.
        self._no_standby = 4 * (abs(costs.non_overlap_cost) + 1) * (1 + max(costs.table.partitions.values(),
                                                                             default=0))
        self._least = np.zeros((len(clients), len(costs.table.racks)), dtype=np.int64)
        #: Per task, its partitions' replica count on each rack (built as the standbys are first seen).
        self._on_racks: dict[TaskId, tuple[int, ...]] = {}
        for i in range(len(clients)):
            self.update(i)

    def _counts(self, task: TaskId) -> tuple[int, ...]:
        counts = self._on_racks.get(task)
        if counts is None:
            on_rack = self._costs.table.on_rack[task]
            counts = self._on_racks[task] = tuple(on_rack.get(r, 0) for r in range(self._least.shape[1]))
        return counts

    def update(self, i: int) -> None:
        """Recompute client i's row (after its standbys changed)."""
        standbys = self._standby[self._clients[i]]
        if not standbys:
            self._least[i] = self._no_standby
            return
        own = int(self._rack[i])
        counts = np.array([self._counts(t) for t in standbys], dtype=np.int64)
        # missing(t, r) - missing(t, own) = on_rack(t, own) - on_rack(t, r), least over the standbys
        self._least[i] = np.minimum((counts[:, own, None] - counts).min(axis=0), self._no_standby)

    def partners(self, i: int, after: int | None = None) -> list[int]:
        """The clients after i (after ``after`` when given), in order, on another rack, that may exchange
        with i at a gain."""
        j = np.arange(max(i, -1 if after is None else after) + 1, len(self._clients), dtype=np.int64)
        if not len(j):
            return []
        own = self._rack[i]
        other = self._rack[j]
        bound = self._least[i, other] + self._least[j, own]
        costs = self._costs
        gain = costs.traffic_cost * bound + 2 * costs.non_overlap_cost
        partners: list[int] = j[(other != own) & (gain < 0)].tolist()
        return partners


def standby_cost(standby: Mapping[ProcessId, AbstractSet[TaskId]], costs: CostModel) -> int:
    """Kafka's reported standby cost: traffic over every standby of the assignment (no movement part)."""
    table = costs.table
    partitions, on_rack = table.partitions, table.on_rack
    total = 0
    for c, tasks in standby.items():  # costs.traffic(t, rack) inlined: 10^5 standbys at the issue-20 size
        if tasks:
            rack = table.rack_of(c)
            total += sum(partitions[t] - on_rack[t].get(rack, 0) for t in tasks)
    return costs.traffic_cost * total
