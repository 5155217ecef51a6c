"""Kafka's ConstrainedPrioritySet, bit-exact, for pools whose members change weight in place.

In the high-availability assignor's movement phases (assignor spec 4.6, 4.7) a destination client
loses a task while it sits in the pool's heap, and the source is pushed before the destination is
refreshed. Java's heap can then end up invalid (an element above a smaller one), and later polls
return a client that is not the true minimum (spec section 3: 1 input in 3 000). So these pools
must replay Java's heap operation by operation.

Doing that naively is what makes Kafka slow at scale: a poll that finds no eligible client pops
every member and pushes them all back (O(C log C)), and this is the common case (a standby that is
not caught up, when only the active's owner is). Such a poll, however, leaves a heap that depends only
on the members' keys and on the order the rejected set iterates in: the members are offered one by
one, in Java HashSet order, into an empty heap. This class therefore keeps the heap *deferred* - that
base insertion order, the keys at that moment, and a log of later offers and key changes - and
materialises the real array only when a poll may return someone. The HashSet order needs the pop
order only among members that share a hash bucket; a heap that may have turned invalid since its
base is materialised to find it.

Precondition (true for the movement phases): a member's weight changes only just before an
``offer_all`` that lists it, with no other operation in between.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence

from taskassign._java_order import JavaHashMap, JavaPriorityQueue

__all__ = ("DeferredJavaPrioritySet", "hash_set_layout")

Key = tuple[float, int]


def hash_set_layout(hashes: Sequence[int]) -> tuple[list[int], list[tuple[int, int]]]:
    """How a Java HashSet filled with every client (default capacity, growing) iterates.

    Returns the clients in bucket order (within a bucket in client order) and the (start, end) ranges
    of that list whose clients share a bucket: their real order is their insertion order.
    """
    table: JavaHashMap[int] = JavaHashMap(hash_of=hashes.__getitem__)
    table.put_all(range(len(hashes)))
    capacity = table.capacity
    buckets = []
    for h in hashes:
        h &= 0xFFFFFFFF
        buckets.append((h ^ (h >> 16)) & (capacity - 1))
    order = sorted(range(len(hashes)), key=lambda c: (buckets[c], c))
    groups = []
    start = 0
    for i in range(1, len(order) + 1):
        if i == len(order) or buckets[order[i]] != buckets[order[start]]:
            if i - start > 1:
                groups.append((start, i))
            start = i
    return order, groups


class DeferredJavaPrioritySet:
    """Kafka's ConstrainedPrioritySet over client indices 0..n-1 with the Java heap kept deferred.

    ``candidates(task)`` returns exactly the clients that satisfy ``constraint`` for ``task`` (or None
    when unknown); it lets a poll that no member can satisfy skip the heap. ``hashes[i]`` is the Java
    hashCode of client i's ProcessId.
    """

    __slots__ = ("_base_keys", "_base_order", "_candidates", "_constraint", "_groups", "_hashes", "_heap",
                 "_key", "_log", "_member", "_members", "_order_all", "_suspect", "_weight")

    def __init__(
        self,
        size: int,
        constraint: Callable[[int, int], bool],
        weight: Callable[[int], float],
        hashes: Sequence[int],
        candidates: Callable[[int], Collection[int] | None] | None = None,
    ) -> None:
        self._constraint = constraint
        self._weight = weight
        self._candidates = candidates
        self._hashes = hashes
        self._order_all, self._groups = hash_set_layout(hashes)
        #: The key of every client as last observed (Java reads the same live values).
        self._key: list[Key] = [(0.0, c) for c in range(size)]
        self._member = [False] * size
        self._members = 0
        # Deferred form: insert _base_order into an empty heap with _base_keys, then replay _log.
        self._heap: JavaPriorityQueue[int] | None = None
        self._base_order: Sequence[int] = ()
        self._base_keys: list[Key] = list(self._key)
        #: Each ``offer_all`` while deferred: the clients offered and their keys at that moment.
        self._log: list[tuple[tuple[int, ...], tuple[Key, ...]]] = []
        #: The deferred heap may have become invalid since its base (an offer while a member was stale).
        self._suspect = False

    def __len__(self) -> int:
        return self._members

    # -- offers -------------------------------------------------------------------------------------

    def offer(self, client: int) -> None:
        self.offer_all((client,))

    def offer_all(self, clients: Iterable[int]) -> None:
        """Offer each client in turn, after observing the new weights of all of them (see Precondition)."""
        listed = tuple(clients)
        keys, weight, member = self._key, self._weight, self._member
        fresh: list[Key] = []
        for client in listed:
            key = (weight(client), client)
            # Java pushes the first client while later members still sit where their old keys put them
            if fresh and member[client] and key != keys[client] and self._heap is None:
                self._suspect = True
            fresh.append(key)
        if self._heap is None:
            self._log.append((listed, tuple(fresh)))
        for client, key in zip(listed, fresh, strict=True):
            keys[client] = key
        for client in listed:
            if self._heap is not None:
                self._push(client)
            elif not member[client]:
                member[client] = True
                self._members += 1

    def _push(self, client: int) -> None:
        """Java's offer on the materialised heap: a member is removed first, then pushed."""
        assert self._heap is not None
        if self._member[client]:
            self._heap.remove(client)
        else:
            self._member[client] = True
            self._members += 1
        self._heap.offer(client)

    # -- polls --------------------------------------------------------------------------------------

    def poll(self, task: int, extra: Callable[[int], bool] | None = None) -> int | None:
        """Kafka's poll: the first client in heap order that satisfies both predicates."""
        candidates = self._candidates(task) if self._candidates is not None else None
        if candidates is not None and self._members == len(self._member):
            member = self._member
            for client in candidates:
                if member[client] and (extra is None or extra(client)):
                    break
            else:
                self._reject_everyone()
                return None
        self._materialize()
        return self._poll_heap(task, extra)

    def _reject_everyone(self) -> None:
        """A poll that every member fails: Java pops them all and offers them back in HashSet order."""
        if self._heap is None and not self._log and self._base_order is self._order_all:
            return  # the same rebuild as last time: same order, no key changed since
        order: list[int] | None = self._order_all
        if self._groups:
            if self._heap is None and self._suspect:
                self._materialize()
            if self._heap is not None and not _is_valid(self._heap.array(), self._key):
                order = None  # the pop order among bucket-mates is not the key order: replay it
            else:
                order = list(self._order_all)  # a valid heap pops in key order
                key = self._key
                for start, end in self._groups:
                    order[start:end] = sorted(order[start:end], key=key.__getitem__)
        if order is None:
            self._poll_heap(-1, None, reject_all=True)
            return
        self._heap = None
        self._base_order = order
        self._base_keys = list(self._key)
        self._log = []
        self._suspect = False

    def _materialize(self) -> None:
        """Replay the deferred heap: the base insertions, then the logged key changes and offers."""
        if self._heap is not None:
            return
        keys = list(self._base_keys)
        heap: JavaPriorityQueue[int] = JavaPriorityQueue(keys.__getitem__)
        inside = [False] * len(self._member)
        for client in self._base_order:
            heap.offer(client)
            inside[client] = True
        for listed, fresh in self._log:
            for client, key in zip(listed, fresh, strict=True):
                keys[client] = key
            for client in listed:
                if inside[client]:
                    heap.remove(client)
                heap.offer(client)
                inside[client] = True
        self._key = keys  # after the replay it holds the current keys; the heap reads it from now on
        self._heap = heap
        self._base_order, self._log, self._suspect = (), [], False

    def _poll_heap(self, task: int, extra: Callable[[int], bool] | None, reject_all: bool = False) -> int | None:
        heap = self._heap
        assert heap is not None
        rejected: JavaHashMap[int] = JavaHashMap(hash_of=self._hashes.__getitem__)
        constraint, member = self._constraint, self._member
        while heap:
            client = heap.poll()
            assert client is not None
            member[client] = False
            self._members -= 1
            if not reject_all and constraint(client, task) and (extra is None or extra(client)):
                for back in rejected:
                    self._push(back)
                return client
            rejected.put(client)
        for back in rejected:
            self._push(back)
        return None


def _is_valid(array: list[int], keys: list[Key]) -> bool:
    return all(keys[array[i]] >= keys[array[(i - 1) >> 1]] for i in range(1, len(array)))
