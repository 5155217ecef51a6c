"""Kafka's ``LegacyStickyTaskAssignor``, bit for bit.

Kafka's internal sticky assignor (``internal.task.assignor.class``; formerly "StickyTaskAssignor"):
it never looks at lags. Actives stay with their previous owner while it is under its quota
(``tasks // total threads`` per thread), previous standby owners are promoted next, the rest go in
TaskId order to the previous owner unless it is full and someone has more room, else to the least
loaded client that would get a new task pair. With a rack strategy and complete rack information the
internal optimiser then moves stateful actives (costs: configured or 1 / 10), stateless actives (1 / 0)
and, after standby placement, standbys. It never asks for a probing rebalance.
"""

from __future__ import annotations

import logging

from taskassign.assignors._sticky_placement import StickyPlacement, warn_standby_shortfalls
from taskassign.assignors.base import BaseTaskAssignor
from taskassign.internals.java_order import hash_iteration_order, hashset_copy_order, leader_task_order
from taskassign.model import ApplicationState, KafkaStreamsAssignment, TaskAssignment
from taskassign.rack.cost import (
    DEFAULT_STICKY_NON_OVERLAP_COST,
    DEFAULT_STICKY_TRAFFIC_COST,
    STATELESS_NON_OVERLAP_COST,
    STATELESS_TRAFFIC_COST,
)
from taskassign.rack.internal import make_rack_aware_assignor
from taskassign.rack.tags import always_allowed

__all__ = (
    "DEFAULT_STICKY_NON_OVERLAP_COST",
    "DEFAULT_STICKY_TRAFFIC_COST",
    "STATELESS_NON_OVERLAP_COST",
    "STATELESS_TRAFFIC_COST",
    "LegacyStickyTaskAssignor",
    "legacy_sticky_assignment",
)

log = logging.getLogger(__name__)



def legacy_sticky_assignment(
    state: ApplicationState, *, must_preserve_active_task_assignment: bool, rack_aware: bool
) -> TaskAssignment:
    """Run the legacy sticky algorithm; one assignment per client, in ProcessId order.

    ``must_preserve_active_task_assignment`` keeps every previous active on its owner whatever the
    quota (FallbackPrior); ``rack_aware`` lets the internal rack optimiser run when it can be enabled.
    When it ran, ``details["rack_optimizer_cost"]`` holds the cost Kafka's optimiser reports for each
    pass (stateful actives, stateless actives, standbys).
    """
    costs_reported: dict[str, int] = {}
    placement = StickyPlacement(state, capacity_tiebreak=True)
    placement.assign_actives(must_preserve=must_preserve_active_task_assignment)
    configs = state.configs
    optimiser = make_rack_aware_assignor(state) if rack_aware else None
    traffic = configs.rack_aware_traffic_cost
    traffic = DEFAULT_STICKY_TRAFFIC_COST if traffic is None else traffic
    non_overlap = configs.rack_aware_non_overlap_cost
    non_overlap = DEFAULT_STICKY_NON_OVERLAP_COST if non_overlap is None else non_overlap
    if optimiser is not None:
        stateful = list(state.stateful_task_ids)
        stateless = [t for t in state.task_ids if t not in state.stateful_task_ids]
        for kind, tasks, costs in (
            ("active_stateful", stateful, (traffic, non_overlap)),
            ("active_stateless", stateless, (STATELESS_TRAFFIC_COST, STATELESS_NON_OVERLAP_COST)),
        ):
            optimised, cost = optimiser.optimize_active_tasks(tasks, placement.sets_by_process(active=True), *costs)
            placement.replace(optimised, active=True)
            costs_reported[kind] = cost

    index = placement.task_index
    if state.subtopology_walk_order is None:
        # offline (the golden harness): statefulTaskIds is new HashSet<>(set) of a HashSet filled in TaskId order
        order = hashset_copy_order(hash_iteration_order(state.stateful_task_ids))
    else:
        # the leader's statefulTasks: a HashSet given addAll of ChangelogTopics' stateful tasks, a HashMap filled
        # walking the subtopologies in the leader's order; tasks sharing a bucket keep that walk's order
        order = leader_task_order(state.stateful_task_ids, state.subtopology_walk_order)
    replicas = configs.num_standby_replicas
    warn_standby_shortfalls(log, placement.assign_standbys((index[t] for t in order), replicas), replicas)
    if optimiser is not None and replicas > 0:
        optimised, cost = optimiser.optimize_standby_tasks(
            placement.sets_by_process(active=True), placement.sets_by_process(active=False),
            traffic, non_overlap, always_allowed,
        )
        placement.replace(optimised, active=False)
        costs_reported["standby"] = cost

    actives, standbys = placement.sets_by_process(active=True), placement.sets_by_process(active=False)
    assignments = tuple(KafkaStreamsAssignment.of_tasks(pid, actives[pid], standbys[pid]) for pid in state.process_ids)
    details = {"rack_optimizer_cost": costs_reported} if costs_reported else {}
    return TaskAssignment(assignments, probing_rebalance_needed=False, details=details)


class LegacyStickyTaskAssignor(BaseTaskAssignor):
    """Kafka's LegacyStickyTaskAssignor: sticky, lag-blind, balanced by tasks per thread."""

    name = "legacy_sticky"

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return legacy_sticky_assignment(application_state, must_preserve_active_task_assignment=False,
                                        rack_aware=True)
