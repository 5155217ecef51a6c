"""Standby optimisation: pairwise exchanges between clients on different racks (assignor spec 7.7).

Kafka never builds one graph over all standbys. It visits every pair of clients on different racks
(at most four rounds, until a round moves nothing), collects the standbys each may give the other (the
partner must not hold the task, the move predicate must allow it) and, when both sides have some,
re-optimises the pair with a two-client graph whose sink capacities keep both counts: k standbys go one
way, k the other.

With the min_traffic pair graph a pair is skipped without building anything when no exchange can gain:
moving standby a off client c1 changes the cost by at least ``non_overlap - traffic * missing(a, c1)``,
so if the worst-placed standbys of both clients cannot pay for two moves, every exchange costs >= 0, the
pair graph has no negative cycle and Kafka's solver (like the fast one) would move nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from taskassign.ids import ProcessId, TaskId
from taskassign.rack.cost import CostModel
from taskassign.rack.min_traffic import MinTrafficGraph
from taskassign.rack.problem import FlowProblem, GraphConstructor
from taskassign.rack.solve import Solver, solve

__all__ = ("STANDBY_OPTIMIZER_MAX_ITERATION", "PairMovePredicate", "optimize_standbys_pairwise", "standby_cost")

#: Kafka's ``STANDBY_OPTIMIZER_MAX_ITERATION``: rounds over all client pairs.
STANDBY_OPTIMIZER_MAX_ITERATION = 4

#: ``can_move(source, destination, task)`` on the current (partly optimised) assignment.
PairMovePredicate = Callable[[ProcessId, ProcessId, TaskId], bool]


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

    def worst(client: ProcessId) -> int:
        rack = racks[client]
        return max((table.missing(t, rack) for t in standby[client]), default=0)

    worst_missing = {c: worst(c) for c in clients} if prune else {}

    def movable(source: ProcessId, destination: ProcessId) -> list[TaskId]:
        candidates = standby[source] - held[destination]
        if eligible is not None:
            candidates &= eligible
        if can_move is not None:
            return sorted(t for t in candidates if can_move(source, destination, t))
        return sorted(candidates)

    moves: list[tuple[TaskId, ProcessId, ProcessId]] = []
    moved = True
    rounds = 0
    while moved and rounds < STANDBY_OPTIMIZER_MAX_ITERATION:
        moved = False
        rounds += 1
        for i, first in enumerate(clients):
            for second in clients[i + 1:]:
                if racks[first] == racks[second]:
                    continue
                if prune and 2 * non_overlap >= traffic * (worst_missing[first] + worst_missing[second]):
                    continue
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
                        moves.append((task, source, destination))
                if prune:
                    worst_missing[first], worst_missing[second] = worst(first), worst(second)
                moved = True
    return moves


def standby_cost(standby: Mapping[ProcessId, AbstractSet[TaskId]], costs: CostModel) -> int:
    """Kafka's reported standby cost: traffic over every standby of the assignment (no movement part)."""
    table = costs.table
    return sum(costs.traffic(t, table.rack_of(c)) for c, tasks in standby.items() for t in tasks)
