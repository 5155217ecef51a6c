"""KIP-924's public rack-aware helpers: ``optimizeRackAwareActiveTasks`` / ``optimizeRackAwareStandbyTasks``
of ``TaskAssignmentUtils`` and their immutable ``RackAwareOptimizationParams`` (KIP-924, KIP-925).

Differences from the internal optimiser, as in Kafka: costs come from the params' overrides or the
configs (the optimisation is skipped, with a reason, when they are not configured), every partition of
a task counts for active traffic, ``balance_subtopology`` groups only the tasks being optimised, and
clients are visited in the order of ``kafka_streams_states`` -- a Java HashMap in Kafka, reproduced with
the ``kafka`` solver; ProcessId order otherwise.

Kafka bugs fixed by default and reproduced under ``taskassign.kafka.compat`` (docs/kafka-differences.md):
moving an active onto a client that holds the task as standby deletes that standby (fixed: the two swap
roles); standby moves ignore the client-tag constraint (fixed: the tag-diversity predicate is applied to
the real destination); standby moves ignore ``for_tasks`` (fixed: only the chosen tasks move); unknown
clients in the assignments make the pair loop index out of range (fixed: they are left alone); both
costs must be configured even when both are overridden (fixed: overrides suffice).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from taskassign.configs import (
    RACK_AWARE_ASSIGNMENT_NON_OVERLAP_COST,
    RACK_AWARE_ASSIGNMENT_TRAFFIC_COST,
    STRATEGY_BALANCE_SUBTOPOLOGY,
)
from taskassign.errors import ConfigError, RackAwareOptimizationError
from taskassign.ids import ProcessId, TaskId
from taskassign.internals.java_order import hash_iteration_order
from taskassign.model import ApplicationState, AssignedTask, KafkaStreamsAssignment, SortedFrozenSet
from taskassign.rack.balance_subtopology import BalanceSubtopologyGraph, groups_by_subtopology_number
from taskassign.rack.cost import CostModel, PartitionScope, RackTable
from taskassign.rack.enablement import public_rack_awareness_problem
from taskassign.rack.min_traffic import MinTrafficGraph
from taskassign.rack.problem import FlowProblem, GraphConstructor
from taskassign.rack.solve import KAFKA_SOLVER, Solver, resolve_solver, solve
from taskassign.rack.standby import optimize_standbys_pairwise, standby_cost
from taskassign.rack.tags import TagDiversityPredicate

__all__ = ("RackAwareOptimizationParams", "RackOptimizationResult", "optimize_active", "optimize_standby")

log = logging.getLogger(__name__)


def _non_negative(name: str, cost: int) -> int:
    if isinstance(cost, bool) or not isinstance(cost, int) or cost < 0:
        raise ConfigError(name, f"override must be an integer >= 0, got {cost!r}")
    return cost


@dataclass(frozen=True, slots=True)
class RackAwareOptimizationParams:
    """What to optimise and with which costs; every ``with``/``for`` method returns a new value.

    ``tasks_to_optimize`` None means "every task of the optimised kind found in the assignments".
    """

    application_state: ApplicationState
    tasks_to_optimize: SortedFrozenSet[TaskId] | None = None
    traffic_cost_override: int | None = None
    non_overlap_cost_override: int | None = None

    @classmethod
    def of(cls, application_state: ApplicationState) -> RackAwareOptimizationParams:
        """No overrides, tasks resolved at call time."""
        return cls(application_state)

    def for_stateful_tasks(self) -> RackAwareOptimizationParams:
        """Optimise the tasks with a state store (``TaskInfo.is_stateful``)."""
        return self.for_tasks(t for t, info in self.application_state.tasks.items() if info.is_stateful)

    def for_stateless_tasks(self) -> RackAwareOptimizationParams:
        """Optimise the tasks without a state store."""
        return self.for_tasks(t for t, info in self.application_state.tasks.items() if not info.is_stateful)

    def for_tasks(self, tasks: Iterable[TaskId]) -> RackAwareOptimizationParams:
        """Optimise exactly ``tasks``."""
        return replace(self, tasks_to_optimize=SortedFrozenSet(tasks))

    def with_traffic_cost_override(self, cost: int) -> RackAwareOptimizationParams:
        return replace(self, traffic_cost_override=_non_negative(RACK_AWARE_ASSIGNMENT_TRAFFIC_COST, cost))

    def with_non_overlap_cost_override(self, cost: int) -> RackAwareOptimizationParams:
        return replace(self, non_overlap_cost_override=_non_negative(RACK_AWARE_ASSIGNMENT_NON_OVERLAP_COST, cost))

    @property
    def overrides_both_costs(self) -> bool:
        return self.traffic_cost_override is not None and self.non_overlap_cost_override is not None

    def cost_weights(self) -> tuple[int, int]:
        """(traffic, non-overlap): each override, else the configured value."""
        configs = self.application_state.configs
        traffic = self.traffic_cost_override
        non_overlap = self.non_overlap_cost_override
        traffic = configs.rack_aware_traffic_cost if traffic is None else traffic
        non_overlap = configs.rack_aware_non_overlap_cost if non_overlap is None else non_overlap
        assert traffic is not None and non_overlap is not None  # enablement checked their presence
        return traffic, non_overlap


@dataclass(frozen=True, slots=True)
class RackOptimizationResult:
    """The optimised assignments (one per known client, plus any unknown ones given), Kafka's cost
    (None when skipped), why it was skipped, and the tasks that moved."""

    assignments: Mapping[ProcessId, KafkaStreamsAssignment]
    cost: int | None
    skipped_reason: str | None = None
    moved_tasks: tuple[TaskId, ...] = field(default=())


def _prepare(
    params: RackAwareOptimizationParams,
    assignments: Mapping[ProcessId, KafkaStreamsAssignment],
    scope: PartitionScope,
    kind: AssignedTask.Type,
) -> tuple[SortedFrozenSet[TaskId], dict[ProcessId, KafkaStreamsAssignment]] | RackOptimizationResult:
    """The tasks to optimise and the assignments completed with every client -- or the finished result
    when there is nothing to do (no tasks) or Kafka would skip (with the reason)."""
    state = params.application_state
    current = dict(assignments)
    tasks = params.tasks_to_optimize
    if tasks is None:
        tasks = SortedFrozenSet(t for a in current.values() for t, assigned in a.tasks.items() if assigned.type is kind)
    if not tasks:
        return RackOptimizationResult(current, 0)
    compat = state.configs.kafka_compat
    reason = public_rack_awareness_problem(state, scope, costs_given=params.overrides_both_costs and not compat)
    if reason is not None:
        log.warning("skipping rack-aware %s task optimisation: %s", kind.value.lower(), reason)
        return RackOptimizationResult(current, None, reason)
    for pid in state.process_ids:
        if pid not in current:
            current[pid] = KafkaStreamsAssignment(pid)
    return tasks, current


def _client_order(state: ApplicationState, solver: Solver) -> tuple[ProcessId, ...]:
    """``kafka_streams_states`` key order: Kafka's HashMap order for the kafka solver, else ProcessId order."""
    if solver == KAFKA_SOLVER:
        return tuple(hash_iteration_order(state.process_ids))
    return state.process_ids


def _constructor(state: ApplicationState, tasks: Iterable[TaskId]) -> GraphConstructor:
    if state.configs.rack_aware_assignment_strategy == STRATEGY_BALANCE_SUBTOPOLOGY:
        return BalanceSubtopologyGraph(groups_by_subtopology_number(tasks))
    return MinTrafficGraph()


def optimize_active(
    params: RackAwareOptimizationParams, assignments: Mapping[ProcessId, KafkaStreamsAssignment]
) -> RackOptimizationResult:
    """Re-map the active tasks to minimise cross-rack traffic (all partitions) plus movement, keeping every
    client's number of active tasks. Optimise actives before placing standbys, as Kafka advises."""
    state = params.application_state
    prepared = _prepare(params, assignments, PartitionScope.ALL, AssignedTask.Type.ACTIVE)
    if isinstance(prepared, RackOptimizationResult):
        return prepared
    tasks, current = prepared
    solver = resolve_solver(state.configs)
    traffic, non_overlap = params.cost_weights()
    costs = CostModel(RackTable.build(state, PartitionScope.ALL), traffic, non_overlap)
    clients = _client_order(state, solver)
    holds = {pid: current[pid].active_tasks() for pid in clients}
    problem = FlowProblem.of(tuple(tasks), clients, holds, costs, strict=False)
    solution = solve(problem, _constructor(state, tasks), solver)
    compat = state.configs.kafka_compat
    moved = []
    for task, old, new in zip(problem.tasks, problem.holders, solution.holders, strict=True):
        if old == new:
            continue
        source, destination = clients[old], clients[new]
        had_standby = task in current[destination].tasks
        current[source] = current[source].remove_task(task)
        current[destination] = current[destination].assign_task(AssignedTask.active(task))
        if had_standby and not compat:
            current[source] = current[source].assign_task(AssignedTask.standby(task))
        moved.append(task)
    return RackOptimizationResult(current, solution.cost, None, tuple(moved))


def optimize_standby(
    params: RackAwareOptimizationParams, assignments: Mapping[ProcessId, KafkaStreamsAssignment]
) -> RackOptimizationResult:
    """Exchange standbys between clients on different racks (changelog traffic plus movement), keeping
    every client's number of standbys; the reported cost is the standby traffic of the result."""
    state = params.application_state
    prepared = _prepare(params, assignments, PartitionScope.CHANGELOG, AssignedTask.Type.STANDBY)
    if isinstance(prepared, RackOptimizationResult):
        return prepared
    tasks, current = prepared
    configs = state.configs
    compat = configs.kafka_compat
    solver = resolve_solver(configs)
    clients = _client_order(state, solver)
    unknown = sorted(pid for pid in current if pid not in state.clients)
    if unknown and compat:
        raise RackAwareOptimizationError(
            f"Index {len(clients)} out of bounds for length {len(clients)}: the assignments contain clients "
            f"unknown to the application state ({', '.join(map(str, unknown))})"
        )
    traffic, non_overlap = params.cost_weights()
    costs = CostModel(RackTable.build(state, PartitionScope.CHANGELOG), traffic, non_overlap)
    active = {pid: current[pid].active_tasks() for pid in clients}
    standby = {pid: set(current[pid].standby_tasks()) for pid in clients}
    tags = {pid: c.client_tags for pid, c in state.clients.items()}
    check_tags = bool(configs.rack_aware_assignment_tags) and not compat

    can_move = TagDiversityPredicate(tags).movable
    # Without tags every move is allowed; under kafka_compat Kafka passes the source as destination too,
    # so its tag check always passes.
    moves = optimize_standbys_pairwise(
        clients, active, standby, costs, _constructor(state, tasks), solver, can_move if check_tags else None,
        eligible=None if compat else tasks, strict=False,
    )
    for task, source, destination in moves:
        current[source] = current[source].remove_task(task)
        current[destination] = current[destination].assign_task(AssignedTask.standby(task))
    moved = tuple(sorted({task for task, _, _ in moves}))
    return RackOptimizationResult(current, standby_cost(standby, costs), None, moved)
