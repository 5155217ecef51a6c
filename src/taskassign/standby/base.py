"""What a standby assignor offers the high-availability assignor, and the helpers both share."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from typing import Protocol

from taskassign.assignors._client_state import ClientState
from taskassign.assignors._constrained_priority_set import ClientPool, PoolFactory
from taskassign.ids import ProcessId, TaskId

__all__ = (
    "StandbyMovePredicate",
    "StandbyTaskAssignor",
    "always_allowed",
    "log_shortfalls",
    "not_holding_by_assigned_load",
    "place_least_loaded",
)

log = logging.getLogger("taskassign.standby")

#: ``can_move(source, destination, task, active, standby)``: may a standby of ``task`` move from
#: ``source`` to ``destination``, given every client's current active and standby tasks?
StandbyMovePredicate = Callable[
    [ProcessId, ProcessId, TaskId, Mapping[ProcessId, Set[TaskId]], Mapping[ProcessId, Set[TaskId]]], bool
]


class StandbyTaskAssignor(Protocol):
    """Kafka's internal ``StandbyTaskAssignor``: place standbys, and say which standbys may move."""

    def assign(
        self,
        clients: Sequence[ClientState],
        stateful_tasks: Sequence[int],
        num_standby_replicas: int,
        make_pool: PoolFactory,
        task_ids: Sequence[TaskId],
    ) -> None:
        """Give each stateful task (task numbers, served in the given order) up to ``num_standby_replicas``
        standbys; ``task_ids[number]`` is the task's id."""

    def is_allowed_task_movement(self, source: ClientState, destination: ClientState) -> bool:
        """May any standby move from ``source`` to ``destination`` (thread balancing)?"""

    def is_allowed_task_movement_for_task(
        self, source: ClientState, destination: ClientState, task: int, clients: Sequence[ClientState]
    ) -> bool:
        """May the standby of ``task`` move from ``source`` to ``destination`` (rack optimisation)?"""

    def standby_move_predicate(self, clients: Sequence[ClientState]) -> StandbyMovePredicate:
        """The same question on ProcessIds and assignment mappings, for the rack-aware optimiser."""


def always_allowed(
    source: ProcessId, destination: ProcessId, task: TaskId,
    active: Mapping[ProcessId, Set[TaskId]], standby: Mapping[ProcessId, Set[TaskId]],
) -> bool:
    """The move predicate of standby assignors that do not care where standbys sit."""
    return True


def not_holding_by_assigned_load(
    clients: Sequence[ClientState],
) -> tuple[Callable[[int, int], bool], Callable[[int], float]]:
    """Constraint "does not hold the task" and weight "assigned tasks per thread" over client indices."""
    actives = [c.active for c in clients]
    standbys = [c.standby for c in clients]
    capacities = [c.capacity for c in clients]

    def not_holding(c: int, task: int) -> bool:
        return task not in actives[c] and task not in standbys[c]

    def assigned_load(c: int) -> float:
        return (len(actives[c]) + len(standbys[c])) / capacities[c]

    return not_holding, assigned_load


def place_least_loaded(clients: Sequence[ClientState], pool: ClientPool, task: int, remaining: int) -> int:
    """Kafka's ``pollClientAndMaybeAssignAndUpdateRemainingStandbyTasks``: place up to ``remaining``
    standbys of ``task`` on the lightest clients the pool allows (its constraint: not holding the task);
    returns how many could not be placed."""
    poll, offer = pool.poll, pool.offer
    while remaining > 0:
        client = poll(task)
        if client is None:
            break
        clients[client].standby.add(task)
        remaining -= 1
        offer(client)
    return remaining


def log_shortfalls(tasks: Iterable[TaskId], wanted: int) -> None:
    """One warning for all tasks that got fewer standbys than configured (Kafka logs one per task)."""
    short = list(tasks)
    if short:
        shown = ", ".join(str(t) for t in short[:10]) + (", ..." if len(short) > 10 else "")
        log.warning("not enough clients to place %d standby replica(s) of %d task(s): %s",
                    wanted, len(short), shown)
