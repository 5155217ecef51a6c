"""Every metric against a hand-computed assignment (the arithmetic is in the comments)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from taskassign.analysis.metrics import (
    SECTION_STARTS,
    UNKNOWN_RACK,
    AssignmentMetrics,
    compute_metrics,
    metric_fields,
)
from taskassign.errors import UserInputError
from taskassign.ids import ProcessId
from taskassign.model import (
    ConsumerAssignment,
    GroupAssignment,
    KafkaStreamsAssignment,
    TaskAssignment,
)
from tests.helpers import PID_1, PID_2, PID_3, PID_4, app_state, client, task, tid

DOCS = Path(__file__).parents[2] / "docs" / "metrics.md"


def ksa(pid: ProcessId, active: Iterable[str] = (), standby: Iterable[str] = ()) -> KafkaStreamsAssignment:
    return KafkaStreamsAssignment.of_tasks(pid, [tid(t) for t in active], [tid(t) for t in standby])


# Tasks: weights 100 / 200 / 300 / 1 (0_3 has no state_bytes: its one store counts) and 0 for stateless.
STATE = app_state(
    [
        task("0_0", end=1000, state_bytes=100, source_racks=["r1"], changelog_racks=["r1", "r2"]),
        task("0_1", end=1000, state_bytes=200, source_racks=["r2"], changelog_racks=["r1"]),
        task("0_2", end=500, state_bytes=300, source_racks=["r2"], changelog_racks=["r2"]),
        task("0_3", end=0, source_racks=["r2"], changelog_racks=["r2"]),
        task("1_0", stateful=False, source_racks=["r1"]),
        task("1_1", stateful=False),
    ],
    [
        client(PID_1, threads=2, rack="r1", tags={"zone": "a"}, prev_active=["0_0", "1_0"], prev_standby=["0_1"],
               offsets={"0_0": -2, "0_1": 900}),
        client(PID_2, rack="r2", tags={"zone": "b"}, prev_active=["0_1", "0_2"], offsets={"0_1": -2, "0_2": -2}),
        # P3 reports an unknown offset sum for 0_2 without claiming it (as a future-version member would).
        client(PID_3, rack="r1", tags={"zone": "a"}, offsets={"0_2": -3}),
    ],
    num_standby_replicas=1,
    rack_aware_traffic_cost=5,
    rack_aware_assignment_tags=("zone",),
)
GROUP = GroupAssignment({
    PID_1: ksa(PID_1, ["0_0", "0_2", "1_0"], ["0_1"]),
    PID_2: ksa(PID_2, ["0_1"], ["0_2"]),
    PID_3: ksa(PID_3, ["0_3", "1_1"], ["0_0", "0_2"]),
})


@pytest.fixture(scope="module")
def metrics() -> AssignmentMetrics:
    return compute_metrics(STATE, GROUP)


def test_size(metrics: AssignmentMetrics) -> None:
    assert (metrics.tasks, metrics.changelog_tasks, metrics.clients, metrics.threads) == (6, 4, 3, 4)
    assert (metrics.active_tasks, metrics.standby_replicas, metrics.unassigned_tasks) == (6, 4, 0)


def test_client_loads_per_thread(metrics: AssignmentMetrics) -> None:
    # actives 3/2, 1/1, 2/1; active+standby 4/2, 2/1, 4/1; changelog replicas 3/2, 2/1, 3/1
    assert (metrics.active_load_max, metrics.active_load_min, metrics.active_load_skew) == (2.0, 1.0, 1.0)
    assert (metrics.total_load_max, metrics.total_load_min, metrics.total_load_skew) == (4.0, 2.0, 2.0)
    assert metrics.changelog_load_skew == 1.5
    assert all(isinstance(metrics.to_dict()[k], float) for k in ("active_load_skew", "total_load_min"))


def test_thread_loads_deal_each_client_evenly_when_threads_are_unknown(metrics: AssignmentMetrics) -> None:
    # P1's 3 actives over 2 threads: 2 and 1; its 4 replicas: 2 and 2; P2: 1 / 2; P3: 2 / 4.
    p1 = metrics.client_metrics[0]
    assert (p1.thread_active, p1.thread_total) == ((2, 1), (2, 2))
    assert (metrics.thread_active_max, metrics.thread_active_min, metrics.thread_active_skew) == (2, 1, 1)
    assert (metrics.thread_total_max, metrics.thread_total_min, metrics.thread_total_skew) == (4, 2, 2)


def test_thread_loads_come_from_the_consumer_assignment_when_known() -> None:
    consumers = STATE.clients[PID_1].consumer_client_ids
    group = GroupAssignment(
        GROUP.clients,
        {PID_1: {consumers[0]: ConsumerAssignment(tuple(map(tid, ["0_0", "0_2", "1_0"])), (tid("0_1"),))}},
    )
    m = compute_metrics(STATE, group)
    assert m.client_metrics[0].thread_active == (3, 0)
    assert m.client_metrics[0].thread_total == (4, 0)
    assert (m.thread_active_max, m.thread_active_min, m.thread_total_max, m.thread_total_min) == (3, 0, 4, 0)


def test_subtopology_skew(metrics: AssignmentMetrics) -> None:
    # subtopology 0: P1 2, P2 1, P3 1; subtopology 1: P1 1, P2 0, P3 1
    assert dict(metrics.subtopology_skews) == {"0": 1, "1": 1}
    assert metrics.subtopology_skew_max == 1
    lopsided = compute_metrics(STATE, {PID_1: ksa(PID_1, ["0_0", "0_1", "0_2", "0_3"])})
    assert dict(lopsided.subtopology_skews) == {"0": 4, "1": 0} and lopsided.subtopology_skew_max == 4


def test_state_weighted_load(metrics: AssignmentMetrics) -> None:
    # P1 100+300+200 = 600, P2 200+300 = 500, P3 1+100+300 = 401; actives: 400, 200, 1
    assert [c.state_load for c in metrics.client_metrics] == [600, 500, 401]
    assert (metrics.state_load_max, metrics.state_load_min, metrics.state_load_skew) == (600, 401, 199)
    assert metrics.state_load_imbalance == pytest.approx(600 / (1501 / 3))
    assert (metrics.active_state_load_max, metrics.active_state_load_min) == (400, 1)


def test_thread_state_imbalance_deals_state_evenly_when_threads_are_unknown(metrics: AssignmentMetrics) -> None:
    # P1's 600 over 2 threads: 300 and 300; P2 500; P3 401. Mean per thread 1501 / 4; heaviest thread 500.
    assert [c.thread_state for c in metrics.client_metrics] == [(300, 300), (500,), (401,)]
    assert metrics.thread_state_imbalance == pytest.approx(500 / (1501 / 4))
    # per client P1 is the heaviest (1.20); per thread P2 is (1.33), because P1 has two threads
    assert metrics.thread_state_imbalance > metrics.state_load_imbalance


def test_thread_state_comes_from_the_consumer_assignment_when_known() -> None:
    # P1's first thread gets 0_0, 0_2 (and withheld 0_1, also a standby: counted once), the second nothing.
    consumers = STATE.clients[PID_1].consumer_client_ids
    group = GroupAssignment(
        GROUP.clients,
        {PID_1: {consumers[0]: ConsumerAssignment(tuple(map(tid, ["0_0", "0_2", "1_0"])), (tid("0_1"),),
                                                  (tid("0_1"),))}},
    )
    m = compute_metrics(STATE, group)
    assert m.client_metrics[0].thread_state == (600, 0)
    assert m.thread_state_imbalance == pytest.approx(600 / (1501 / 4))


def test_every_metric_says_which_way_it_improves() -> None:
    better = {f.name: f.better for f in metric_fields()}
    assert set(better.values()) == {"lower", "higher", ""}
    assert (better["active_load_skew"], better["thread_state_imbalance"], better["records_to_restore"]) == (
        "lower", "lower", "lower")
    assert (better["active_tasks"], better["tasks"]) == ("higher", "")
    text = DOCS.read_text()
    documented = dict(re.findall(r"^\| `([a-z_]+)` \| \w+ \| (\w+|—) \|", text, flags=re.MULTILINE))
    assert documented == {name: b or "—" for name, b in better.items()}


def test_movement_against_previous_assignment(metrics: AssignmentMetrics) -> None:
    # 0_2 left P2 for P1; 0_3 and 1_1 had no previous owner; P3's standbys 0_0 and 0_2 are new copies.
    assert (metrics.active_moves, metrics.previously_unowned_tasks, metrics.standby_moves) == (1, 2, 2)
    assert [c.active_moves_in for c in metrics.client_metrics] == [1, 0, 0]


def test_records_to_restore(metrics: AssignmentMetrics) -> None:
    # active: P1 restores 0_2 from scratch (500), P3's 0_3 has an empty changelog (0);
    # standby: P3 restores 0_0 (1000) and 0_2, whose lag is unknown (-3): the whole changelog, 500.
    assert (metrics.records_to_restore_active, metrics.records_to_restore_standby) == (500, 1500)
    assert metrics.records_to_restore == 2000 and metrics.unknown_lag_placements == 1
    assert [c.records_to_restore for c in metrics.client_metrics] == [500, 0, 1500]


def test_unknown_changelog_end_offsets_count_as_unknown_lags() -> None:
    state = app_state([task("0_0", end=-3)], [client(PID_1), client(PID_2)])
    m = compute_metrics(state, {PID_1: ksa(PID_1, ["0_0"]), PID_2: ksa(PID_2, [], ["0_0"])})
    assert (m.records_to_restore, m.unknown_lag_placements) == (0, 2)


def test_standby_shortfall_and_extra_replicas(metrics: AssignmentMetrics) -> None:
    # wanted = min(1 standby, 3 clients - 1) = 1: 0_3 has none; 0_2 has two (one extra)
    assert (metrics.standby_shortfall_tasks, metrics.missing_standby_replicas) == (1, 1)
    assert metrics.extra_standby_replicas == 1


def test_cross_rack_traffic(metrics: AssignmentMetrics) -> None:
    # actives: P1 (r1) reads 0_2 from r2, P3 (r1) reads 0_3 from r2, 1_1 has no rack info;
    # standbys: P3 (r1) reads 0_2's changelog from r2; P3's 0_0 changelog has a replica in r1.
    assert (metrics.cross_rack_active_partitions, metrics.cross_rack_standby_partitions) == (2, 1)
    assert (metrics.cross_rack_partitions, metrics.cross_rack_cost, metrics.rack_unknown_partitions) == (3, 15, 1)
    assert dict(metrics.rack_traffic) == {
        ("r1", "r1"): 4.0, ("r1", "r2"): 3.0, ("r1", UNKNOWN_RACK): 1.0, ("r2", "r2"): 2.0,
    }


def test_cross_rack_reads_split_over_replica_racks_and_unknown_client_racks() -> None:
    state = app_state(
        [task("0_0", source_racks=["r2", "r3"], changelog_racks=["r1"])],
        [client(PID_1, rack="r1"), client(PID_2)],
        num_standby_replicas=1,
    )
    m = compute_metrics(state, {PID_1: ksa(PID_1, ["0_0"]), PID_2: ksa(PID_2, [], ["0_0"])})
    assert dict(m.rack_traffic) == {("r1", "r2"): 0.5, ("r1", "r3"): 0.5, (UNKNOWN_RACK, "r1"): 1.0}
    assert (m.cross_rack_partitions, m.cross_rack_cost, m.rack_unknown_partitions) == (1, 1, 1)



@pytest.mark.parametrize("scenario", ["hand-computed", "split reads, clients without racks"])
def test_without_the_traffic_matrix_every_other_value_is_the_same(scenario: str) -> None:
    """``rack_traffic=False`` (the fleet pipeline) counts the cross-rack reads per rack set instead of walking
    them in order: the matrix is left empty, every summary and per-client value stays."""
    if scenario == "hand-computed":
        state, group = STATE, GROUP
    else:
        state = app_state(
            [task("0_0", source_racks=["r2", "r3"], changelog_racks=["r1"]), task("0_1", source_racks=["r1"]),
             task("0_2", stateful=False)],
            [client(PID_1, rack="r1"), client(PID_2), client(PID_3, rack="r3")], num_standby_replicas=1)
        group = GroupAssignment({PID_1: ksa(PID_1, ["0_0", "0_2"]), PID_2: ksa(PID_2, ["0_1"], ["0_0"]),
                                 PID_3: ksa(PID_3, [], [])})
    full, counted = compute_metrics(state, group), compute_metrics(state, group, rack_traffic=False)
    assert full.rack_traffic and not counted.rack_traffic
    assert counted.to_dict() == full.to_dict() and counted.client_metrics == full.client_metrics
    assert counted.cross_rack_partitions + counted.rack_unknown_partitions > 0

def test_rack_and_tag_spread(metrics: AssignmentMetrics) -> None:
    # 0_0 sits on P1 and P3, both rack r1 and zone a, although r2 / zone b exist; 0_2's three
    # replicas cover both racks and both zones; 0_3 has a single replica.
    assert (metrics.rack_spread_shortfall, metrics.rack_colocated_tasks) == (1, 1)
    assert (metrics.tag_spread_shortfall, metrics.tag_colocated_tasks) == (1, 1)


def test_tag_spread_is_counted_per_key_and_ignores_clients_without_the_key() -> None:
    state = app_state(
        [task("0_0"), task("0_1")],
        [client(PID_1, rack="r1", tags={"zone": "a", "host": "h1"}),
         client(PID_2, rack="r2", tags={"zone": "a", "host": "h1"}),
         client(PID_3, rack="r3", tags={"zone": "b", "host": "h2"}),
         client(PID_4, rack="r3", tags={"zone": "c"})],
        num_standby_replicas=2,
        rack_aware_assignment_tags=("zone", "host"),
    )
    group = {
        # 0_0 on P1, P2, P4: racks r1 r2 r3 (fine); zones a a c (2 of 3 -> 1 short); hosts h1 h1 (P4 has no
        # host: 2 values, 2 hosts exist -> 1 short) => task shortfall 2.
        PID_1: ksa(PID_1, ["0_0"], ["0_1"]),
        PID_2: ksa(PID_2, [], ["0_0"]),
        # 0_1 on P3, P4, P1: racks r3 r3 r1 (2 of 3 -> 1 short); zones b c a; hosts h2 h1 => 0.
        PID_3: ksa(PID_3, ["0_1"]),
        PID_4: ksa(PID_4, [], ["0_0", "0_1"]),
    }
    m = compute_metrics(state, group)
    assert (m.rack_spread_shortfall, m.rack_colocated_tasks) == (1, 1)
    assert (m.tag_spread_shortfall, m.tag_colocated_tasks) == (2, 1)


def test_rack_spread_skips_tasks_on_clients_without_rack() -> None:
    state = app_state([task("0_0")], [client(PID_1, rack="r1"), client(PID_2), client(PID_3, rack="r1")],
                      num_standby_replicas=1)
    m = compute_metrics(state, {PID_1: ksa(PID_1, ["0_0"]), PID_2: ksa(PID_2, [], ["0_0"])})
    assert m.rack_spread_shortfall == 0
    m = compute_metrics(state, {PID_1: ksa(PID_1, ["0_0"]), PID_3: ksa(PID_3, [], ["0_0"])})
    assert m.rack_spread_shortfall == 0  # only one rack exists among the clients


def test_task_assignment_and_mapping_inputs_agree_with_group_assignment(metrics: AssignmentMetrics) -> None:
    as_task_assignment = TaskAssignment(tuple(GROUP.clients.values()))
    assert compute_metrics(STATE, as_task_assignment).to_dict() == metrics.to_dict()
    assert compute_metrics(STATE, dict(GROUP.clients)).to_dict() == metrics.to_dict()


def test_missing_clients_count_as_empty_and_unassigned_tasks_are_counted() -> None:
    m = compute_metrics(STATE, {PID_1: ksa(PID_1, ["0_0"])})
    assert (m.active_tasks, m.unassigned_tasks, m.active_load_max, m.active_load_min) == (1, 5, 0.5, 0.0)
    assert m.standby_shortfall_tasks == 4 and m.missing_standby_replicas == 4


def test_no_clients_gives_zeroes() -> None:
    m = compute_metrics(app_state([task("0_0")], []), {})
    assert m.clients == 0 and m.unassigned_tasks == 1
    assert m.active_load_skew == 0.0 and m.state_load_imbalance == 0.0 and m.subtopology_skew_max == 0


def test_unknown_client_or_task_is_a_user_error() -> None:
    with pytest.raises(UserInputError, match="not in the application state"):
        compute_metrics(STATE, {PID_4: ksa(PID_4, ["0_0"])})
    with pytest.raises(UserInputError, match="task 9_9"):
        compute_metrics(STATE, {PID_1: ksa(PID_1, ["9_9"])})


def test_to_dict_has_every_documented_field_with_a_stable_type(metrics: AssignmentMetrics) -> None:
    flat = metrics.to_dict()
    assert list(flat) == [f.name for f in metric_fields()]
    for f in metric_fields():
        assert type(flat[f.name]) is f.type, f.name


def test_docs_define_every_metric() -> None:
    text = DOCS.read_text()
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", text, flags=re.MULTILINE))
    assert documented == {f.name for f in metric_fields()}


def test_same_input_same_output() -> None:
    a = compute_metrics(STATE, GROUP)
    b = compute_metrics(STATE, GroupAssignment(dict(reversed(list(GROUP.clients.items())))))
    assert a == b


def test_every_section_starts_at_a_metric_and_the_first_metric_opens_one() -> None:
    names = [f.name for f in metric_fields()]
    assert set(SECTION_STARTS) <= set(names) and names[0] in SECTION_STARTS
    assert [n for n in names if n in SECTION_STARTS] == list(SECTION_STARTS)  # in table order
