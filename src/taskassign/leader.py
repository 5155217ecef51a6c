"""One rebalance on the group leader: assign -> validate -> callback -> follow-ups.

This is the contract around an assignor (host-and-wire spec section 3), not an algorithm:

1. ``assign``. A ``TaskAssignmentException`` keeps every client's previous tasks and asks for an
   immediate follow-up rebalance, as KIP-924 documents. (Kafka's own leader instead sends
   ASSIGNMENT_ERROR to every member; see docs/kafka-differences.md.)
2. ``validate_task_assignment``. UNKNOWN_PROCESS_ID / UNKNOWN_TASK_ID abort at once: the callback
   sees an empty assignment. Other errors abort after the callback saw the full assignment.
3. Follow-ups: per-client deadlines from the assignor; a probing request from Kafka's internal
   assignors becomes ``now_ms + probing.rebalance.interval.ms`` on the leader's own client.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

from taskassign.assignors.base import TaskAssignor
from taskassign.errors import InvalidAssignmentError, TaskassignError, TaskAssignmentException
from taskassign.ids import ProcessId
from taskassign.model import (
    ApplicationState,
    AssignmentError,
    GroupAssignment,
    GroupSubscription,
    KafkaStreamsAssignment,
    TaskAssignment,
)
from taskassign.utils import identity_assignment
from taskassign.validation import CompletenessReport, check_completeness, validate_task_assignment

__all__ = ("IMMEDIATE_FOLLOWUP_MS", "RebalanceResult", "rebalance")

#: Deadline meaning "rebalance again immediately" (Kafka encodes nextRebalanceMs = 0).
IMMEDIATE_FOLLOWUP_MS = 0
_FATAL_ERRORS = (AssignmentError.UNKNOWN_PROCESS_ID, AssignmentError.UNKNOWN_TASK_ID)


@dataclass(frozen=True, slots=True)
class RebalanceResult:
    """What one rebalance produced, and how it went."""

    assignor: str
    error: AssignmentError
    group: GroupAssignment
    #: The assignor's raw output (or the identity fallback).
    task_assignment: TaskAssignment
    probing_rebalance_needed: bool
    completeness: CompletenessReport
    #: Set when the assignor raised TaskAssignmentException and the previous assignment was kept.
    fallback_reason: str | None = None


def rebalance(
    state: ApplicationState,
    assignor: TaskAssignor,
    *,
    assignor_name: str | None = None,
    leader: ProcessId | None = None,
    raise_on_error: bool = True,
    fallback_factory: Callable[[str], TaskAssignor] | None = None,
) -> RebalanceResult:
    """Run one rebalance of ``state`` with ``assignor`` as Kafka's group leader would.

    ``leader`` is the leader's own client (default: the first in ProcessId order). With
    ``raise_on_error`` an invalid assignment raises InvalidAssignmentError after the callback ran;
    without it the result carries the error. ``fallback_factory`` builds the assignor named by an
    assignor's ``fallback_when_lags_unknown`` when changelog end offsets are unknown.
    """
    name = assignor_name or getattr(assignor, "name", "") or type(assignor).__name__
    fallback_name = getattr(assignor, "fallback_when_lags_unknown", None)
    if fallback_name and not state.lag_computation_successful and fallback_factory is not None:
        assignor = fallback_factory(fallback_name)
        name = f"{fallback_name} (instead of {name}: changelog end offsets unknown)"

    fallback_reason = None
    try:
        task_assignment = assignor.assign(state)
    except TaskAssignmentException as exc:
        fallback_reason = str(exc) or type(exc).__name__
        task_assignment = TaskAssignment(tuple(
            a.with_followup_rebalance(IMMEDIATE_FOLLOWUP_MS) for a in identity_assignment(state).values()
        ))
    if not isinstance(task_assignment, TaskAssignment):
        raise TaskassignError(f"assignor {name} returned {type(task_assignment).__name__}, "
                              "expected a TaskAssignment")

    error = validate_task_assignment(state, task_assignment)
    subscription = GroupSubscription(state)
    callback = getattr(assignor, "on_assignment_computed", None)
    if error in _FATAL_ERRORS:
        empty = GroupAssignment(MappingProxyType({}))
        if callable(callback):
            callback(empty, subscription, error)
        if raise_on_error:
            raise InvalidAssignmentError(error, name)
        return RebalanceResult(name, error, empty, task_assignment, task_assignment.probing_rebalance_needed,
                               check_completeness(state, task_assignment), fallback_reason)

    clients = _client_assignments(state, task_assignment, leader)
    group = GroupAssignment(clients)
    if callable(callback):
        callback(group, subscription, error)
    if error is not AssignmentError.NONE and raise_on_error:
        raise InvalidAssignmentError(error, name)
    completeness = check_completeness(state, TaskAssignment(tuple(clients.values())))
    return RebalanceResult(name, error, group, task_assignment, task_assignment.probing_rebalance_needed,
                           completeness, fallback_reason)


def _client_assignments(
    state: ApplicationState, task_assignment: TaskAssignment, leader: ProcessId | None
) -> dict[ProcessId, KafkaStreamsAssignment]:
    """One assignment per known client: the assignor's (a later entry overwrites an earlier one, as in
    Kafka), empty for clients it left out; then the probing deadline on the leader's client."""
    clients = {pid: KafkaStreamsAssignment(pid) for pid in state.process_ids}
    for entry in task_assignment.assignments:
        if entry.process_id in clients:
            clients[entry.process_id] = entry
    if task_assignment.probing_rebalance_needed and clients:
        leader_pid = leader if leader is not None else state.process_ids[0]
        if leader_pid in clients:
            probe_at = state.now_ms + state.configs.probing_rebalance_interval_ms
            current = clients[leader_pid].followup_rebalance_deadline
            deadline = probe_at if current is None else min(current, probe_at)
            clients[leader_pid] = clients[leader_pid].with_followup_rebalance(deadline)
    return clients
