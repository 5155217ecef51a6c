"""Explanations: one sentence per moved (or waiting) task, naming both clients and the reason."""

from __future__ import annotations

from taskassign.assignors.state_aware import assign_state_aware
from tests.assignors.state_aware.helpers import running, sized
from tests.helpers import PID, PID_1, PID_2, app_state, client


def test_a_move_for_balance_names_the_clients_the_loads_and_the_cost() -> None:
    tasks = [sized("0_0", 2), sized("0_1", 2), sized("0_2", 2), sized("0_3", 2)]
    state = app_state(tasks, [running(1, ["0_0", "0_1", "0_2", "0_3"]), running(2, standby=["0_2", "0_3"])],
                      num_standby_replicas=1)
    sentences = assign_state_aware(state).details["explanations"]
    moved = [s for s in sentences if "(active) moved" in s]
    assert len(moved) == 2
    for sentence in moved:
        assert f"from {PID_1} to {PID_2}" in sentence
        assert "would hold 8.0 GB of state per thread, more than its share of 4.0 GB +8%" in sentence
        assert f"{PID_2} is caught up on it, nothing to restore" in sentence


def test_a_waiting_active_says_what_it_waits_for() -> None:
    tasks = [sized(f"0_{i}", 2) for i in range(4)]
    state = app_state(tasks, [running(1, ["0_0", "0_1", "0_2", "0_3"]), client(PID_2)], max_warmup_replicas=1)
    sentences = assign_state_aware(state).details["explanations"]
    assert len(sentences) == 2
    assert all(f"stays on {PID_1} for now" in s and "probing rebalance requested" in s for s in sentences)
    assert sum("a warm-up replica restores on" in s for s in sentences) == 1
    assert sum("no warm-up replica left this rebalance (max.warmup.replicas)" in s for s in sentences) == 1
    assert all("records behind (not caught up)" in s for s in sentences)


def test_a_departed_clients_task_is_placed_not_moved() -> None:
    tasks = [sized("0_0", 1), sized("0_1", 1)]
    state = app_state(tasks, [running(2, ["0_1"]), running(3, standby=["0_0"])])
    result = assign_state_aware(state)
    assert result.details["explanations"] == []  # nobody ran 0_0: it is placed, not moved
    assert [str(t) for t in result.by_process()[PID[3]].active_tasks()] == ["0_0"]


def test_a_standby_that_moves_is_explained() -> None:
    # P3 held the only standby of the 3 GB task but must give state away: it moves to the light P4.
    tasks = [sized("0_0", 3), sized("0_1", 1), sized("0_2", 1), sized("0_3", 1)]
    clients = [running(1, ["0_0"]), running(2, ["0_1"]), running(3, ["0_2", "0_3"], standby=["0_0", "0_1"]),
               client(PID[4])]
    sentences = assign_state_aware(app_state(tasks, clients, num_standby_replicas=1)).details["explanations"]
    standby = [s for s in sentences if "(standby) moved" in s]
    assert standby and all(f"from {PID[3]}" in s and " restores " in s for s in standby)


def test_a_target_that_fell_behind_hands_over_to_a_caught_up_client() -> None:
    # P1 runs 0_0 but its store fell far behind (it was wiped and is restoring); P2 has a caught-up standby.
    tasks = [sized("0_0", 1), sized("0_1", 1)]
    clients = [running(1, ["0_0"], offsets={"0_0": 0}), running(2, ["0_1"], standby=["0_0"])]
    result = assign_state_aware(app_state(tasks, clients, num_standby_replicas=1))
    assert [str(t) for t in result.by_process()[PID_2].active_tasks()] == ["0_0", "0_1"]
    sentence = result.details["explanations"][0]
    assert sentence.startswith(f"Task 0_0 (active) moved from {PID_1} to caught-up {PID_2} for now")
    assert "records behind (not caught up)" in sentence and result.probing_rebalance_needed
