"""Standby optimisation: pairwise exchanges between clients on different racks (assignor spec 7.7).

Kafka never builds one graph over all standbys. It visits every pair of clients on different racks
(at most four rounds, until a round moves nothing), collects the standbys each may give the other (the
partner must not hold the task, the move predicate must allow it) and, when both sides have some,
re-optimises the pair with a two-client graph whose sink capacities keep both counts: k standbys go one
way, k the other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from taskassign.ids import ProcessId, TaskId
from taskassign.rack.cost import CostModel
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
    standby: Mapping[ProcessId, set[TaskId]],
    costs: CostModel,
    constructor: GraphConstructor,
    solver: Solver,
    can_move: PairMovePredicate,
    eligible: AbstractSet[TaskId] | None = None,
    *,
    strict: bool = True,
) -> list[tuple[TaskId, ProcessId, ProcessId]]:
    """Exchange standbys between client pairs, in place on ``standby``; returns the moves in order
    as (task, from, to).

    ``clients`` is the iteration order of the pairs; ``eligible`` restricts the tasks that may move
    (None: every standby of the pair); ``strict`` as in ``FlowProblem.of``.
    """
    racks = {c: costs.table.rack_of(c) for c in clients}
    empty: frozenset[TaskId] = frozenset()

    def holds(client: ProcessId, task: TaskId) -> bool:
        return task in active.get(client, empty) or task in standby.get(client, empty)

    def movable(source: ProcessId, destination: ProcessId) -> list[TaskId]:
        return sorted(
            t for t in standby.get(source, empty)
            if (eligible is None or t in eligible) and not holds(destination, t) and can_move(source, destination, t)
        )

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
                give = movable(first, second)
                if not give:
                    continue
                take = movable(second, first)
                if not take:
                    continue
                pair = tuple(sorted((first, second)))
                problem = FlowProblem.of(sorted(give + take), pair, standby, costs, strict=strict)
                solution = solve(problem, constructor, solver)
                if solution.moved:
                    for task, old, new in zip(problem.tasks, problem.holders, solution.holders, strict=True):
                        if old != new:
                            standby[pair[old]].discard(task)
                            standby[pair[new]].add(task)
                            moves.append((task, pair[old], pair[new]))
                    moved = True
    return moves


def standby_cost(standby: Mapping[ProcessId, AbstractSet[TaskId]], costs: CostModel) -> int:
    """Kafka's reported standby cost: traffic over every standby of the assignment (no movement part)."""
    table = costs.table
    return sum(costs.traffic(t, table.rack_of(c)) for c, tasks in standby.items() for t in tasks)
