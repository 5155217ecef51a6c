"""The balanced active target on hand-computed cases (plan_actives, before the flow and the HA step)."""

from __future__ import annotations

import pytest

from taskassign.assignors.state_aware.actives import Reason, plan_actives, settle_actives
from taskassign.assignors.state_aware.problem import Problem
from taskassign.assignors.state_aware.settings import Settings
from tests.assignors.state_aware.helpers import running, sized
from tests.helpers import PID, app_state, client, task


def plan(state, **settings):  # type: ignore[no-untyped-def]
    p = Problem(state, Settings(**settings))
    result = settle_actives(p, plan_actives(p))
    by_client: dict[int, list[str]] = {}
    for t, c in enumerate(result.owner):
        by_client.setdefault(c, []).append(str(p.task_ids[t]))
    return p, result, by_client


def test_a_big_task_gets_a_client_to_itself() -> None:
    # 6 + 4 x 1 GB over two equal clients: the fair share is 5 GB; the 6 GB task cannot be split, so the
    # best is 6 / 4. Kafka (counts) would give 3 tasks to each, e.g. 6+1+1 = 8 GB against 2 GB.
    tasks = [sized("0_0", 6), sized("0_1", 1), sized("0_2", 1), sized("0_3", 1), sized("0_4", 1)]
    _, _, by_client = plan(app_state(tasks, [client(PID[1]), client(PID[2])]))
    assert by_client == {0: ["0_0"], 1: ["0_1", "0_2", "0_3", "0_4"]}


def test_load_follows_the_number_of_threads() -> None:
    tasks = [sized(f"0_{i}", 1) for i in range(8)]
    _, result, by_client = plan(app_state(tasks, [client(PID[1], threads=1), client(PID[2], threads=3)]))
    assert len(by_client[0]) == 2 and len(by_client[1]) == 6
    assert result.bins.fair == [2.0, 6.0]


def test_skewed_sizes_balance_to_the_tolerance() -> None:
    sizes = [9, 7, 6, 5, 4, 3, 3, 2, 2, 1, 1, 1]  # 44 GB over 4 clients: 11 GB each
    tasks = [sized(f"0_{i}", gb) for i, gb in enumerate(sizes)]
    p, result, _ = plan(app_state(tasks, [client(PID[n]) for n in range(1, 5)]))
    gb = [load * p.weights.unit / 1e9 for load in result.bins.load]
    assert gb == pytest.approx([11.0, 11.0, 11.0, 11.0])


def test_each_subtopology_is_spread() -> None:
    tasks = [sized(f"{s}_{i}", 1) for s in range(2) for i in range(4)]
    _, _, by_client = plan(app_state(tasks, [client(PID[1]), client(PID[2])]))
    for names in by_client.values():
        assert sorted(n[0] for n in names) == ["0", "0", "1", "1"]


def test_stateless_tasks_weigh_the_configured_fraction() -> None:
    tasks = [sized("0_0", 1), sized("0_1", 1)] + [task(f"1_{i}", stateful=False) for i in range(4)]
    p, result, _ = plan(app_state(tasks, [client(PID[1]), client(PID[2])]), stateless_task_weight=0.5)
    assert p.active_weight == (1.0, 1.0, 0.5, 0.5, 0.5, 0.5)
    assert result.bins.load == [2.0, 2.0]


def test_a_balanced_previous_assignment_is_kept() -> None:
    tasks = [sized(f"0_{i}", gb) for i, gb in enumerate([4, 1, 1, 1, 1])]
    clients = [running(1, ["0_0"]), running(2, ["0_1", "0_2", "0_3", "0_4"])]
    _, result, by_client = plan(app_state(tasks, clients))
    assert by_client == {0: ["0_0"], 1: ["0_1", "0_2", "0_3", "0_4"]}
    assert result.reason == [None] * 5


def test_an_overloaded_client_sheds_what_is_cheapest_to_move() -> None:
    # P1 runs 3 x 2 GB; P2 is empty but holds a caught-up standby of 0_2, so 0_2 moves (nothing to restore).
    tasks = [sized(f"0_{i}", 2) for i in range(3)] + [sized("0_3", 2)]
    clients = [running(1, ["0_0", "0_1", "0_2", "0_3"]), running(2, standby=["0_2"])]
    p, result, by_client = plan(app_state(tasks, clients))
    assert "0_2" in by_client[1] and len(by_client[1]) == 2
    moved = [str(p.task_ids[t]) for t, r in enumerate(result.reason) if r is not None]
    assert "0_2" in moved and all(result.reason[p.numbers[p.task_ids[t]]] is Reason.OVER_STATE
                                  for t in range(4) if result.owner[t] == 1)


def test_a_new_client_pulls_its_share() -> None:
    tasks = [sized(f"0_{i}", 1) for i in range(9)]
    clients = [running(1, [f"0_{i}" for i in range(5)]), running(2, [f"0_{i}" for i in range(5, 9)]), client(PID[3])]
    _, result, by_client = plan(app_state(tasks, clients))
    assert [len(by_client[c]) for c in range(3)] == [3, 3, 3]
    reasons = {r for r in result.reason if r is not None}
    assert reasons <= {Reason.OVER_STATE, Reason.PULLED}


def test_tasks_of_a_departed_client_go_where_their_state_is() -> None:
    tasks = [sized(f"0_{i}", 1) for i in range(4)]
    # P1 (gone) ran 0_0 and 0_1; P3 has caught-up copies of both; P2 runs the other two.
    clients = [running(2, ["0_2", "0_3"]), running(3, standby=["0_0", "0_1"])]
    p, result, by_client = plan(app_state(tasks, clients))
    assert by_client == {0: ["0_2", "0_3"], 1: ["0_0", "0_1"]}
    assert p.prev_owner[:2] == [-1, -1] and p.sticky_owner[:2] == [1, 1]  # they stick to their caught-up copy
    assert result.reason == [None] * 4 and result.settled


def test_a_task_nobody_holds_is_new() -> None:
    tasks = [sized(f"0_{i}", 1) for i in range(3)]
    _, result, by_client = plan(app_state(tasks, [running(1, ["0_0"]), running(2, ["0_1"])]))
    assert result.reason[2] is Reason.NEW and sorted(len(ts) for ts in by_client.values()) == [1, 2]
