"""Standby targets: spread over tags or racks, sticky, weighted, min(R, clients - 1) per task."""

from __future__ import annotations

from taskassign.assignors.state_aware import assign_state_aware
from tests.assignors.state_aware.helpers import actives, running, sized, standbys
from tests.helpers import PID, app_state, client

ZONES = {1: "a", 2: "a", 3: "b", 4: "b"}


def zone_of(result, pid):  # type: ignore[no-untyped-def]
    return ZONES[next(n for n, p in PID.items() if p == pid)]


def test_standbys_go_to_another_zone_when_tags_are_configured() -> None:
    tasks = [sized(f"0_{i}", 1) for i in range(8)]
    clients = [client(PID[n], tags={"zone": z}) for n, z in ZONES.items()]
    result = assign_state_aware(app_state(tasks, clients, num_standby_replicas=1, rack_aware_assignment_tags=("zone",)))
    active_zone = {t: zone_of(result, pid) for pid, ts in actives(result).items() for t in ts}
    for pid, ts in standbys(result).items():
        for t in ts:
            assert zone_of(result, pid) != active_zone[t]


def test_without_tags_standbys_go_to_another_rack() -> None:
    tasks = [sized(f"0_{i}", 1) for i in range(8)]
    clients = [client(PID[n], rack=f"rack-{z}") for n, z in ZONES.items()]
    result = assign_state_aware(app_state(tasks, clients, num_standby_replicas=1))
    active_zone = {t: zone_of(result, pid) for pid, ts in actives(result).items() for t in ts}
    for pid, ts in standbys(result).items():
        assert all(zone_of(result, pid) != active_zone[t] for t in ts)


def test_previous_standbys_stay() -> None:
    tasks = [sized(f"0_{i}", 1) for i in range(6)]
    clients = [running(1, ["0_0", "0_1"], standby=["0_2", "0_4"]), running(2, ["0_2", "0_3"], standby=["0_0", "0_5"]),
               running(3, ["0_4", "0_5"], standby=["0_1", "0_3"])]
    result = assign_state_aware(app_state(tasks, clients, num_standby_replicas=1))
    assert standbys(result) == {PID[1]: ["0_2", "0_4"], PID[2]: ["0_0", "0_5"], PID[3]: ["0_1", "0_3"]}
    assert not result.probing_rebalance_needed and result.details["explanations"] == []


def test_at_most_one_standby_per_other_client() -> None:
    tasks = [sized("0_0", 1), sized("0_1", 1)]
    result = assign_state_aware(app_state(tasks, [client(PID[1]), client(PID[2])], num_standby_replicas=3))
    assert sorted(len(ts) for ts in standbys(result).values()) == [1, 1]


def test_standbys_even_out_the_state_per_thread() -> None:
    # Actives: P1 runs the 3 GB task, P2 and P3 a 1 GB task each (10 GB with standbys, 3.3 GB a client).
    # The 3 GB standby cannot join P1, so some client reaches 4 GB; the best then is 4 / 4 / 2 (a count-
    # based placement can reach 5: P1 taking both small standbys).
    tasks = [sized("0_0", 3), sized("0_1", 1), sized("0_2", 1)]
    clients = [running(1, ["0_0"]), running(2, ["0_1"]), running(3, ["0_2"])]
    result = assign_state_aware(app_state(tasks, clients, num_standby_replicas=1))
    gb = {pid: sum({"0_0": 3, "0_1": 1, "0_2": 1}[t] for t in actives(result)[pid] + standbys(result)[pid])
          for pid in (PID[1], PID[2], PID[3])}
    assert sorted(gb.values()) == [2, 4, 4]
