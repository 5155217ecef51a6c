"""Spreading one client's tasks over its consumers (StreamThreads), exactly as Kafka's leader does
(host-and-wire spec 5.1-5.4, 5.7).

Per client, three calls deal stateful actives, then standbys, then stateless actives, sharing one
per-thread load counter, so the *combined* count per thread is balanced (every task weighs 1):

1. stickiness: each consumer first takes back the stateful tasks it reported state for, lowest lag
   first, up to the minimum ``floor(total / consumers)``;
2. round-robin: the smallest remaining tasks (TaskId order) go to consumers still below the minimum,
   which interleaves a subtopology's partitions across threads;
3. leftovers: one each to consumers sitting exactly at the minimum, a consumer that skipped its own
   task first, then in Java ``PriorityQueue`` array order (spec 5.7).

Then, for cooperative rebalancing, a task with a partition that another member still owns is
withheld from its new consumer (it arrives in an immediate follow-up rebalance), and a withheld
task the client held as a standby is kept as a temporary standby so its state stays warm.

Inputs are plain values (``ClientThreadsInput``); this module never sees a client object.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field

from taskassign._java_order import UniqueJavaPriorityQueue
from taskassign.errors import TaskAssignmentException
from taskassign.ids import TaskId
from taskassign.model import ConsumerAssignment

__all__ = ("ClientThreadsInput", "TopicPartition", "assign_tasks_to_threads", "distribute_client")

TopicPartition = tuple[str, int]
_NO_TASKS: tuple[TaskId, ...] = ()


@dataclass(frozen=True, slots=True)
class ClientThreadsInput:
    """What the leader knows of one client when it spreads the client's tasks over its threads.

    The three task tuples are in the iteration order of the Java collections Kafka builds them in
    (it decides only which at-minimum thread gets which leftover task, spec 5.7).
    """

    #: The client's consumer (thread) member ids, sorted.
    consumers: tuple[str, ...]
    #: Active tasks with a changelog (Kafka's "stateful": they have lags).
    stateful_active: tuple[TaskId, ...]
    standby: tuple[TaskId, ...]
    stateless_active: tuple[TaskId, ...]
    #: Per consumer, the stateful tasks it reported state for, lowest lag first (ties by TaskId).
    prev_tasks_by_lag: Mapping[str, tuple[TaskId, ...]] = field(default_factory=dict)
    #: Source partitions of every task of this client.
    source_partitions: Mapping[TaskId, tuple[TopicPartition, ...]] = field(default_factory=dict)
    #: Tasks the client had as standbys (not as actives) before; with ``stateful``, for temporary standbys.
    previous_standby: Set[TaskId] = frozenset()
    #: Tasks with a changelog.
    stateful: Set[TaskId] = frozenset()
    #: Partition -> the consumer of *this* client that owns it now.
    owner_in_client: Mapping[TopicPartition, str] = field(default_factory=dict)
    #: Partitions this client owns whose consumer is unknown: never withheld within the client.
    owned_by_client_unattributed: Set[TopicPartition] = frozenset()
    #: Every partition some member of the group owns now (empty under the EAGER protocol).
    owned_in_group: Set[TopicPartition] = frozenset()


def assign_tasks_to_threads(
    tasks: Sequence[TaskId],
    consumers: Sequence[str],
    thread_load: dict[str, int],
    prev_tasks_by_lag: Mapping[str, Sequence[TaskId]] | None = None,
) -> dict[str, list[TaskId]]:
    """Kafka's ``assignTasksToThreads`` (spec 5.2). ``tasks`` in Java collection order; ``thread_load``
    is the load from earlier calls and is updated; ``prev_tasks_by_lag`` None means stateless (no
    stickiness). Returns each consumer's tasks in the order dealt."""
    result: dict[str, list[TaskId]] = {c: [] for c in consumers}
    if not tasks:
        return result
    min_per = (len(tasks) + sum(thread_load.values())) // len(consumers)
    pending: UniqueJavaPriorityQueue[TaskId] = UniqueJavaPriorityQueue(tasks)
    fill: deque[str] = deque()
    skipped: dict[TaskId, str] = {}
    for c in consumers:
        mine = result[c]
        target = min_per - thread_load.get(c, 0)
        if prev_tasks_by_lag is not None:
            for t in prev_tasks_by_lag.get(c, _NO_TASKS):
                if t in pending:
                    if len(mine) < target:
                        mine.append(t)
                        pending.remove(t)
                    else:
                        skipped[t] = c
        if len(mine) < target:
            fill.append(c)

    while fill:
        smallest = pending.poll()
        if smallest is None:
            raise TaskAssignmentException("ran out of unassigned tasks while filling threads up to the minimum "
                                          f"of {min_per} tasks per thread")
        c = fill.popleft()
        result[c].append(smallest)
        if len(result[c]) + thread_load.get(c, 0) < min_per:
            fill.append(c)

    if pending:
        at_min = dict.fromkeys(c for c in consumers if len(result[c]) + thread_load.get(c, 0) == min_per)
        for t in sorted(skipped):
            c = skipped[t]
            if c in at_min and t in pending:
                result[c].append(t)
                pending.remove(t)
                del at_min[c]
        takers = deque(at_min)
        for t in pending.array():
            if not takers:
                raise TaskAssignmentException("more leftover tasks than threads at the minimum load")
            result[takers.popleft()].append(t)

    for c in consumers:
        thread_load[c] = thread_load.get(c, 0) + len(result[c])
    return result


def distribute_client(client: ClientThreadsInput) -> dict[str, ConsumerAssignment]:
    """Every consumer's share of the client's tasks (spec 5.1, 5.3, 5.4), consumers in sorted order.

    ``ConsumerAssignment.active`` is what the consumer runs after this rebalance (stateful tasks first,
    each group in dealt order), ``withheld`` the tasks it gets once their partitions are revoked
    elsewhere; ``standby`` includes temporary standbys for withheld tasks.
    """
    if not client.consumers:
        return {}
    load: dict[str, int] = {}
    prev = client.prev_tasks_by_lag
    stateful_active = assign_tasks_to_threads(client.stateful_active, client.consumers, load, prev)
    standby = assign_tasks_to_threads(client.standby, client.consumers, load, prev)
    stateless_active = assign_tasks_to_threads(client.stateless_active, client.consumers, load, None)
    out: dict[str, ConsumerAssignment] = {}
    for c in client.consumers:
        active: list[TaskId] = []
        withheld: list[TaskId] = []
        for t in stateful_active[c] + stateless_active[c]:
            (withheld if _owned_elsewhere(client, t, c) else active).append(t)
        withheld.sort()
        standbys = standby[c] + [t for t in withheld if t in client.previous_standby and t in client.stateful]
        out[c] = ConsumerAssignment(tuple(active), tuple(standbys), tuple(withheld))
    return out


def _owned_elsewhere(client: ClientThreadsInput, task: TaskId, consumer: str) -> bool:
    """True when a source partition of ``task`` is owned by another member (spec 5.3)."""
    for p in client.source_partitions.get(task, ()):
        owner = client.owner_in_client.get(p)
        if owner == consumer or (owner is None and p in client.owned_by_client_unattributed):
            continue
        if p in client.owned_in_group:
            return True
    return False
