"""The rack-aware cost model (assignor spec 7.2).

Placing task t on client c costs ``traffic_cost`` for every relevant partition of t without a replica on
c's rack, plus ``non_overlap_cost`` if c is not t's current holder. Which partitions are relevant depends
on the optimisation: the internal active optimiser counts source partitions, the public one every
partition of the task, standby optimisation the changelog partitions.

Because the traffic part depends only on the client's *rack*, a task is described by how many of its
partitions have a replica on each rack (``TaskRacks``); that is what lets the fast solver give a task
arcs to racks instead of to every client.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from taskassign.errors import RackAwareOptimizationError
from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState, TaskInfo, TaskTopicPartition

__all__ = ("CostModel", "PartitionScope", "RackTable", "TaskRacks")


class PartitionScope(enum.Enum):
    """Which partitions of a task carry traffic for an optimisation."""

    #: Kafka's internal active optimiser (HA, legacy sticky): the task's input partitions.
    SOURCE = "source"
    #: The public ``optimize_rack_aware_active_tasks``: every partition of the task.
    ALL = "all"
    #: Standby optimisation (both paths): the changelog partitions a standby restores from.
    CHANGELOG = "changelog"

    def partitions(self, info: TaskInfo) -> tuple[TaskTopicPartition, ...]:
        if self is PartitionScope.SOURCE:
            return info.source_partitions
        if self is PartitionScope.CHANGELOG:
            return info.changelog_partitions
        return info.topic_partitions


@dataclass(frozen=True, slots=True)
class TaskRacks:
    """A task's relevant partitions: how many there are and how many have a replica on each rack.

    ``problem`` is set when the task cannot be costed strictly (no relevant partition, or a partition
    without rack information); the internal optimiser then refuses it, as Kafka does.
    """

    partitions: int
    on_rack: Mapping[int, int]
    problem: str | None = None

    def missing(self, rack: int) -> int:
        """Relevant partitions without a replica on ``rack``."""
        return self.partitions - self.on_rack.get(rack, 0)


@dataclass(frozen=True, slots=True)
class RackTable:
    """Racks interned as integers (sorted by name) and every task's ``TaskRacks`` for one scope."""

    racks: tuple[str, ...]
    tasks: Mapping[TaskId, TaskRacks]
    client_racks: Mapping[ProcessId, int | None]
    scope: PartitionScope

    @classmethod
    def build(cls, state: ApplicationState, scope: PartitionScope) -> RackTable:
        names: set[str] = {c.rack_id for c in state.clients.values() if c.rack_id is not None}
        for info in state.tasks.values():
            for p in scope.partitions(info):
                if p.rack_ids:
                    names.update(p.rack_ids)
        racks = tuple(sorted(names))
        index = {name: i for i, name in enumerate(racks)}
        tasks = {tid: _task_racks(info, scope, index) for tid, info in state.tasks.items()}
        client_racks = {
            pid: None if c.rack_id is None else index[c.rack_id] for pid, c in state.clients.items()
        }
        return cls(racks, MappingProxyType(tasks), MappingProxyType(client_racks), scope)

    def rack_of(self, client: ProcessId) -> int:
        """The client's rack index; a client without a rack cannot be costed."""
        rack = self.client_racks.get(client)
        if rack is None:
            raise RackAwareOptimizationError(
                f"client {client} has no rack (client.rack); rack-aware optimisation needs every client's "
                "rack. Maybe forgot to check that rack awareness can be enabled first"
            )
        return rack

    def require(self, tasks: Iterable[TaskId]) -> None:
        """Raise Kafka's error for the first task that cannot be costed strictly (internal optimiser)."""
        for t in tasks:
            problem = self.tasks[t].problem
            if problem is not None:
                raise RackAwareOptimizationError(problem)


def _task_racks(info: TaskInfo, scope: PartitionScope, index: Mapping[str, int]) -> TaskRacks:
    partitions = scope.partitions(info)
    on_rack: dict[int, int] = {}
    problem = None
    if not partitions:
        problem = f"task {info.id} has no {scope.value} partitions to compute a rack-aware cost from"
    for p in partitions:
        if p.rack_ids is None:
            problem = problem or (f"TopicPartition {p.topic}-{p.partition} has no rack information. "
                                  "Maybe forgot to call canEnableRackAwareAssignor first")
            continue
        for rack in p.rack_ids:
            i = index[rack]
            on_rack[i] = on_rack.get(i, 0) + 1
    return TaskRacks(len(partitions), MappingProxyType(dict(sorted(on_rack.items()))), problem)


@dataclass(frozen=True, slots=True)
class CostModel:
    """The two cost weights over a RackTable: ``cost(t, rack, moved)``."""

    table: RackTable
    traffic_cost: int
    non_overlap_cost: int

    def traffic(self, task: TaskId, rack: int) -> int:
        """``traffic_cost`` x partitions of ``task`` without a replica on ``rack``."""
        return self.traffic_cost * self.table.tasks[task].missing(rack)

    def cost(self, task: TaskId, rack: int, moved: bool) -> int:
        return self.traffic(task, rack) + (self.non_overlap_cost if moved else 0)
