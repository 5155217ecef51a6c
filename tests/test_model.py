from __future__ import annotations

import pytest

from taskassign.errors import LagsNotRequestedError, TaskNotStatefulError
from taskassign.model import (
    AssignedTask,
    KafkaStreamsAssignment,
    TaskAssignment,
    active_and_standby,
    compute_lag,
)
from tests.helpers import PID_1, PID_2, TASK_0_0, TASK_0_1, TASK_1_0, app_state, client, task, tid


@pytest.mark.parametrize(
    ("end", "offset", "lag"),
    [(500, 0, 500), (100, 100, 0), (500, -2, -2), (500, -3, -3), (1, 5, 1), (0, 0, 0), (-3, 10, -3)],
)
def test_lag_is_derived_as_kafka_does(end: int, offset: int, lag: int) -> None:
    assert compute_lag(end, offset) == lag


def test_lag_for_missing_offset_counts_as_zero() -> None:
    state = app_state([task("0_0", end=500)], [client(PID_1)])
    assert state.clients[PID_1].lag_for(TASK_0_0) == 500


def test_lags_are_unavailable_without_request() -> None:
    state = app_state([task("0_0", end=500)], [client(PID_1, offsets={"0_0": 100})])
    assert state.kafka_streams_states(True)[PID_1].lag_for(TASK_0_0) == 400
    with pytest.raises(LagsNotRequestedError):
        state.kafka_streams_states(False)[PID_1].lag_for(TASK_0_0)


def test_lag_of_stateless_task_raises() -> None:
    state = app_state([task("0_0", end=5), task("1_0", stateful=False)], [client(PID_1)])
    with pytest.raises(TaskNotStatefulError, match="1_0"):
        state.clients[PID_1].lag_for(TASK_1_0)
    assert state.clients[PID_1].stateful_tasks_to_lag_sums() == {TASK_0_0: 5}


def test_prev_tasks_by_lag_sorts_by_lag_then_task() -> None:
    t = [task("0_0", end=100), task("0_1", end=100), task("0_2", end=100), task("1_0", stateful=False)]
    c = client(PID_1, prev_active=["0_1", "1_0"], prev_standby=["0_0", "0_2"],
               offsets={"0_0": 90, "0_1": -2, "0_2": 90})
    from dataclasses import replace

    c = replace(c, consumer_previous_tasks={c.consumer_client_ids[0]: [tid("0_0"), tid("0_1"), tid("0_2"),
                                                                         tid("1_0")]})
    state = app_state(t, [c])
    assert state.clients[PID_1].prev_tasks_by_lag(c.consumer_client_ids[0]) == (tid("0_1"), tid("0_0"), tid("0_2"))
    assert state.clients[PID_1].prev_tasks_by_lag("unknown-consumer") == ()


def test_application_state_sorts_tasks_and_clients() -> None:
    state = app_state([task("1_0"), task("0_1"), task("0_0", stateful=False)], [client(PID_2), client(PID_1)])
    assert list(state.all_tasks()) == [TASK_0_0, TASK_0_1, TASK_1_0]
    assert list(state.kafka_streams_states(False)) == [PID_1, PID_2]
    assert list(state.stateful_task_ids) == [TASK_0_1, TASK_1_0]
    assert state.task_ids.items == (TASK_0_0, TASK_0_1, TASK_1_0)


def test_application_state_rejects_duplicates() -> None:
    with pytest.raises(ValueError, match="duplicate task 0_0"):
        app_state([task("0_0"), task("0_0")], [client(PID_1)])


def test_task_info_stateful_definitions() -> None:
    info = task("0_0", state_bytes=42)
    assert info.is_stateful and info.has_changelog and info.state_weight == 42
    stateless = task("1_0", stateful=False)
    assert not stateless.is_stateful and not stateless.has_changelog and stateless.state_weight == 0
    assert [p.topic for p in info.source_partitions] == ["source-0"]
    assert [p.topic for p in info.changelog_partitions] == ["app-store-0-changelog"]


def test_kafka_streams_assignment_is_immutable_and_keyed_by_task() -> None:
    empty = KafkaStreamsAssignment(PID_1)
    one = empty.assign_task(AssignedTask.active(TASK_0_1))
    two = one.assign_task(AssignedTask.standby(TASK_0_0))
    assert dict(empty.tasks) == {}
    assert list(two.tasks) == [TASK_0_0, TASK_0_1]
    assert list(two.active_tasks()) == [TASK_0_1] and list(two.standby_tasks()) == [TASK_0_0]
    replaced = two.assign_task(AssignedTask.standby(TASK_0_1))
    assert list(replaced.standby_tasks()) == [TASK_0_0, TASK_0_1]
    assert list(two.remove_task(TASK_0_1).tasks) == [TASK_0_0]
    assert two.remove_task(TASK_1_0) is two
    later = two.with_followup_rebalance(123)
    assert later.followup_rebalance_deadline == 123 and two.followup_rebalance_deadline is None



def test_active_and_standby_are_the_assignments_two_task_sets_in_order() -> None:
    mixed = KafkaStreamsAssignment.of_tasks(PID_1, active=[TASK_1_0, TASK_0_0], standby=[TASK_0_1])
    for assignment in (mixed, KafkaStreamsAssignment(PID_1)):
        active, standby = active_and_standby(assignment)
        assert active == assignment.active_tasks().items and standby == assignment.standby_tasks().items
    assert active_and_standby(mixed) == ((TASK_0_0, TASK_1_0), (TASK_0_1,))

def test_of_keeps_the_last_entry_for_a_task() -> None:
    a = KafkaStreamsAssignment.of(PID_1, [AssignedTask.active(TASK_0_0), AssignedTask.standby(TASK_0_0)])
    assert list(a.standby_tasks()) == [TASK_0_0] and not a.active_tasks()


def test_task_assignment_by_process_keeps_later_entry() -> None:
    first = KafkaStreamsAssignment.of_tasks(PID_1, active=[TASK_0_0])
    second = KafkaStreamsAssignment.of_tasks(PID_1, active=[TASK_0_1])
    assert TaskAssignment([first, second]).by_process()[PID_1] is second  # type: ignore[arg-type]


def test_lag_computation_flag() -> None:
    assert app_state([task("0_0", end=5)], [client(PID_1)]).lag_computation_successful
    assert not app_state([task("0_0", end=-3)], [client(PID_1)]).lag_computation_successful


def test_only_new_task_info_builds_a_task_info() -> None:
    """One factory (model.new_task_info) builds every TaskInfo in src/, so its checks hold everywhere."""
    import re
    from pathlib import Path

    src = Path(__file__).parents[1] / "src" / "taskassign"
    callers = sorted(str(p.relative_to(src)) for p in src.rglob("*.py")
                     if p.name != "model.py" and re.search(r"\bTaskInfo\(", p.read_text(encoding="utf-8")))
    assert not callers, f"build TaskInfo through model.new_task_info: {callers}"


def test_task_builders_give_the_values_of_the_checked_constructors() -> None:
    """model.task_builders (the fleet's bulk builder) skips __init__ and __post_init__: equal values, every
    derived field included."""
    from taskassign.ids import TaskId
    from taskassign.model import SortedFrozenSet, TaskTopicPartition, new_task_info, task_builders

    partition, task_info = task_builders()
    racks = SortedFrozenSet(["r1", "r0"])
    cases = [
        ((TaskTopicPartition("cl", 3, False, True, racks), TaskTopicPartition("in", 3, True, False, None)), ("s",), 7,
         None),
        ((TaskTopicPartition("a", 0, True, True, racks), TaskTopicPartition("b", 0, True, False, racks)), (), 0, 12),
        ((TaskTopicPartition("b", 1, True, False, None),), (), 0, None),
    ]
    for parts, stores, end, size in cases:
        fast_parts = tuple(partition(p.topic, p.partition, p.is_source, p.is_changelog, p.rack_ids) for p in parts)
        assert fast_parts == parts
        checked = new_task_info(TaskId(0, parts[0].partition), stores, parts, end, size)
        fast = task_info(TaskId(0, parts[0].partition), SortedFrozenSet(stores), fast_parts,
                         tuple(p for p in fast_parts if p.is_source), tuple(p for p in fast_parts if p.is_changelog),
                         end, size)
        assert fast == checked
        for name in ("has_changelog", "is_stateful", "source_partitions", "changelog_partitions",
                     "source_topic_partitions", "topic_partitions", "state_store_names"):
            assert getattr(fast, name) == getattr(checked, name), name


def test_task_column_builders_give_the_values_of_the_single_builders() -> None:
    """model.task_column_builders (a field at a time over a column) gives the values of task_builders, and
    refuses columns of the wrong length."""
    import pytest

    from taskassign.ids import TaskId
    from taskassign.model import SortedFrozenSet, task_builders, task_column_builders

    partition, task_info = task_builders()
    partitions, task_infos = task_column_builders()
    racks = [SortedFrozenSet(["r1"]), None, SortedFrozenSet()]
    made = partitions("in", 2, 3, True, True, racks)
    assert made == [partition("in", 2 + i, True, True, racks[i]) for i in range(3)]
    assert [p.rack_ids for p in made] == racks
    logs = partitions("cl", 0, 3, False, True, [None] * 3)
    ids = [TaskId(1, p) for p in range(3)]
    stores = SortedFrozenSet(["s"])
    rows = [(made[p], logs[p]) for p in range(3)]
    infos = task_infos(ids, stores, [(logs[p], made[p]) for p in range(3)], [(made[p],) for p in range(3)], rows,
                       [5, 0, 7], [None, 3, None], [(("in", 2 + p),) for p in range(3)])
    for p, info in enumerate(infos):
        single = task_info(ids[p], stores, (logs[p], made[p]), (made[p],), rows[p], [5, 0, 7][p], [None, 3, None][p])
        assert info == single
        for name in ("has_changelog", "is_stateful", "source_partitions", "changelog_partitions",
                     "source_topic_partitions", "topic_partitions", "state_store_names", "state_bytes"):
            assert getattr(info, name) == getattr(single, name), name
    bare = task_infos(ids[:1], [SortedFrozenSet()], [()], [()], [()], [0], [None], [()])[0]
    assert (bare.has_changelog, bare.is_stateful) == (False, False)
    with pytest.raises(ValueError, match="2 rack sets for 3 partitions"):
        partitions("in", 0, 3, True, False, [None, None])
    with pytest.raises(ValueError, match="for 3 tasks"):
        task_infos(ids, stores, [()] * 3, [()] * 3, [()] * 3, [0, 0], [None] * 3, [()] * 3)


def test_application_state_client_views_equal_replace() -> None:
    """ApplicationState's two views of each client (with and without lags) hold what
    ``dataclasses.replace`` would give, every slot included (they are copied without re-running __init__)."""
    from dataclasses import replace
    from types import MappingProxyType

    from taskassign.ids import ProcessId, TaskId
    from taskassign.model import ApplicationState, KafkaStreamsState, TaskTopicPartition, new_task_info

    pid = ProcessId("00000000-0000-0000-0000-000000000001")
    client = KafkaStreamsState(pid, ("c2", "c1"), previous_active_tasks=[TaskId(0, 0)],
                               task_offset_sums={TaskId(0, 0): 5}, host_info="h:1", client_tags={"z": "1"},
                               rack_id="r", consumer_previous_tasks={"c1": [TaskId(0, 0)]})
    task = new_task_info(TaskId(0, 0), ["s"], [TaskTopicPartition("cl", 0, False, True)], 9)
    state = ApplicationState(tasks=[task], clients=[client])
    for lags, view in ((True, state.kafka_streams_states(True)[pid]),
                       (False, state.kafka_streams_states(False)[pid])):
        expected = replace(client, changelog_end_offset_sums=MappingProxyType({TaskId(0, 0): 9}), lags_available=lags)
        for name in KafkaStreamsState.__slots__:
            assert getattr(view, name) == getattr(expected, name), name
    assert state.clients[pid].lag_for(TaskId(0, 0)) == 4


def test_application_state_of_ordered_tasks_equals_the_constructor() -> None:
    """ApplicationState.of_ordered_tasks (the fleet's builder: tasks already in TaskId order, end offset sums
    given) holds what the constructor derives, every slot and both client views included, on random states."""
    import random
    from dataclasses import replace

    from taskassign.configs import AssignmentConfigs
    from taskassign.ids import ProcessId, TaskId
    from taskassign.model import ApplicationState, KafkaStreamsState, TaskTopicPartition, new_task_info

    rng = random.Random(5)
    for _ in range(50):
        infos = []
        for sub in range(rng.randint(1, 3)):
            logged = rng.random() < 0.6
            for p in range(rng.randint(0, 4)):
                parts = [TaskTopicPartition(f"in-{sub}", p, True, False)]
                if logged:
                    parts.append(TaskTopicPartition(f"cl-{sub}", p, False, True))
                infos.append(new_task_info(TaskId(sub, p), ["s"] if logged else [], parts,
                                           rng.choice([0, 5, -3]) if logged else 0))
        pids = [ProcessId.of_ints(0, rng.randint(1, 1 << 40)) for _ in range(rng.randint(1, 4))]
        pids = list(dict.fromkeys(pids))
        clients = [KafkaStreamsState(pid, (f"c{n}",), previous_active_tasks=[i.id for i in infos[n::3]])
                   for n, pid in enumerate(pids)]
        configs = AssignmentConfigs(num_standby_replicas=rng.randint(0, 2))
        arrival = tuple(rng.sample(pids, len(pids)))
        walk = tuple((None, s) for s in range(3))
        expected = ApplicationState(tasks=list(reversed(infos)), clients=list(reversed(clients)), configs=configs,
                                    now_ms=7, subtopology_walk_order=walk, client_arrival_order=arrival)
        for owned in (False, True):  # clients_owned: fresh states become the with-lags views themselves
            fast = ApplicationState.of_ordered_tasks(
                {i.id: i for i in infos}, {i.id: i.changelog_end_offset_sum for i in infos if i.has_changelog},
                [replace(c) for c in clients] if owned else clients, configs, 7, walk, arrival, clients_owned=owned)
            assert fast == expected
            assert repr(fast) == repr(expected)
            for name in ApplicationState.__slots__:
                assert getattr(fast, name) == getattr(expected, name), name
            assert list(fast.tasks) == list(expected.tasks)
            for lags in (True, False):
                views, wanted = fast.kafka_streams_states(lags), expected.kafka_streams_states(lags)
                assert list(views) == list(wanted)
                for pid, view in views.items():
                    for name in KafkaStreamsState.__slots__:
                        assert getattr(view, name) == getattr(wanted[pid], name), name


def test_new_client_state_equals_the_constructor() -> None:
    """model.new_client_state (the fleet's builder, every field given in its final form) holds what
    KafkaStreamsState(...) holds after its __post_init__, every slot included."""
    import random
    from types import MappingProxyType

    from taskassign.ids import ProcessId, TaskId
    from taskassign.model import KafkaStreamsState, SortedFrozenSet, new_client_state

    rng = random.Random(3)
    for _ in range(30):
        pid = ProcessId.of_ints(rng.randint(-5, 5), rng.randint(0, 1 << 50))
        consumers = [f"c{n}" for n in rng.sample(range(9), rng.randint(1, 4))]
        tasks = sorted({TaskId(rng.randint(0, 2), rng.randint(0, 9)) for _ in range(rng.randint(0, 8))})
        active, standby = tasks[::2], tasks[1::2]
        offsets = {t: rng.choice([-2, -3, 0, 17]) for t in rng.sample(tasks, len(tasks) // 2)}
        tags = {f"k{n}": f"v{n}" for n in rng.sample(range(5), rng.randint(0, 3))}
        by_consumer = {c: tasks[n::len(consumers)] for n, c in enumerate(consumers)}
        host, rack = rng.choice([None, "h:1"]), rng.choice([None, "r1"])
        expected = KafkaStreamsState(pid, tuple(consumers), active, standby, offsets, host, tags, rack, by_consumer)
        fast = new_client_state(
            pid, tuple(sorted(consumers)), SortedFrozenSet(active), SortedFrozenSet(standby),
            MappingProxyType(dict(sorted(offsets.items()))), host, MappingProxyType(dict(sorted(tags.items()))), rack,
            MappingProxyType({c: SortedFrozenSet(ts) for c, ts in sorted(by_consumer.items())}))
        assert fast == expected and repr(fast) == repr(expected)
        for name in KafkaStreamsState.__slots__:
            assert getattr(fast, name) == getattr(expected, name), name
            assert type(getattr(fast, name)) is type(getattr(expected, name)), name
        assert list(fast.task_offset_sums) == list(expected.task_offset_sums)
        assert list(fast.client_tags) == list(expected.client_tags)
        assert list(fast.consumer_previous_tasks) == list(expected.consumer_previous_tasks)


def test_shared_task_column_gives_each_tasks_shared_value() -> None:
    """``shared_task_column`` equals ``assigned_task_column`` value for value, hands out ``new_assigned_task``'s
    shared objects (found or newly made), and starts the table afresh at its limit."""
    import random
    from unittest import mock

    from taskassign import model
    from taskassign.ids import TaskId
    from taskassign.model import ACTIVE, STANDBY, assigned_task_column, new_assigned_task, shared_task_column

    rng = random.Random(11)
    for _ in range(50):
        name = rng.choice([None, "a"])
        tasks = sorted({TaskId(rng.randint(0, 3), rng.randint(0, 40), name) for _ in range(rng.randint(0, 30))})
        kind = rng.choice([ACTIVE, STANDBY])
        for t in rng.sample(tasks, len(tasks) // 3):
            new_assigned_task(t, kind)  # some already shared
        column = shared_task_column(tasks, kind)
        assert column == assigned_task_column(tasks, kind)
        assert all(value is new_assigned_task(t, kind) for t, value in zip(tasks, column, strict=True))
    with mock.patch.object(model, "_INTERN_LIMIT", 3):
        table = model._INTERNED_ACTIVE
        table.clear()
        first = shared_task_column([TaskId(0, n) for n in range(2)], ACTIVE)
        assert len(table) == 2
        more = shared_task_column([TaskId(0, n) for n in range(2, 4)], ACTIVE)
        assert len(table) == 2 and more == assigned_task_column([TaskId(0, 2), TaskId(0, 3)], ACTIVE)
        assert first[0] is not new_assigned_task(TaskId(0, 0), ACTIVE)  # emptied: made anew
        table.clear()
        shared_task_column([TaskId(0, 0), TaskId(0, 1)], ACTIVE)
        mixed = [TaskId(0, 0), TaskId(0, 2), TaskId(0, 3)]  # one found, two to make: past the limit
        assert shared_task_column(mixed, ACTIVE) == assigned_task_column(mixed, ACTIVE)
        assert sorted(table) == mixed
