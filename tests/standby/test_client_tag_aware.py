"""ClientTagAwareStandbyTaskAssignor: partial rack awareness (ClientTagAwareStandbyTaskAssignorTest), tag diversity,
the 2- and 4-argument movement predicates and the hash-order fallback."""

from __future__ import annotations

import pytest

from taskassign.standby.client_tag_aware import ClientTagAwareStandbyTaskAssignor, keeps_tag_diversity, rack_as_tag
from tests.standby.helpers import TASKS, make_clients, n, pools, standbys


def tags(cluster: str, zone: str) -> dict[str, str]:
    return {"cluster": cluster, "zone": zone}


@pytest.mark.parametrize("exact", [False, True])
def test_e11_partial_rack_awareness(exact: bool) -> None:
    clients = make_clients([
        {"tags": tags("c1", "z1"), "active": ["0_0"]}, {"tags": tags("c1", "z2")}, {"tags": tags("c1", "z3")},
        {"tags": tags("c2", "z1")}, {"tags": tags("c2", "z2")}, {"tags": tags("c2", "z3"), "active": ["1_0"]},
    ])
    assignor = ClientTagAwareStandbyTaskAssignor(["cluster", "zone"])
    assignor.assign(clients, [n("0_0"), n("1_0")], 2, pools(clients, exact), TASKS)
    holders = {task: sorted(c.index + 1 for c in clients if n(task) in c.standby) for task in ("0_0", "1_0")}
    assert holders == {"0_0": [3, 5], "1_0": [2, 4]}


def test_only_configured_keys_constrain() -> None:
    clients = make_clients([{"tags": tags("c1", "z1"), "active": ["0_0"]}, {"tags": tags("c1", "z2"), "threads": 2},
                            {"tags": tags("c2", "z1")}])
    ClientTagAwareStandbyTaskAssignor(["cluster"]).assign(clients, [n("0_0")], 1, pools(clients), TASKS)
    assert standbys(clients) == {1: [], 2: [], 3: ["0_0"]}  # zone ignored: P3 is in the other cluster


def test_p22_one_zone_falls_back_to_least_loaded() -> None:
    clients = make_clients([{"tags": tags("c1", "z1"), "active": [f"0_{p}"]} for p in range(4)])
    ClientTagAwareStandbyTaskAssignor(["cluster", "zone"]).assign(
        clients, [n(f"0_{p}") for p in range(4)], 1, pools(clients), TASKS)
    assert sorted(len(c.standby) for c in clients) == [1, 1, 1, 1]


def test_p22_lone_client_gets_no_standby() -> None:
    clients = make_clients([{"tags": tags("c1", "z1"), "active": ["0_0"]}])
    ClientTagAwareStandbyTaskAssignor(["zone"]).assign(clients, [n("0_0")], 2, pools(clients), TASKS)
    assert standbys(clients) == {1: []}


def test_fallback_serves_pending_tasks_in_java_hash_map_order() -> None:
    # Every other client shares a cluster or a zone with P1, so no standby fits the tags: all four tasks
    # go to the fallback, which walks Kafka's HashMap (0_3, 0_2, 0_1, 0_0), least loaded first.
    clients = make_clients([{"tags": tags("c1", "z1"), "active": [f"0_{p}" for p in range(4)], "threads": 4},
                            {"tags": tags("c1", "z2")}, {"tags": tags("c2", "z1")}])
    ClientTagAwareStandbyTaskAssignor(["cluster", "zone"]).assign(
        clients, [n(f"0_{p}") for p in range(4)], 1, pools(clients), TASKS)
    assert standbys(clients) == {1: [], 2: ["0_1", "0_3"], 3: ["0_0", "0_2"]}


def test_zero_replicas_still_places_one_standby_kafka_bug() -> None:
    clients = make_clients([{"tags": tags("c1", "z1"), "active": ["0_0"]}, {"tags": tags("c2", "z2")}])
    ClientTagAwareStandbyTaskAssignor(["zone"]).assign(clients, [n("0_0")], 0, pools(clients), TASKS)
    assert standbys(clients) == {1: [], 2: ["0_0"]}


def test_p23_two_argument_predicate_needs_every_source_tag_value() -> None:
    a, b, c = make_clients([{"tags": tags("c1", "z1")}, {"tags": {**tags("c1", "z1"), "env": "x"}},
                            {"tags": tags("c1", "z2")}])
    assignor = ClientTagAwareStandbyTaskAssignor(["zone"])
    assert assignor.is_allowed_task_movement(a, b)
    assert not assignor.is_allowed_task_movement(b, a)  # a lacks b's (unconfigured) env tag
    assert not assignor.is_allowed_task_movement(a, c)


def test_p23_four_argument_predicate_keeps_distinct_tag_entries() -> None:
    clients = make_clients([{"tags": tags("c1", "z1"), "active": ["0_0"]}, {"tags": tags("c1", "z2")},
                            {"tags": tags("c1", "z1")}, {"tags": tags("c1", "z3")}])
    _, second, third, fourth = clients
    second.standby.add(n("0_0"))
    assignor = ClientTagAwareStandbyTaskAssignor(["zone"])
    assert not assignor.is_allowed_task_movement_for_task(second, third, n("0_0"), clients)  # z2 -> z1: loses z2
    assert assignor.is_allowed_task_movement_for_task(second, fourth, n("0_0"), clients)  # z2 -> z3
    predicate = assignor.standby_move_predicate(clients)
    active = {c.process_id: {TASKS[t] for t in c.active} for c in clients}
    standby = {c.process_id: {TASKS[t] for t in c.standby} for c in clients}
    assert not predicate(second.process_id, third.process_id, TASKS[n("0_0")], active, standby)
    assert predicate(second.process_id, fourth.process_id, TASKS[n("0_0")], active, standby)
    assert keeps_tag_diversity({"zone": "a"}, {"zone": "b"}, [{"zone": "a"}])


def test_rack_as_tag() -> None:
    (client,) = make_clients([{"rack": "r1"}])
    assert rack_as_tag(client) == {"rack": "r1"}
