"""When rack-aware optimisation may run (assignor spec 7.1), with the reason when it may not.

Kafka answers with a bare boolean (and a log line); taskassign returns the reason so that the CLI and
reports can say *why* an application is not optimised.
"""

from __future__ import annotations

from taskassign.configs import STRATEGY_NONE
from taskassign.model import ApplicationState, TaskInfo
from taskassign.rack.cost import PartitionScope

__all__ = ("internal_rack_awareness_problem", "public_rack_awareness_problem")


def internal_rack_awareness_problem(state: ApplicationState) -> str | None:
    """Why Kafka's internal assignors (high-availability, legacy sticky) cannot enable rack awareness.

    Every client needs a rack, every source partition of every task a non-empty replica rack set, and,
    when standbys are configured, every changelog partition too.
    """
    configs = state.configs
    if configs.rack_aware_assignment_strategy == STRATEGY_NONE:
        return "rack.aware.assignment.strategy is none"
    problem = _client_problem(state)
    if problem is None:
        problem = _partition_problem(state, PartitionScope.SOURCE)
    if problem is None and configs.num_standby_replicas != 0:
        problem = _partition_problem(state, PartitionScope.CHANGELOG)
    return problem


def public_rack_awareness_problem(
    state: ApplicationState, scope: PartitionScope, *, costs_given: bool = False
) -> str | None:
    """Why ``TaskAssignmentUtils.optimizeRackAware*Tasks`` would skip: strategy none, a cost not
    configured (``costs_given``: both were supplied as overrides instead), a client without a rack, or a
    partition of the scope without rack information -- checked in Kafka's order, over every task."""
    configs = state.configs
    if configs.rack_aware_assignment_strategy == STRATEGY_NONE:
        return "rack.aware.assignment.strategy is none"
    if not costs_given:
        if configs.rack_aware_traffic_cost is None:
            return "rack.aware.assignment.traffic_cost is not configured"
        if configs.rack_aware_non_overlap_cost is None:
            return "rack.aware.assignment.non_overlap_cost is not configured"
    return _client_problem(state) or _partition_problem(state, scope)


def _client_problem(state: ApplicationState) -> str | None:
    for pid, client in state.clients.items():
        if client.rack_id is None:
            return f"client {pid} has no rack"
    return None


def _partition_problem(state: ApplicationState, scope: PartitionScope) -> str | None:
    for tid, info in state.tasks.items():
        problem = _task_partition_problem(info, scope)
        if problem:
            return f"task {tid}: {problem}"
    return None


def _task_partition_problem(info: TaskInfo, scope: PartitionScope) -> str | None:
    for p in scope.partitions(info):
        if p.rack_ids is None:
            return f"{scope.value} partition {p.topic}-{p.partition} has no rack information"
        if not p.rack_ids:
            return f"{scope.value} partition {p.topic}-{p.partition} has no replica with a rack"
    return None
