"""Interactive-query metadata: which host serves which partitions (host-and-wire spec 5.6).

Every member receives the same two maps, built from the client-level assignment (before any task is
withheld for cooperative rebalancing, so withheld tasks are listed at their new host, as in Kafka):
``partitions_by_host`` maps each client's ``application.server`` to the source partitions of its
active tasks, ``standby_partitions_by_host`` to those of its standby tasks. Clients without an
endpoint contribute nothing; a client with an endpoint but no tasks still gets an (empty) entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from taskassign.ids import ProcessId, TaskId
from taskassign.model import KafkaStreamsAssignment, TaskInfo
from taskassign.wire.types import HostInfo, TopicPartition

__all__ = ("HostMaps", "host_maps")

HostMap = tuple[tuple[HostInfo, tuple[TopicPartition, ...]], ...]


@dataclass(frozen=True, slots=True)
class HostMaps:
    """The two host maps, hosts and partitions sorted; ``collisions`` lists endpoints two clients share."""

    partitions_by_host: HostMap = ()
    standby_partitions_by_host: HostMap = ()
    collisions: tuple[HostInfo, ...] = ()


def host_maps(
    assignments: Mapping[ProcessId, KafkaStreamsAssignment],
    hosts: Mapping[ProcessId, HostInfo | None],
    tasks: Mapping[TaskId, TaskInfo],
) -> HostMaps:
    """Build both maps; when two clients share an endpoint the later one in ProcessId order wins
    (Kafka: the later in its HashMap order) and the endpoint is reported in ``collisions``."""
    active: dict[HostInfo, tuple[TopicPartition, ...]] = {}
    standby: dict[HostInfo, tuple[TopicPartition, ...]] = {}
    collisions: set[HostInfo] = set()
    for pid in sorted(assignments):
        host = hosts.get(pid)
        if host is None:
            continue
        if host in active:
            collisions.add(host)
        a = assignments[pid]
        active[host] = _partitions(a.active_tasks(), tasks)
        standby[host] = _partitions(a.standby_tasks(), tasks)
    return HostMaps(tuple(sorted(active.items())), tuple(sorted(standby.items())), tuple(sorted(collisions)))


def _partitions(task_ids: Iterable[TaskId], tasks: Mapping[TaskId, TaskInfo]) -> tuple[TopicPartition, ...]:
    parts: set[TopicPartition] = set()
    for t in task_ids:
        info = tasks.get(t)
        if info is not None:
            parts.update(p.topic_partition for p in info.source_partitions)
    return tuple(sorted(parts))
