from __future__ import annotations

from taskassign.leader.followups import IMMEDIATE_FOLLOWUP_MS, client_assignments, with_consumer_followups
from taskassign.model import ConsumerAssignment, KafkaStreamsAssignment, TaskAssignment
from tests.helpers import PID_1, PID_2, PID_3, TASK_0_0, app_state, client, task

STATE = app_state([task("0_0")], [client(PID_1), client(PID_2)], now_ms=1_000, probing_rebalance_interval_ms=60_000)


def test_probing_goes_to_the_leader_client_only_and_keeps_an_earlier_assignor_deadline() -> None:
    ta = TaskAssignment((KafkaStreamsAssignment.of_tasks(PID_1, [TASK_0_0]).with_followup_rebalance(500),
                         KafkaStreamsAssignment.of_tasks(PID_2)), probing_rebalance_needed=True)
    assert client_assignments(STATE, ta, PID_1)[PID_1].followup_rebalance_deadline == 500
    clients = client_assignments(STATE, ta, PID_2)
    assert clients[PID_2].followup_rebalance_deadline == 61_000
    assert clients[PID_1].followup_rebalance_deadline == 500


def test_leader_outside_the_group_loses_the_probing_deadline() -> None:
    ta = TaskAssignment((KafkaStreamsAssignment.of_tasks(PID_1), KafkaStreamsAssignment.of_tasks(PID_2)), True)
    clients = client_assignments(STATE, ta, PID_3)
    assert all(a.followup_rebalance_deadline is None for a in clients.values())


def _consumers(*withheld: bool) -> dict[str, ConsumerAssignment]:
    return {f"c{i}": ConsumerAssignment(withheld=(TASK_0_0,) if w else ()) for i, w in enumerate(withheld, 1)}


def deadlines(result: dict[str, ConsumerAssignment]) -> list[int | None]:
    return [a.followup_rebalance_deadline for a in result.values()]


def test_first_consumer_carries_the_client_deadline() -> None:
    assert deadlines(with_consumer_followups(_consumers(False, False), 77)) == [77, None]
    assert deadlines(with_consumer_followups(_consumers(False, False), None)) == [None, None]


def test_withheld_tasks_mean_immediate_and_cancel_the_client_deadline() -> None:
    assert deadlines(with_consumer_followups(_consumers(True, False), 77)) == [IMMEDIATE_FOLLOWUP_MS, None]
    assert deadlines(with_consumer_followups(_consumers(False, True, True), 77)) == [77, 0, 0]
