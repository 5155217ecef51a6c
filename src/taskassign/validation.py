"""Checking an assignor's output: Kafka's ``validateTaskAssignment`` and a completeness report.

``validate_task_assignment`` runs Kafka's checks in Kafka's order (``TaskAssignmentUtils#validateTaskAssignment``) so
that the same broken assignment yields the same AssignmentError. Kafka accepts assignments that leave tasks
unassigned or standbys missing; ``check_completeness`` reports those separately, and
``validate_and_check_completeness`` does both from one walk over the entries (what the leader runs).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Collection, Container, Iterable, Mapping
from dataclasses import dataclass

from taskassign.ids import ProcessId, TaskId
from taskassign.model import (
    ACTIVE,
    STANDBY,
    ApplicationState,
    AssignmentError,
    TaskAssignment,
    TaskInfo,
)

__all__ = (
    "ClientSplit",
    "CompletenessReport",
    "StandbyShortfall",
    "assignment_problem",
    "check_completeness",
    "validate_and_check_completeness",
    "validate_and_split",
    "validate_task_assignment",
)

log = logging.getLogger(__name__)


def validate_task_assignment(
    state: ApplicationState, assignment: TaskAssignment, *, kafka_compat: bool | None = None
) -> AssignmentError:
    """The first problem Kafka would report for ``assignment``, or NONE.

    Order: one walk over the entries (unknown task, active assigned twice), then stateless tasks with
    standbys, then clients missing from the output, then unknown clients. Unless ``kafka_compat``
    (default: the ``taskassign.kafka.compat`` config), a last check reports a task that two entries of
    one client place as active and as standby, which Kafka lets through.
    """
    return _validate(state, assignment, _walk(state, assignment), kafka_compat)


def validate_and_check_completeness(
    state: ApplicationState, assignment: TaskAssignment, *, kafka_compat: bool | None = None
) -> tuple[AssignmentError, CompletenessReport]:
    """``validate_task_assignment`` and ``check_completeness`` of the same assignment, sharing the walk
    over its entries when every client has one entry and the walk found no error."""
    error, report, _ = validate_and_split(state, assignment, kafka_compat=kafka_compat)
    return error, report


#: Per client, the active and the standby tasks of its (last) entry, each in TaskId order.
ClientSplit = Mapping[ProcessId, tuple[list[TaskId], list[TaskId]]]


def validate_and_split(
    state: ApplicationState, assignment: TaskAssignment, *, kafka_compat: bool | None = None
) -> tuple[AssignmentError, CompletenessReport, ClientSplit]:
    """``validate_and_check_completeness``, and each entry's tasks split into actives and standbys as its walk
    made them (a later entry of a client wins, as in ``TaskAssignment.by_process``): what the leader spreads over
    the client's threads next."""
    walk = _walk(state, assignment)
    error = _validate(state, assignment, walk, kafka_compat)
    if walk.error is None and walk.unique_clients:
        return error, _report(state, walk.has_active, walk.standby_count, only_known=True), walk.split
    return error, check_completeness(state, assignment), walk.split


class _Walk:
    """Kafka's walk over the entries: which tasks have an active and how many standbys each task has (an active
    placed twice is an error, found by a second walk), unless the walk stopped at an error; and each client's
    actives and standbys."""

    __slots__ = ("error", "has_active", "split", "standby_count", "unique_clients")

    def __init__(self) -> None:
        self.error: AssignmentError | None = None
        self.has_active: set[TaskId] = set()
        self.standby_count: Counter[TaskId] = Counter()
        self.unique_clients = True
        self.split: dict[ProcessId, tuple[list[TaskId], list[TaskId]]] = {}


def _walk(state: ApplicationState, assignment: TaskAssignment) -> _Walk:
    """Entry by entry; only when the totals show an unknown task or an active placed twice does it walk
    again task by task, to report the first of them in Kafka's order."""
    tasks = state.tasks
    walk = _Walk()
    has_active, standby_count, split = walk.has_active, walk.standby_count, walk.split
    placed = 0
    no_standbys: list[TaskId] = []
    for entry in assignment.assignments:
        entries = entry.tasks
        actives = [tid for tid, assigned in entries.items() if assigned.type is ACTIVE]
        placed += len(actives)
        has_active.update(actives)
        standbys = no_standbys
        if len(actives) < len(entries):
            standbys = [tid for tid, assigned in entries.items() if assigned.type is STANDBY]
            standby_count.update(standbys)
        split[entry.process_id] = (actives, standbys)
    every = state.task_ids.members
    known = has_active <= every and standby_count.keys() <= every
    if placed != len(has_active) or not known:
        walk.error = _first_walk_error(assignment, tasks)
    walk.unique_clients = _unique_clients(assignment)
    return walk


def _validate(
    state: ApplicationState, assignment: TaskAssignment, walk: _Walk, kafka_compat: bool | None
) -> AssignmentError:
    if walk.error is not None:
        return walk.error
    compat = state.configs.kafka_compat if kafka_compat is None else kafka_compat
    tasks = state.tasks
    invalid = [tid for tid in walk.standby_count if not tasks[tid].is_stateful]
    if invalid:
        tid = min(invalid)  # Kafka checks the tasks in TaskId order and names the last entry holding it
        holder = next(e.process_id for e in reversed(assignment.assignments)
                      if tid in e.tasks and e.tasks[tid].type is STANDBY)
        log.warning("stateless task %s assigned as standby to %s", tid, holder)
        return AssignmentError.INVALID_STANDBY_TASK
    output_pids = [entry.process_id for entry in assignment.assignments]
    present = set(output_pids)
    if not present >= state.clients.keys():
        pid = next(pid for pid in state.clients if pid not in present)
        log.warning("client %s is missing from the assignment", pid)
        return AssignmentError.MISSING_PROCESS_ID
    if not state.clients.keys() >= present:
        pid = next(pid for pid in output_pids if pid not in state.clients)
        log.warning("assignment names unknown client %s", pid)
        return AssignmentError.UNKNOWN_PROCESS_ID
    if not compat:
        conflict = _active_and_standby_on_same_client(assignment)
        if conflict:
            tid, pid = conflict[0]
            log.warning("task %s is both active and standby on client %s", tid, pid)
            return AssignmentError.ACTIVE_AND_STANDBY_TASK_ASSIGNED_TO_SAME_KAFKASTREAMS
    return AssignmentError.NONE


def assignment_problem(assignment: TaskAssignment, tasks: Container[TaskId] | None = None
                       ) -> tuple[AssignmentError, str] | None:
    """The first problem ``validate_task_assignment`` would report that needs no more of the application than
    its ``tasks`` (none: the checks that need nothing): an unknown task, an active task on two clients, a task
    active and standby on one client. With the error, a sentence naming the task and clients. For readers of an
    assignment file without its application (``diff``), so that they refuse what ``validate`` refuses."""
    active_owner: dict[TaskId, ProcessId] = {}
    for entry in assignment.assignments:
        pid = entry.process_id
        for tid, assigned in entry.tasks.items():
            if tasks is not None and tid not in tasks:
                return AssignmentError.UNKNOWN_TASK_ID, f"task {tid} of client {pid} is not a task of the application"
            if assigned.type is ACTIVE:
                if tid in active_owner and active_owner[tid] != pid:
                    return (AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES,
                            f"active task {tid} is on clients {active_owner[tid]} and {pid}")
                active_owner[tid] = pid
    conflict = _active_and_standby_on_same_client(assignment)
    if conflict:
        tid, pid = conflict[0]
        return (AssignmentError.ACTIVE_AND_STANDBY_TASK_ASSIGNED_TO_SAME_KAFKASTREAMS,
                f"task {tid} is both active and standby on client {pid}")
    return None


def _first_walk_error(assignment: TaskAssignment, tasks: Mapping[TaskId, TaskInfo]) -> AssignmentError | None:
    """Kafka's walk task by task: the first unknown task or twice-assigned active."""
    active_owner: dict[TaskId, ProcessId] = {}
    for entry in assignment.assignments:
        pid = entry.process_id
        for tid, assigned in entry.tasks.items():
            if tid not in tasks:
                log.warning("assignment for client %s contains unknown task %s", pid, tid)
                return AssignmentError.UNKNOWN_TASK_ID
            if assigned.type is ACTIVE:
                if tid in active_owner:
                    log.warning("active task %s assigned to both %s and %s", tid, active_owner[tid], pid)
                    return AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES
                active_owner[tid] = pid
    return None


def _unique_clients(assignment: TaskAssignment) -> bool:
    pids = [entry.process_id for entry in assignment.assignments]
    return len(set(pids)) == len(pids)


def _active_and_standby_on_same_client(assignment: TaskAssignment) -> list[tuple[TaskId, ProcessId]]:
    if _unique_clients(assignment):  # one entry per client: its task map holds each task once
        return []
    roles: dict[tuple[ProcessId, TaskId], set[str]] = {}
    for entry in assignment.assignments:
        for tid, assigned in entry.tasks.items():
            roles.setdefault((entry.process_id, tid), set()).add(assigned.type.value)
    return sorted((tid, pid) for (pid, tid), kinds in roles.items() if len(kinds) == 2)


@dataclass(frozen=True, slots=True)
class StandbyShortfall:
    """A task with a changelog that has fewer standbys than ``num.standby.replicas`` allows."""

    task: TaskId
    wanted: int
    placed: int


@dataclass(frozen=True, slots=True)
class CompletenessReport:
    """What Kafka's validation lets through: tasks without an active, standbys short of the config."""

    unassigned_tasks: tuple[TaskId, ...]
    standby_shortfalls: tuple[StandbyShortfall, ...]
    active_and_standby_on_same_client: tuple[tuple[TaskId, ProcessId], ...]

    @property
    def is_complete(self) -> bool:
        return not (self.unassigned_tasks or self.standby_shortfalls or self.active_and_standby_on_same_client)

    def lines(self) -> list[str]:
        """Human-readable findings, one per line (empty when complete)."""
        out: list[str] = []
        if self.unassigned_tasks:
            out.append(f"{len(self.unassigned_tasks)} task(s) have no active owner: "
                       + _preview(str(t) for t in self.unassigned_tasks))
        if self.standby_shortfalls:
            out.append(f"{len(self.standby_shortfalls)} stateful task(s) have fewer standbys than configured: "
                       + _preview(f"{s.task} ({s.placed}/{s.wanted})" for s in self.standby_shortfalls))
        if self.active_and_standby_on_same_client:
            out.append("task(s) both active and standby on one client: "
                       + _preview(f"{t} on {p}" for t, p in self.active_and_standby_on_same_client))
        return out


def _preview(items: Iterable[str], limit: int = 10) -> str:
    values = list(items)
    shown = ", ".join(values[:limit])
    return shown + (f", ... (+{len(values) - limit} more)" if len(values) > limit else "")


def check_completeness(state: ApplicationState, assignment: TaskAssignment) -> CompletenessReport:
    """Report unassigned tasks and standby shortfalls; ``wanted`` = min(num.standby.replicas, clients - 1)
    for every task with a changelog (the tasks Kafka's assignors give standbys)."""
    if not _unique_clients(assignment):
        return _check_completeness_per_holder(state, assignment)
    has_active: set[TaskId] = set()
    standby_count: Counter[TaskId] = Counter()
    for entry in assignment.assignments:
        actives = [tid for tid, assigned in entry.tasks.items() if assigned.type is ACTIVE]
        has_active.update(actives)
        if len(actives) < len(entry.tasks):
            standby_count.update(tid for tid, assigned in entry.tasks.items() if assigned.type is STANDBY)
    return _report(state, has_active, standby_count)


def _report(state: ApplicationState, has_active: Collection[TaskId], standby_count: Mapping[TaskId, int],
            only_known: bool = False) -> CompletenessReport:
    """``only_known``: ``has_active`` holds tasks of the application only, so as many as it has means all."""
    task_ids = state.task_ids
    every = only_known and len(has_active) == len(task_ids)
    unassigned = () if every else tuple(t for t in task_ids if t not in has_active)
    wanted = max(0, min(state.configs.num_standby_replicas, len(state.clients) - 1))
    shortfalls = []
    stateful = state.stateful_task_ids
    if wanted and not (len(standby_count) >= len(stateful) and standby_count.keys() >= stateful.members
                       and min(standby_count.values(), default=wanted) >= wanted):
        placed = standby_count.get
        shortfalls = [StandbyShortfall(tid, wanted, placed(tid, 0)) for tid in stateful if placed(tid, 0) < wanted]
    return CompletenessReport(unassigned, tuple(shortfalls), ())


def _check_completeness_per_holder(state: ApplicationState, assignment: TaskAssignment) -> CompletenessReport:
    """The general case, where one client may appear in several entries."""
    has_active: set[TaskId] = set()
    standby_holders: dict[TaskId, set[ProcessId]] = {}
    active_holder: dict[TaskId, set[ProcessId]] = {}
    for entry in assignment.assignments:
        for tid, assigned in entry.tasks.items():
            if assigned.type is ACTIVE:
                has_active.add(tid)
                active_holder.setdefault(tid, set()).add(entry.process_id)
            elif assigned.type is STANDBY:
                standby_holders.setdefault(tid, set()).add(entry.process_id)
    unassigned = tuple(t for t in state.task_ids if t not in has_active)
    wanted = max(0, min(state.configs.num_standby_replicas, len(state.clients) - 1))
    shortfalls = []
    if wanted:
        for tid in state.stateful_task_ids:
            holders = standby_holders.get(tid, set()) - active_holder.get(tid, set())
            if len(holders) < wanted:
                shortfalls.append(StandbyShortfall(tid, wanted, len(holders)))
    return CompletenessReport(unassigned, tuple(shortfalls), tuple(_active_and_standby_on_same_client(assignment)))
