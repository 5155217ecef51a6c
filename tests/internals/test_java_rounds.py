"""RoundsJavaPriorityQueue against KeyedJavaPriorityQueue: the same polled elements and the same backing array
under random operation sequences, including the fill steps' pattern (all keys equal, one common higher
re-offer key) that the round plans serve and every way of leaving it."""

from __future__ import annotations

import random

import pytest

from taskassign.internals.java_order import KeyedJavaPriorityQueue
from taskassign.internals.java_rounds import RoundsJavaPriorityQueue


def _pair(keys: list[float]) -> tuple[KeyedJavaPriorityQueue[int], RoundsJavaPriorityQueue[int]]:
    plain: KeyedJavaPriorityQueue[int] = KeyedJavaPriorityQueue()
    plain.add_all((k, i) for i, k in enumerate(keys))
    return plain, RoundsJavaPriorityQueue((k, i) for i, k in enumerate(keys))


@pytest.mark.parametrize("seed", range(60))
def test_random_sequences_match_the_plain_queue(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice([1, 2, 3, 4, 5, 7, 16, 33, 250])
    capacity = rng.choice([1, 4, 0])  # 0: mixed capacities (re-offer keys differ)
    caps = [capacity or rng.choice([1, 2, 3, 4]) for _ in range(n)]
    counts = [0 if rng.random() < 0.8 else rng.randrange(3) for _ in range(n)]
    plain, rounds = _pair([c / k for c, k in zip(counts, caps, strict=True)])
    next_item = n
    for _ in range(rng.randrange(1, 6 * n + 20)):
        assert bool(plain) == bool(rounds) and len(plain) == len(rounds)
        op = rng.random()
        if not plain:
            plain.offer(0.0, next_item)
            rounds.offer(0.0, next_item)
            caps.append(1)
            counts.append(0)
            next_item += 1
        elif op < 0.85:  # the fill step: the head gets one task and goes back
            j = plain.peek_item()
            assert rounds.peek_item() == j
            counts[j] += 1
            key = counts[j] / caps[j]
            assert plain.replace_head(key) == rounds.replace_head(key) == j
        elif op < 0.9:  # a member's count
            head_key, j = plain.array()[0]
            assert plain.replace_head(head_key + 1) == rounds.increment_head() == j
            counts[j] += caps[j]
        elif op < 0.94:  # the same key again (no higher key: the plan does not apply)
            head_key, j = plain.array()[0]
            assert plain.replace_head(head_key) == rounds.replace_head(head_key) == j
        elif op < 0.98:
            j = plain.poll_item()
            assert rounds.poll_item() == j
            if rng.random() < 0.7:
                plain.offer(counts[j] / caps[j], j)
                rounds.offer(counts[j] / caps[j], j)
        else:
            assert plain.array() == rounds.array()
    assert plain.array() == rounds.array()


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 250, 251, 2500])
def test_whole_rounds_match_the_plain_queue(n: int) -> None:
    """Many rounds in a row (the cold fill step), stopped mid-round and checked, then run on."""
    plain, rounds = _pair([0.0] * n)
    counts = [0] * n
    for step in range(3 * n + n // 2):
        j = plain.peek_item()
        counts[j] += 1
        assert plain.replace_head(counts[j] / 4) == rounds.replace_head(counts[j] / 4) == j, step
    assert plain.array() == rounds.array()
    for _ in range(n):
        j = plain.peek_item()
        counts[j] += 1
        assert plain.replace_head(counts[j] / 4) == rounds.replace_head(counts[j] / 4) == j
    assert plain.array() == rounds.array()


@pytest.mark.parametrize("seed", range(40))
def test_bulk_steps_match_the_plain_queue(seed: int) -> None:
    """round_rest + skip (a prefix of the round at once) and increment_many (k member placements at once) poll
    what the plain queue polls, one call at a time, and leave its array; mixed with single steps that leave a
    round midway."""
    rng = random.Random(seed)
    n = rng.choice([1, 2, 3, 4, 5, 9, 40, 257])
    counts = [0 if rng.random() < 0.9 else 1 for _ in range(n)]
    plain, rounds = _pair([float(c) for c in counts])
    for _ in range(rng.randrange(1, 40)):
        op = rng.random()
        if op < 0.4:
            rest, key = rounds.round_rest()
            if not rest:
                continue
            head_key = plain.array()[0][0]
            key = head_key + 1 if key is None else key
            take = rng.randint(1, len(rest))
            for item in rest[:take]:
                assert plain.replace_head(key) == item
            rounds.skip(take, key)
        elif op < 0.8:
            k = rng.randint(1, 3 * n)
            expected = [plain.replace_head(plain.array()[0][0] + 1) for _ in range(k)]
            assert rounds.increment_many(k) == expected
        else:
            head_key, j = plain.array()[0]
            key = head_key + rng.choice([1, 2])
            assert plain.replace_head(key) == rounds.replace_head(key) == j
        if rng.random() < 0.1:  # (reading the array leaves a round: seldom)
            assert plain.array() == rounds.array()
    assert plain.array() == rounds.array()


@pytest.mark.parametrize("n", [0, 1, 2, 4, 7])
def test_a_queue_of_equal_keys_is_the_offered_one(n: int) -> None:
    offered = RoundsJavaPriorityQueue((3, i) for i in range(n))
    made = RoundsJavaPriorityQueue.equal_keys(3, list(range(n)))
    for _ in range(2 * n):
        assert made.increment_head() == offered.increment_head()
    assert made.array() == offered.array()
