"""Which member owns which partition before a rebalance: what cooperative rebalancing must not move
from one member to another in a single step (KIP-429's cooperative protocol).

From the wire, ownership is exact: every member's subscription lists its owned partitions. From a
scenario file it is derived: a client owns the source partitions of its previous active tasks; the
owning consumer is the one whose ``consumer_previous`` lists the task (a later consumer in sorted
order wins, as a later writer does in Kafka), or the only consumer of a one-thread client. A
partition whose consumer stays unknown counts as owned by the client: it is withheld from other
clients' consumers, never from this client's own. Under the EAGER protocol members give up all
partitions before joining, so nothing is owned.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from types import MappingProxyType

from taskassign.configs import REBALANCE_PROTOCOL, REBALANCE_PROTOCOL_EAGER
from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState, SortedFrozenSet

__all__ = (
    "ClientOwnership", "PartitionOwnership", "TaskOwnership", "ownership_from_state", "task_ownership_from_state",
)

TopicPartition = tuple[str, int]


@dataclass(frozen=True, slots=True)
class ClientOwnership:
    """The partitions one client's consumers own now."""

    #: Partition -> the consumer of this client that owns it.
    by_consumer: Mapping[TopicPartition, str] = field(default_factory=lambda: MappingProxyType({}))
    #: Partitions this client owns whose consumer is unknown.
    unattributed: frozenset[TopicPartition] = frozenset()


@dataclass(frozen=True, slots=True)
class PartitionOwnership:
    """Ownership across the group before the rebalance."""

    clients: Mapping[ProcessId, ClientOwnership] = field(default_factory=lambda: MappingProxyType({}))
    #: Every partition some member owns.
    all_owned: frozenset[TopicPartition] = frozenset()

    def of(self, pid: ProcessId) -> ClientOwnership:
        return self.clients.get(pid, _NOBODY)


_NOBODY = ClientOwnership()
NOTHING_OWNED = PartitionOwnership()


def ownership_from_state(state: ApplicationState) -> PartitionOwnership:
    """Ownership implied by a scenario (see the module docstring); nothing under the EAGER protocol."""
    if state.configs.extension(REBALANCE_PROTOCOL) == REBALANCE_PROTOCOL_EAGER:
        return NOTHING_OWNED
    clients: dict[ProcessId, ClientOwnership] = {}
    everything: set[TopicPartition] = set()
    infos = state.tasks
    for pid, client in state.clients.items():
        if not client.previous_active_tasks:
            continue
        owner_of_task: dict[object, str] = {}
        if client.consumer_previous_tasks:
            members = set(client.consumer_client_ids)
            for consumer, tasks in client.consumer_previous_tasks.items():  # sorted: a later consumer overwrites
                if consumer in members:
                    owner_of_task.update(dict.fromkeys(tasks, consumer))
        only = client.consumer_client_ids[0] if len(client.consumer_client_ids) == 1 else None
        by_consumer: dict[TopicPartition, str] = {}
        unattributed: set[TopicPartition] = set()
        known = [t for t in client.previous_active_tasks if t in infos]
        if not owner_of_task:  # no consumer reported its tasks: one thread owns them all, or nobody knows which
            owned = chain.from_iterable([infos[t].source_topic_partitions for t in known])
            if only is not None:
                by_consumer = dict.fromkeys(owned, only)
                everything.update(by_consumer)
            else:
                unattributed = set(owned)
                everything.update(unattributed)
        else:
            for t in known:
                owner = owner_of_task.get(t, only)
                partitions = infos[t].source_topic_partitions
                everything.update(partitions)
                if owner is None:
                    unattributed.update(partitions)
                else:
                    by_consumer.update(dict.fromkeys(partitions, owner))
        if by_consumer or unattributed:
            clients[pid] = ClientOwnership(MappingProxyType(by_consumer), frozenset(unattributed - by_consumer.keys()))
    return PartitionOwnership(MappingProxyType(clients), frozenset(everything))


@dataclass(frozen=True, slots=True)
class TaskOwnership:
    """``ownership_from_state`` by task instead of by partition, for an application whose every task has source
    partitions and no partition belongs to two tasks (as Kafka's ``PartitionGrouper`` makes them): then a task's
    partitions are owned exactly when some client ran it as an active, by that client's consumer that reported it
    (or the client's only consumer). The leader tests a consumer's tasks with set operations instead of walking
    their partitions."""

    #: Every task some client ran as an active.
    owned: frozenset[TaskId] = frozenset()
    #: Per client, its previous active tasks by the consumer that owns them (None: unknown, the whole client).
    clients: Mapping[ProcessId, Mapping[str | None, Set[TaskId]]] = field(
        default_factory=lambda: MappingProxyType({}))

    def of(self, pid: ProcessId) -> Mapping[str | None, Set[TaskId]]:
        return self.clients.get(pid, _NO_TASKS)


_NO_TASKS: Mapping[str | None, Set[TaskId]] = MappingProxyType({})
_SOURCES = attrgetter("source_topic_partitions")


def task_ownership_from_state(state: ApplicationState) -> TaskOwnership | None:
    """``ownership_from_state`` by task (``TaskOwnership``), or None when the application's partitions do not
    allow it (a task without source partitions, or a source partition of two tasks)."""
    if state.configs.extension(REBALANCE_PROTOCOL) == REBALANCE_PROTOCOL_EAGER:
        return TaskOwnership()
    sources = list(map(_SOURCES, state.tasks.values()))
    if not all(sources) or len(set(chain.from_iterable(sources))) != sum(map(len, sources)):
        return None
    owned: set[TaskId] = set()
    clients: dict[ProcessId, Mapping[str | None, Set[TaskId]]] = {}
    for pid, client in state.clients.items():
        previous = client.previous_active_tasks.members
        if not previous:
            continue
        owned.update(previous)
        by_consumer: dict[str | None, Set[TaskId]] = {}
        rest: frozenset[TaskId] = previous
        if client.consumer_previous_tasks:
            members = set(client.consumer_client_ids)
            reported = [(c, tasks) for c, tasks in client.consumer_previous_tasks.items() if c in members]
            claimed: set[TaskId] = set()
            for consumer, tasks in reversed(reported):  # of two consumers reporting a task, the later one owns it
                ran = previous & tasks.members if isinstance(tasks, SortedFrozenSet) else previous.intersection(tasks)
                if ran and not claimed.isdisjoint(ran):
                    ran = ran - claimed
                if ran:
                    by_consumer[consumer] = ran
                    claimed.update(ran)
            if claimed:
                rest = previous - claimed if len(claimed) < len(previous) else frozenset()
        if rest:
            consumers = client.consumer_client_ids
            only = consumers[0] if len(consumers) == 1 else None
            by_consumer[only] = rest | by_consumer[only] if only in by_consumer else rest
        clients[pid] = by_consumer
    return TaskOwnership(frozenset(owned), clients)
