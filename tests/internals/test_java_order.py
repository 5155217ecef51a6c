from __future__ import annotations

import random

from taskassign.ids import ProcessId, TaskId
from taskassign.internals.java_order import (
    HashSubsetOrder,
    JavaHashMap,
    JavaPriorityQueue,
    KeyedJavaPriorityQueue,
    grown_capacity,
    hash_iteration_order,
    hashmap_copy_capacity,
    hashset_copy_capacity,
    hashset_copy_order,
    java_hash,
    java_heap_is_valid,
    java_heap_poll,
    java_heap_push,
    java_heap_remove_at,
    java_string_key,
    priority_queue_poll_order,
)


def ids(*texts: str) -> list[TaskId]:
    return [TaskId.parse(t) for t in texts]


def test_spec_examples_of_hash_set_order() -> None:
    assert hash_iteration_order(ids("0_0", "0_1", "0_2")) == ids("0_2", "0_1", "0_0")
    assert hash_iteration_order(ids("0_0", "0_1", "1_0", "1_1")) == ids("1_0", "0_1", "0_0", "1_1")


def test_presized_copies_follow_jdk17() -> None:
    assert hashset_copy_capacity(11) == 16
    assert hashset_copy_capacity(12) == 32  # 12/.75 + 1 = 17 -> 32 (JDK 25 would use 16)
    assert hashset_copy_capacity(100) == 256
    assert hashmap_copy_capacity(3) == 8


def test_table_grows_past_three_quarters() -> None:
    table: JavaHashMap[int] = JavaHashMap()
    for i in range(12):
        table.put(i)
    assert table.capacity == 16
    table.put(12)
    assert table.capacity == 32


def test_uuid_hash_of_small_ids_is_n_and_orders_by_bucket() -> None:
    pids = [ProcessId.of_ints(0, n) for n in (17, 1, 16)]
    assert [java_hash(p) for p in pids] == [17, 1, 16]
    assert hash_iteration_order(pids) == [pids[2], pids[0], pids[1]]  # buckets 0, 1, 1 (insertion order)


def test_remove_then_put_moves_key_to_end_of_its_bucket() -> None:
    table: JavaHashMap[int] = JavaHashMap()
    for key in (1, 17, 33):  # all in bucket 1 of 16
        table.put(key)
    table.remove(1)
    table.put(1)
    assert table.keys() == [17, 33, 1]


def test_copy_order_deduplicates() -> None:
    assert hashset_copy_order(ids("0_2", "0_0", "0_2")) == hash_iteration_order(ids("0_0", "0_2"))


def test_priority_queue_polls_in_key_order_and_ties_follow_heap_layout() -> None:
    rng = random.Random(7)
    values = [rng.randrange(100) for _ in range(200)]
    queue = JavaPriorityQueue(lambda x: x, values)
    assert [queue.poll() for _ in range(len(values))] == sorted(values)
    assert queue.poll() is None
    # equal keys: order comes from the heap, not from insertion (java.util.PriorityQueue)
    items = [("a", 1), ("b", 1), ("c", 1), ("d", 0)]
    tie_queue = JavaPriorityQueue(lambda x: x[1])
    for item in items:
        tie_queue.offer(item)
    # hand-traced: [a] [a,b] [a,b,c] [d,a,c,b]; poll d -> [b,a,c]; poll b -> [c,a]; then c, a
    assert [tie_queue.poll()[0] for _ in range(4)] == ["d", "b", "c", "a"]  # type: ignore[index]


def test_priority_queue_remove_and_live_keys() -> None:
    weight = {"x": 3.0, "y": 2.0, "z": 1.0}
    queue = JavaPriorityQueue(lambda k: (weight[k], k), ["x", "y", "z"])
    assert queue.remove("y") and not queue.remove("y")
    weight["x"] = 0.5  # changes while inside the heap: Java does not notice until comparisons happen
    assert queue.poll() == "z"
    assert queue.poll() == "x"


def test_priority_queue_poll_order_is_the_java_heaps() -> None:
    rng = random.Random(7)
    for _ in range(300):
        keys = [rng.randint(0, rng.choice([1, 3, 20])) for _ in range(rng.randint(0, 60))]
        queue: JavaPriorityQueue[int] = JavaPriorityQueue(keys.__getitem__)
        for i in range(len(keys)):
            queue.offer(i)
        assert priority_queue_poll_order(keys) == [queue.poll() for _ in keys]


def test_grown_capacity_doubles_past_three_quarters() -> None:
    assert [grown_capacity(n) for n in (0, 12, 13, 24, 25, 96, 97)] == [16, 16, 32, 32, 64, 128, 256]
    assert grown_capacity(13, initial_capacity=64) == 64
    for n in range(0, 200, 7):
        table: JavaHashMap[int] = JavaHashMap()
        table.put_all(range(n))
        assert table.capacity == grown_capacity(n)


def test_subset_orders_equal_sets_built_by_walking_the_sequence() -> None:
    rng = random.Random(11)
    pids = [ProcessId.of_ints(rng.randrange(-(2**63), 2**63), rng.randrange(-(2**63), 2**63)) for _ in range(60)]
    source = hash_iteration_order(pids)  # a HashMap filled in some order, then walked
    orders = HashSubsetOrder(source)
    for _ in range(50):
        members = set(rng.sample(pids, rng.randrange(len(pids) + 1)))
        table: JavaHashMap[ProcessId] = JavaHashMap()
        table.put_all(p for p in source if p in members)
        assert orders.subset(members, len(members)) == table.keys()
        presized: JavaHashMap[ProcessId] = JavaHashMap(hashset_copy_capacity(len(members)))
        presized.put_all(p for p in source if p in members)
        assert orders.subset(members, len(members), initial_capacity=hashset_copy_capacity(len(members))) == \
            presized.keys()


def test_list_heap_equals_java_priority_queue_for_distinct_keys() -> None:
    """heapq's push, and its pop on a valid heap, leave Java's array; removes and pops on a heap made
    invalid by keys that changed while inside follow Java's rules through ``live``."""
    rng = random.Random(5)
    for _ in range(300):
        keys = {c: (rng.randrange(6), c) for c in range(rng.randint(1, 40))}
        java: JavaPriorityQueue[int] = JavaPriorityQueue(keys.__getitem__)
        entries: list[tuple[int, int]] = []
        for c in keys:
            java.offer(c)
            java_heap_push(entries, keys[c])
        assert [e[1] for e in entries] == java.array()
        for _ in range(30):
            inside = java.array()
            if not inside:
                break
            step = rng.random()
            if step < 0.3:  # keys change while inside, then each client is removed and offered again in turn
                changed = rng.sample(inside, min(len(inside), 2))
                stale = {c: keys[c] for c in changed}
                for c in changed:
                    keys[c] = (rng.randrange(6), c)
                fresh = dict(keys)
                for c in changed:  # while the first is pushed, the second still sits where its old key put it
                    java.remove(c)
                    java_heap_remove_at(entries, entries.index(stale[c]), lambda e, k=fresh: k[e[1]])
                    java.offer(c)
                    java_heap_push(entries, keys[c], lambda e, k=fresh: k[e[1]])
            elif step < 0.6:
                c = rng.choice(inside)
                java.remove(c)
                java_heap_remove_at(entries, entries.index(keys[c]))
            else:
                valid = java_heap_is_valid(entries)
                assert valid == all(keys[x] >= keys[java.array()[(i - 1) >> 1]] for i, x in enumerate(java.array())
                                    if i)
                assert java_heap_poll(entries, valid)[1] == java.poll()
            assert [e[1] for e in entries] == java.array()


def test_keyed_queue_equals_java_priority_queue_on_keys_with_ties() -> None:
    """Elements compared by a key alone leave in Java's heap order; the comparator-based JavaPriorityQueue
    (offers only, never a heapify) is the reference."""
    rng = random.Random(5)
    for _ in range(200):
        keyed: KeyedJavaPriorityQueue[int] = KeyedJavaPriorityQueue()
        key_of: dict[int, float] = {}
        reference: JavaPriorityQueue[int] = JavaPriorityQueue(key_of.__getitem__)
        for n in range(rng.randint(0, 60)):
            if keyed and rng.random() < 0.3:
                assert keyed.poll()[1] == reference.poll()
            else:
                key_of[n] = rng.choice((0.0, 0.5, 1.0, 1 / 3))
                keyed.offer(key_of[n], n)
                reference.offer(n)
        assert [item for _, item in keyed.array()] == reference.array()
        assert len(keyed) == len(reference)


def test_keyed_queue_add_all_offers_one_by_one() -> None:
    queue: KeyedJavaPriorityQueue[str] = KeyedJavaPriorityQueue()
    queue.add_all([(2, "a"), (1, "b"), (1, "c"), (0, "d")])
    assert [item for _, item in queue.array()] == ["d", "b", "c", "a"]
    assert [queue.poll()[1] for _ in range(4)] == ["d", "b", "c", "a"]
    assert not queue


def test_java_string_key_orders_utf16_units() -> None:
    assert sorted(["9", "10", "sub-b", "sub-a"], key=java_string_key) == ["10", "9", "sub-a", "sub-b"]
    assert java_string_key("\U0001f600") < java_string_key("\uffff")


def test_replace_head_is_poll_then_offer() -> None:
    rng = random.Random(8)
    for _ in range(300):
        one: KeyedJavaPriorityQueue[int] = KeyedJavaPriorityQueue()
        two: KeyedJavaPriorityQueue[int] = KeyedJavaPriorityQueue()
        for n in range(rng.randint(1, 40)):
            key = rng.randint(0, 5)
            one.offer(key, n)
            two.offer(key, n)
        for _ in range(rng.randint(0, 30)):
            key = rng.randint(0, 8)
            head = one.peek_item()
            assert one.replace_head(key) == head
            assert two.poll_item() == head
            two.offer(key, head)
            assert one.array() == two.array()
