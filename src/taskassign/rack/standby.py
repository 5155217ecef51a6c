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

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

import numpy as np

from taskassign.ids import ProcessId, TaskId
from taskassign.rack.cost import CostModel
from taskassign.rack.min_traffic import MinTrafficGraph
from taskassign.rack.problem import FlowProblem, GraphConstructor
from taskassign.rack.solve import Solver, solve
from taskassign.rack.tags import MoveStandbyPredicate, TagDiversityPredicate

__all__ = ("STANDBY_OPTIMIZER_MAX_ITERATION", "PairMoveFilter", "asked_on_holders", "optimize_standbys_pairwise",
           "standby_cost")

#: Kafka's ``STANDBY_OPTIMIZER_MAX_ITERATION``: rounds over all client pairs.
STANDBY_OPTIMIZER_MAX_ITERATION = 4

#: ``can_move(source, destination, tasks, holders)``: the tasks (in the given order) whose standby may move on the
#: current (partly optimised) assignment, where ``holders[t]`` are the clients holding t now (active or standby):
#: the loop keeps them per task as it moves standbys, so a tag check costs O(holders), not a scan of every
#: client's sets per candidate move, and a pair's candidates are filtered in one call.
PairMoveFilter = Callable[[ProcessId, ProcessId, Iterable[TaskId], Mapping[TaskId, AbstractSet[ProcessId]]],
                          list[TaskId]]


def asked_on_holders(can_move: MoveStandbyPredicate, active: Mapping[ProcessId, AbstractSet[TaskId]],
                     standby: Mapping[ProcessId, AbstractSet[TaskId]]) -> PairMoveFilter:
    """Kafka's 4-argument ``isAllowedTaskMovement`` (``can_move(source, destination, task, active, standby)``)
    as a pair filter: it is given the maps of each task's holders only, which are all a replica check reads
    (the other clients do not hold the task). The tag-aware predicate answers from the holders directly."""
    if isinstance(can_move, TagDiversityPredicate):
        return can_move.movable

    def movable(source: ProcessId, destination: ProcessId, tasks: Iterable[TaskId],
                holders: Mapping[TaskId, AbstractSet[ProcessId]]) -> list[TaskId]:
        return [t for t in tasks if can_move(source, destination, t, {c: active[c] for c in holders[t] if c in active},
                                             {c: standby[c] for c in holders[t] if c in standby})]

    return movable


def optimize_standbys_pairwise(
    clients: Sequence[ProcessId],
    active: Mapping[ProcessId, AbstractSet[TaskId]],
    standby: dict[ProcessId, set[TaskId]],
    costs: CostModel,
    constructor: GraphConstructor,
    solver: Solver,
    can_move: PairMoveFilter | None,
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
            return sorted(can_move(source, destination, candidates, holders))
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
                problem = _pair_problem(first, second, give, take, costs, strict)
                pair = problem.clients
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
                            gains.moved(task, i if source == first else j, j if source == first else i)
                if gains is not None:
                    gains.update(i)
                    gains.update(j)
                    # i's bounds changed either way (the standbys it took can be badly placed too)
                    partners, k = gains.partners(i, after=j), 0
                moved = True
    return moves


def _pair_problem(first: ProcessId, second: ProcessId, give: list[TaskId], take: list[TaskId], costs: CostModel,
                  strict: bool) -> FlowProblem:
    """The pair's problem over the clients in order: ``first`` holds ``give``, ``second`` holds ``take`` (the
    holders are known, no search of the standby sets for them)."""
    swap = second < first
    side = dict.fromkeys(give, int(swap))
    side.update(dict.fromkeys(take, int(not swap)))
    tasks = sorted(side)
    return FlowProblem.with_holders(tasks, (second, first) if swap else (first, second),
                                    [side[t] for t in tasks], costs, strict=strict)


class _RackGains:
    """Per client and rack R, the least ``missing(t, R) - missing(t, own rack)`` over the client's standbys
    (a bound on what moving one of them to a client on R gains; see the module docstring)."""

    __slots__ = ("_bounds", "_costs", "_least", "_no_standby", "_present", "_rack", "_row", "_signatures")

    def __init__(self, clients: Sequence[ProcessId], racks: Mapping[ProcessId, int],
                 standby: Mapping[ProcessId, AbstractSet[TaskId]], costs: CostModel) -> None:
        self._costs = costs
        self._rack = np.array([racks[c] for c in clients], dtype=np.int64)
        table = costs.table
        self._row = table.row
        self._signatures: list[int] = table.signatures.tolist()
        # Per client, how many of its standbys have each rack-count signature (kept as standbys move).
        self._present = [Counter([self._signature(t) for t in standby[c]]) for c in clients]
        # Per (own rack, signatures present): the bound row, computed once (an application has few signatures).
        self._bounds: dict[tuple[int, frozenset[int]], np.ndarray] = {}
        # A client without standbys gives nothing: its bound is too large for any pair to pass.
        self._no_standby = 4 * (abs(costs.non_overlap_cost) + 1) * (1 + max(table.partitions.values(), default=0))
        self._least = np.zeros((len(clients), len(table.racks)), dtype=np.int64)
        for i in range(len(clients)):
            self.update(i)

    def _signature(self, task: TaskId) -> int:
        return self._signatures[self._row[task]]

    def moved(self, task: TaskId, source: int, destination: int) -> None:
        """Standby ``task`` went from client ``source`` to ``destination`` (indices); ``update`` both after."""
        signature = self._signature(task)
        present = self._present[source]
        present[signature] -= 1
        if not present[signature]:
            del present[signature]
        self._present[destination][signature] += 1

    def update(self, i: int) -> None:
        """Recompute client i's row (after its standbys changed): standbys with equal rack counts (one
        signature) give equal bounds, so the row depends only on the signatures present."""
        present = self._present[i]
        if not present:
            self._least[i] = self._no_standby
            return
        own = int(self._rack[i])
        key = (own, frozenset(present))
        bound = self._bounds.get(key)
        if bound is None:
            counts = self._costs.table.signature_on_rack[sorted(key[1])]
            # missing(t, r) - missing(t, own) = on_rack(t, own) - on_rack(t, r), least over the standbys
            bound = self._bounds[key] = np.minimum((counts[:, own, None] - counts).min(axis=0), self._no_standby)
        self._least[i] = bound

    def partners(self, i: int, after: int | None = None) -> list[int]:
        """The clients after i (after ``after`` when given), in order, on another rack, that may exchange
        with i at a gain."""
        j = np.arange(max(i, -1 if after is None else after) + 1, len(self._rack), dtype=np.int64)
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
