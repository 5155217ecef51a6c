"""KIP-924's public ``TaskAssignmentUtils`` helpers, for custom assignors to build on.

Each returns new values; the input ApplicationState and assignments are never mutated.
"""

from __future__ import annotations

from collections.abc import Mapping

from taskassign.ids import ProcessId
from taskassign.model import ApplicationState, AssignedTask, KafkaStreamsAssignment
from taskassign.rack.public import RackAwareOptimizationParams, optimize_active, optimize_standby
from taskassign.validation import validate_task_assignment

__all__ = (
    "RackAwareOptimizationParams",
    "identity_assignment",
    "optimize_rack_aware_active_tasks",
    "optimize_rack_aware_standby_tasks",
    "validate_task_assignment",
)


def identity_assignment(application_state: ApplicationState) -> dict[ProcessId, KafkaStreamsAssignment]:
    """Every client keeps exactly its previous active and standby tasks (clients without history
    get empty assignments). Nothing is filtered: a task claimed as active by two clients stays so."""
    result: dict[ProcessId, KafkaStreamsAssignment] = {}
    for pid, state in application_state.kafka_streams_states(False).items():
        tasks = [AssignedTask.active(t) for t in state.previous_active_tasks]
        tasks += [AssignedTask.standby(t) for t in state.previous_standby_tasks]
        result[pid] = KafkaStreamsAssignment.of(pid, tasks)
    return result


def optimize_rack_aware_active_tasks(
    params: RackAwareOptimizationParams, assignments: Mapping[ProcessId, KafkaStreamsAssignment]
) -> dict[ProcessId, KafkaStreamsAssignment]:
    """Re-map active tasks across racks at minimum traffic + movement cost, keeping every client's number
    of actives (Kafka's ``optimizeRackAwareActiveTasks``). Skipped, with a logged warning, when rack
    awareness is off or rack information or costs are missing; ``taskassign.rack.public.optimize_active``
    also reports the cost and the reason."""
    return dict(optimize_active(params, assignments).assignments)


def optimize_rack_aware_standby_tasks(
    params: RackAwareOptimizationParams, assignments: Mapping[ProcessId, KafkaStreamsAssignment]
) -> dict[ProcessId, KafkaStreamsAssignment]:
    """Exchange standbys between clients on different racks to cut changelog traffic, keeping every
    client's number of standbys and (unless ``taskassign.kafka.compat``) the client-tag spread
    (Kafka's ``optimizeRackAwareStandbyTasks``)."""
    return dict(optimize_standby(params, assignments).assignments)
