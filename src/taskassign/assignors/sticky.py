"""Kafka's public KIP-924 ``StickyTaskAssignor`` (``org.apache.kafka.streams.processor.assignment.assignors``), on the
public API only.

The reference assignor Kafka ships for ``task.assignor.class``. It reads the ApplicationState, places
actives stickily (previous owner within its quota, then previous standby owners, then the best
client in TaskId order, avoiding repeated task pairs), lets ``TaskAssignmentUtils`` optimise them for
rack locality, places standbys the same way and optimises those. Lags are never read.

Where it is not Kafka bit for bit (docs/kafka-differences.md):

* Standbys: Kafka walks the tasks with a changelog through a HashSet of TaskInfo objects hashed by
  identity, an order that changes from run to run (docs/kafka-differences.md, S2). taskassign walks them in TaskId
  order, so the same input always gives the same output. Actives are Kafka's exactly.
* Rack costs: Kafka optimises only when both ``rack.aware.assignment.traffic_cost`` and
  ``...non_overlap_cost`` are configured, so its own defaults (1 / 10) are dead (docs/kafka-differences.md, S1).
  taskassign applies the defaults for an unset cost; ``taskassign.kafka.compat`` restores Kafka's behaviour.

``StickyPreserveTaskAssignor`` is Kafka's ``new StickyTaskAssignor(true)``: every previous active
stays on its owner, no rack optimisation, and an immediate follow-up rebalance is requested.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from taskassign import task_assignment_utils as utils
from taskassign.assignors._sticky_placement import StickyPlacement, warn_standby_shortfalls
from taskassign.assignors.base import BaseTaskAssignor
from taskassign.configs import STRATEGY_NONE, kafka_line_at_least
from taskassign.ids import ProcessId
from taskassign.model import ApplicationState, KafkaStreamsAssignment, TaskAssignment
from taskassign.rack.cost import DEFAULT_STICKY_NON_OVERLAP_COST, DEFAULT_STICKY_TRAFFIC_COST

__all__ = (
    "DEFAULT_STICKY_NON_OVERLAP_COST",
    "DEFAULT_STICKY_TRAFFIC_COST",
    "StickyPreserveTaskAssignor",
    "StickyTaskAssignor",
)

log = logging.getLogger(__name__)

#: Deadline of the follow-up rebalance the preserving variant requests (Instant.ofEpochMilli(0)).
IMMEDIATE_FOLLOWUP_MS = 0


class StickyTaskAssignor(BaseTaskAssignor):
    """KIP-924's sticky assignor: keeps tasks where they were, balanced by tasks per thread."""

    name = "sticky"

    def __init__(self, must_preserve_active_task_assignment: bool = False) -> None:
        self.must_preserve_active_task_assignment = must_preserve_active_task_assignment

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        state = application_state
        preserve = self.must_preserve_active_task_assignment
        placement = StickyPlacement(state, capacity_tiebreak=False)
        # KAFKA-20198 (4.4): a client's quota is ceil(tasks x its threads / all threads)
        ceil_quota = kafka_line_at_least(state.configs.kafka_version, "4.4")
        placement.assign_actives(must_preserve=preserve, ceil_quota=ceil_quota)
        rack_state = None if preserve else _rack_optimisation_state(state)
        if rack_state is not None:
            self._optimise(placement, rack_state, active=True)

        replicas = state.configs.num_standby_replicas
        index = placement.task_index
        with_changelog = [index[t] for t, info in state.all_tasks().items() if info.has_changelog]
        warn_standby_shortfalls(log, placement.assign_standbys(with_changelog, replicas), replicas)
        if rack_state is not None and replicas > 0:
            self._optimise(placement, rack_state, active=False)

        actives, standbys = placement.sets_by_process(active=True), placement.sets_by_process(active=False)
        assignments = {pid: KafkaStreamsAssignment.of_tasks(pid, actives[pid], standbys[pid])
                       for pid in state.process_ids}
        if preserve and assignments:
            first = state.process_ids[placement.clients_order[0]]  # first in the result HashMap's order
            assignments[first] = assignments[first].with_followup_rebalance(IMMEDIATE_FOLLOWUP_MS)
        return TaskAssignment(tuple(assignments.values()))

    @staticmethod
    def _optimise(placement: StickyPlacement, state: ApplicationState, *, active: bool) -> None:
        """One pass of TaskAssignmentUtils' public rack optimisation over the current assignment."""
        configs = state.configs
        params = utils.RackAwareOptimizationParams.of(state)
        current: dict[ProcessId, KafkaStreamsAssignment] = {}
        actives, standbys = placement.sets_by_process(active=True), placement.sets_by_process(active=False)
        for pid in state.process_ids:
            current[pid] = KafkaStreamsAssignment.of_tasks(pid, actives[pid], standbys[pid])
        traffic, non_overlap = configs.rack_aware_traffic_cost, configs.rack_aware_non_overlap_cost
        # _rack_optimisation_state filled unset costs with the sticky defaults (or refused without them)
        costs = (DEFAULT_STICKY_TRAFFIC_COST if traffic is None else traffic,
                 DEFAULT_STICKY_NON_OVERLAP_COST if non_overlap is None else non_overlap)
        if active:
            stateful = params.for_stateful_tasks().with_traffic_cost_override(costs[0])
            stateful = stateful.with_non_overlap_cost_override(costs[1])
            current = _adopt(current, utils.optimize_rack_aware_active_tasks(stateful, current))
            stateless = params.for_stateless_tasks().with_traffic_cost_override(1).with_non_overlap_cost_override(0)
            current = _adopt(current, utils.optimize_rack_aware_active_tasks(stateless, current))
        else:
            params = params.with_traffic_cost_override(costs[0]).with_non_overlap_cost_override(costs[1])
            current = _adopt(current, utils.optimize_rack_aware_standby_tasks(params, current))
        placement.replace({pid: a.active_tasks() for pid, a in current.items()}, active=True)
        placement.replace({pid: a.standby_tasks() for pid, a in current.items()}, active=False)


class StickyPreserveTaskAssignor(StickyTaskAssignor):
    """Kafka's ``StickyTaskAssignor(mustPreserveActiveTaskAssignment = true)``."""

    name = "sticky_preserve"

    def __init__(self) -> None:
        super().__init__(must_preserve_active_task_assignment=True)


def _adopt(current: dict[ProcessId, KafkaStreamsAssignment], result: Any) -> dict[ProcessId, KafkaStreamsAssignment]:
    """The helpers return the optimised map (or update the given one in place and return None)."""
    return current if result is None else dict(result)


def _rack_optimisation_state(state: ApplicationState) -> ApplicationState | None:
    """The state the rack optimisation runs on, or None when it cannot run at all.

    Kafka optimises only when both costs are configured; by default taskassign fills an unset cost
    with the sticky default (1 traffic, 10 non-overlap), as Kafka's constants intend.
    """
    configs = state.configs
    if configs.rack_aware_assignment_strategy == STRATEGY_NONE:
        return None  # TaskAssignmentUtils would skip it: nothing to build
    traffic, non_overlap = configs.rack_aware_traffic_cost, configs.rack_aware_non_overlap_cost
    if traffic is not None and non_overlap is not None:
        return state
    if configs.kafka_compat:
        return None  # Kafka: a cost is unconfigured, the optimisation is skipped
    filled = replace(
        configs,
        rack_aware_traffic_cost=DEFAULT_STICKY_TRAFFIC_COST if traffic is None else traffic,
        rack_aware_non_overlap_cost=DEFAULT_STICKY_NON_OVERLAP_COST if non_overlap is None else non_overlap,
    )
    return replace(state, configs=filled)
