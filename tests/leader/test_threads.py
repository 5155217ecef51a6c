"""Thread-level distribution: the expectations of Kafka's StreamsPartitionAssignorTest (``assignTasksToThreads``)."""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from taskassign.errors import TaskAssignmentException
from taskassign.ids import TaskId
from taskassign.internals.java_order import JavaPriorityQueue, UniqueJavaPriorityQueue, hash_iteration_order
from taskassign.leader.followups import with_consumer_followups
from taskassign.leader.threads import (
    ClientThreadsInput,
    _owned_elsewhere,
    assign_tasks_to_threads,
    distribute_client,
    new_client_threads_input,
)
from taskassign.model import ConsumerAssignment
from tests.helpers import tid
from tests.leader.threads_reference import reference_assign_tasks_to_threads

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


def _random_call(rng: random.Random) -> tuple[list[TaskId], list[str], dict[str, int], dict[str, tuple[TaskId, ...]]]:
    """Tasks in a random (collection) order, consumers with earlier loads, previous owners that overlap."""
    tasks = [TaskId(rng.randrange(3), p) for p in range(rng.randint(0, 30))]
    tasks = list(dict.fromkeys(tasks))
    rng.shuffle(tasks)
    consumers = [f"c{i:02d}" for i in range(rng.randint(1, 9))]
    loads = {c: rng.randint(0, 3) for c in consumers if rng.random() < 0.6}
    universe = tasks + [TaskId(5, p) for p in range(3)]  # some previous tasks are not in this call
    previous = {c: tuple(rng.sample(universe, min(len(universe), rng.randint(0, 6)))) for c in consumers
                if rng.random() < 0.7}
    return tasks, consumers, loads, previous


def _outcome(
    assign: object, tasks: list[TaskId], consumers: list[str], loads: dict[str, int],
    prev: dict[str, tuple[TaskId, ...]] | None,
) -> object:
    try:
        return assign(tasks, consumers, loads, prev)  # type: ignore[operator]
    except TaskAssignmentException:
        return "TaskAssignmentException"


@given(seed=st.integers(0, 2**32))
def test_assign_tasks_to_threads_equals_the_literal_java_queue(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(20):
        tasks, consumers, loads, previous = _random_call(rng)
        prev = previous if rng.random() < 0.8 else None
        fast_loads, reference_loads = dict(loads), dict(loads)
        fast = _outcome(assign_tasks_to_threads, tasks, consumers, fast_loads, prev)
        reference = _outcome(reference_assign_tasks_to_threads, tasks, consumers, reference_loads, prev)
        assert fast == reference
        if fast != "TaskAssignmentException":
            assert {c: v for c, v in fast_loads.items() if v} == {c: v for c, v in reference_loads.items() if v}


@given(seed=st.integers(0, 2**32), consumer_count=st.sampled_from([1, 2, 6, 300]))
def test_distribute_client_equals_the_reference(seed: int, consumer_count: int) -> None:
    rng = random.Random(seed)
    consumers = tuple(f"c{i:03d}" for i in range(rng.randint(1, consumer_count)))
    pool = [TaskId(s, p) for s in range(4) for p in range(40)]
    chosen = rng.sample(pool, rng.randint(0, 120))
    stateful = frozenset(t for t in pool if t.subtopology < 3)
    active = sorted(t for t in chosen if rng.random() < 0.5)
    standby = sorted(t for t in chosen if t not in active and t in stateful)
    previous = {c: tuple(sorted(rng.sample(sorted(stateful), rng.randint(0, 5)))) for c in consumers
                if rng.random() < 0.5}
    stateful_active = [t for t in active if t in stateful]
    stateless_active = [t for t in active if t not in stateful]
    if rng.random() < 0.5:  # TaskId order, the HashSet order computed on demand
        given = ClientThreadsInput(consumers, tuple(stateful_active), tuple(standby), tuple(stateless_active),
                                   previous, hash_set_order=hash_iteration_order)
    else:  # already in the Java collection order
        given = ClientThreadsInput(consumers, tuple(hash_iteration_order(stateful_active)), tuple(standby),
                                   tuple(hash_iteration_order(stateless_active)), previous)
    fast = distribute_client(given)
    load: dict[str, int] = {}
    expected = [reference_assign_tasks_to_threads(hash_iteration_order(stateful_active), consumers, load, previous),
                reference_assign_tasks_to_threads(standby, consumers, load, previous),
                reference_assign_tasks_to_threads(hash_iteration_order(stateless_active), consumers, load, None)]
    assert list(fast) == list(consumers)
    for c in consumers:
        assert fast[c].active == tuple(expected[0][c] + expected[2][c])
        assert fast[c].standby == tuple(expected[1][c])


def test_a_single_thread_gets_everything_its_own_tasks_first_and_owned_ones_withheld() -> None:
    stateful = frozenset(ids("0_0", "0_1", "0_2"))
    client = _owned_client(consumers=(C1,), stateful_active=tuple(ids("0_2", "0_0")),
                           stateless_active=tuple(ids("0_3")), standby=tuple(ids("0_1")),
                           prev_tasks_by_lag={C1: tuple(ids("0_2", "0_1"))},
                           stateful=stateful, previous_standby=frozenset(ids("0_0")),
                           owned_in_group={("topic0", 0), ("topic0", 3)}, owner_in_client={("topic0", 3): C1})
    result = distribute_client(client)
    assert result[C1].active == tuple(ids("0_2", "0_3"))  # its own 0_2 first; 0_0 is owned by another member
    assert result[C1].withheld == tuple(ids("0_0"))
    assert result[C1].standby == tuple(ids("0_1", "0_0"))  # 0_0 stays warm as a temporary standby


@given(seed=st.integers(0, 2**32), deadline=st.sampled_from([None, 0, 77]))
def test_withholding_and_followup_carriers_equal_the_plain_rules(seed: int, deadline: int | None) -> None:
    """Ownership spread over this client's consumers, its unattributed partitions and other members: the
    withheld tasks are exactly those ``_owned_elsewhere`` names, and the follow-ups are what
    ``with_consumer_followups`` puts on the plain distribution."""
    rng = random.Random(seed)
    consumers = tuple(f"c{i}" for i in range(rng.randint(1, 4)))
    tasks = [TaskId(s, p) for s in range(2) for p in range(6)]
    parts = {t: ((f"topic{t.subtopology}", t.partition),) for t in tasks}
    active = sorted(rng.sample(tasks, rng.randint(0, len(tasks))))
    owned = {p for t in tasks for p in parts[t] if rng.random() < 0.6}
    owner_in_client = {p: rng.choice(consumers) for p in owned if rng.random() < 0.4}
    unattributed = {p for p in owned if p not in owner_in_client and rng.random() < 0.4}
    base = ClientThreadsInput(consumers, tuple(active[: len(active) // 2]), (), tuple(active[len(active) // 2:]),
                              source_partitions=parts, owner_in_client=owner_in_client,
                              owned_by_client_unattributed=unattributed, owned_in_group=frozenset(owned),
                              previous_standby=frozenset(rng.sample(tasks, 3)), stateful=frozenset(tasks[:6]))
    plain = distribute_client(replace(base, owned_in_group=frozenset()))
    with_deadline = distribute_client(replace(base, followup_deadline=deadline))
    expected = {}
    for c, a in plain.items():
        withheld = sorted(t for t in a.active if _owned_elsewhere(base, t, c))
        temporary = [t for t in withheld if t in base.previous_standby and t in base.stateful]
        expected[c] = ConsumerAssignment(tuple(t for t in a.active if t not in withheld), a.standby + tuple(temporary),
                                         tuple(withheld))
    assert with_deadline == with_consumer_followups(expected, deadline)


def test_the_fast_constructor_fills_every_field() -> None:
    given: dict[str, object] = {
        "consumers": (C1, C2), "stateful_active": tuple(ids("0_0")), "standby": tuple(ids("0_1")),
        "stateless_active": tuple(ids("1_0")), "prev_tasks_by_lag": {C1: tuple(ids("0_1"))},
        "previous_standby": frozenset(ids("0_1")), "stateful": frozenset(ids("0_0", "0_1")),
        "hash_set_order": hash_iteration_order, "followup_deadline": 7,
        "source_partitions": {tid("0_0"): (("t", 0),)}, "owner_in_client": {("t", 0): C1},
        "owned_by_client_unattributed": frozenset({("t", 1)}), "owned_in_group": frozenset({("t", 0), ("t", 1)}),
        "owned_tasks": frozenset(ids("0_0")), "own_tasks": {C2: frozenset(ids("0_0"))},
    }
    assert set(given) == set(ClientThreadsInput.__slots__)
    assert new_client_threads_input(**given) == ClientThreadsInput(**given)  # type: ignore[arg-type]
