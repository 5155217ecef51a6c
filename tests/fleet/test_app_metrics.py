from __future__ import annotations

from taskassign.fleet.app_metrics import METRIC_COLUMNS, client_restore, compute_app_metrics
from taskassign.model import GroupAssignment, KafkaStreamsAssignment, TaskAssignment
from taskassign.validation import check_completeness
from tests.helpers import PID_1, PID_2, PID_3, app_state, client, task, tid


def test_hand_computed_metrics() -> None:
    state = app_state(
        [task("0_0", end=1_000, source_racks=["r1"], state_bytes=10), task("0_1", end=500, source_racks=["r2"]),
         task("0_2", end=300), task("1_0", stateful=False, source_racks=["r1"])],
        [client(PID_1, threads=2, prev_active=["0_0", "1_0"], offsets={"0_0": -2, "0_1": 450}, rack="r1"),
         client(PID_2, prev_active=["0_1"], offsets={"0_1": -2}, rack="r2"),
         client(PID_3, rack="r1")],
        num_standby_replicas=1,
    )
    group = GroupAssignment({
        # 0_1 moves from PID_2 to PID_1 (PID_1 has it at lag 50); 0_2 goes to PID_3 (lag 300, never owned).
        PID_1: KafkaStreamsAssignment.of_tasks(PID_1, active=[tid("0_0"), tid("0_1")], standby=[tid("0_2")]),
        PID_2: KafkaStreamsAssignment.of_tasks(PID_2, active=[tid("1_0")], standby=[tid("0_0")]),
        PID_3: KafkaStreamsAssignment.of_tasks(PID_3, active=[tid("0_2")]),
    })
    completeness = check_completeness(state, TaskAssignment(tuple(group.clients.values())))
    lags = {PID_1: {tid("0_0"): -2, tid("0_1"): 50}, PID_2: {tid("0_1"): -2}}  # what the lag stage reports
    metrics = compute_app_metrics(state, group, completeness, lags)
    assert list(metrics) == [m.name for m in METRIC_COLUMNS]
    assert metrics["tasks"] == 4
    assert metrics["stateful_tasks"] == 3
    assert metrics["clients"] == 3
    assert metrics["threads"] == 4
    assert metrics["unassigned_tasks"] == 0
    assert metrics["standby_replicas_missing"] == 1  # 0_1 has no standby
    assert metrics["active_tasks_per_client_spread"] == 1  # 2, 1, 1
    assert metrics["active_tasks_per_thread_spread"] == 0.0  # 2/2, 1/1, 1/1
    # state weights: PID_1 10 + 1 (0_1 has one store, no state_bytes), PID_2 0 (stateless), PID_3 1
    assert metrics["state_weight_per_client_spread"] == 11
    # 0_1 moved (PID_2 still here); 1_0 moved from PID_1 to PID_2; 0_2 had no previous owner
    assert metrics["moved_active_tasks"] == 2
    assert metrics["new_standby_tasks"] == 2  # 0_2 on PID_1, 0_0 on PID_2
    # PID_1: 0_0 running (-2) + 0_1 lag 50 + standby 0_2 lag 300; PID_2: standby 0_0 lag 1000; PID_3: 0_2 lag 300
    assert metrics["records_to_restore"] == 50 + 300 + 1_000 + 300
    # 0_1 (replica on r2) runs on PID_1 (r1), 1_0 (replica on r1) on PID_2 (r2); 0_2's racks are unknown
    assert metrics["cross_rack_active_partitions"] == 2


def test_client_restore_counts_unknown_lags_apart() -> None:
    state = app_state([task("0_0", end=-3), task("0_1", end=-3)],
                      [client(PID_1, prev_active=["0_0"], offsets={"0_0": -2})])
    assert client_restore(state, PID_1, (tid("0_0"), tid("0_1")), {tid("0_0"): -2}) == (0, 1)
