"""One rebalance on the group leader: assign -> validate -> follow-ups -> threads -> callback.

This is the contract around an assignor (what ``StreamsPartitionAssignor#assign`` does around KIP-924's
``TaskAssignor``), not an algorithm:

1. ``assign``. A ``TaskAssignmentException`` keeps every client's previous tasks and asks for an
   immediate follow-up rebalance, as KIP-924 documents. (Kafka's own leader instead sends
   ASSIGNMENT_ERROR to every member; see docs/kafka-differences.md.)
2. ``validate_task_assignment`` (and the completeness report, from the same walk). UNKNOWN_PROCESS_ID /
   UNKNOWN_TASK_ID abort at once: the callback sees an empty assignment. Other errors abort after
   the callback saw the full assignment.
3. Follow-ups: per-client deadlines from the assignor; a probing request from Kafka's internal
   assignors becomes ``now_ms + probing.rebalance.interval.ms`` on the leader's own client.
4. Threads: each client's tasks (its actives and standbys as validation's walk split them) are spread
   over its consumers (``threads.py``), tasks whose partitions another member still owns are withheld
   (decided by task when no partition belongs to two tasks, ``ownership.TaskOwnership``), and each
   client's follow-up is put on the consumer that carries it (``followups.py``).
5. ``on_assignment_computed`` sees the complete group assignment, consumers included, as Kafka's
   callback sees the assignment it would send; then an invalid assignment fails the rebalance.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Container, Mapping
from dataclasses import dataclass
from itertools import filterfalse
from operator import itemgetter
from types import MappingProxyType
from typing import Any, cast

from taskassign.assignors.base import TaskAssignor
from taskassign.errors import InvalidAssignmentError, TaskassignError, TaskAssignmentException
from taskassign.ids import ProcessId, TaskId
from taskassign.internals.gc_pause import gc_paused
from taskassign.internals.java_order import hash_iteration_order
from taskassign.leader.followups import IMMEDIATE_FOLLOWUP_MS, client_assignments
from taskassign.leader.ownership import (
    PartitionOwnership,
    TaskOwnership,
    ownership_from_state,
    task_ownership_from_state,
)
from taskassign.leader.threads import distribute_client, new_client_threads_input
from taskassign.model import (
    ACTIVE,
    LATEST_OFFSET,
    UNKNOWN_OFFSET_SUM,
    ApplicationState,
    AssignmentError,
    ConsumerAssignment,
    GroupAssignment,
    GroupSubscription,
    KafkaStreamsAssignment,
    KafkaStreamsState,
    SortedFrozenSet,
    TaskAssignment,
)
from taskassign.task_assignment_utils import identity_assignment
from taskassign.validation import CompletenessReport, check_completeness, validate_and_split

__all__ = ("IMMEDIATE_FOLLOWUP_MS", "RebalanceResult", "rebalance")

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
    #: The Kafka release line reproduced (the configs' ``kafka.version``).
    kafka_version: str | None = None


def rebalance(
    state: ApplicationState,
    assignor: TaskAssignor,
    *,
    assignor_name: str | None = None,
    leader: ProcessId | None = None,
    raise_on_error: bool = True,
    fallback_factory: Callable[[str], TaskAssignor] | None = None,
    ownership: PartitionOwnership | None = None,
    distribute_threads: bool = True,
) -> RebalanceResult:
    """Run one rebalance of ``state`` with ``assignor`` as Kafka's group leader would.

    ``leader`` is the leader's own client (default: the first in ProcessId order). With
    ``raise_on_error`` an invalid assignment raises InvalidAssignmentError after the callback ran;
    without it the result carries the error. ``fallback_factory`` builds the assignor named by an
    assignor's ``fallback_when_lags_unknown`` when changelog end offsets are unknown. ``ownership``
    is who owns which partition now (default: derived from the state, see ``ownership.py``);
    ``distribute_threads=False`` skips the thread level (``GroupAssignment.consumers`` stays None).
    """
    with gc_paused():  # a rebalance allocates much and frees little (internals.gc_pause)
        return _rebalance(state, assignor, assignor_name, leader, raise_on_error, fallback_factory, ownership,
                          distribute_threads)


def _rebalance(
    state: ApplicationState,
    assignor: TaskAssignor,
    assignor_name: str | None,
    leader: ProcessId | None,
    raise_on_error: bool,
    fallback_factory: Callable[[str], TaskAssignor] | None,
    ownership: PartitionOwnership | None,
    distribute_threads: bool,
) -> RebalanceResult:
    name = assignor_name or getattr(assignor, "name", "") or type(assignor).__name__
    fallback_name = getattr(assignor, "fallback_when_lags_unknown", None)
    if (fallback_name and fallback_factory is not None
            and UNKNOWN_OFFSET_SUM in state.changelog_end_offset_sums.values()):  # not lag_computation_successful
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

    error, completeness, split = validate_and_split(state, task_assignment)
    subscription = GroupSubscription(state)
    callback = getattr(assignor, "on_assignment_computed", None)
    if error in _FATAL_ERRORS:
        empty = GroupAssignment(MappingProxyType({}))
        if callable(callback):
            callback(empty, subscription, error)
        if raise_on_error:
            raise InvalidAssignmentError(error, name)
        return RebalanceResult(name, error, empty, task_assignment, task_assignment.probing_rebalance_needed,
                               completeness, fallback_reason, state.configs.kafka_version)

    clients = client_assignments(state, task_assignment, leader)
    consumers = None
    if distribute_threads:
        by_task = task_ownership_from_state(state) if ownership is None else None
        end_of = _getter(state.changelog_end_offset_sums)
        # no stateless task, and the split names only the application's tasks (an error other than an active placed
        # twice means the walk found every task known)
        all_stateful = (len(state.stateful_task_ids) == len(state.tasks)
                        and error is not AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES)
        if by_task is not None:
            consumers = {pid: _consumer_assignments(state, a, split.get(pid), by_task, None, end_of, all_stateful)
                         for pid, a in clients.items()}
        else:
            owned = ownership if ownership is not None else ownership_from_state(state)
            sources = _source_partitions(state) if owned.all_owned else {}  # only read to withhold owned ones
            consumers = {pid: _consumer_assignments(state, a, split.get(pid), owned, sources, end_of, all_stateful)
                         for pid, a in clients.items()}
    group = GroupAssignment(MappingProxyType(clients), consumers)  # already in ProcessId order
    if callable(callback):
        callback(group, subscription, error)
    if error is not AssignmentError.NONE and raise_on_error:
        raise InvalidAssignmentError(error, name)
    entries = task_assignment.assignments
    if len({entry.process_id for entry in entries} & clients.keys()) != len(entries):
        # an entry was dropped (unknown client) or overwritten (a later entry for the same client)
        completeness = check_completeness(state, TaskAssignment(tuple(clients.values())))
    return RebalanceResult(name, error, group, task_assignment, task_assignment.probing_rebalance_needed,
                           completeness, fallback_reason, state.configs.kafka_version)


def _source_partitions(state: ApplicationState) -> dict[TaskId, tuple[tuple[str, int], ...]]:
    return {t: info.source_topic_partitions for t, info in state.tasks.items()}


def _consumer_assignments(
    state: ApplicationState,
    assignment: KafkaStreamsAssignment,
    split: tuple[list[TaskId], list[TaskId]] | None,
    ownership: PartitionOwnership | TaskOwnership,
    source_partitions: Mapping[TaskId, tuple[tuple[str, int], ...]] | None = None,
    end_of: Callable[[TaskId], int | None] | None = None,
    all_stateful: bool = False,
) -> Mapping[str, ConsumerAssignment]:
    """One client's tasks over its consumers, with the client's follow-up on the consumer carrying it.

    Kafka's collections: stateful and stateless actives are HashSets filled in TaskId order, the
    standbys a sorted set; that order decides only which thread gets which leftover, so
    the HashSet order is computed only when leftovers need it. ``split``: the client's actives and standbys as
    validation's walk found them (None: the assignor left the client out). ``end_of``: the application's changelog
    end offset sums' ``get``. ``all_stateful``: every task of ``split`` has a changelog (a third of a fleet's
    applications have no stateless task), so none is looked up.
    """
    pid = assignment.process_id
    client = state.clients[pid]
    stateful = state.stateful_task_ids.members
    if split is None:  # a client the assignor left out
        split = [t for t, a in assignment.tasks.items() if a.type is ACTIVE], \
            [t for t, a in assignment.tasks.items() if a.type is not ACTIVE]
    active, standby = split  # TaskId order
    stateful_active: tuple[TaskId, ...]
    stateless_active: tuple[TaskId, ...] = ()
    if all_stateful:
        stateful_active = tuple(active)
    else:
        stateful_active = tuple(filter(stateful.__contains__, active))
        if len(stateful_active) < len(active):
            stateless_active = tuple(filterfalse(stateful.__contains__, active))
    consumers = client.consumer_client_ids
    standbys = tuple(standby)
    by_lag = _prev_tasks_by_lag(client, assignment.tasks, end_of)
    previous_standby = client.previous_standby_tasks.members
    deadline = assignment.followup_rebalance_deadline
    if isinstance(ownership, TaskOwnership):
        threads = new_client_threads_input(consumers, stateful_active, standbys, stateless_active, by_lag,
                                           previous_standby, stateful, hash_iteration_order, deadline,
                                           owned_tasks=ownership.owned, own_tasks=ownership.of(pid))
    else:
        of_client = ownership.of(pid)
        threads = new_client_threads_input(consumers, stateful_active, standbys, stateless_active, by_lag,
                                           previous_standby, stateful, hash_iteration_order, deadline,
                                           source_partitions=source_partitions or {},
                                           owner_in_client=of_client.by_consumer,
                                           owned_by_client_unattributed=of_client.unattributed,
                                           owned_in_group=ownership.all_owned)
    return MappingProxyType(distribute_client(threads))


def _prev_tasks_by_lag(client: KafkaStreamsState, assigned: Container[TaskId],
                       end_of: Callable[[TaskId], int | None] | None = None) -> dict[str, tuple[TaskId, ...]]:
    """``client.prev_tasks_by_lag(consumer)`` for each of its consumers that reported tasks (the thread level reads
    no other), restricted to the tasks ``assigned`` to the client (the thread level looks for no other in them),
    with the lag (``model.compute_lag``) written out and a stable sort by lag alone: the reported tasks come in
    TaskId order, so ties stay in it. ``end_of``: ``client.changelog_end_offset_sums.get`` (the application's, which
    a caller asking for every client passes once)."""
    previous = client.consumer_previous_tasks
    if not previous:
        return {}
    ends = client.changelog_end_offset_sums
    reported = [c for c in client.consumer_client_ids if c in previous]
    if ends is None or not client.lags_available:  # the model's own method says why there are no lags
        return {c: tuple(t for t in client.prev_tasks_by_lag(c) if t in assigned) for c in reported}
    if end_of is None:
        end_of = _getter(ends)
    offset_of: Callable[[TaskId, int], int] = _getter(client.task_offset_sums)
    out: dict[str, tuple[TaskId, ...]] = {}
    for consumer in reported:
        tasks: Collection[TaskId] = previous[consumer]
        if not isinstance(tasks, SortedFrozenSet):
            out[consumer] = tuple(t for t in client.prev_tasks_by_lag(consumer) if t in assigned)
            continue
        keyed = []
        for t in tasks:  # TaskId order
            end = end_of(t) if t in assigned else None
            if end is not None:
                offset = offset_of(t, 0)
                keyed.append((offset if offset < 0 and offset in _KEPT_LAGS else end if end < offset else end - offset,
                              t))
        keyed.sort(key=_LAG)
        out[consumer] = tuple(map(_TASK, keyed))
    return out


def _getter(mapping: Mapping[TaskId, int]) -> Callable[..., Any]:
    """``mapping.get``, as a dict's own: a MappingProxyType's ``get`` looks the dict's ``get`` up by name on every
    call, and its ``copy()`` is the dict's, made at C speed (the loop above asks once per reported task)."""
    if isinstance(mapping, MappingProxyType):
        return cast(dict[TaskId, int], mapping.copy()).get
    return mapping.get


_LAG, _TASK = itemgetter(0), itemgetter(1)
#: Offset sums that are their own lag (running active, unknown), as in ``model.compute_lag``.
_KEPT_LAGS = frozenset((LATEST_OFFSET, UNKNOWN_OFFSET_SUM))
