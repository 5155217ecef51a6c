"""KIP-924's public ``TaskAssignmentUtils`` helpers, for custom assignors to build on.

Each returns new values; the input ApplicationState and assignments are never mutated.
"""

from __future__ import annotations

from collections.abc import Mapping

from taskassign.errors import UserInputError
from taskassign.ids import ProcessId, TaskId
from taskassign.internals.client_state import ClientState, task_numbers
from taskassign.internals.constrained_priority_set import fast_pool_factory
from taskassign.internals.java_order import hash_iteration_order, java_hash
from taskassign.model import ACTIVE, STANDBY, ApplicationState, KafkaStreamsAssignment, new_assigned_task
from taskassign.rack.public import RackAwareOptimizationParams, optimize_active, optimize_standby
from taskassign.standby.client_tag_aware import ClientTagAwareStandbyTaskAssignor
from taskassign.standby.load_based import LoadBasedStandbyTaskAssignor
from taskassign.validation import validate_task_assignment

__all__ = (
    "RackAwareOptimizationParams",
    "default_standby_task_assignment",
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
        tasks = [new_assigned_task(t, ACTIVE) for t in state.previous_active_tasks]
        tasks += [new_assigned_task(t, STANDBY) for t in state.previous_standby_tasks]
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


def default_standby_task_assignment(
    application_state: ApplicationState, assignments: Mapping[ProcessId, KafkaStreamsAssignment]
) -> dict[ProcessId, KafkaStreamsAssignment]:
    """Add standbys to ``assignments`` the way Kafka's own assignors place them
    (``TaskAssignmentUtils#defaultStandbyTaskAssignment``).

    Tasks with a changelog get up to ``num.standby.replicas`` standbys each, on the least loaded clients
    (tasks per thread), or spread over client tags when ``rack.aware.assignment.tags`` is set. Tasks are
    visited in the order of Kafka's hash set of task ids. Returns the assignments of every client
    (clients missing from ``assignments`` get one). Kafka's tag path places one standby per active task
    even with ``num.standby.replicas`` = 0 (bug 11.2); taskassign places none unless
    ``taskassign.kafka.compat`` is set.
    """
    configs = application_state.configs
    states = application_state.kafka_streams_states(False)
    unknown = [pid for pid in assignments if pid not in states]
    if unknown:
        raise UserInputError(f"assignments name client(s) that are not part of the application: "
                             f"{', '.join(str(p) for p in sorted(unknown))}")
    result = {pid: assignments.get(pid, KafkaStreamsAssignment(pid)) for pid in states}
    replicas = configs.num_standby_replicas
    tagged = bool(configs.rack_aware_assignment_tags)
    if replicas <= 0 and not (tagged and configs.kafka_compat):
        return result

    task_ids = application_state.task_ids.items
    numbers = task_numbers(task_ids)
    clients = []
    for index, (pid, state) in enumerate(states.items()):
        client = ClientState(index, pid, state.num_processing_threads, state.client_tags, state.rack_id)
        client.active.update(numbers[t] for t in result[pid].active_tasks() if t in numbers)
        client.standby.update(numbers[t] for t in result[pid].standby_tasks() if t in numbers)
        clients.append(client)
    before = [set(c.standby) for c in clients]
    tasks = [numbers[t] for t in _standby_eligible_tasks_in_hash_order(application_state)]
    assignor: ClientTagAwareStandbyTaskAssignor | LoadBasedStandbyTaskAssignor = (
        ClientTagAwareStandbyTaskAssignor(configs.rack_aware_assignment_tags) if tagged
        else LoadBasedStandbyTaskAssignor()
    )
    assignor.assign(clients, tasks, replicas, fast_pool_factory([c.process_id.java_hash() for c in clients]),
                    task_ids)
    for client, previous in zip(clients, before, strict=True):
        added = sorted(client.standby - previous)
        if added:
            current = result[client.process_id]
            entries = dict(current.tasks)
            entries.update((task_ids[n], new_assigned_task(task_ids[n], STANDBY)) for n in added)
            result[client.process_id] = KafkaStreamsAssignment(
                client.process_id, entries, current.followup_rebalance_deadline)
    return result


def _standby_eligible_tasks_in_hash_order(application_state: ApplicationState) -> list[TaskId]:
    """Tasks with a changelog, in the iteration order of Kafka's ``Collectors.toSet()`` over them, which
    are streamed from ``allTasks()`` (a HashMap filled in TaskId order)."""
    tasks = application_state.tasks
    streamed = [t for t in hash_iteration_order(tasks, hash_of=java_hash) if tasks[t].has_changelog]
    return hash_iteration_order(streamed, hash_of=java_hash)
