"""Interactive-query metadata: which host serves which partitions (``AssignmentInfo``'s ``partitionsByHost`` and
``standbyPartitionsByHost``).

Every member receives the same two maps, built from the client-level assignment (before any task is
withheld for cooperative rebalancing, so withheld tasks are listed at their new host, as in Kafka):
``partitions_by_host`` maps each client's ``application.server`` to the source partitions of its
active tasks, ``standby_partitions_by_host`` to those of its standby tasks. Clients without an
endpoint contribute nothing; a client with an endpoint but no tasks still gets an (empty) entry.

Kafka writes both maps as it holds them, so their order is part of the bytes every member receives:
the maps are ``HashMap``s of ``HostInfo`` filled in the leader's client order, each host's partitions a
``HashSet`` filled task by task (the client's tasks in ``TaskId`` order, as Kafka's internal assignors
keep them in a ``TreeSet``; a KIP-924 assignor's tasks arrive as a ``HashSet``), each task's partitions
in the partition grouper's order. This module reproduces those orders.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

from taskassign.ids import ProcessId, TaskId
from taskassign.internals.java_order import hash_iteration_order
from taskassign.model import KafkaStreamsAssignment
from taskassign.wire.types import HostInfo, TopicPartition, topic_partition_java_hash

__all__ = ("HostMaps", "TaskOrder", "host_maps", "java_partition_set")

HostMap = tuple[tuple[HostInfo, tuple[TopicPartition, ...]], ...]
#: How a client's assigned tasks iterate in Kafka's ClientState (TaskId order for the internal assignors).
TaskOrder = Callable[[Iterable[TaskId]], Sequence[TaskId]]


@dataclass(frozen=True, slots=True)
class HostMaps:
    """The two host maps in the order Kafka writes them; ``collisions`` lists endpoints two clients share."""

    partitions_by_host: HostMap = ()
    standby_partitions_by_host: HostMap = ()
    collisions: tuple[HostInfo, ...] = ()


def java_partition_set(partitions: Iterable[TopicPartition]) -> tuple[TopicPartition, ...]:
    """The iteration order of ``new HashSet<>()`` after adding ``partitions`` in this order."""
    return tuple(hash_iteration_order(partitions, hash_of=topic_partition_java_hash))


def host_maps(
    assignments: Mapping[ProcessId, KafkaStreamsAssignment],
    hosts: Mapping[ProcessId, HostInfo | None],
    task_partitions: Mapping[TaskId, Sequence[TopicPartition]],
    *,
    client_order: Sequence[ProcessId] | None = None,
    task_order: TaskOrder = sorted,
) -> HostMaps:
    """Build both maps. ``client_order`` is the leader's client order (its ``HashMap`` of process ids;
    default: ProcessId order); ``task_partitions`` gives each task's source partitions in the partition
    grouper's order. When two clients share an endpoint the later one wins, the endpoint keeps the
    position the first one gave it (a Java ``put`` of an existing key), and it is reported in ``collisions``."""
    active: dict[HostInfo, tuple[TopicPartition, ...]] = {}
    standby: dict[HostInfo, tuple[TopicPartition, ...]] = {}
    collisions: set[HostInfo] = set()
    for pid in client_order if client_order is not None else sorted(assignments):
        host = hosts.get(pid)
        assignment = assignments.get(pid)
        if host is None or assignment is None:
            continue
        if host in active:
            collisions.add(host)
        active[host] = _partitions(task_order(assignment.active_tasks()), task_partitions)
        standby[host] = _partitions(task_order(assignment.standby_tasks()), task_partitions)
    order = hash_iteration_order(list(active), hash_of=HostInfo.java_hash)
    return HostMaps(tuple((h, active[h]) for h in order), tuple((h, standby[h]) for h in order),
                    tuple(sorted(collisions)))


def _partitions(
    task_ids: Iterable[TaskId], task_partitions: Mapping[TaskId, Sequence[TopicPartition]]
) -> tuple[TopicPartition, ...]:
    return java_partition_set(chain.from_iterable(task_partitions.get(t, ()) for t in task_ids))
