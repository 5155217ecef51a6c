"""``taskassign optimize``: improve a scenario's ``current_assignment`` for rack traffic.

Two APIs, as in Kafka:

* ``internal`` -- Kafka's ``RackAwareTaskAssignor`` (what the high-availability and legacy sticky
  assignors run, and what the golden ``rack_optimize_*`` cases recorded): actives are every task with a
  changelog, costed on their source partitions; unset costs take the high-availability defaults
  (traffic 10, non-overlap 1); standby moves respect the client-tag spread when
  ``rack.aware.assignment.tags`` is set. Rack awareness must be possible (every rack known), else it
  is an input error naming what is missing.
* ``public`` -- ``TaskAssignmentUtils.optimizeRackAware*Tasks``: the chosen tasks (all, stateful or
  stateless), every partition counts for actives, costs come from the configs or overrides, and the
  optimisation is skipped (with the reason) when Kafka would skip it.

Both keep every client's number of actives (standbys), and report Kafka's optimiser cost.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from taskassign.errors import RackAwareOptimizationError
from taskassign.formats.assignment import assignment_to_dict
from taskassign.formats.scenario import Scenario
from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState, AssignedTask, GroupAssignment, KafkaStreamsAssignment
from taskassign.rack.cost import (
    DEFAULT_NON_OVERLAP_COST,
    DEFAULT_TRAFFIC_COST,
    CostModel,
    PartitionScope,
    RackTable,
)
from taskassign.rack.enablement import partition_rack_problem
from taskassign.rack.internal import RackAwareTaskAssignor
from taskassign.rack.public import RackAwareOptimizationParams, optimize_active, optimize_standby
from taskassign.rack.solve import resolve_solver
from taskassign.rack.standby import standby_cost
from taskassign.rack.tags import always_allowed, tag_diversity_predicate

__all__ = ("Api", "Role", "ScenarioOptimization", "TaskSelection", "optimization_document", "optimize_scenario")


class Role(enum.StrEnum):
    ACTIVE = "active"
    STANDBY = "standby"


class Api(enum.StrEnum):
    INTERNAL = "internal"
    PUBLIC = "public"


class TaskSelection(enum.StrEnum):
    """Which tasks the public API optimises (``RackAwareOptimizationParams.for_*``)."""

    ALL = "all"
    STATEFUL = "stateful"
    STATELESS = "stateless"


@dataclass(frozen=True, slots=True)
class ScenarioOptimization:
    """The optimised assignment of every client and what the optimiser reported."""

    scenario: str
    role: Role
    api: Api
    solver: str
    strategy: str
    assignments: Mapping[ProcessId, KafkaStreamsAssignment]
    cost: int | None
    initial_cost: int | None
    traffic_cost: int | None
    non_overlap_cost: int | None
    moved_tasks: tuple[TaskId, ...]
    skipped_reason: str | None = None


def optimize_scenario(
    scenario: Scenario,
    role: Role,
    api: Api = Api.INTERNAL,
    *,
    tasks: TaskSelection = TaskSelection.ALL,
    traffic_cost: int | None = None,
    non_overlap_cost: int | None = None,
) -> ScenarioOptimization:
    """Optimise ``scenario.current_assignment`` (required) for ``role`` through ``api``."""
    if scenario.current_assignment is None:
        raise RackAwareOptimizationError(
            f"scenario {scenario.name!r} has no current_assignment to optimise; add one (the shape of an "
            "assignment file's 'clients' object)"
        )
    state = scenario.state
    current = {pid: scenario.current_assignment.get(pid, KafkaStreamsAssignment(pid)) for pid in state.process_ids}
    if api is Api.PUBLIC:
        return _public(scenario, current, role, tasks, traffic_cost, non_overlap_cost)
    if tasks is not TaskSelection.ALL:
        raise RackAwareOptimizationError("--tasks applies to the public API only; the internal optimiser "
                                         "takes every task with a changelog (actives) or every standby")
    configs = state.configs
    traffic = _first(traffic_cost, configs.rack_aware_traffic_cost, DEFAULT_TRAFFIC_COST)
    non_overlap = _first(non_overlap_cost, configs.rack_aware_non_overlap_cost, DEFAULT_NON_OVERLAP_COST)
    optimizer = RackAwareTaskAssignor(state)
    reason = optimizer.why_disabled()
    if reason is None and role is Role.STANDBY:
        reason = partition_rack_problem(state, PartitionScope.CHANGELOG)
    if reason is not None:
        raise RackAwareOptimizationError(f"rack awareness cannot be enabled for {scenario.name!r}: {reason}")
    active = {pid: set(a.active_tasks()) for pid, a in current.items()}
    standby = {pid: set(a.standby_tasks()) for pid, a in current.items()}
    if role is Role.ACTIVE:
        chosen = tuple(state.stateful_task_ids)
        table = RackTable.build(state, PartitionScope.SOURCE)
        initial = _holder_traffic(CostModel(table, traffic, non_overlap), active, set(chosen))
        new_active, cost = optimizer.optimize_active_tasks(chosen, active, traffic, non_overlap)
        result = _with_actives(current, new_active)
    else:
        predicate = tag_diversity_predicate(state) if configs.rack_aware_assignment_tags else always_allowed
        initial = standby_cost(standby, CostModel(RackTable.build(state, PartitionScope.CHANGELOG), traffic, 0))
        new_standby, cost = optimizer.optimize_standby_tasks(active, standby, traffic, non_overlap, predicate)
        result = {
            pid: _keep_deadline(a, KafkaStreamsAssignment.of_tasks(pid, active[pid], new_standby.get(pid, ())))
            for pid, a in current.items()
        }
    return ScenarioOptimization(
        scenario.name, role, api, optimizer.solver, configs.rack_aware_assignment_strategy, result, cost,
        initial, traffic, non_overlap, _moved(current, result, role),
    )


def _first(*values: int | None) -> int:
    return next(v for v in values if v is not None)


def _holder_traffic(costs: CostModel, holds: Mapping[ProcessId, set[TaskId]], tasks: set[TaskId]) -> int:
    """Kafka's initial cost: traffic of every chosen task on its current holder."""
    table = costs.table
    return sum(costs.traffic(t, table.rack_of(pid)) for pid, held in holds.items() for t in held if t in tasks)


def _keep_deadline(before: KafkaStreamsAssignment, after: KafkaStreamsAssignment) -> KafkaStreamsAssignment:
    deadline = before.followup_rebalance_deadline
    return after if deadline is None else after.with_followup_rebalance(deadline)


def _with_actives(
    current: Mapping[ProcessId, KafkaStreamsAssignment], new_active: Mapping[ProcessId, set[TaskId]]
) -> dict[ProcessId, KafkaStreamsAssignment]:
    """Install the new actives; a task now active where it was a standby swaps roles with its old holder."""
    old_holder = {t: pid for pid, a in current.items() for t in a.active_tasks()}
    standby = {pid: set(a.standby_tasks()) for pid, a in current.items()}
    for pid, tasks in new_active.items():
        for t in tasks & standby[pid]:
            standby[pid].discard(t)
            standby[old_holder[t]].add(t)
    return {
        pid: _keep_deadline(a, KafkaStreamsAssignment.of_tasks(pid, new_active[pid], standby[pid]))
        for pid, a in current.items()
    }


def _moved(
    before: Mapping[ProcessId, KafkaStreamsAssignment], after: Mapping[ProcessId, KafkaStreamsAssignment], role: Role
) -> tuple[TaskId, ...]:
    kind = AssignedTask.Type.ACTIVE if role is Role.ACTIVE else AssignedTask.Type.STANDBY
    moved = set()
    for pid, assignment in after.items():
        mine = {t for t, a in assignment.tasks.items() if a.type is kind}
        theirs = {t for t, a in before[pid].tasks.items() if a.type is kind}
        moved |= mine ^ theirs
    return tuple(sorted(moved))


def _public(
    scenario: Scenario,
    current: dict[ProcessId, KafkaStreamsAssignment],
    role: Role,
    tasks: TaskSelection,
    traffic_cost: int | None,
    non_overlap_cost: int | None,
) -> ScenarioOptimization:
    state = scenario.state
    params = RackAwareOptimizationParams.of(state)
    if tasks is TaskSelection.STATEFUL:
        params = params.for_stateful_tasks()
    elif tasks is TaskSelection.STATELESS:
        params = params.for_stateless_tasks()
    if traffic_cost is not None:
        params = params.with_traffic_cost_override(traffic_cost)
    if non_overlap_cost is not None:
        params = params.with_non_overlap_cost_override(non_overlap_cost)
    run = optimize_active if role is Role.ACTIVE else optimize_standby
    result = run(params, current)
    traffic = non_overlap = initial = None
    if result.skipped_reason is None:
        traffic, non_overlap = params.cost_weights()
        initial = _public_initial_cost(state, params, current, role, traffic)
    return ScenarioOptimization(
        scenario.name, role, Api.PUBLIC, resolve_solver(state.configs),
        state.configs.rack_aware_assignment_strategy, dict(result.assignments), result.cost, initial,
        traffic, non_overlap, result.moved_tasks, result.skipped_reason,
    )


def _public_initial_cost(
    state: ApplicationState,
    params: RackAwareOptimizationParams,
    current: Mapping[ProcessId, KafkaStreamsAssignment],
    role: Role,
    traffic: int,
) -> int:
    scope = PartitionScope.ALL if role is Role.ACTIVE else PartitionScope.CHANGELOG
    costs = CostModel(RackTable.build(state, scope), traffic, 0)
    if role is Role.STANDBY:
        return standby_cost({pid: set(a.standby_tasks()) for pid, a in current.items()}, costs)
    holds = {pid: set(a.active_tasks()) for pid, a in current.items()}
    chosen = set(params.tasks_to_optimize) if params.tasks_to_optimize is not None else set().union(*holds.values())
    return _holder_traffic(costs, holds, chosen)


def optimization_document(result: ScenarioOptimization) -> dict[str, Any]:
    """The ``taskassign/assignment/v1`` document: every client's tasks, ``optimizer_cost`` and details."""
    details: dict[str, Any] = {
        "api": result.api.value,
        "solver": result.solver,
        "strategy": result.strategy,
        "traffic_cost": result.traffic_cost,
        "non_overlap_cost": result.non_overlap_cost,
        "initial_cost": result.initial_cost,
        "moved_tasks": [str(t) for t in result.moved_tasks],
    }
    if result.skipped_reason is not None:
        details["skipped_reason"] = result.skipped_reason
    return assignment_to_dict(
        GroupAssignment(result.assignments),
        assignor=f"rack_optimize_{result.role.value}",
        extras={"optimizer_cost": result.cost, "details": details},
    )
