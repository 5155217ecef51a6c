"""The rack-aware cost model (KIP-925; Kafka's ``RackAwareTaskAssignor``).

Placing task t on client c costs ``traffic_cost`` for every relevant partition of t without a replica on
c's rack, plus ``non_overlap_cost`` if c is not t's current holder. Which partitions are relevant depends
on the optimisation: the internal active optimiser counts source partitions, the public one every
partition of the task, standby optimisation the changelog partitions.

Because the traffic part depends only on the client's *rack*, a task is described by how many of its
partitions have a replica on each rack; that is what lets the fast solver give a task arcs to racks
instead of to every client. ``RackTable`` keeps this per task in dicts (for single lookups) and in CSR
arrays (for the vectorised graph construction of 10^5-task applications).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from operator import attrgetter
from types import MappingProxyType

import numpy as np

from taskassign.errors import RackAwareOptimizationError
from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState, TaskInfo, TaskTopicPartition

__all__ = (
    "DEFAULT_NON_OVERLAP_COST",
    "DEFAULT_STICKY_NON_OVERLAP_COST",
    "DEFAULT_STICKY_TRAFFIC_COST",
    "DEFAULT_TRAFFIC_COST",
    "STATELESS_NON_OVERLAP_COST",
    "STATELESS_TRAFFIC_COST",
    "CostModel",
    "PartitionScope",
    "RackTable",
)

#: Kafka's costs when ``rack.aware.assignment.traffic_cost`` / ``non_overlap_cost`` are not configured:
#: the high-availability assignor (and the optimisers of ``taskassign optimize``) ...
DEFAULT_TRAFFIC_COST = 10
DEFAULT_NON_OVERLAP_COST = 1
#: ... and the sticky assignors (legacy and KIP-924), which weigh stickiness above traffic.
DEFAULT_STICKY_TRAFFIC_COST = 1
DEFAULT_STICKY_NON_OVERLAP_COST = 10
#: Fixed costs of the internal optimiser's stateless-active pass (configured costs are ignored for it).
STATELESS_TRAFFIC_COST = 1
STATELESS_NON_OVERLAP_COST = 0


class PartitionScope(enum.Enum):
    """Which partitions of a task carry traffic for an optimisation."""

    #: Kafka's internal active optimiser (HA, legacy sticky): the task's input partitions.
    SOURCE = "source"
    #: The public ``optimize_rack_aware_active_tasks``: every partition of the task.
    ALL = "all"
    #: Standby optimisation (both paths): the changelog partitions a standby restores from.
    CHANGELOG = "changelog"

    def partitions(self, info: TaskInfo) -> tuple[TaskTopicPartition, ...]:
        result: tuple[TaskTopicPartition, ...] = _PARTITIONS[self](info)
        return result


_LABELS = {PartitionScope.SOURCE: "source partition", PartitionScope.ALL: "partition",
           PartitionScope.CHANGELOG: "changelog partition"}
_PARTITIONS = {
    PartitionScope.SOURCE: attrgetter("source_partitions"),
    PartitionScope.ALL: attrgetter("topic_partitions"),
    PartitionScope.CHANGELOG: attrgetter("changelog_partitions"),
}


def _frozen_array(values: list[int]) -> np.ndarray:
    array = np.asarray(values, dtype=np.int64)
    array.flags.writeable = False
    return array


@dataclass(frozen=True, slots=True)
class RackTable:
    """Every task's relevant partitions, per rack, for one scope; racks are interned as integers.

    ``on_rack[t][r]`` = partitions of t with a replica on rack r. CSR view: task t is row ``row[t]``;
    its racks are ``rack_ids[indptr[row]:indptr[row + 1]]`` with counts in ``counts`` alike.
    ``unknown_racks[t]`` names t's first partition whose replica racks are unknown or empty (what makes
    rack awareness impossible); ``problems[t]`` says why t cannot be costed strictly (that, or no
    relevant partition at all).
    """

    scope: PartitionScope
    racks: tuple[str, ...]
    client_racks: Mapping[ProcessId, int | None]
    partitions: Mapping[TaskId, int]
    on_rack: Mapping[TaskId, Mapping[int, int]]
    problems: Mapping[TaskId, str]
    unknown_racks: Mapping[TaskId, str]
    row: Mapping[TaskId, int]
    indptr: np.ndarray
    rack_ids: np.ndarray
    counts: np.ndarray
    partition_counts: np.ndarray

    @classmethod
    def build(cls, state: ApplicationState, scope: PartitionScope) -> RackTable:
        getter = _PARTITIONS[scope]
        index: dict[str, int] = {}
        client_racks: dict[ProcessId, int | None] = {}
        for pid, client in state.clients.items():
            rack = client.rack_id
            client_racks[pid] = None if rack is None else index.setdefault(rack, len(index))
        partitions: dict[TaskId, int] = {}
        on_rack: dict[TaskId, dict[int, int]] = {}
        problems: dict[TaskId, str] = {}
        unknown: dict[TaskId, str] = {}
        row: dict[TaskId, int] = {}
        indptr: list[int] = [0]
        rack_col: list[int] = []
        count_col: list[int] = []
        # Partitions share few distinct rack sets (readers share equal sets): each is interned once, in
        # order of first appearance, as Kafka's numbering wants (10^5 tasks: ~0.4 s less).
        interned: dict[tuple[str, ...], tuple[int, ...]] = {}
        for tid, info in state.tasks.items():
            parts = getter(info)
            counts: dict[int, int] = {}
            for p in parts:
                names = p.rack_ids
                racks = () if names is None else names.items
                if not racks and tid not in unknown:
                    unknown[tid] = (f"{_LABELS[scope]} {p.topic}-{p.partition} has "
                                    f"{'no rack information' if names is None else 'no replica with a rack'}")
                    problems[tid] = (f"TopicPartition {p.topic}-{p.partition} has no rack information. "
                                     "Maybe forgot to call canEnableRackAwareAssignor first")
                ids = interned.get(racks)
                if ids is None:
                    ids = interned[racks] = tuple(index.setdefault(name, len(index)) for name in racks)
                if not counts:
                    counts = dict.fromkeys(ids, 1)  # (a rack set has no repeats)
                else:
                    for i in ids:
                        counts[i] = counts.get(i, 0) + 1
            if not parts:
                problems[tid] = f"task {tid} has no {_LABELS[scope]}s to compute a rack-aware cost from"
            row[tid] = len(partitions)
            partitions[tid] = len(parts)
            on_rack[tid] = counts
            rack_col.extend(counts)
            count_col.extend(counts.values())
            indptr.append(len(rack_col))
        return cls(
            scope, tuple(index), MappingProxyType(client_racks), MappingProxyType(partitions),
            MappingProxyType(on_rack), MappingProxyType(problems), MappingProxyType(unknown), MappingProxyType(row),
            _frozen_array(indptr), _frozen_array(rack_col), _frozen_array(count_col),
            _frozen_array(list(partitions.values())),
        )

    def missing(self, task: TaskId, rack: int) -> int:
        """Relevant partitions of ``task`` without a replica on ``rack``."""
        return self.partitions[task] - self.on_rack[task].get(rack, 0)

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
        problems = self.problems
        if problems and not problems.keys().isdisjoint(tasks):  # (checked in C first: 10^3 pair problems)
            for t in tasks:
                if t in problems:
                    raise RackAwareOptimizationError(problems[t])


@dataclass(frozen=True, slots=True)
class CostModel:
    """The two cost weights over a RackTable: ``cost(t, rack, moved)``."""

    table: RackTable
    traffic_cost: int
    non_overlap_cost: int

    def traffic(self, task: TaskId, rack: int) -> int:
        """``traffic_cost`` x partitions of ``task`` without a replica on ``rack``."""
        return self.traffic_cost * self.table.missing(task, rack)

    def cost(self, task: TaskId, rack: int, moved: bool) -> int:
        return self.traffic(task, rack) + (self.non_overlap_cost if moved else 0)
