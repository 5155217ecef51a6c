"""Kafka's ``ConstrainedPrioritySet``: repeatedly take the lightest client that may receive a task.

Two implementations of one contract:

* ``ConstrainedPrioritySet`` is Kafka's mechanism step by step: a ``java.util.PriorityQueue`` ordered by
  the live key ``(weight(client), client)``, a membership set, rejected clients re-offered in Java
  HashSet order. It is the reference: slow (a poll that rejects every client costs O(C log C), an
  offer of a member a linear search), but bit-exact whatever the caller does.
* ``IndexedConstrainedPrioritySet`` returns what a *valid* Java heap returns, the member with the
  smallest live key that satisfies the constraints, without popping and re-pushing the rejected
  ones. Kafka's heap stays valid when only clients outside it change weight: the standby, stateless
  and tag-aware pools poll a client, change it, then offer it back. It also accepts a ``candidates``
  hint: when the constraint admits only a few known clients, the poll looks only at those.
* ``DeferredJavaPrioritySet`` (its own module) replays Kafka's heap exactly, cheaply, for the
  movement pools, whose members change weight while inside (there Kafka's heap can turn invalid).

``tests/assignors/test_constrained_priority_set.py`` replays the movement pattern through the deferred
heap and the reference; ``tests/assignors/test_high_availability_properties.py`` runs whole random
assignments through the fast pools and through the reference.

Clients are any totally ordered hashable values; the assignors use indices in ProcessId order.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Generic, Protocol, TypeVar

from taskassign.internals.deferred_heap_set import DeferredJavaPrioritySet
from taskassign.internals.java_order import JavaHashMap, JavaPriorityQueue, java_hash

__all__ = (
    "ClientPool",
    "ConstrainedPrioritySet",
    "IndexedConstrainedPrioritySet",
    "PoolFactory",
    "fast_pool_factory",
    "java_pool_factory",
)

C = TypeVar("C")
T = TypeVar("T")
#: ``constraint(client, task)`` over client indices and task numbers.
Constraint = Callable[[int, int], bool]
Extra = Callable[[int], bool]


class ClientPool(Protocol):
    """What the assignors need from a constrained priority set of client indices."""

    def offer(self, client: int) -> None: ...

    def offer_all(self, clients: Iterable[int]) -> None: ...

    def offer_everyone(self, clients: Sequence[int]) -> None:
        """``offer_all(clients)`` where ``clients`` are all the pool's clients and, since the previous call,
        only clients this pool polled may have changed weight (Kafka's tag-aware standby assignor offers
        every client again before each task; a true-minimum set need only offer back what it gave out)."""

    def poll(self, task: int, extra: Extra | None = None, among: Collection[int] | None = None) -> int | None:
        """Remove and return the client Kafka's poll returns for ``task`` (None: no member qualifies).
        ``among``, when given, holds every client ``extra`` admits: a hint a pool may use to look at those only."""


Candidates = Callable[[int], Collection[int] | None]


class PoolFactory(Protocol):
    """Builds a constrained priority set over client indices.

    ``candidates`` optionally lists exactly the clients satisfying ``constraint`` for a task.
    ``weights_change_inside`` says the caller changes members' weights while they sit in the set (and
    re-offers them right after, Kafka's ``offerAll(source, destination)``): Kafka's heap can then turn
    invalid, so it must be replayed exactly. ``true_minimum``: where weights change only outside the
    set, its polls answer the lightest qualifying member, so callers may compute the same answers in
    bulk; False for the reference that replays Kafka's heap everywhere.
    """

    @property
    def true_minimum(self) -> bool: ...

    @property
    def movements_true_minimum(self) -> bool:
        """Whether the pools built with ``weights_change_inside`` answer the lightest qualifying member too (no
        replay of Kafka's heap there), so the movement phases may use a pool of their own with those answers."""
        ...

    def __call__(
        self, constraint: Constraint, weight: Callable[[int], float], candidates: Candidates | None = None,
        weights_change_inside: bool = False,
    ) -> ClientPool: ...


class _JavaPoolFactory:
    __slots__ = ("_hashes",)
    true_minimum = False
    movements_true_minimum = False

    def __init__(self, client_hashes: Sequence[int]) -> None:
        self._hashes = client_hashes

    def __call__(
        self, constraint: Constraint, weight: Callable[[int], float], candidates: Candidates | None = None,
        weights_change_inside: bool = False,
    ) -> ClientPool:
        return ConstrainedPrioritySet(constraint, weight, self._hashes.__getitem__)


class _FastPoolFactory:
    __slots__ = ("_hashes", "_replay")
    true_minimum = True

    def __init__(self, client_hashes: Sequence[int], replay_java_heap: bool) -> None:
        self._hashes = client_hashes
        self._replay = replay_java_heap

    @property
    def movements_true_minimum(self) -> bool:
        return not self._replay

    def __call__(
        self, constraint: Constraint, weight: Callable[[int], float], candidates: Candidates | None = None,
        weights_change_inside: bool = False,
    ) -> ClientPool:
        hashes = self._hashes
        if weights_change_inside and self._replay:
            return DeferredJavaPrioritySet(len(hashes), constraint, weight, hashes, candidates)
        return IndexedConstrainedPrioritySet(len(hashes), constraint, weight, candidates)


def java_pool_factory(client_hashes: Sequence[int]) -> PoolFactory:
    """Kafka's heap, operation by operation, everywhere: the slow reference. ``client_hashes[i]`` is the
    Java hashCode of client i's ProcessId."""
    return _JavaPoolFactory(client_hashes)


def fast_pool_factory(client_hashes: Sequence[int], *, replay_java_heap: bool = True) -> PoolFactory:
    """True-minimum sets where Kafka's heap provably stays valid; where it may not
    (``weights_change_inside``), the deferred Java heap (``replay_java_heap``: Kafka's exact answers) or
    the true-minimum set too (the lightest qualifying member, which a valid heap returns).

    Replaying costs what it costs Kafka: a poll whose answer sits k places down the heap pops the k
    lighter members and pushes them back, and a movement's offer can turn the heap invalid only
    depending on the array's exact layout, so every such poll must really run. With 10^5 tasks on 10^3
    clients that is millions of pops (docs/performance.md) where the true minimum answers in O(candidates).
    """
    return _FastPoolFactory(client_hashes, replay_java_heap)


class ConstrainedPrioritySet(Generic[C, T]):
    """Kafka's ConstrainedPrioritySet with Java's heap, evaluated lazily as Java does.

    ``constraint(client, task)`` and ``weight(client)`` are read at every comparison, so a client whose
    weight changes while it sits in the heap behaves exactly as in Kafka. ``hash_of`` gives the Java
    ``hashCode`` of a client (ProcessId's by default), which decides the order in which rejected
    clients are offered back.
    """

    __slots__ = ("_constraint", "_hash_of", "_members", "_queue")

    def __init__(
        self,
        constraint: Callable[[C, T], bool],
        weight: Callable[[C], float],
        hash_of: Callable[[C], int] = java_hash,
    ) -> None:
        self._constraint = constraint
        self._hash_of = hash_of
        self._queue: JavaPriorityQueue[C] = JavaPriorityQueue(lambda c: (weight(c), c))
        self._members: set[C] = set()

    def __len__(self) -> int:
        return len(self._members)

    def offer(self, client: C) -> None:
        """Insert ``client``, or refresh its position if it is already a member."""
        if client in self._members:
            self._queue.remove(client)
        else:
            self._members.add(client)
        self._queue.offer(client)

    def offer_all(self, clients: Iterable[C]) -> None:
        for client in clients:
            self.offer(client)

    def offer_everyone(self, clients: Sequence[C]) -> None:
        """Every client again, one by one, as Kafka does (each re-offer moves a member in Java's heap)."""
        self.offer_all(clients)

    def poll(self, task: T, extra: Callable[[C], bool] | None = None, among: Collection[C] | None = None) -> C | None:
        """Remove and return the first client in heap order that satisfies both predicates (``among`` is not
        used: Java pops in heap order whatever the hint)."""
        rejected: JavaHashMap[C] = JavaHashMap(hash_of=self._hash_of)
        queue = self._queue
        while queue:
            candidate = queue.poll()
            assert candidate is not None
            self._members.discard(candidate)
            if self._constraint(candidate, task) and (extra is None or extra(candidate)):
                self.offer_all(rejected.keys())
                return candidate
            rejected.put(candidate)
        self.offer_all(rejected.keys())
        return None


class IndexedConstrainedPrioritySet:
    """The same contract over client indices 0..n-1, answering each poll with the true minimum.

    ``candidates(task)`` may return exactly the clients that satisfy ``constraint`` for ``task`` (any
    order), or None to scan every member in key order. Members' weights are tracked in a lazily cleaned
    binary heap of ``(weight, client)`` entries: an entry is current when the client is a member and the
    entry's weight is the last one offered for it. As with Kafka's heap, a caller that changes a
    member's weight must offer it again before the next poll.
    """

    __slots__ = ("_candidates", "_constraint", "_filled", "_heap", "_heap_live", "_member", "_offered", "_polled",
                 "_weight")

    def __init__(
        self,
        size: int,
        constraint: Constraint,
        weight: Callable[[int], float],
        candidates: Candidates | None = None,
    ) -> None:
        self._constraint = constraint
        self._weight = weight
        self._candidates = candidates
        self._member = [False] * size
        self._offered: list[float] = [-1.0] * size
        self._heap: list[tuple[float, int]] = []
        #: Whether offers push onto the heap: not until a poll first needs it (a pool asked only through
        #: ``candidates``, as the movement phases' are, never builds one).
        self._heap_live = False
        #: Clients polled since the last ``offer_everyone``, and whether one has filled the set yet.
        self._polled: list[int] = []
        self._filled = False

    def __len__(self) -> int:
        return sum(self._member)

    def offer(self, client: int) -> None:
        load = self._weight(client)
        if not self._member[client] or self._offered[client] != load:
            self._member[client] = True
            self._offered[client] = load
            if self._heap_live:
                heapq.heappush(self._heap, (load, client))

    def offer_all(self, clients: Iterable[int]) -> None:
        for client in clients:
            self.offer(client)

    def offer_everyone(self, clients: Sequence[int]) -> None:
        """The first call offers every client; later ones only those polled since (every other client is
        still a member under its offered weight, so offering it again would change nothing)."""
        if not self._filled:
            self._filled = True
            self.offer_all(clients)
        else:
            self.offer_all(self._polled)
        self._polled.clear()

    def poll(self, task: int, extra: Extra | None = None, among: Collection[int] | None = None) -> int | None:
        if among is not None and extra is not None:  # the true minimum among the few clients extra admits
            constraint = self._constraint
            return self._poll_among(among, task, lambda c: constraint(c, task) and extra(c))
        found = self._candidates(task) if self._candidates is not None else None
        if found is not None:
            return self._poll_among(found, task, extra)
        return self._poll_heap(task, extra)

    def _poll_among(self, candidates: Collection[int], task: int, extra: Extra | None) -> int | None:
        member, weight = self._member, self._weight
        best: tuple[float, int] | None = None
        for client in candidates:
            if member[client] and (extra is None or extra(client)):
                key = (weight(client), client)
                if best is None or key < best:
                    best = key
        if best is None:
            return None
        member[best[1]] = False
        if self._filled:  # (tracked only for offer_everyone's callers)
            self._polled.append(best[1])
        return best[1]

    def _poll_heap(self, task: int, extra: Extra | None) -> int | None:
        if not self._heap_live:  # every member under the weight it was offered with: what the pushes would hold
            self._heap_live = True
            self._heap = [(load, c) for c, (load, inside) in enumerate(zip(self._offered, self._member, strict=True))
                          if inside]
            heapq.heapify(self._heap)
        heap, member, offered, constraint = self._heap, self._member, self._offered, self._constraint
        aside: list[tuple[float, int]] = []
        result = None
        while heap:
            entry = heapq.heappop(heap)
            load, client = entry
            if not member[client] or offered[client] != load:
                continue  # superseded by a later offer, or polled
            if constraint(client, task) and (extra is None or extra(client)):
                member[client] = False
                if self._filled:
                    self._polled.append(client)
                result = client
                break
            aside.append(entry)
        for entry in aside:
            heapq.heappush(heap, entry)
        return result
