"""Thread-level distribution: the expectations of Kafka's StreamsPartitionAssignorTest (spec 5.2)."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from taskassign._java_order import JavaPriorityQueue, UniqueJavaPriorityQueue
from taskassign.ids import TaskId
from taskassign.threads import ClientThreadsInput, assign_tasks_to_threads, distribute_client
from tests.helpers import tid

C1, C2, C3, C4 = "consumer1", "consumer2", "consumer3", "consumer4"
ALL_8 = [tid(t) for t in ("0_0", "0_1", "0_2", "0_3", "1_0", "1_1", "1_2", "1_3")]
PREVIOUS = {C1: ["0_0", "1_1", "1_3"], C2: ["0_3", "1_0"], C3: ["0_1", "0_2", "1_2"]}


def ids(*texts: str) -> list[TaskId]:
    return [tid(t) for t in texts]


def prev(mapping: dict[str, list[str]]) -> dict[str, tuple[TaskId, ...]]:
    """Every previous task reported as a running active (-2): lag order = TaskId order."""
    return {c: tuple(sorted(tid(t) for t in ts)) for c, ts in mapping.items()}


def as_sets(result: dict[str, list[TaskId]]) -> dict[str, set[TaskId]]:
    return {c: set(ts) for c, ts in result.items()}


def test_sticky_and_balanced_when_nothing_changes() -> None:
    result = assign_tasks_to_threads(ALL_8, [C1, C2, C3], {}, prev(PREVIOUS))
    assert as_sets(result) == {c: set(ids(*ts)) for c, ts in PREVIOUS.items()}


def test_new_task_goes_to_the_thread_below_the_minimum() -> None:
    result = assign_tasks_to_threads([*ALL_8, tid("2_0")], [C1, C2, C3], {}, prev(PREVIOUS))
    expected = {c: set(ids(*ts)) for c, ts in PREVIOUS.items()}
    expected[C2].add(tid("2_0"))
    assert as_sets(result) == expected


def test_maximally_sticky_when_a_member_leaves() -> None:
    result = assign_tasks_to_threads(ALL_8, [C1, C2], {}, prev(PREVIOUS))
    assert set(ids(*PREVIOUS[C1])) <= set(result[C1]) and set(ids(*PREVIOUS[C2])) <= set(result[C2])
    assert len(result[C1]) == len(result[C2]) == 4


def test_sticky_enough_when_a_member_joins() -> None:
    result = assign_tasks_to_threads(ALL_8, [C1, C2, C3, C4], {}, prev(PREVIOUS))
    assert set(result[C1]) <= set(ids(*PREVIOUS[C1])) and set(result[C3]) <= set(ids(*PREVIOUS[C3]))
    assert set(result[C2]) == set(ids(*PREVIOUS[C2]))
    assert [len(result[c]) for c in (C1, C2, C3, C4)] == [2, 2, 2, 2]


def test_new_tasks_interleave_by_subtopology_whatever_the_input_order() -> None:
    tasks = ids("0_0", "0_1", "0_2", "0_3", "1_0", "1_1", "1_2", "2_0", "2_1")
    expected = {C1: ids("0_0", "0_3", "1_2"), C2: ids("0_1", "1_0", "2_0"), C3: ids("0_2", "1_1", "2_1")}
    rng = random.Random(7)
    for _ in range(5):
        rng.shuffle(tasks)
        assert assign_tasks_to_threads(tasks, [C1, C2, C3], {}, {}) == expected


def test_stateless_tasks_are_dealt_evenly_ignoring_previous_owners() -> None:
    tasks = ids("0_0", "0_1", "0_2", "0_3", "1_0", "1_1", "1_2", "1_3")
    result = assign_tasks_to_threads(tasks, ["consumer10", "consumer11"], {}, None)
    assert result == {"consumer10": ids("0_0", "0_2", "1_0", "1_2"), "consumer11": ids("0_1", "0_3", "1_1", "1_3")}


def test_lowest_lag_first_when_a_thread_cannot_keep_everything() -> None:
    # consumer1 reported 0_1 as running (-2, lag -2) and 0_0 as a caught-up standby (lag 0)
    result = assign_tasks_to_threads(ids("0_0", "0_1"), [C1, C2], {}, {C1: (tid("0_1"), tid("0_0"))})
    assert result == {C1: ids("0_1"), C2: ids("0_0")}


def test_leftovers_follow_the_java_priority_queue_array_not_sorted_order() -> None:
    tasks = [TaskId(0, p) for p in range(13)]
    consumers = ["c1", "c2", "c3", "c4", "c5"]
    owned = {"c1": ids("0_4", "0_10"), "c2": ids("0_1", "0_3"), "c3": ids("0_0", "0_5"),
             "c4": ids("0_2", "0_8"), "c5": ids("0_7", "0_9")}
    reference = JavaPriorityQueue(lambda t: t, tasks)
    for ts in owned.values():
        for t in ts:
            reference.remove(t)
    assert reference.array() == ids("0_6", "0_12", "0_11")  # a heap, not sorted
    result = assign_tasks_to_threads(tasks, consumers, {}, {c: tuple(ts) for c, ts in owned.items()})
    assert [result[c][-1] for c in ("c1", "c2", "c3")] == ids("0_6", "0_12", "0_11")


def test_skipped_own_task_wins_a_leftover_slot() -> None:
    # min = 1: consumer1 keeps 0_0 and skips 0_4; the others get 0_1, 0_2; of the leftovers 0_3, 0_4
    # consumer1 takes its own 0_4 back, and 0_3 goes to the next thread at the minimum
    result = assign_tasks_to_threads(ids("0_0", "0_1", "0_2", "0_3", "0_4"), [C1, C2, C3], {},
                                     {C1: (tid("0_0"), tid("0_4"))})
    assert result == {C1: ids("0_0", "0_4"), C2: ids("0_1", "0_3"), C3: ids("0_2")}


def test_load_is_shared_across_the_three_calls() -> None:
    client = ClientThreadsInput(
        consumers=(C1, C2),
        stateful_active=tuple(ids("0_0", "0_1", "0_2")),
        standby=tuple(ids("1_0")),
        stateless_active=tuple(ids("2_0", "2_1")),
    )
    result = distribute_client(client)
    loads = {c: len(a.active) + len(a.standby) for c, a in result.items()}
    assert loads == {C1: 3, C2: 3}
    assert result[C1].active[:2] == tuple(ids("0_0", "0_2"))  # stateful first, then stateless


def _owned_client(**kw: object) -> ClientThreadsInput:
    parts = {t: ((f"topic{t.subtopology}", t.partition),) for t in ids("0_0", "0_1", "0_2", "0_3")}
    base: dict[str, object] = {"consumers": (C1, C2), "stateful_active": (), "standby": (),
                               "stateless_active": tuple(ids("0_0", "0_1", "0_2", "0_3")),
                               "source_partitions": parts}
    base.update(kw)
    return ClientThreadsInput(**base)  # type: ignore[arg-type]


def test_partition_owned_by_another_member_is_withheld() -> None:
    client = _owned_client(owned_in_group={("topic0", 1), ("topic0", 2)}, owner_in_client={("topic0", 2): C1})
    result = distribute_client(client)
    # consumer1 is dealt 0_0, 0_2 (owns topic0-2: kept); consumer2 0_1, 0_3 (0_1 owned by another client)
    assert result[C1].active == tuple(ids("0_0", "0_2")) and not result[C1].withheld
    assert result[C2].active == tuple(ids("0_3")) and result[C2].withheld == tuple(ids("0_1"))


def test_partition_owned_by_a_sibling_thread_is_withheld_too() -> None:
    client = _owned_client(owned_in_group={("topic0", 0)}, owner_in_client={("topic0", 0): C2})
    assert distribute_client(client)[C1].withheld == tuple(ids("0_0"))


def test_unattributed_partitions_of_the_client_are_never_withheld_inside_it() -> None:
    client = _owned_client(owned_in_group={("topic0", 0)}, owned_by_client_unattributed={("topic0", 0)})
    assert not any(a.withheld for a in distribute_client(client).values())


def test_withheld_previous_standby_becomes_temporary_standby_only_if_stateful() -> None:
    stateful = frozenset(ids("0_0"))
    client = _owned_client(owned_in_group={("topic0", 0), ("topic0", 2)}, stateful=stateful,
                           previous_standby=frozenset(ids("0_0", "0_2")))
    result = distribute_client(client)
    assert result[C1].withheld == tuple(ids("0_0", "0_2"))
    assert result[C1].standby == tuple(ids("0_0"))  # 0_2 has no changelog: no temporary standby


def test_unique_queue_matches_java_priority_queue() -> None:
    rng = random.Random(11)
    for _ in range(200):
        items = rng.sample(range(60), rng.randint(0, 40))
        java, fast = JavaPriorityQueue(lambda x: x, items), UniqueJavaPriorityQueue(items)
        for _ in range(30):
            if rng.random() < 0.5 and items:
                victim = rng.choice(items)
                assert java.remove(victim) == fast.remove(victim)
            else:
                assert java.poll() == fast.poll()
            assert java.array() == fast.array()


@given(
    n_consumers=st.integers(1, 6),
    stateful=st.integers(0, 25),
    standby=st.integers(0, 15),
    stateless=st.integers(0, 25),
    seed=st.integers(0, 2**32),
)
def test_every_thread_within_one_task_of_the_others(
    n_consumers: int, stateful: int, standby: int, stateless: int, seed: int
) -> None:
    rng = random.Random(seed)
    consumers = tuple(f"c{i}" for i in range(n_consumers))
    a = [TaskId(0, p) for p in range(stateful)]
    s = [TaskId(1, p) for p in range(standby)]
    b = [TaskId(2, p) for p in range(stateless)]
    previous = {c: tuple(sorted(rng.sample(a + s, min(len(a + s), rng.randint(0, 8))))) for c in consumers}
    rng.shuffle(a)
    result = distribute_client(ClientThreadsInput(consumers, tuple(a), tuple(s), tuple(b), previous))
    loads = [len(x.active) + len(x.standby) for x in result.values()]
    assert max(loads) - min(loads) <= 1
    dealt = [t for x in result.values() for t in x.active + x.standby]
    assert sorted(dealt) == sorted(a + s + b)
