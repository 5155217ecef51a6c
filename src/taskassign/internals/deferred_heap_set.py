"""Kafka's ConstrainedPrioritySet, bit-exact, for pools whose members change weight in place.

In the high-availability assignor's movement phases (Kafka's ``TaskMovement``) a destination client
loses a task while it sits in the pool's heap, and the source is pushed before the destination is
refreshed. Java's heap can then end up invalid (an element above a smaller one), and later polls
return a client that is not the true minimum (docs/kafka-differences.md, H9). So these pools
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

Polls that return someone are cheap too. While the deferred heap is known to be valid, a poll
returns the lightest eligible member (a valid heap pops in key order) and is only logged. A
materialised heap is a list of distinct ``(weight, client)`` keys run through ``heapq`` wherever that
gives Java's array (``internals.java_order.java_heap_*``); only offers that meet a stale member, and pops from
a heap such an offer left invalid, follow Java's rules step by step, and only the slots they touched
are re-checked.

Precondition (true for the movement phases): a member's weight changes only just before an
``offer_all`` that lists it, with no other operation in between.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Collection, Iterable, Sequence
from itertools import repeat

from taskassign.internals.java_order import (
    JavaHashMap,
    grown_capacity,
    java_heap_is_valid,
    java_heap_poll,
    java_heap_push,
    java_heap_remove_at,
)

__all__ = ("DeferredJavaPrioritySet", "hash_set_layout")

Key = tuple[float, int]
#: A logged offer_all: the clients offered, their keys then, and the keys they replaced.
Offer = tuple[tuple[int, ...], tuple[Key, ...], tuple[Key, ...]]
#: A logged poll on a valid heap: the client it returned.
Poll = int


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

    __slots__ = ("_base_order", "_buckets", "_candidates", "_constraint", "_dirty_groups", "_group_of", "_groups",
                 "_hashes", "_heap", "_key", "_log", "_member", "_members", "_order_all", "_size", "_sorted_order",
                 "_suspect", "_valid", "_weight")

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
        self._size = size
        self._order_all, self._groups = hash_set_layout(hashes)
        #: The group (index into _groups) of every client that shares a bucket, and the groups whose
        #: members' keys changed since _sorted_order (the full order, groups sorted by key) was last fixed:
        #: a rejection of everyone re-sorts only those (it re-sorted every group, O(clients) per poll).
        self._group_of = {c: g for g, (start, end) in enumerate(self._groups) for c in self._order_all[start:end]}
        self._dirty_groups: set[int] = set(range(len(self._groups)))
        self._sorted_order: list[int] = list(self._order_all)
        #: Per HashSet capacity, every client's bucket (for the order rejected clients are offered back in).
        self._buckets: dict[int, list[int]] = {}
        #: The key of every client as last observed (Java reads the same live values).
        self._key: list[Key] = [(0.0, c) for c in range(size)]
        self._member = [False] * size
        self._members = 0
        # Deferred form: insert _base_order into an empty heap with the keys of that moment, then replay
        # _log. Offers log the keys they replaced, so the base keys are the current ones with the log undone.
        self._heap: list[Key] | None = None
        self._base_order: Sequence[int] = ()
        self._log: list[Offer | Poll] = []
        #: The deferred heap may have become invalid since its base (an offer while a member was stale).
        self._suspect = False
        #: The materialised heap is valid: every key >= its parent's.
        self._valid = True

    def __len__(self) -> int:
        return self._members

    # -- offers -------------------------------------------------------------------------------------

    def offer(self, client: int) -> None:
        self.offer_all((client,))

    def offer_everyone(self, clients: Sequence[int]) -> None:
        """Every client again, as Kafka does: this heap replays Kafka's, so no offer may be skipped."""
        self.offer_all(clients)

    def offer_all(self, clients: Iterable[int]) -> None:
        """Offer each client in turn, after observing the new weights of all of them (see Precondition)."""
        listed = clients if isinstance(clients, tuple) else tuple(clients)
        keys, weight, member = self._key, self._weight, self._member
        fresh: list[Key] = []
        old: list[Key] = []
        stale = False
        for client in listed:  # (a plain loop: the usual two clients cost less than a comprehension)
            key = (weight(client), client)
            before = keys[client]
            # Java pushes the first client while later members still sit where their old keys put them
            if fresh and member[client] and key != before:
                stale = True
            fresh.append(key)
            old.append(before)
        group_of = self._group_of
        for client, key in zip(listed, fresh, strict=True):
            keys[client] = key
            if client in group_of:
                self._dirty_groups.add(group_of[client])
        if self._heap is None:
            self._suspect = self._suspect or stale
            self._log.append((listed, tuple(fresh), tuple(old)))
        else:
            touched = _offer_each(self._heap, listed, old, keys, member, stale)
            if self._valid and touched is not None:
                self._valid = java_heap_is_valid(self._heap, touched)
        for client in listed:
            if not member[client]:
                member[client] = True
                self._members += 1

    # -- polls --------------------------------------------------------------------------------------

    def poll(self, task: int, extra: Callable[[int], bool] | None = None,
             among: Collection[int] | None = None) -> int | None:
        """Kafka's poll: the first client in heap order that satisfies both predicates (``among`` is not used:
        the replay must pop what Java pops)."""
        candidates = self._candidates(task) if self._candidates is not None else None
        if candidates is not None:
            member, keys = self._member, self._key
            best = -1
            for client in candidates:
                if member[client] and (extra is None or extra(client)) and (best < 0 or keys[client] < keys[best]):
                    best = client
            if best < 0:
                if self._members == self._size:
                    if self._heap is None and not self._groups:  # the common case of _reject_everyone
                        self._base_order, self._log, self._suspect = self._order_all, [], False
                    else:
                        self._reject_everyone()
                    return None
            elif self._heap is None and not self._suspect:
                # a valid heap pops in key order: the lightest eligible member is the answer
                self._log.append(best)
                member[best] = False
                self._members -= 1
                return best
            elif self._heap is not None and self._valid:
                return self._poll_heap(task, extra, until=best)
        self._materialize()
        return self._poll_heap(task, extra)

    def _reject_everyone(self) -> None:
        """A poll that every member fails: Java pops them all and offers them back in HashSet order."""
        if self._heap is None and not self._log and self._base_order is self._order_all:
            return  # the same rebuild as last time: same order, no key changed since
        order = self._order_all
        if self._groups:
            if self._heap is None and self._suspect:
                self._materialize()
            if self._heap is not None and not self._valid:
                self._poll_heap(-1, None, reject_all=True)  # bucket-mates leave an invalid heap out of order
                return
            order = self._sorted_order  # a valid heap pops in key order: bucket-mates by key
            key = self._key
            for g in self._dirty_groups:
                start, end = self._groups[g]
                order[start:end] = sorted(order[start:end], key=key.__getitem__)
            self._dirty_groups.clear()
        self._heap = None
        self._base_order = order
        self._log = []
        self._suspect = False

    def _materialize(self) -> None:
        """Replay the deferred heap: the base insertions, then the logged offers and polls."""
        if self._heap is not None:
            return
        keys = list(self._key)
        for entry in reversed(self._log):
            if isinstance(entry, tuple):
                for client, key in zip(entry[0], entry[2], strict=True):
                    keys[client] = key
        heap: list[Key] = []
        inside = [False] * self._size
        base = self._base_order
        # java_heap_push without live keys (the base's keys are distinct and fixed), one push per client in
        # base order; driven by map so that the loop runs in C (this is the movement phases' hot spot)
        deque(map(heapq.heappush, repeat(heap), map(keys.__getitem__, base)), maxlen=0)
        deque(map(inside.__setitem__, base, repeat(True)), maxlen=0)
        valid = True
        for entry in self._log:
            if isinstance(entry, tuple):
                listed, fresh, old = entry
                stale = any(inside[c] and f != o for c, f, o in zip(listed[1:], fresh[1:], old[1:], strict=True))
                for client, key in zip(listed, fresh, strict=True):
                    keys[client] = key
                touched = _offer_each(heap, listed, old, keys, inside, stale)
                for client in listed:
                    inside[client] = True
                if valid and touched is not None:
                    valid = java_heap_is_valid(heap, touched)
            else:  # a poll logged while the heap was valid: pop up to the client it returned
                rejected = []
                while heap:
                    client = java_heap_poll(heap, valid)[1]
                    inside[client] = False
                    if client == entry:
                        break
                    rejected.append(client)
                for client in self._hash_set_order(rejected):
                    java_heap_push(heap, keys[client])
                    inside[client] = True
        self._heap = heap
        self._valid = valid
        self._base_order, self._log, self._suspect = (), [], False

    def _poll_heap(self, task: int, extra: Callable[[int], bool] | None, until: int | None = None,
                   reject_all: bool = False) -> int | None:
        """Java's poll on the materialised heap: pop until a client qualifies (``until``: the answer is
        known), then offer the rejected ones back in HashSet order."""
        heap = self._heap
        assert heap is not None
        valid = self._valid
        constraint, member = self._constraint, self._member
        if valid and until is not None:
            return self._poll_valid_until(heap, until)
        rejected = []
        found = None
        while heap:
            client = java_heap_poll(heap, valid)[1]
            member[client] = False
            self._members -= 1
            if (client == until) if until is not None else (
                    not reject_all and constraint(client, task) and (extra is None or extra(client))):
                found = client
                break
            rejected.append(client)
        if until is not None and found is None:
            raise AssertionError(f"client {until} was expected in the heap")
        keys = self._key
        for client in self._hash_set_order(rejected):
            java_heap_push(heap, keys[client])
            member[client] = True
            self._members += 1
        if not valid:
            self._valid = java_heap_is_valid(heap)
        return found

    def _poll_valid_until(self, heap: list[Key], until: int) -> int:
        """``_poll_heap`` on a valid heap whose answer is known: pop in key order up to ``until`` and push
        the others back (they stay members), at C speed."""
        pop, push = heapq.heappop, heapq.heappush
        rejected = []
        while heap:
            client = pop(heap)[1]
            if client == until:
                break
            rejected.append(client)
        else:
            raise AssertionError(f"client {until} was expected in the heap")
        keys = self._key
        for client in self._hash_set_order(rejected):
            push(heap, keys[client])
        self._member[until] = False
        self._members -= 1
        return until

    def _hash_set_order(self, clients: list[int]) -> list[int]:
        """How a Java HashSet iterates ``clients`` after they were added in this order (default capacity)."""
        if len(clients) < 2:
            return clients
        capacity = grown_capacity(len(clients))
        buckets = self._buckets.get(capacity)
        if buckets is None:
            buckets = self._buckets[capacity] = []
            for h in self._hashes:
                h &= 0xFFFFFFFF
                buckets.append((h ^ (h >> 16)) & (capacity - 1))
        return sorted(clients, key=buckets.__getitem__)  # stable: insertion order within a bucket


def _offer_each(heap: list[Key], listed: tuple[int, ...], old: Sequence[Key], keys: list[Key],
                inside: list[bool], stale: bool) -> list[int] | None:
    """Java's ``offer`` of each listed client in turn on a materialised heap: a client inside is removed
    (found by the key it was pushed with) and pushed again with its new key. With ``stale`` a later
    client still sits under its old key while earlier ones move, so comparisons read the live keys;
    returns the slots written then (the only places the heap can have turned invalid), else None."""
    live = (lambda e: keys[e[1]]) if stale else None
    touched: list[int] | None = [] if stale else None
    for client, before in zip(listed, old, strict=True):
        if inside[client]:
            java_heap_remove_at(heap, heap.index(before), live, touched)
        java_heap_push(heap, keys[client], live, touched)
    return touched
