"""ConstrainedPrioritySet: Kafka's heap, the true-minimum set, the deferred heap."""

from __future__ import annotations

import random
from collections.abc import Callable, Collection

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskassign.ids import ProcessId, TaskId
from taskassign.internals.constrained_priority_set import (
    ClientPool,
    ConstrainedPrioritySet,
    IndexedConstrainedPrioritySet,
)
from taskassign.internals.deferred_heap_set import DeferredJavaPrioritySet, hash_set_layout
from tests.helpers import PID_1, PID_2, PID_3, TASK_0_0, TASK_0_1

ANY = TaskId(0, 0)


def test_p20_lightest_first_then_none() -> None:
    weights = {PID_1: 3.0, PID_2: 2.0, PID_3: 1.0}
    pool: ConstrainedPrioritySet[ProcessId, TaskId] = ConstrainedPrioritySet(lambda c, t: True, weights.__getitem__)
    pool.offer_all([PID_1, PID_2, PID_3])
    assert [pool.poll(ANY) for _ in range(4)] == [PID_3, PID_2, PID_1, None]


def test_p20_ties_go_to_the_lower_process_id_in_java_uuid_order() -> None:
    high = ProcessId("80000000-0000-0000-0000-000000000000")  # negative msb: sorts first in Java
    pool: ConstrainedPrioritySet[ProcessId, TaskId] = ConstrainedPrioritySet(lambda c, t: True, lambda c: 1.0)
    pool.offer_all([PID_2, high, PID_1])
    assert [pool.poll(ANY) for _ in range(3)] == [high, PID_1, PID_2]


def test_p20_offering_twice_keeps_one_copy() -> None:
    pool: ConstrainedPrioritySet[ProcessId, TaskId] = ConstrainedPrioritySet(lambda c, t: True, lambda c: 1.0)
    pool.offer(PID_1)
    pool.offer(PID_1)
    assert len(pool) == 1
    assert [pool.poll(ANY), pool.poll(ANY)] == [PID_1, None]


def test_p20_constraint_and_filter_apply_to_one_poll_only() -> None:
    weights = {PID_1: 1.0, PID_2: 2.0, PID_3: 3.0}
    pool: ConstrainedPrioritySet[ProcessId, TaskId] = ConstrainedPrioritySet(
        lambda c, t: not (c == PID_1 and t == TASK_0_1), weights.__getitem__)
    pool.offer_all(weights)
    assert pool.poll(TASK_0_1) == PID_2  # the constraint rejects P1 for 0_1 ...
    assert pool.poll(TASK_0_0, lambda c: c != PID_1) == PID_3  # ... a filter rejects it for one poll ...
    assert pool.poll(TASK_0_0) == PID_1  # ... and P1 is still there
    assert pool.poll(TASK_0_0) is None


def test_empty_or_unsatisfiable_pool_returns_none() -> None:
    pool: ConstrainedPrioritySet[ProcessId, TaskId] = ConstrainedPrioritySet(lambda c, t: False, lambda c: 0.0)
    assert pool.poll(ANY) is None
    pool.offer(PID_1)
    assert pool.poll(ANY) is None
    assert len(pool) == 1  # rejected clients are offered back


def _indexed(constraint: Callable[[int, int], bool], weight: Callable[[int], float], n: int,
             candidates: Callable[[int], Collection[int] | None] | None) -> ClientPool:
    return IndexedConstrainedPrioritySet(n, constraint, weight, candidates)


def _deferred(constraint: Callable[[int, int], bool], weight: Callable[[int], float], n: int,
              candidates: Callable[[int], Collection[int] | None] | None) -> ClientPool:
    return DeferredJavaPrioritySet(n, constraint, weight, list(range(n)), candidates)


@pytest.mark.parametrize("make", [_indexed, _deferred])
@pytest.mark.parametrize("hinted", [False, True])
def test_p20_for_the_fast_implementations(
    make: Callable[..., ClientPool], hinted: bool,
) -> None:
    weights = [3.0, 2.0, 1.0, 1.0]
    allowed = {0: {0, 1, 2}, 1: {0, 1, 2, 3}}
    pool = make(lambda c, t: c in allowed[t], weights.__getitem__, 4, allowed.get if hinted else None)
    pool.offer_all(range(4))
    pool.offer(2)  # twice: still one copy
    assert pool.poll(0) == 2
    assert pool.poll(1, lambda c: c != 3) == 1
    assert pool.poll(1) == 3  # the filter applied to one poll only
    assert pool.poll(0) == 0
    assert pool.poll(0) is None


def _pattern(seed: int, n: int, steps: int, hashes: list[int], make: str) -> list[int | None]:
    """HA's movement pattern: poll, then the source gains a task and the destination (a member,
    still in the heap) may lose one, then ``offer_all((source, destination))``."""
    rng = random.Random(seed)
    loads = [rng.randint(0, 3) for _ in range(n)]
    caught_up = {t: set(rng.sample(range(n), rng.randint(0, min(3, n)))) for t in range(steps)}

    def constraint(c: int, t: int) -> bool:
        return c in caught_up[t]

    def weight(c: int) -> float:
        return float(loads[c])

    pool: ClientPool
    if make == "java":
        pool = ConstrainedPrioritySet(constraint, weight, hashes.__getitem__)
    elif make == "deferred":
        pool = DeferredJavaPrioritySet(n, constraint, weight, hashes, caught_up.get)
    else:
        pool = IndexedConstrainedPrioritySet(n, constraint, weight, caught_up.get)
    pool.offer_all(range(n))
    moves = random.Random(seed + 1)
    polled: list[int | None] = []
    for t in range(steps):
        source = pool.poll(t)
        polled.append(source)
        if source is None:
            source = moves.randrange(n)
        destination = moves.randrange(n)
        if destination == source:
            destination = (source + 1) % n
        loads[source] += 1
        loads[destination] -= moves.randint(0, 1)
        pool.offer_all((source, destination))
    return polled


def test_kafkas_heap_can_return_a_client_that_is_not_the_lightest() -> None:
    # Found by search: the destination's weight drops while it sits in the heap and the source is
    # pushed first; the heap is left invalid and a later poll misses the true minimum.
    hashes = list(range(8))
    java = _pattern(1624, 8, 20, hashes, "java")
    assert _pattern(1624, 8, 20, hashes, "true-min") != java
    assert _pattern(1624, 8, 20, hashes, "deferred") == java


@settings(max_examples=300)
@given(st.integers(0, 10**9), st.integers(2, 24), st.booleans())
def test_deferred_heap_equals_kafkas_heap(seed: int, n: int, colliding: bool) -> None:
    rng = random.Random(seed)
    # small hash ranges make clients share HashSet buckets, where the pop order decides the layout
    hashes = [rng.randrange(4) * 64 if colliding else rng.randrange(2**31) for _ in range(n)]
    assert _pattern(seed, n, 30, hashes, "deferred") == _pattern(seed, n, 30, hashes, "java")


def test_hash_set_layout_groups_bucket_mates() -> None:
    order, groups = hash_set_layout([0, 16, 1, 17, 2])  # 5 entries: 16 buckets; 0/16 and 1/17 collide
    assert order == [0, 1, 2, 3, 4]
    assert groups == [(0, 2), (2, 4)]


def _two_poll_pattern(seed: int, n: int, steps: int, hashes: list[int], make: str) -> list[object]:
    """HA's active-movement pattern: a filtered poll, then (if it found no one) an unfiltered one; the
    source gains a task, the destination may lose one (or gain one back as a warm-up), and a client that
    did not come from the pool (a member) can be the source."""
    rng = random.Random(seed)
    loads = [rng.randint(0, 4) for _ in range(n)]
    caught_up = {t: set(rng.sample(range(n), rng.randint(0, n))) for t in range(steps)}
    holders = {t: set(rng.sample(range(n), rng.randint(0, n))) for t in range(steps)}

    def constraint(c: int, t: int) -> bool:
        return c in caught_up[t]

    def weight(c: int) -> float:
        return loads[c] / (1 + c % 3)

    pool: ClientPool
    if make == "java":
        pool = ConstrainedPrioritySet(constraint, weight, hashes.__getitem__)
    else:
        pool = DeferredJavaPrioritySet(n, constraint, weight, hashes, caught_up.get)
    pool.offer_all(range(n))
    moves = random.Random(seed + 1)
    seen: list[object] = []
    for t in range(steps):
        source = pool.poll(t, holders[t].__contains__)
        seen.append(source)
        if source is None:
            source = pool.poll(t)
            seen.append(source)
        if source is None:
            source = moves.randrange(n)  # e.g. the most caught-up client: still in the pool
        destination = moves.randrange(n)
        if destination == source:
            destination = (source + 1) % n
        loads[source] += 1
        loads[destination] += moves.choice([-1, -1, 0])
        pool.offer_all((source, destination))
        seen.append(len(pool))
    return seen


@settings(max_examples=300)
@given(st.integers(0, 10**9), st.integers(2, 30), st.booleans())
def test_deferred_heap_equals_kafkas_heap_with_filters_and_members_as_sources(seed: int, n: int,
                                                                              colliding: bool) -> None:
    rng = random.Random(seed)
    hashes = [rng.randrange(4) * 64 if colliding else rng.randrange(2**31) for _ in range(n)]
    assert _two_poll_pattern(seed, n, 40, hashes, "deferred") == _two_poll_pattern(seed, n, 40, hashes, "java")
