"""Spreading one client's tasks over its consumers (StreamThreads), exactly as Kafka's leader does
(``StreamsPartitionAssignor#computeNewAssignment`` and ``#assignTasksToThreads``).

Per client, three calls deal stateful actives, then standbys, then stateless actives, sharing one
per-thread load counter, so the *combined* count per thread is balanced (every task weighs 1):

1. stickiness: each consumer first takes back the stateful tasks it reported state for, lowest lag
   first, up to the minimum ``floor(total / consumers)``;
2. round-robin: the smallest remaining tasks (TaskId order) go to consumers still below the minimum,
   which interleaves a subtopology's partitions across threads;
3. leftovers: one each to consumers sitting exactly at the minimum, a consumer that skipped its own
   task first, then in Java ``PriorityQueue`` array order.

Then, for cooperative rebalancing, a task with a partition that another member still owns is
withheld from its new consumer (it arrives in an immediate follow-up rebalance), and a withheld
task the client held as a standby is kept as a temporary standby so its state stays warm.

Inputs are plain values (``ClientThreadsInput``); this module never sees a client object.

Cost: each call is linear in its tasks plus one cheap pass over the consumers. Passes 1 and 2 only
poll and remove, and a Java ``PriorityQueue`` polls its minimum whatever its layout, so they walk the
tasks in TaskId order; the queue's array (and the Java HashSet order it is built from) is replayed
only when three or more leftovers make its layout matter (a heap of two holds the smaller first).
Consumers that get nothing share one empty ``ConsumerAssignment``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from itertools import chain, filterfalse
from operator import itemgetter
from types import MappingProxyType
from typing import Any

from taskassign.errors import TaskAssignmentException
from taskassign.ids import TaskId
from taskassign.internals.java_order import natural_queue_array
from taskassign.leader.followups import consumer_deadline
from taskassign.model import ConsumerAssignment, new_consumer_assignment

__all__ = ("ClientThreadsInput", "TopicPartition", "assign_tasks_to_threads", "distribute_client",
           "new_client_threads_input")

TopicPartition = tuple[str, int]
#: Order of a task collection as Java iterates it, computed only when asked for.
CollectionOrder = Callable[[], Sequence[TaskId]]
_NOTHING = ConsumerAssignment()
_NONE: frozenset[TaskId] = frozenset()


@dataclass(frozen=True, slots=True)
class ClientThreadsInput:
    """What the leader knows of one client when it spreads the client's tasks over its threads.

    The three task tuples are in the iteration order of the Java collections Kafka builds them in
    (it decides only which at-minimum thread gets which leftover task), except that with
    ``hash_set_order`` the two active tuples are in TaskId order and their Java order is computed on
    demand.
    """

    #: The client's consumer (thread) member ids, sorted.
    consumers: tuple[str, ...]
    #: Active tasks with a changelog (Kafka's "stateful": they have lags).
    stateful_active: tuple[TaskId, ...]
    standby: tuple[TaskId, ...]
    stateless_active: tuple[TaskId, ...]
    #: Per consumer, the stateful tasks it reported state for, lowest lag first (ties by TaskId), each once.
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
    #: When set, ownership by task replaces the four partition fields above (``ownership.TaskOwnership``: every
    #: task has source partitions, none shared): the tasks some client ran as an active before.
    owned_tasks: frozenset[TaskId] | None = None
    #: With ``owned_tasks``: this client's previous active tasks by the consumer owning them (None: unknown).
    own_tasks: Mapping[str | None, Set[TaskId]] = field(default_factory=dict)
    #: When set, ``stateful_active`` and ``stateless_active`` are in TaskId order and this maps each to
    #: the iteration order of the Java HashSet Kafka keeps it in; called only when that order decides
    #: something (three or more leftover tasks).
    hash_set_order: Callable[[Sequence[TaskId]], Sequence[TaskId]] | None = None
    #: The client's follow-up deadline (epoch ms, 0 = immediately), carried by one consumer.
    followup_deadline: int | None = None


_SET = {name: vars(ClientThreadsInput)[name].__set__ for name in ClientThreadsInput.__slots__}
_NOTHING_MAPPED: Mapping[Any, Any] = MappingProxyType({})


def new_client_threads_input(
    consumers: tuple[str, ...],
    stateful_active: tuple[TaskId, ...],
    standby: tuple[TaskId, ...],
    stateless_active: tuple[TaskId, ...],
    prev_tasks_by_lag: Mapping[str, tuple[TaskId, ...]],
    previous_standby: Set[TaskId],
    stateful: Set[TaskId],
    hash_set_order: Callable[[Sequence[TaskId]], Sequence[TaskId]] | None,
    followup_deadline: int | None,
    source_partitions: Mapping[TaskId, tuple[TopicPartition, ...]] = _NOTHING_MAPPED,
    owner_in_client: Mapping[TopicPartition, str] = _NOTHING_MAPPED,
    owned_by_client_unattributed: Set[TopicPartition] = frozenset(),
    owned_in_group: Set[TopicPartition] = frozenset(),
    owned_tasks: frozenset[TaskId] | None = None,
    own_tasks: Mapping[str | None, Set[TaskId]] = _NOTHING_MAPPED,
) -> ClientThreadsInput:
    """``ClientThreadsInput(...)`` with its slots filled directly, at a fraction of the frozen dataclass's
    ``__init__`` (the leader builds one per client)."""
    value: ClientThreadsInput = object.__new__(ClientThreadsInput)
    put = _SET
    put["consumers"](value, consumers)
    put["stateful_active"](value, stateful_active)
    put["standby"](value, standby)
    put["stateless_active"](value, stateless_active)
    put["prev_tasks_by_lag"](value, prev_tasks_by_lag)
    put["source_partitions"](value, source_partitions)
    put["previous_standby"](value, previous_standby)
    put["stateful"](value, stateful)
    put["owner_in_client"](value, owner_in_client)
    put["owned_by_client_unattributed"](value, owned_by_client_unattributed)
    put["owned_in_group"](value, owned_in_group)
    put["owned_tasks"](value, owned_tasks)
    put["own_tasks"](value, own_tasks)
    put["hash_set_order"](value, hash_set_order)
    put["followup_deadline"](value, followup_deadline)
    return value


def assign_tasks_to_threads(
    tasks: Sequence[TaskId],
    consumers: Sequence[str],
    thread_load: dict[str, int],
    prev_tasks_by_lag: Mapping[str, Sequence[TaskId]] | None = None,
) -> dict[str, list[TaskId]]:
    """Kafka's ``StreamsPartitionAssignor#assignTasksToThreads``. ``tasks`` in Java collection order; ``thread_load``
    is the load from earlier calls and is updated; ``prev_tasks_by_lag`` None means stateless (no
    stickiness). Returns each consumer's tasks in the order dealt."""
    loads = [thread_load.get(c, 0) for c in consumers]
    once = None if prev_tasks_by_lag is None else {c: _once(ts) for c, ts in prev_tasks_by_lag.items()}
    dealt = _deal(sorted(tasks), lambda: tasks, loads, _sticky(consumers, once))
    for c, load in zip(consumers, loads, strict=True):
        thread_load[c] = load
    return {c: dealt.get(i, []) for i, c in enumerate(consumers)}


def _sticky(
    consumers: Sequence[str], prev_tasks_by_lag: Mapping[str, Sequence[TaskId]] | None
) -> list[tuple[int, Sequence[TaskId]]] | None:
    """(consumer index, its previous tasks by lag) in consumer order, for the consumers that have some."""
    if prev_tasks_by_lag is None:
        return None
    owners = [c for c, tasks in prev_tasks_by_lag.items() if tasks]
    if not owners:
        return []
    index = {c: i for i, c in enumerate(consumers)}
    mine = [(index[c], prev_tasks_by_lag[c]) for c in owners if c in index]
    mine.sort(key=itemgetter(0))
    return mine


def _once(tasks: Sequence[TaskId]) -> Sequence[TaskId]:
    """``tasks`` without repeats (a repeat is no task: Kafka's loop finds it already taken or skipped)."""
    return tasks if len(tasks) < 2 or len(set(tasks)) == len(tasks) else list(dict.fromkeys(tasks))


def _deal(
    tasks: Sequence[TaskId],
    collection_order: CollectionOrder,
    loads: list[int],
    sticky: Sequence[tuple[int, Sequence[TaskId]]] | None,
) -> dict[int, list[TaskId]]:
    """One ``assignTasksToThreads`` call over consumer indices. ``tasks`` is sorted (TaskId order),
    ``collection_order()`` the same tasks as Java iterates them; ``loads`` (per consumer, from the
    earlier calls) is updated. Returns the tasks dealt to each consumer that got any, in dealt order."""
    dealt: dict[int, list[TaskId]] = {}
    if not tasks:
        return dealt
    n = len(loads)
    min_per = (len(tasks) + sum(loads)) // n
    pending: set[TaskId] | None = None  # only tracked once stickiness took a task out of the middle
    removed: list[TaskId] = []  # pass 1's removals, in order: they shape the queue's array
    skipped: dict[TaskId, int] = {}
    for c, previous in sticky or ():  # pass 1: stickiness, consumers in order
        # a consumer takes back its pending tasks, lowest lag first, up to the minimum: the first ``room`` of
        # them (its own removals never touch the rest), and skips the others
        if pending is None:
            pending = set(tasks)
        mine = list(filter(pending.__contains__, previous))
        if not mine:
            continue
        room = min_per - loads[c]
        if room > 0:
            taken = mine[:room]
            dealt[c] = taken
            loads[c] += len(taken)
            pending.difference_update(taken)
            removed += taken
        if len(mine) > room:
            skipped.update(dict.fromkeys(mine[max(room, 0):], c))

    # pass 2: the smallest pending task to each consumer below the minimum, round robin
    smallest: Sequence[TaskId] = tasks
    if removed:
        assert pending is not None
        smallest = list(filter(pending.__contains__, tasks))
    polls = _round_robin(smallest, min_per, loads, dealt)

    leftovers = smallest[polls:]
    if leftovers:  # pass 3: one each to the consumers at exactly the minimum
        taken_back: list[TaskId] = []
        if skipped:
            left = set(leftovers)
            for t in sorted(left.intersection(skipped)):  # a skipped task is taken back only if still left
                c = skipped[t]
                if loads[c] == min_per and t in left:
                    dealt.setdefault(c, []).append(t)
                    loads[c] += 1
                    left.remove(t)
                    taken_back.append(t)
            if taken_back:
                leftovers = list(filter(left.__contains__, leftovers))
        # Kafka walks the queue's array, which holds exactly the leftovers: its layout decides who gets which.
        # Two in TaskId order are already it (a heap of two holds the smaller first).
        if len(leftovers) > 2:
            leftovers = natural_queue_array(tasks, collection_order(), removed, polls, taken_back)
        takers = (c for c in range(n) if loads[c] == min_per)
        for t in leftovers:
            c = next(takers, -1)
            if c < 0:
                raise TaskAssignmentException("more leftover tasks than threads at the minimum load")
            dealt.setdefault(c, []).append(t)
            loads[c] += 1
    return dealt


def _round_robin(smallest: Sequence[TaskId], min_per: int, loads: list[int], dealt: dict[int, list[TaskId]]) -> int:
    """Pass 2: the consumers below the minimum, in index order, take the next smallest task one at a time,
    round after round, until each reaches it (Kafka's queue of consumers); returns how many were dealt (the
    first of ``smallest``).

    Round by round this is a stride: while the ``m`` consumers still filling all need ``k`` or more, the next
    ``m * k`` tasks go to them as ``block[i::m]``; then those that are full leave and the rest go on."""
    filling = [c for c, load in enumerate(loads) if load < min_per]
    if not filling:
        return 0
    need = [min_per - loads[c] for c in filling]
    total = sum(need)
    if len(smallest) < total:
        raise TaskAssignmentException("ran out of unassigned tasks while filling threads up to the minimum "
                                      f"of {min_per} tasks per thread")
    if len(filling) == 1:  # one consumer below the minimum takes them all
        dealt.setdefault(filling[0], []).extend(smallest[:total])
        loads[filling[0]] = min_per
        return total
    tasks = smallest[:total]
    start, done = 0, 0
    while filling:
        m = len(filling)
        rounds = min(need) - done
        block = tasks[start:start + m * rounds]
        for i, c in enumerate(filling):
            dealt.setdefault(c, []).extend(block[i::m])
        start += m * rounds
        done += rounds
        keep = [i for i, n in enumerate(need) if n > done]
        filling, need = [filling[i] for i in keep], [need[i] for i in keep]
    for c in range(len(loads)):
        loads[c] = max(loads[c], min_per)
    return total


def distribute_client(client: ClientThreadsInput) -> dict[str, ConsumerAssignment]:
    """Every consumer's share of the client's tasks (``computeNewAssignment``), consumers in sorted order.

    ``ConsumerAssignment.active`` is what the consumer runs after this rebalance (stateful tasks first,
    each group in dealt order), ``withheld`` the tasks it gets once their partitions are revoked
    elsewhere; ``standby`` includes temporary standbys for withheld tasks.
    """
    consumers = client.consumers
    if not consumers:
        return {}
    if len(consumers) == 1:
        return _one_consumer(client)
    loads = [0] * len(consumers)
    sticky = _sticky(consumers, client.prev_tasks_by_lag)
    stateful_active = _deal(*_orders(client.stateful_active, client.hash_set_order), loads, sticky)
    standby = _deal(*_orders(client.standby, None), loads, sticky)
    stateless_active = _deal(*_orders(client.stateless_active, client.hash_set_order), loads, None)

    out = dict.fromkeys(consumers, _NOTHING)
    withhold = _withholder(client, chain(client.stateful_active, client.stateless_active))
    deadline = client.followup_deadline
    no_tasks: list[TaskId] = []
    for i in sorted(stateful_active.keys() | standby.keys() | stateless_active.keys()):
        active = stateful_active.get(i, no_tasks) + stateless_active.get(i, no_tasks)
        standbys = standby.get(i, no_tasks)
        withheld = withhold(active, consumers[i]) if withhold is not None else None
        if withheld or (deadline is not None and i == 0):
            out[consumers[i]] = _assignment(client, i == 0, active, standbys, withheld or _NONE)
        else:  # nothing withheld, no follow-up to carry
            out[consumers[i]] = new_consumer_assignment(tuple(active) if active else (),
                                                        tuple(standbys) if standbys else ())
    if deadline is not None and out[consumers[0]] is _NOTHING:
        out[consumers[0]] = new_consumer_assignment((), (), (), deadline)
    return out


def _assignment(client: ClientThreadsInput, first: bool, active: list[TaskId], standby: list[TaskId],
                waiting: Set[TaskId]) -> ConsumerAssignment:
    """What a consumer was dealt, with ``waiting`` (those of its actives whose partitions another member owns) taken
    out of its actives into its withheld tasks, in TaskId order (and kept warm as temporary standbys where the
    client held them as standbys), and the follow-up it carries."""
    withheld: tuple[TaskId, ...] = ()
    if waiting:
        active = list(filterfalse(waiting.__contains__, active))
        withheld = tuple(sorted(waiting))
        kept_warm = list(filter(client.stateful.__contains__, filter(client.previous_standby.__contains__, withheld)))
        if kept_warm:
            standby = standby + kept_warm
    deadline = consumer_deadline(first, bool(withheld), client.followup_deadline) if first or withheld else None
    if not (active or standby or withheld) and deadline is None:
        return _NOTHING
    return new_consumer_assignment(tuple(active) if active else (), tuple(standby) if standby else (), withheld,
                                   deadline)


def _withholder(client: ClientThreadsInput, tasks: Iterable[TaskId]
                ) -> Callable[[list[TaskId], str], Set[TaskId]] | None:
    """The test that picks, from the actives dealt to one consumer, those it must wait for; None when no task of
    ``tasks`` (the client's actives) can be withheld."""
    owned_tasks = client.owned_tasks
    if owned_tasks is not None:  # by task: owned elsewhere unless this client ran it, on this or an unknown consumer
        if not owned_tasks:
            return None
        own, unknown = client.own_tasks, client.own_tasks.get(None, frozenset())

        def by_task(active: list[TaskId], consumer: str) -> Set[TaskId]:
            waiting = owned_tasks.intersection(active)
            return waiting.difference(own.get(consumer, ()), unknown) if waiting else waiting
        return by_task
    contested = _contested(client, tasks)
    if not contested:
        return None
    return lambda active, consumer: {t for t in active if t in contested and _owned_elsewhere(client, t, consumer)}


def _contested(client: ClientThreadsInput, tasks: Iterable[TaskId]) -> set[TaskId]:
    """The tasks that some consumer would have to wait for: a source partition is owned by another client,
    or by one particular consumer of this client (partitions the client owns through an unknown consumer
    are never withheld inside it)."""
    owned = client.owned_in_group
    if not owned:
        return set()
    unattributed, by_consumer = client.owned_by_client_unattributed, client.owner_in_client
    sources = client.source_partitions
    return {t for t in tasks for p in sources.get(t, ())
            if p in owned and (p in by_consumer or p not in unattributed)}


def _one_consumer(client: ClientThreadsInput) -> dict[str, ConsumerAssignment]:
    """``distribute_client`` for a client with one thread: its minimum is every task, so each call deals
    it the tasks it reported (lowest lag first), then the others in TaskId order."""
    consumer = client.consumers[0]
    previous = client.prev_tasks_by_lag.get(consumer, ())
    hashed = client.hash_set_order is not None
    active = _previous_first(client.stateful_active, previous, hashed)
    standby = _previous_first(client.standby, previous, False)
    active += client.stateless_active if hashed else sorted(client.stateless_active)
    withhold = _withholder(client, active)
    withheld = withhold(active, consumer) if withhold is not None else _NONE
    return {consumer: _assignment(client, True, active, standby, withheld)}


def _previous_first(tasks: tuple[TaskId, ...], previous: Sequence[TaskId], is_sorted: bool) -> list[TaskId]:
    """``tasks`` as one consumer is dealt them: those in ``previous`` in its order, then the rest sorted."""
    ordered = tasks if is_sorted else sorted(tasks)
    if not previous or not tasks:
        return list(ordered)
    members = set(tasks)
    first = [t for t in previous if t in members]  # each once: ``prev_tasks_by_lag`` names a task once
    if len(first) == len(tasks) or not first:
        return first or list(ordered)
    taken = set(first)
    return first + [t for t in ordered if t not in taken]


def _orders(
    tasks: tuple[TaskId, ...], hash_set_order: Callable[[Sequence[TaskId]], Sequence[TaskId]] | None
) -> tuple[Sequence[TaskId], CollectionOrder]:
    """The tasks in TaskId order, and their Java collection order on demand."""
    if hash_set_order is not None:
        return tasks, lambda: hash_set_order(tasks)
    return sorted(tasks), lambda: tasks


def _owned_elsewhere(client: ClientThreadsInput, task: TaskId, consumer: str) -> bool:
    """True when a source partition of ``task`` is owned by another member (cooperative rebalancing, KIP-429)."""
    for p in client.source_partitions.get(task, ()):
        owner = client.owner_in_client.get(p)
        if owner == consumer or (owner is None and p in client.owned_by_client_unattributed):
            continue
        if p in client.owned_in_group:
            return True
    return False
