"""``compute_metrics(..., rack_traffic=False)`` (the fleet pipeline's metrics, every client at once over integer
columns) against the general path that walks each client's placements, on random applications and assignments:
every summary value and every per-client row must be the same."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from taskassign.analysis._columns import distinct, exact_column, keys_in, restored_records, run_sums
from taskassign.analysis.metrics import (
    AssignmentMetrics,
    compute_metrics,
    numbered_group_metrics,
    subtopology_starts,
)
from taskassign.configs import AssignmentConfigs
from taskassign.ids import ProcessId, TaskId
from taskassign.model import (
    ApplicationState,
    ConsumerAssignment,
    GroupAssignment,
    KafkaStreamsAssignment,
    KafkaStreamsState,
    SortedFrozenSet,
    TaskAssignment,
    TaskInfo,
    TaskTopicPartition,
    active_and_standby,
    compute_lag,
)

_HUGE = 1 << 70  # beyond a Java long: sums must stay exact (then saturate as Kafka's longs do)
_OFFSETS = st.one_of(st.sampled_from([-3, -2, 0, 5, 100]), st.integers(-10, 10**6), st.just(_HUGE))
_RACKS = [SortedFrozenSet(r) for r in ([], ["r1"], ["r2"], ["r1", "r2"], ["r3", "r1"])]


@st.composite
def _scenarios(draw: Any) -> tuple[ApplicationState, Any]:
    subtopologies = draw(st.integers(1, 3))
    names = draw(st.sampled_from([(None,), ("app",), ("a", "b")]))  # named topologies: all tasks named
    ids = [TaskId(s, p, names[s % len(names)]) for s in range(subtopologies) for p in range(draw(st.integers(1, 5)))]
    racks = st.one_of(st.none(), st.sampled_from(_RACKS), st.lists(st.sampled_from(["r1", "r2", "r3"]), max_size=2))
    tasks = []
    for t in ids:
        parts = [TaskTopicPartition(f"in-{t.subtopology}-{k}", t.partition, True, False, draw(racks))
                 for k in range(draw(st.integers(0, 2)))]
        stores = draw(st.sampled_from([(), ("s",), ("s", "t")]))
        if stores and draw(st.booleans()):
            parts.append(TaskTopicPartition(f"log-{t.subtopology}", t.partition, draw(st.booleans()), True,
                                            draw(racks)))
        end = draw(st.one_of(st.integers(0, 10**6), st.sampled_from([-3, 0, _HUGE])))
        size = draw(st.one_of(st.none(), st.integers(0, 10**9), st.just(_HUGE)))
        tasks.append(TaskInfo(t, stores, tuple(parts), end, size))
    known = [*ids, TaskId(9, 0, names[0])]  # (a previous owner may name a task the application no longer has)
    clients = []
    for n in range(draw(st.integers(0, 5))):
        pid = ProcessId.of_ints(0, n + 1)
        prev_active = draw(st.sets(st.sampled_from(known)))
        prev_standby = draw(st.sets(st.sampled_from(known))) - prev_active
        offsets = {t: draw(_OFFSETS) for t in draw(st.sets(st.sampled_from(known)))}
        clients.append(KafkaStreamsState(
            pid, tuple(f"c{n}-{i}" for i in range(draw(st.integers(1, 3)))), prev_active, prev_standby, offsets,
            rack_id=draw(st.sampled_from([None, "r1", "r2", "r3"])),
            client_tags=draw(st.sampled_from([{}, {"zone": "a"}, {"zone": "b"}]))))
    configs = AssignmentConfigs(num_standby_replicas=draw(st.integers(0, 2)),
                                rack_aware_assignment_tags=draw(st.sampled_from([(), ("zone",)])))
    state = ApplicationState(tasks, clients, configs)
    assignments = {}
    consumers: dict[ProcessId, dict[str, ConsumerAssignment]] = {}
    for c in clients:
        if draw(st.booleans()) and len(clients) > 1:
            continue  # a client the assignment leaves out counts as empty
        active = draw(st.sets(st.sampled_from(ids)))
        standby = draw(st.sets(st.sampled_from(ids))) - active
        assignments[c.process_id] = KafkaStreamsAssignment.of_tasks(c.process_id, active, standby)
        if draw(st.booleans()):
            shares = {}
            stray = ("ghost",) if draw(st.integers(0, 4)) == 0 else ()  # a consumer the state does not know
            for name in c.consumer_client_ids + stray:
                if draw(st.booleans()):
                    mine = draw(st.sets(st.sampled_from(sorted(active) or ids), min_size=1))
                    copies = draw(st.sets(st.sampled_from(ids)))
                    # withheld: often a task also in the consumer's lists (a temporary standby), counted once
                    withheld = draw(st.sets(st.sampled_from(sorted(mine | copies)))) | draw(st.sets(
                        st.sampled_from(ids)))
                    shares[name] = ConsumerAssignment(*[tuple(draw(st.permutations(sorted(tasks))))  # dealt order
                                                         for tasks in (mine, copies, withheld)])
            consumers[c.process_id] = shares
    kind = draw(st.sampled_from(["group", "group with consumers", "task assignment", "mapping"]))
    if kind == "group":
        return state, GroupAssignment(assignments)
    if kind == "group with consumers":
        return state, GroupAssignment(assignments, consumers)
    if kind == "task assignment":
        return state, TaskAssignment(tuple(assignments.values()))
    return state, assignments


def _without_traffic(m: AssignmentMetrics) -> tuple[Any, ...]:
    return m.to_dict(), m.client_metrics, dict(m.subtopology_skews)


@settings(max_examples=200, deadline=None)
@given(_scenarios())
def test_the_columns_give_every_value_of_the_general_path(scenario: tuple[ApplicationState, Any]) -> None:
    state, assignment = scenario
    general, columns = compute_metrics(state, assignment), compute_metrics(state, assignment, rack_traffic=False)
    assert _without_traffic(columns) == _without_traffic(general)
    assert not columns.rack_traffic


@settings(max_examples=150, deadline=None)
@given(_scenarios())
def test_the_task_numbers_name_the_placements_in_order(scenario: tuple[ApplicationState, Any]) -> None:
    """``PlacementNumbers``: what the pipeline's result rows list, by number instead of by TaskId."""
    state, assignment = scenario
    if not isinstance(assignment, GroupAssignment):
        return
    split = {pid: active_and_standby(a) for pid, a in assignment.clients.items()}
    metrics, numbers = numbered_group_metrics(state, assignment.clients, assignment.consumers)
    assert metrics == compute_metrics(state, assignment, rack_traffic=False)
    ids = list(state.tasks)
    assert {pid: tuple(tuple(ids[n] for n in run) for run in runs) for pid, runs in numbers.clients.items()} == split
    if assignment.consumers is None:
        assert numbers.consumers is None
        return
    shares = [share for per in assignment.consumers.values() for share in per.values()]
    threads = {(pid, name) for pid, c in state.clients.items() for name in c.consumer_client_ids}
    if not {(pid, name) for pid, per in assignment.consumers.items() for name in per} <= threads:
        assert numbers.consumers is None  # (a consumer the state does not know: listed by TaskId instead)
        return
    assert numbers.consumers is not None
    assert [tuple([ids[n] for n in run] for run in runs) for runs in numbers.consumers] == \
        [(sorted(s.active), sorted(s.standby), sorted(s.withheld)) for s in shares]


def test_a_withheld_task_also_dealt_to_the_thread_weighs_once() -> None:
    pid = ProcessId.of_ints(0, 1)
    t0, t1 = TaskId(0, 0), TaskId(0, 1)
    state = ApplicationState([TaskInfo(t0, ("s",), (), 5, 7), TaskInfo(t1, ("s",), (), 5, 2)],
                             [KafkaStreamsState(pid, ("c", "d"))])
    group = GroupAssignment({pid: KafkaStreamsAssignment.of_tasks(pid, [t0], [t1])},
                            {pid: {"c": ConsumerAssignment((t0,), (t1,), (t0, t1))}})
    general, columns = compute_metrics(state, group), compute_metrics(state, group, rack_traffic=False)
    assert columns.client_metrics[0].thread_state == general.client_metrics[0].thread_state == (9, 0)


def test_sums_beyond_a_long_stay_exact_then_saturate() -> None:
    """Records to restore and state loads past 2^63 are summed as Python ints, then saturated like Kafka's longs."""
    pid = ProcessId.of_ints(0, 1)
    t0, t1 = TaskId(0, 0), TaskId(0, 1)
    log = [TaskTopicPartition("log", 0, False, True)]
    state = ApplicationState(
        [TaskInfo(t0, ("s",), tuple(log), _HUGE, _HUGE), TaskInfo(t1, ("s",), tuple(log), 7, 3)],
        [KafkaStreamsState(pid, ("c",))])
    group = GroupAssignment({pid: KafkaStreamsAssignment.of_tasks(pid, [t0, t1])})
    general, columns = compute_metrics(state, group), compute_metrics(state, group, rack_traffic=False)
    assert _without_traffic(columns) == _without_traffic(general)
    assert columns.client_metrics[0].records_to_restore == columns.client_metrics[0].state_load == (1 << 63) - 1


@given(st.lists(st.lists(st.integers(-5, 5)), min_size=1))
def test_run_sums_and_exact_columns(runs: list[list[int]]) -> None:
    values = [v for run in runs for v in run]
    assert run_sums(exact_column(values, 1), list(map(len, runs))).tolist() == list(map(sum, runs))
    assert exact_column([_HUGE, 1], 1).dtype == object and exact_column([1, 2], 3).dtype == np.int64


@given(st.lists(st.one_of(st.integers(-(1 << 63), (1 << 63) - 1), st.just(_HUGE), st.just(-_HUGE))),
       st.integers(0, 10**6))
def test_exact_column_of_a_list_or_a_column(values: list[int], terms: int) -> None:
    # a list (int64 when every sum of ``terms`` entries fits) and a column given as one (int64 or Python ints)
    room = 1 << 62
    fits = not values or max(map(abs, values)) * max(terms, 1) < room
    from_list = exact_column(values, terms)
    assert from_list.tolist() == values and (from_list.dtype == np.int64) == fits
    for given_column in (np.array(values, dtype=object), *([np.array(values, dtype=np.int64)] if all(
            -(1 << 63) <= v < 1 << 63 for v in values) else [])):
        column = exact_column(given_column, terms)
        assert column.tolist() == values and (column.dtype == np.int64) == fits


@given(st.lists(st.integers(0, 20)), st.lists(st.integers(0, 20)))
def test_keys_in_and_distinct_agree_with_sets(keys: list[int], pairs: list[int]) -> None:
    found = keys_in(np.array(keys, dtype=np.int64), np.zeros(len(keys), dtype=np.int64),
                    np.array(pairs, dtype=np.int64) * 3, 3)
    assert found.tolist() == [k * 3 in {p * 3 for p in pairs} for k in keys]
    assert distinct(np.array(keys, dtype=np.int64)).tolist() == sorted(set(keys))


@given(st.lists(st.tuples(st.one_of(st.integers(-5, 10**6), st.sampled_from([-3, -2, _HUGE])), _OFFSETS)))
def test_restored_records_follow_kafkas_lags(pairs: list[tuple[int, int]]) -> None:
    ends, offsets = [e for e, _ in pairs], [o for _, o in pairs]
    records, unknown = restored_records(exact_column(ends, len(pairs) + 2), exact_column(offsets, len(pairs) + 2))
    lags = [compute_lag(e, o) for e, o in pairs]
    assert unknown.tolist() == [lag == -3 for lag in lags]
    assert records.tolist() == [0 if lag == -2 else max(0, e) if lag == -3 else lag
                                for lag, (e, _) in zip(lags, pairs, strict=True)]


@given(st.sampled_from([(None,), ("app",), ("a", "b")]),
       st.sets(st.tuples(st.integers(0, 4), st.integers(0, 6), st.integers(0, 1))))
def test_subtopology_starts_where_name_and_subtopology_change(names: tuple[str | None, ...],
                                                              picked: set[tuple[int, int, int]]) -> None:
    ids = sorted({TaskId(sub, partition, names[which % len(names)]) for sub, partition, which in picked})
    expected = [i for i, t in enumerate(ids) if i == 0 or (t[0], t[1]) != (ids[i - 1][0], ids[i - 1][1])]
    assert subtopology_starts(ids) == expected
