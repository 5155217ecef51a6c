from __future__ import annotations

from types import MappingProxyType

import pytest

from taskassign.assignors.base import BaseTaskAssignor
from taskassign.configs import REBALANCE_PROTOCOL, AssignmentConfigs
from taskassign.errors import UserInputError
from taskassign.formats.scenario import Scenario, with_config_overrides
from taskassign.ids import TaskId
from taskassign.leader.run import rebalance
from taskassign.model import ApplicationState, GroupAssignment, KafkaStreamsAssignment, TaskAssignment
from taskassign.simulate.world import FollowUp, World
from tests.helpers import PID_1, PID_2, client, task, tid

T0, T1, T2, S = tid("0_0"), tid("0_1"), tid("0_2"), tid("1_0")


def world(**kwargs: int) -> World:
    tasks = [task("0_0", end=1_000), task("0_1", end=1_000), task("0_2", end=500), task("1_0", stateful=False)]
    clients = [
        # P1 runs 0_0 (-2) and stateless 1_0, restores 0_1 as an active from offset 400, has 0_2 ahead of the
        # changelog (restarts from scratch); P2 has an unknown offset for 0_0.
        client(PID_1, prev_active=["0_0", "0_1", "1_0"], offsets={"0_0": -2, "0_1": 400, "0_2": 900}),
        client(PID_2, prev_standby=["0_0"], offsets={"0_0": -3}),
    ]
    configs = AssignmentConfigs(probing_rebalance_interval_ms=60_000)
    state = ApplicationState(tasks=tasks, clients=clients, configs=configs, now_ms=0)
    return World(Scenario("w", state, MappingProxyType({})), restore_rate=kwargs.get("rate", 100),
                 state_cleanup_delay_ms=kwargs.get("cleanup", 600_000))


def test_initial_stores_follow_the_reported_offset_sums() -> None:
    w = world()
    p1, p2 = w.clients[PID_1], w.clients[PID_2]
    assert {t: s.offset for t, s in p1.stores.items()} == {T0: 1_000, T1: 400, T2: 0}
    assert p1.running == {T0, S}  # 0_1 still restoring
    assert {t: s.offset for t, s in p2.stores.items()} == {T0: 0}


def test_the_leader_sees_running_actives_as_minus_two_and_every_other_store_as_its_offset() -> None:
    state = world().application_state()
    p1 = state.clients[PID_1]
    assert dict(p1.task_offset_sums) == {T0: -2, T1: 400, T2: 0}
    assert set(p1.previous_active_tasks) == {T0, T1, S}
    assert set(p1.previous_standby_tasks) == {T2}
    assert p1.lag_for(T1) == 600 and p1.lag_for(T2) == 500


def test_actives_restore_first_then_standbys_and_restored_actives_start_running() -> None:
    w = world()
    w.apply(GroupAssignment({PID_1: KafkaStreamsAssignment.of_tasks(PID_1, [T0, T1, S], [T2]),
                             PID_2: KafkaStreamsAssignment.of_tasks(PID_2, [], [T0])}),
            probing_deadline_ms=None)
    w.advance(5_000)  # P1: 500 records: 0_1 needs 600 -> gets 500; 0_2 gets nothing
    assert w.clients[PID_1].stores[T1].offset == 900 and w.clients[PID_1].stores[T2].offset == 0
    w.advance(10_000)  # 500 more: 100 finish 0_1, 400 go to 0_2
    assert w.clients[PID_1].stores[T1].offset == 1_000 and w.clients[PID_1].stores[T2].offset == 400
    assert T1 in w.clients[PID_1].running
    assert w.clients[PID_2].stores[T0].offset == 1_000  # P2 restored its standby at 100/s too
    sample = w.sample()
    assert (sample.active_records_left, sample.standby_records_left, sample.tasks_not_running) == (0, 100, 1)


def test_running_actives_keep_up_with_a_growing_changelog() -> None:
    w = world()
    w.append_rate[T0] = 10
    w.advance(60_000)
    assert w.end[T0] == 1_600 and w.clients[PID_1].stores[T0].offset == 1_600


class _MoveToP2(BaseTaskAssignor):
    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return TaskAssignment((KafkaStreamsAssignment.of_tasks(PID_1, [T1, S]),
                               KafkaStreamsAssignment.of_tasks(PID_2, [T0, T2])))


@pytest.mark.parametrize(("protocol", "withheld"), [("cooperative", {T0}), ("eager", set())])
def test_the_leaders_withheld_tasks_wait_for_the_handover(protocol: str, withheld: set[TaskId]) -> None:
    # P1 runs 0_0 and 0_1 (restoring); moving 0_0 to P2 while P1 still owns it is withheld (cooperative)
    w = world()
    state = with_config_overrides(Scenario("w", w.application_state()), {REBALANCE_PROTOCOL: protocol}).state
    group = rebalance(state, _MoveToP2()).group
    assert w.apply(group, probing_deadline_ms=None) == len(withheld)
    p2 = w.clients[PID_2]
    assert p2.withheld == withheld and p2.active == {T0, T2} - withheld
    assert w.clients[PID_1].stores[T0].released_at == 0
    assert T0 in p2.stores  # restoring meanwhile, as a temporary standby


def test_follow_ups_are_told_apart_by_the_probing_deadline() -> None:
    w = world()
    group = GroupAssignment({
        PID_1: KafkaStreamsAssignment.of_tasks(PID_1, [T0, T1, T2, S]).with_followup_rebalance(60_000),
        PID_2: KafkaStreamsAssignment.of_tasks(PID_2).with_followup_rebalance(5),
    })
    w.apply(group, probing_deadline_ms=60_000)
    assert w.due_followups() == [FollowUp(5, "followup"), FollowUp(60_000, "probing")]


def test_released_stores_are_deleted_after_the_cleanup_delay() -> None:
    w = world(cleanup=30_000)
    w.apply(GroupAssignment({PID_1: KafkaStreamsAssignment.of_tasks(PID_1, [T0, T1, S]),
                             PID_2: KafkaStreamsAssignment.of_tasks(PID_2, [T2])}),
            probing_deadline_ms=None)
    w.advance(29_999)
    assert T2 in w.clients[PID_1].stores and T0 in w.clients[PID_2].stores
    w.advance(30_000)
    assert T2 not in w.clients[PID_1].stores and T0 not in w.clients[PID_2].stores
    assert T2 not in w.application_state().clients[PID_1].task_offset_sums


def test_down_clients_keep_their_disk_unless_wiped_and_the_oldest_member_leads() -> None:
    w = world()
    assert w.leader() == PID_1
    w.take_down(PID_1, wipe_state=False)
    assert w.leader() == PID_2 and list(w.application_state().clients) == [PID_2]
    w.bring_up(PID_1)
    assert w.leader() == PID_2
    assert w.application_state().clients[PID_1].task_offset_sums[T0] == 1_000  # no longer running: its offset
    w.take_down(PID_2, wipe_state=True)
    assert not w.clients[PID_2].stores


def test_unknown_changelog_end_offsets_cannot_be_simulated() -> None:
    state = ApplicationState(tasks=[task("0_0", end=-3)], clients=[client(PID_1)])
    with pytest.raises(UserInputError, match="unknown changelog end offset"):
        World(Scenario("x", state), restore_rate=1, state_cleanup_delay_ms=1)
