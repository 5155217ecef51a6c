"""KIP-924's public ``TaskAssignmentUtils`` helpers, for custom assignors to build on.

Each returns new values; the input ApplicationState and assignments are never mutated.
"""

from __future__ import annotations

from taskassign.ids import ProcessId
from taskassign.model import ApplicationState, AssignedTask, KafkaStreamsAssignment
from taskassign.validation import validate_task_assignment

__all__ = ("identity_assignment", "validate_task_assignment")


def identity_assignment(application_state: ApplicationState) -> dict[ProcessId, KafkaStreamsAssignment]:
    """Every client keeps exactly its previous active and standby tasks (clients without history
    get empty assignments). Nothing is filtered: a task claimed as active by two clients stays so."""
    result: dict[ProcessId, KafkaStreamsAssignment] = {}
    for pid, state in application_state.kafka_streams_states(False).items():
        tasks = [AssignedTask.active(t) for t in state.previous_active_tasks]
        tasks += [AssignedTask.standby(t) for t in state.previous_standby_tasks]
        result[pid] = KafkaStreamsAssignment.of(pid, tasks)
    return result
