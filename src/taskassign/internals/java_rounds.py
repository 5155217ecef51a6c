"""A keyed ``java.util.PriorityQueue`` that skips its sifts while every element holds the same key.

The streams sticky assignor's fill steps poll the least loaded process, give it a task and offer it again
with a higher key (``KeyedJavaPriorityQueue.replace_head``), tens of thousands of times. Whenever every key in
the queue is equal (a "round" starts) and each re-offer gets one common higher key, which array slots Java
polls in that round, and where it leaves everything at its end, depend on the queue's size alone: the keys
compare as 0 and 1 whatever they are. One simulation per size (cached) gives that plan, and the queue just
reads it, O(1) a call instead of two sifts of log n steps. Anything else (another key, a plain poll or offer)
first rebuilds Java's exact array from the plan and falls back to ``KeyedJavaPriorityQueue``, keeping the
largest key so that it sees, in O(1) a call, when the head's key reaches it (all keys equal again); the
rebuild starts from one of ~32 cached layouts of the round, not from its start. Whole stretches of a round go
at once too: ``round_rest`` / ``skip`` (the next processes of a round, taken k at a time), ``increment_many``
(a member queue's k placements) and ``increment_rounds`` (thousands of member queues at the same point of a
round, one numpy take). Same outputs, in the same order, as the plain queue
(tests/internals/test_java_rounds.py checks random operation sequences against it).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any, Generic, TypeVar

import numpy as np

from taskassign.internals.java_order import KeyedJavaPriorityQueue

__all__ = ("RoundsJavaPriorityQueue",)

T = TypeVar("T")


def _simulate(n: int, steps: int) -> KeyedJavaPriorityQueue[int]:
    """The 0/1-keyed queue of slots 0..n-1 (all 0, offered in order: no sift moves them) after ``steps``
    ``replace_head(1)`` calls: from the cached layout at the last checkpoint, a few steps on (a fill step
    that leaves a round midway, e.g. a standby whose least loaded process holds the task, pays tens of steps,
    not thousands)."""
    every, layouts = _checkpoints(n)
    keys, items = layouts[steps // every]
    queue = KeyedJavaPriorityQueue[int].from_array(list(keys), list(items))
    for _ in range(steps % every):
        queue.replace_head(1)
    return queue


@lru_cache(maxsize=16)
def _checkpoints(n: int) -> tuple[int, tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]]:
    """A round over ``n`` equal keys sampled about 32 times: the step between samples, and the arrays (0/1
    keys, starting slots) at steps 0, every, 2 * every, ..."""
    every = max(16, -(-n // 32))
    queue = KeyedJavaPriorityQueue[int].from_array([0] * n, list(range(n)))
    layouts = []
    for step in range(n):
        if step % every == 0:
            keys, items = queue.backing()
            layouts.append((tuple(keys), tuple(items)))
        queue.replace_head(1)
    return every, tuple(layouts)


@lru_cache(maxsize=256)
def _increment_plan(n: int, step: int, k: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``k`` increments from step ``step`` of a round over ``n`` equal keys, every re-offer one higher than the
    round's key: the starting slot each one polls, and the slots the array then holds (a round's end reorders
    the array by the plan's final layout, so round ``r`` polls ``perm^r`` of the plan's slots)."""
    order, perm = _round_plan(n)
    current = tuple(range(n))  # the round's starting array, as slots of the first round's
    slots: list[int] = []
    for q in range(step, step + k):
        slots.append(current[order[q % n]])
        if q % n == n - 1:
            current = tuple(current[x] for x in perm)
    return tuple(slots), current


@lru_cache(maxsize=64)
def _round_plan(n: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A round over ``n`` equal keys: the starting slots in the order Java polls them, and the final array
    as starting slots."""
    queue = KeyedJavaPriorityQueue[int].from_array([0] * n, list(range(n)))
    order = tuple(queue.replace_head(1) for _ in range(n))
    return order, tuple(item for _, item in queue.array())


class RoundsJavaPriorityQueue(Generic[T]):
    """``KeyedJavaPriorityQueue``'s offer / poll / replace_head with its exact array, read from a cached plan
    while all keys are equal (see the module's docstring)."""

    __slots__ = ("_has_high", "_heap", "_high", "_low", "_max", "_n", "_order", "_perm", "_start", "_step")

    def __init__(self, entries: Iterable[tuple[Any, T]] = ()) -> None:
        self._heap: KeyedJavaPriorityQueue[T] = KeyedJavaPriorityQueue()
        self._heap.add_all(entries)
        self._start: list[T] | None = None  # the round's starting array; None: the heap is the truth
        self._order: tuple[int, ...] = ()
        self._perm: tuple[int, ...] = ()
        self._low: Any = None
        self._high: Any = None
        self._has_high = False
        self._n = 0
        self._step = 0
        self._max: Any = None
        self._try_rounds()

    @classmethod
    def equal_keys(cls, key: Any, items: list[T]) -> RoundsJavaPriorityQueue[T]:
        """The queue after offering ``items`` in order, all with ``key`` (no sift moves them: the array is the
        items' order), without the offers."""
        if not items:
            return cls()
        queue: RoundsJavaPriorityQueue[T] = cls.__new__(cls)  # straight into a round: thousands per call
        start = list(items)
        queue._heap = KeyedJavaPriorityQueue.from_array([key] * len(start), start)
        queue._start, queue._n, queue._step = start, len(start), 0
        queue._order, queue._perm = _round_plan(len(start))
        queue._low, queue._high, queue._has_high, queue._max = key, None, False, key
        return queue

    def __len__(self) -> int:
        return len(self._heap) if self._start is None else self._n

    def in_round(self) -> bool:
        """Every key equal (the plan is read); False: Java's array is sifted."""
        return self._start is not None

    def __bool__(self) -> bool:
        return bool(self._heap) if self._start is None else self._n > 0

    def _try_rounds(self) -> None:
        """Start a round if every key is equal; else note the largest key."""
        keys = self._heap.backing()[0]
        if keys:
            self._max = max(keys)
            if keys[0] == self._max:
                self._start_round()

    def _start_round(self) -> None:
        heap = self._heap
        n = len(heap)
        self._order, self._perm = _round_plan(n)
        keys, items = heap.backing()
        self._start = items
        self._low, self._has_high, self._n, self._step = keys[0], False, n, 0

    def _materialise(self) -> KeyedJavaPriorityQueue[T]:
        """Leave round mode: Java's array after the round's steps so far."""
        start = self._start
        if start is not None:
            low, high = self._low, self._high
            flags, slots = _simulate(self._n, self._step).backing()
            self._heap = KeyedJavaPriorityQueue.from_array(
                [high if flag else low for flag in flags], [start[slot] for slot in slots])
            self._start = None
            self._max = high if self._step else low
        return self._heap

    def array(self) -> list[tuple[Any, T]]:
        return self._materialise().array()

    def peek_item(self) -> T:
        start = self._start
        if start is None:
            return self._heap.peek_item()
        return start[self._order[self._step]]

    def replace_head(self, key: Any) -> T:
        """``poll()`` then ``offer(key, head)``; returns the head."""
        start = self._start
        if start is not None:
            if not self._has_high and key > self._low:
                self._high, self._has_high = key, True
            if self._has_high and key == self._high:
                step = self._step
                item = start[self._order[step]]
                step += 1
                if step == self._n:  # the round is over: every key is now the common higher one
                    self._start = list(map(start.__getitem__, self._perm))
                    self._low, self._has_high, step = self._high, False, 0
                self._step = step
                return item
            self._materialise()
        heap = self._heap
        item = heap.replace_head(key)
        if key > self._max:
            self._max = key
        if heap.backing()[0][0] == self._max:  # the head holds the largest key: all are equal
            self._start_round()
        return item

    def increment_head(self) -> T:
        """``replace_head(head's key + 1)`` (a member's task count going up by one); returns the head."""
        start = self._start
        if start is None:
            return self.replace_head(self._heap.backing()[0][0] + 1)
        key = self._low + 1  # the round's head holds the low key; replace_head's round step, written out
        if not self._has_high:  # (one call fewer per placement: a member queue takes every placement)
            self._high, self._has_high = key, True
        elif key != self._high:
            return self.replace_head(key)
        step = self._step
        item = start[self._order[step]]
        step += 1
        if step == self._n:
            self._start = list(map(start.__getitem__, self._perm))
            self._low, self._has_high, step = key, False, 0
        self._step = step
        return item

    def round_rest(self) -> tuple[list[T], Any]:
        """The items the current round polls next, in order, and the key every re-offer must carry for the round
        to go on (None: the round has not fixed it yet, any key above the round's does); ``[]`` outside a round.
        ``skip`` then takes a prefix of them at once."""
        start = self._start
        if start is None:
            return [], None
        return list(map(start.__getitem__, self._order[self._step:])), (self._high if self._has_high else None)

    def skip(self, steps: int, key: Any) -> None:
        """``steps`` ``replace_head(key)`` calls within the current round (the first ``steps`` items of
        ``round_rest``, ``key`` the round's re-offer key: the caller checked both), in O(1) but the round's end."""
        if steps <= 0:
            return
        start = self._start
        assert start is not None and steps <= self._n - self._step and key > self._low
        step = self._step + steps
        if step == self._n:
            self._start = list(map(start.__getitem__, self._perm))
            self._low, self._has_high, step = key, False, 0
        else:
            self._high, self._has_high = key, True
        self._step = step

    def increment_many(self, k: int) -> list[T]:
        """``k`` ``increment_head`` calls, their heads in order: while all keys are equal (a round), read from a
        cached plan in one step whatever ``k`` (a process's members taking its fill tasks at once)."""
        out: list[T] = []
        while k > 0:
            start = self._start
            if start is None or (self._has_high and self._high != self._low + 1):
                out.append(self.increment_head())
                k -= 1
                continue
            n, step = self._n, self._step
            slots, final = _increment_plan(n, step, k)
            out.extend(map(start.__getitem__, slots))
            rounds = (step + k) // n
            if rounds:
                self._start = [start[slot] for slot in final]
                self._low += rounds
            self._step = (step + k) % n
            self._has_high = self._step > 0
            self._high = self._low + 1
            break
        return out

    def poll_item(self) -> T:
        """Remove and return the head (the largest key stays right: only an equal one can be the head)."""
        return self._materialise().poll_item()

    def offer(self, key: Any, item: T) -> None:
        heap = self._materialise()
        if not heap or key > self._max:
            self._max = key
        heap.offer(key, item)

    def increment_position(self) -> tuple[int, int] | None:
        """(size, step) of the round that ``increment_many`` would read its plan from; None outside one."""
        if self._start is None or (self._has_high and self._high != self._low + 1):
            return None
        return self._n, self._step

    def round_array(self) -> list[T]:
        """The current round's starting array (in a round only)."""
        assert self._start is not None
        return self._start

    def incremented(self, k: int, start: list[T] | None) -> None:
        """State after ``k`` increments read from the plan elsewhere (``increment_rounds``): ``start``, the
        array of the round then under way, when a round ended (None: the same round)."""
        rounds, self._step = divmod(self._step + k, self._n)
        if start is not None:
            self._start = start
            self._low += rounds
        self._has_high = self._step > 0
        self._high = self._low + 1

    @staticmethod
    def increment_rounds(queues: list[RoundsJavaPriorityQueue[int]], k: int) -> np.ndarray | None:
        """``increment_many(k)`` on every queue at once, their heads one row per queue, when all are in a round
        at the same step over the same size (one plan for all: the assignor's processes of equal size, each given
        the same number of tasks); None, changing nothing, when they are not."""
        if not queues:
            return np.empty((0, k), dtype=np.int64)
        position = queues[0].increment_position()
        if position is None or any(queue.increment_position() != position for queue in queues):
            return None
        n, step = position
        slots, final = _increment_plan(n, step, k)
        starts = np.array([queue.round_array() for queue in queues], dtype=np.int64)
        heads = starts[:, list(slots)]
        moved = starts[:, list(final)].tolist() if step + k >= n else [None] * len(queues)
        for queue, start in zip(queues, moved, strict=True):
            queue.incremented(k, start)
        return heads
