"""Kafka's internal ``RackAwareTaskAssignor``: the optimiser the high-availability and legacy sticky
assignors call (KIP-925). Build one per rebalance.

Clients are always visited in ProcessId order; the solver (Kafka's exact one or the fast one) comes
from the configs (``taskassign.rack.solver``), so callers never choose it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TypeVar

from taskassign.configs import STRATEGY_BALANCE_SUBTOPOLOGY, STRATEGY_MIN_TRAFFIC, STRATEGY_NONE
from taskassign.errors import RackAwareOptimizationError
from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState
from taskassign.rack.balance_subtopology import BalanceSubtopologyGraph, groups_by_subtopology
from taskassign.rack.cost import CostModel, PartitionScope, RackTable
from taskassign.rack.enablement import internal_rack_awareness_problem
from taskassign.rack.min_traffic import MinTrafficGraph
from taskassign.rack.problem import FlowProblem, GraphConstructor
from taskassign.rack.solve import Solver, resolve_solver, solve
from taskassign.rack.standby import asked_on_holders, optimize_standbys_pairwise, standby_cost
from taskassign.rack.tags import MoveStandbyPredicate, always_allowed

__all__ = ("RackAwareTaskAssignor", "make_rack_aware_assignor")

_K = TypeVar("_K")


class RackAwareTaskAssignor:
    """Rack-aware optimisation of one application state, as Kafka's internal assignors use it."""

    def __init__(self, application_state: ApplicationState) -> None:
        self._state = application_state
        self._solver: Solver = resolve_solver(application_state.configs)
        self._enabled: bool | None = None
        self._tables: dict[PartitionScope, RackTable] = {}
        self._subtopology_groups: tuple[tuple[TaskId, ...], ...] | None = None  # every task, grouped once

    @property
    def solver(self) -> Solver:
        """The solver the configs selected (``kafka`` or ``min_cost_flow``)."""
        return self._solver

    def can_enable_rack_aware_assignor(self) -> bool:
        """Kafka's ``canEnableRackAwareAssignor``: strategy != none, every client has a rack, every source partition of
        every task has rack info, and (only when num.standby.replicas > 0) every changelog partition too.
        The answer is cached after the first evaluation (the strategy is checked every time)."""
        if self._state.configs.rack_aware_assignment_strategy not in (
            STRATEGY_MIN_TRAFFIC, STRATEGY_BALANCE_SUBTOPOLOGY
        ):
            return False
        if self._enabled is None:
            self._enabled = self.why_disabled() is None
        return self._enabled

    def why_disabled(self) -> str | None:
        """Why rack awareness cannot be enabled (None when it can)."""
        return internal_rack_awareness_problem(self._state, self._table)

    def _table(self, scope: PartitionScope) -> RackTable:
        table = self._tables.get(scope)
        if table is None:
            table = self._tables[scope] = RackTable.build(self._state, scope)
        return table

    def _active_constructor(self) -> GraphConstructor:
        strategy = self._state.configs.rack_aware_assignment_strategy
        if strategy == STRATEGY_MIN_TRAFFIC:
            return MinTrafficGraph()
        if strategy == STRATEGY_BALANCE_SUBTOPOLOGY:
            if self._subtopology_groups is None:  # the same for every call (a pass over all 10^5 tasks)
                self._subtopology_groups = groups_by_subtopology(self._state.task_ids)
            return BalanceSubtopologyGraph(self._subtopology_groups)
        raise RackAwareOptimizationError(f"rack.aware.assignment.strategy {strategy!r} has no optimiser")

    def optimize_active_tasks(
        self,
        tasks: Sequence[TaskId],
        active: Mapping[ProcessId, AbstractSet[TaskId]],
        traffic_cost: int,
        non_overlap_cost: int,
    ) -> tuple[dict[ProcessId, set[TaskId]], int]:
        """Kafka's ``optimizeActiveTasks``: internal active optimisation over ``tasks`` (sorted TaskIds). ``active``
        maps EVERY client to its current active tasks (all of them, also tasks outside ``tasks``). Returns the new
        active sets for every client (tasks outside ``tasks`` untouched) and Kafka's reported cost. Empty
        ``tasks`` -> no-op, 0."""
        result = {client: set(held) for client, held in active.items()}
        moves, cost = self.active_task_moves(tasks, active, traffic_cost, non_overlap_cost)
        for task, source, destination in moves:
            result[source].discard(task)
            result[destination].add(task)
        return result, cost

    def active_task_moves(
        self,
        tasks: Sequence[TaskId],
        active: Mapping[ProcessId, AbstractSet[TaskId]],
        traffic_cost: int,
        non_overlap_cost: int,
    ) -> tuple[list[tuple[TaskId, ProcessId, ProcessId]], int]:
        """``optimize_active_tasks`` as the moves it makes, (task, from, to) in TaskId order, and Kafka's
        cost: an assignor holding its own task sets applies these instead of copying every client's set
        twice (10^5 tasks at the issue-20 size)."""
        if not tasks:
            return [], 0
        costs = self._active_costs(traffic_cost, non_overlap_cost)
        problem = FlowProblem.of(sorted(tasks), sorted(active), active, costs)
        return self._active_moves(problem, problem.tasks)

    def active_number_moves(
        self,
        tasks: Sequence[int],
        active: Mapping[ProcessId, AbstractSet[int]],
        traffic_cost: int,
        non_overlap_cost: int,
    ) -> tuple[list[tuple[int, ProcessId, ProcessId]], int]:
        """``active_task_moves`` with each task as its number, its index in the state's ``task_ids`` (TaskId
        order), for an assignor that keeps number sets (high-availability): the holders are read from the
        number sets (small ints, no TaskId sets made and searched), and the moves come back as numbers. A
        task held by no client or by several is left to ``active_task_moves``, which raises Kafka's error."""
        if not tasks:
            return [], 0
        numbers = sorted(tasks)
        clients = sorted(active)
        wanted = set(numbers)
        owner: dict[int, int] = {}
        claims = 0
        for j, client in enumerate(clients):
            mine = wanted.intersection(active[client])
            claims += len(mine)
            owner.update(dict.fromkeys(mine, j))
        ids = self._state.task_ids.items
        if len(wanted) != len(numbers) or claims != len(owner) or len(owner) != len(wanted):
            row = self._table(PartitionScope.SOURCE).row
            moves, cost = self.active_task_moves([ids[n] for n in tasks],
                                                 {c: {ids[n] for n in held} for c, held in active.items()},
                                                 traffic_cost, non_overlap_cost)
            return [(row[t], source, destination) for t, source, destination in moves], cost
        problem = FlowProblem.with_holders([ids[n] for n in numbers], clients, [owner[n] for n in numbers],
                                           self._active_costs(traffic_cost, non_overlap_cost))
        return self._active_moves(problem, numbers)

    def _active_costs(self, traffic_cost: int, non_overlap_cost: int) -> CostModel:
        return CostModel(self._table(PartitionScope.SOURCE), traffic_cost, non_overlap_cost)

    def _standby_costs(self, traffic_cost: int, non_overlap_cost: int) -> CostModel:
        return CostModel(self._table(PartitionScope.CHANGELOG), traffic_cost, non_overlap_cost)

    def _active_moves(self, problem: FlowProblem,
                      keys: Sequence[_K]) -> tuple[list[tuple[_K, ProcessId, ProcessId]], int]:
        """The solved problem's moves, each task named by its entry in ``keys`` (aligned with the problem's tasks)."""
        solution = solve(problem, self._active_constructor(), self._solver)
        clients = problem.clients
        moves = [(key, clients[old], clients[new])
                 for key, old, new in zip(keys, problem.holders, solution.holders, strict=True) if old != new]
        return moves, solution.cost

    def optimize_standby_tasks(
        self,
        active: Mapping[ProcessId, AbstractSet[TaskId]],
        standby: Mapping[ProcessId, AbstractSet[TaskId]],
        traffic_cost: int,
        non_overlap_cost: int,
        can_move: MoveStandbyPredicate,
    ) -> tuple[dict[ProcessId, set[TaskId]], int]:
        """Kafka's ``optimizeStandbyTasks``: internal pairwise standby optimisation. ``can_move(source, destination,
        task, active, standby)`` is the 4-argument isAllowedTaskMovement evaluated on the CURRENT (partly optimised)
        assignment; pass ``lambda *a: True`` for the default standby assignor. Returns the new standby sets
        and the cost."""
        result = {c: set(standby.get(c, ())) for c in sorted(set(active) | set(standby))}
        for task, source, destination in self.standby_task_moves(active, standby, traffic_cost, non_overlap_cost,
                                                                 can_move):
            result[source].discard(task)
            result[destination].add(task)
        return result, standby_cost(result, self._standby_costs(traffic_cost, non_overlap_cost))

    def standby_task_moves(
        self,
        active: Mapping[ProcessId, AbstractSet[TaskId]],
        standby: Mapping[ProcessId, AbstractSet[TaskId]],
        traffic_cost: int,
        non_overlap_cost: int,
        can_move: MoveStandbyPredicate,
    ) -> list[tuple[TaskId, ProcessId, ProcessId]]:
        """``optimize_standby_tasks`` as the moves it makes, (task, from, to) in order, without Kafka's cost: an
        assignor holding its own standby sets applies these instead of rebuilding every client's set (and the
        cost, a pass over every standby, is not asked)."""
        clients = sorted(set(active) | set(standby))
        current_active = {c: frozenset(active.get(c, ())) for c in clients}
        current_standby = {c: set(standby.get(c, ())) for c in clients}
        return optimize_standbys_pairwise(
            clients, current_active, current_standby, self._standby_costs(traffic_cost, non_overlap_cost),
            MinTrafficGraph(), self._solver,
            None if can_move is always_allowed else asked_on_holders(can_move, current_active, current_standby),
        )


def make_rack_aware_assignor(application_state: ApplicationState) -> RackAwareTaskAssignor | None:
    """The internal optimiser when it can be enabled, else None: what the high-availability
    and legacy sticky assignors ask before each optimisation pass."""
    if application_state.configs.rack_aware_assignment_strategy == STRATEGY_NONE:
        return None  # Kafka answers "cannot enable" first, without building anything
    optimizer = RackAwareTaskAssignor(application_state)
    return optimizer if optimizer.can_enable_rack_aware_assignor() else None
