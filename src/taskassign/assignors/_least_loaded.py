"""Kafka's sticky ``leastLoaded`` over every client, without walking every client per task.

Kafka's ``leastLoaded(task, candidates)`` walks the candidates in their HashSet order: an empty client is
taken at once; otherwise the answer is the least loaded client that would get a new task pair (the first
in that order among equal loads), else the least loaded one. For the active step c and every standby,
the candidates are all clients (minus a task's few holders), so Kafka's and a literal port's cost is
clients x tasks: 2 x 10^6 steps for 1,000 tasks on 1,000 clients, most of the legacy sticky assignor's time.

The answer only depends on the order ``(load, position in the walk)``. ``OrderedLoads`` keeps, per walk
order, a heap of ``(load key, position, client)`` (entries go stale when a client's load changes and are
skipped) and a heap of the positions of empty clients, so a call pops the lightest entries until one
qualifies and pushes the skipped ones back: a few entries instead of every client.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

__all__ = ("OrderedLoads",)


class OrderedLoads:
    """Heaps over one walk order of the clients (``order``), fed the clients' current load keys."""

    __slots__ = ("_count", "_empty", "_heap", "_key", "_position")

    def __init__(self, order: Sequence[int], key: Sequence[Any], count: Sequence[int]) -> None:
        self._key = key
        self._count = count
        self._position = {c: i for i, c in enumerate(order)}
        self._heap: list[tuple[Any, int, int]] = [(key[c], i, c) for i, c in enumerate(order)]
        heapq.heapify(self._heap)
        self._empty: list[tuple[int, int]] = [(i, c) for i, c in enumerate(order) if count[c] == 0]
        heapq.heapify(self._empty)

    def refresh(self, client: int) -> None:
        """``client``'s load key (or count) changed."""
        position = self._position[client]
        heapq.heappush(self._heap, (self._key[client], position, client))
        if self._count[client] == 0:
            heapq.heappush(self._empty, (position, client))

    def least_loaded(self, excluded: AbstractSet[int], has_new_pair: Callable[[int], bool]) -> int | None:
        """Kafka's leastLoaded over every client of the order except ``excluded``."""
        empty = self._empty_client(excluded)
        if empty is not None:
            return empty
        heap, key = self._heap, self._key
        pop, push = heapq.heappop, heapq.heappush
        kept: list[tuple[Any, int, int]] = []
        seen: set[int] = set()
        fallback = None
        found = None
        while heap:
            entry = pop(heap)
            client = entry[2]
            if entry[0] != key[client] or client in seen:
                continue  # stale, or a duplicate of a current entry: dropped
            seen.add(client)
            kept.append(entry)
            if client in excluded:
                continue
            if fallback is None:
                fallback = client
            if has_new_pair(client):
                found = client
                break
        for entry in kept:
            push(heap, entry)
        return found if found is not None else fallback

    def _empty_client(self, excluded: AbstractSet[int]) -> int | None:
        """The first empty client of the order that is not excluded."""
        empty, count = self._empty, self._count
        skipped = []
        result = None
        while empty:
            client = empty[0][1]
            if count[client] != 0:
                heapq.heappop(empty)
                continue
            if client in excluded:
                skipped.append(heapq.heappop(empty))
                continue
            result = client
            break
        for entry in skipped:
            heapq.heappush(empty, entry)
        return result
