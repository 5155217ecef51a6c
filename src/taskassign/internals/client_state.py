"""Kafka's ``ClientState``: the mutable per-client scratch state of the internal assignors.

The high-availability assignor and the standby assignors mutate these while they work; the
immutable KIP-924 values are built only at the end. To keep the inner loops cheap, both sides are
numbered: a client is its ``index`` in ProcessId order and a task is its position in the
application's TaskId order (``task_ids``). Comparing ``(load, index)`` pairs or sorting task numbers
then orders exactly like Java's ``UUID.compareTo`` and ``TaskId.compareTo``,
at the cost of an int comparison.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from taskassign.errors import UserInputError
from taskassign.ids import ProcessId, TaskId
from taskassign.model import (
    ACTIVE,
    STANDBY,
    ApplicationState,
    AssignedTask,
    KafkaStreamsAssignment,
    TaskAssignment,
    shared_task_column,
)

__all__ = ("ClientState", "client_states", "task_numbers", "to_task_assignment")


class ClientState:
    """One client's capacity, tags and the tasks (numbers) assigned to it so far, active and standby.

    Like Kafka's, the mutators refuse to give a client a task it already holds in either role, or to
    take away one it does not hold: the algorithms rely on never doing either.
    """

    __slots__ = ("active", "capacity", "index", "process_id", "rack", "standby", "tags")

    def __init__(
        self,
        index: int,
        process_id: ProcessId,
        capacity: int,
        tags: Mapping[str, str] | None = None,
        rack: str | None = None,
    ) -> None:
        self.index = index
        self.process_id = process_id
        self.capacity = capacity
        self.tags: Mapping[str, str] = tags if tags is not None else {}
        self.rack = rack
        self.active: set[int] = set()
        self.standby: set[int] = set()

    def __repr__(self) -> str:
        return (f"ClientState({self.process_id}, capacity={self.capacity}, "
                f"active={sorted(self.active)}, standby={sorted(self.standby)})")

    def assigned_count(self) -> int:
        return len(self.active) + len(self.standby)

    def assigned_load(self) -> float:
        """Tasks (active and standby) per thread, in IEEE double precision as Java computes it."""
        return (len(self.active) + len(self.standby)) / self.capacity

    def active_load(self) -> float:
        return len(self.active) / self.capacity

    def has_assigned(self, task: int) -> bool:
        return task in self.active or task in self.standby

    def assign_active(self, task: int) -> None:
        self._check_free(task)
        self.active.add(task)

    def assign_standby(self, task: int) -> None:
        self._check_free(task)
        self.standby.add(task)

    def unassign_active(self, task: int) -> None:
        if task not in self.active:
            raise AssertionError(f"client {self.process_id} does not hold task #{task} as active")
        self.active.remove(task)

    def unassign_standby(self, task: int) -> None:
        if task not in self.standby:
            raise AssertionError(f"client {self.process_id} does not hold task #{task} as standby")
        self.standby.remove(task)

    def _check_free(self, task: int) -> None:
        if task in self.active or task in self.standby:
            raise AssertionError(f"client {self.process_id} already holds task #{task}")


def client_states(application_state: ApplicationState) -> list[ClientState]:
    """A fresh ClientState for every client, in ProcessId order, with nothing assigned yet."""
    states = []
    for index, (pid, state) in enumerate(application_state.kafka_streams_states(False).items()):
        capacity = state.num_processing_threads
        if capacity <= 0:
            raise UserInputError(f"client {pid} has no consumers (threads), so it cannot run tasks")
        states.append(ClientState(index, pid, capacity, state.client_tags, state.rack_id))
    return states


def task_numbers(task_ids: Sequence[TaskId]) -> dict[TaskId, int]:
    """Each task's number: its position in ``task_ids`` (which is in TaskId order)."""
    return dict(zip(task_ids, range(len(task_ids)), strict=True))


def to_task_assignment(
    clients: Sequence[ClientState],
    task_ids: Sequence[TaskId],
    probing_rebalance_needed: bool = False,
    details: Mapping[str, object] | None = None,
) -> TaskAssignment:
    """The immutable result: one KafkaStreamsAssignment per client, in ProcessId order."""
    assignments = []
    # every task's AssignedTask as active and each standby task's as standby (a fleet's applications have a
    # third as many), the shared values read in bulk; each client's entries in TaskId order
    as_active = shared_task_column(task_ids, ACTIVE)
    standby_numbers = sorted(set().union(*(client.standby for client in clients)))
    as_standby = dict(zip(standby_numbers, shared_task_column([task_ids[n] for n in standby_numbers], STANDBY),
                          strict=True))
    task_of = task_ids.__getitem__
    for client in clients:
        active, standby = client.active, client.standby
        entries: dict[TaskId, AssignedTask]
        if standby:
            entries = {task_ids[n]: as_active[n] if n in active else as_standby[n] for n in sorted(active | standby)}
        else:
            numbers = sorted(active)
            entries = dict(zip(map(task_of, numbers), map(as_active.__getitem__, numbers), strict=True))
        assignments.append(KafkaStreamsAssignment(client.process_id, MappingProxyType(entries)))
    return TaskAssignment(tuple(assignments), probing_rebalance_needed, details or {})
