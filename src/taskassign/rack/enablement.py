"""When rack-aware optimisation may run (``RackAwareTaskAssignor#canEnableRackAwareAssignor``), with the reason when it
may not.

Kafka answers with a bare boolean (and a log line); taskassign returns the reason so that the CLI and
reports can say *why* an application is not optimised.
"""

from __future__ import annotations

from collections.abc import Callable

from taskassign.configs import STRATEGY_NONE
from taskassign.model import ApplicationState
from taskassign.rack.cost import PartitionScope, RackTable

__all__ = ("internal_rack_awareness_problem", "partition_rack_problem", "public_rack_awareness_problem")

#: How callers hand over rack tables (so one built for the check is reused for the costs).
TableFor = Callable[[PartitionScope], RackTable]


def internal_rack_awareness_problem(state: ApplicationState, table_for: TableFor | None = None) -> str | None:
    """Why Kafka's internal assignors (high-availability, legacy sticky) cannot enable rack awareness.

    Every client needs a rack, every source partition of every task a non-empty replica rack set, and,
    when standbys are configured, every changelog partition too.
    """
    configs = state.configs
    if configs.rack_aware_assignment_strategy == STRATEGY_NONE:
        return "rack.aware.assignment.strategy is none"
    problem = _client_problem(state) or partition_rack_problem(state, PartitionScope.SOURCE, table_for)
    if problem is None and configs.num_standby_replicas != 0:
        problem = partition_rack_problem(state, PartitionScope.CHANGELOG, table_for)
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
    return _client_problem(state) or partition_rack_problem(state, scope)


def _client_problem(state: ApplicationState) -> str | None:
    for pid, client in state.clients.items():
        if client.rack_id is None:
            return f"client {pid} has no rack"
    return None


def partition_rack_problem(
    state: ApplicationState, scope: PartitionScope, table_for: TableFor | None = None
) -> str | None:
    """The first partition of the scope, over every task, without a known replica rack (None: all known)."""
    table = table_for(scope) if table_for is not None else RackTable.build(state, scope)
    for tid, problem in table.unknown_racks.items():
        return f"task {tid}: {problem}"
    return None
