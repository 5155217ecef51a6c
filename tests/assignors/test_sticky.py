"""The public KIP-924 StickyTaskAssignor: the example of Kafka's StickyTaskAssignorTest (E13) and its variants."""

from __future__ import annotations

import random

import pytest

from taskassign.assignors.sticky import StickyPreserveTaskAssignor, StickyTaskAssignor
from taskassign.model import ApplicationState, AssignmentError, TaskInfo, TaskTopicPartition
from taskassign.validation import check_completeness, validate_task_assignment
from tests.helpers import PID, PID_1, PID_2, PID_3, PID_4, app_state, client, task, tid


def test_e13a_one_stateful_task_gets_a_standby_on_every_other_client() -> None:
    state = app_state([task("0_0"), task("0_1", stateful=False), task("0_2", stateful=False)],
                      [client(p) for p in (PID_1, PID_2, PID_3, PID_4)], num_standby_replicas=3)
    by_pid = StickyTaskAssignor().assign(state).by_process()
    assert {p: (set(a.active_tasks()), set(a.standby_tasks())) for p, a in by_pid.items()} == {
        PID_1: ({tid("0_0")}, set()),
        PID_2: ({tid("0_1")}, {tid("0_0")}),
        PID_3: ({tid("0_2")}, {tid("0_0")}),
        PID_4: (set(), {tid("0_0")}),
    }


def _e13b_state() -> ApplicationState:
    return app_state([task(t, stateful=False) for t in ("0_0", "0_1", "0_2")],
                     [client(PID_1, prev_active=["0_0", "0_2"]), client(PID_2, prev_active=["0_1"]), client(PID_3)])


def test_e13b_hash_order_decides_which_previous_task_p1_keeps() -> None:
    result = StickyTaskAssignor().assign(_e13b_state())
    assert {p: a.active_tasks() for p, a in result.by_process().items()} == {
        PID_1: {tid("0_2")}, PID_2: {tid("0_1")}, PID_3: {tid("0_0")}}
    assert all(a.followup_rebalance_deadline is None for a in result.assignments)
    assert not result.probing_rebalance_needed


def test_e13c_preserving_variant_keeps_every_previous_active_and_follows_up_at_once() -> None:
    result = StickyPreserveTaskAssignor().assign(_e13b_state())
    by_pid = result.by_process()
    assert {p: a.active_tasks() for p, a in by_pid.items()} == {
        PID_1: {tid("0_0"), tid("0_2")}, PID_2: {tid("0_1")}, PID_3: set()}
    assert [p for p, a in by_pid.items() if a.followup_rebalance_deadline is not None] == [PID_1]
    assert by_pid[PID_1].followup_rebalance_deadline == 0


def _e13d_state(stateful: bool, **configs: object) -> ApplicationState:
    def rack_task(text: str, rack: str) -> TaskInfo:
        t = tid(text)
        stores = ("store-0",) if stateful else ()
        parts = [TaskTopicPartition("source-0", t.partition, True, False, frozenset({rack}))]
        if stateful:
            parts.append(TaskTopicPartition("app-store-0-changelog", t.partition, False, True, frozenset({rack})))
        return TaskInfo(t, frozenset(stores), tuple(parts))  # type: ignore[arg-type]

    return app_state([rack_task("0_0", "rack-2"), rack_task("0_1", "rack-1")],
                     [client(PID_1, rack="rack-1", prev_active=["0_0"]),
                      client(PID_2, rack="rack-2", prev_active=["0_1"])],
                     rack_aware_assignment_strategy="min_traffic", **configs)


def _actives(state: ApplicationState) -> dict[object, set[object]]:
    return {p: set(a.active_tasks()) for p, a in StickyTaskAssignor().assign(state).by_process().items()}


UNCHANGED = {PID_1: {tid("0_0")}, PID_2: {tid("0_1")}}
SWAPPED = {PID_1: {tid("0_1")}, PID_2: {tid("0_0")}}


@pytest.mark.parametrize(("costs", "expected"), [
    ({}, UNCHANGED),  # Kafka: skipped; taskassign: defaults 1/10, moving costs more than it saves
    ({"rack_aware_traffic_cost": 1, "rack_aware_non_overlap_cost": 10}, UNCHANGED),
    ({"rack_aware_traffic_cost": 10, "rack_aware_non_overlap_cost": 1}, SWAPPED),
])
def test_e13d_rack_costs_decide_whether_tasks_swap(costs: dict[str, int], expected: object) -> None:
    assert _actives(_e13d_state(True, **costs)) == expected


def test_unset_costs_still_optimise_stateless_tasks_unless_kafka_compat() -> None:
    """Kafka item 11.6: the sticky default costs are dead in Kafka; taskassign applies them, so stateless
    tasks (costs 1/0) move to their rack. kafka_compat restores Kafka's skip."""
    assert _actives(_e13d_state(False)) == SWAPPED
    compat = _e13d_state(False, extensions={"taskassign.kafka.compat": True})
    assert _actives(compat) == UNCHANGED


def test_p33_rack_aware_300_tasks_20_clients_2_standbys_is_valid() -> None:
    """Kafka's CustomStickyTaskAssignorTest large case (its 3-minute timeout lives in benchmarks, not here)."""
    rng = random.Random(924)
    racks = [f"rack-{r}" for r in range(4)]

    def rack_task(sub: int, part: int) -> TaskInfo:
        parts = (TaskTopicPartition(f"source-{sub}", part, True, False, frozenset(rng.sample(racks, 2))),
                 TaskTopicPartition(f"store-{sub}-changelog", part, False, True, frozenset(rng.sample(racks, 2))))
        return TaskInfo(tid(f"{sub}_{part}"), frozenset({f"store-{sub}"}), parts)  # type: ignore[arg-type]

    state = app_state([rack_task(s, p) for s in range(3) for p in range(100)],
                      [client(PID[n], rack=racks[n % 4]) for n in range(1, 21)],
                      num_standby_replicas=2, rack_aware_assignment_strategy="min_traffic",
                      rack_aware_traffic_cost=10, rack_aware_non_overlap_cost=1)
    result = StickyTaskAssignor().assign(state)
    assert validate_task_assignment(state, result) is AssignmentError.NONE
    assert check_completeness(state, result).is_complete
