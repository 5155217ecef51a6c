"""The min-cost flow over the greedy target: same counts per group, less to restore, fewer cross-rack reads."""

from __future__ import annotations

from taskassign.assignors.state_aware.actives import Reason, plan_actives
from taskassign.assignors.state_aware.flow import remap_actives
from taskassign.assignors.state_aware.problem import Problem
from taskassign.assignors.state_aware.settings import Settings
from tests.assignors.state_aware.helpers import running, sized
from tests.helpers import PID_2, app_state, client


def test_the_flow_sheds_the_task_whose_partitions_are_on_the_other_rack() -> None:
    # P1 (rack a) runs both tasks and must give one to the new P2 (rack b). The greedy pass sheds 0_1
    # (ties by TaskId), but 0_0 reads from rack b and 0_1 from rack a: the flow moves 0_0 instead.
    tasks = [sized("0_0", 1, racks=["b"]), sized("0_1", 1, racks=["a"])]
    state = app_state(tasks, [running(1, ["0_0", "0_1"], rack="a"), client(PID_2, rack="b")])
    p = Problem(state, Settings())
    greedy = plan_actives(p)
    assert greedy.owner == [0, 1]
    remapped = remap_actives(p, plan_actives(p))
    assert remapped.owner == [1, 0]
    assert remapped.reason == [Reason.OVER_STATE, None] and remapped.instead_of == {0: 1}
    assert p.active_cross(0, 1) == 0 and p.active_cross(1, 0) == 0


def test_without_a_gain_the_flow_keeps_the_greedy_target() -> None:
    tasks = [sized(f"0_{i}", 1) for i in range(6)]
    state = app_state(tasks, [running(1, [f"0_{i}" for i in range(6)]), client(PID_2)])
    p = Problem(state, Settings())
    greedy = plan_actives(p)
    assert remap_actives(p, plan_actives(p)).owner == greedy.owner


def test_traffic_cost_zero_ignores_racks() -> None:
    tasks = [sized("0_0", 1, racks=["b"]), sized("0_1", 1, racks=["a"])]
    state = app_state(tasks, [running(1, ["0_0", "0_1"], rack="a"), client(PID_2, rack="b")])
    p = Problem(state, Settings(traffic_cost=0))
    assert p.source_racks is None
    assert remap_actives(p, plan_actives(p)).owner == [0, 1]


def test_the_flow_keeps_weights_within_the_bounds() -> None:
    # Same subtopology, weights in different classes: the flow never trades a 4 GB task for a 1 GB one.
    tasks = [sized("0_0", 4, racks=["b"]), sized("0_1", 1, racks=["a"]), sized("0_2", 4, racks=["a"]),
             sized("0_3", 1, racks=["b"])]
    state = app_state(tasks, [running(1, ["0_0", "0_1", "0_2", "0_3"], rack="a"), client(PID_2, rack="b")])
    p = Problem(state, Settings())
    plan = remap_actives(p, plan_actives(p))
    assert plan.owner == [1, 0, 0, 1]  # each client one big and one small task, all read on their own rack
    loads = plan.bins.load
    assert abs(loads[0] - loads[1]) < 1e-9
