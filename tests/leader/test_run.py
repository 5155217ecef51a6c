from __future__ import annotations

import pytest

from taskassign.assignors.base import BaseTaskAssignor
from taskassign.errors import InvalidAssignmentError, TaskAssignmentException
from taskassign.leader.run import IMMEDIATE_FOLLOWUP_MS, rebalance
from taskassign.model import (
    ApplicationState,
    AssignmentError,
    GroupAssignment,
    GroupSubscription,
    KafkaStreamsAssignment,
    TaskAssignment,
)
from tests.helpers import PID_1, PID_2, PID_3, TASK_0_0, TASK_0_1, app_state, client, task, tid

STATE = app_state([task("0_0"), task("0_1")],
                  [client(PID_1, prev_active=["0_0"]), client(PID_2, prev_active=["0_1"], prev_standby=["0_0"])],
                  now_ms=5_000, probing_rebalance_interval_ms=60_000)


class Recording(BaseTaskAssignor):
    def __init__(self, result: TaskAssignment | Exception) -> None:
        self.result = result
        self.calls: list[tuple[GroupAssignment, AssignmentError]] = []

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        if isinstance(self.result, Exception):
            raise self.result
        return self.result

    def on_assignment_computed(self, assignment: GroupAssignment, subscription: GroupSubscription,
                               error: AssignmentError) -> None:
        assert subscription.application_state is STATE
        self.calls.append((assignment, error))


def ta(*entries: KafkaStreamsAssignment, probing: bool = False) -> TaskAssignment:
    return TaskAssignment(entries, probing)


def test_valid_assignment_reaches_callback_and_result() -> None:
    assignor = Recording(ta(KafkaStreamsAssignment.of_tasks(PID_1, [TASK_0_0, TASK_0_1]),
                            KafkaStreamsAssignment.of_tasks(PID_2, [], [TASK_0_0])))
    result = rebalance(STATE, assignor)
    assert result.error is AssignmentError.NONE
    assert [e for _, e in assignor.calls] == [AssignmentError.NONE]
    assert assignor.calls[0][0] is result.group
    assert list(result.group.clients) == [PID_1, PID_2]
    assert list(result.group.clients[PID_1].active_tasks()) == [TASK_0_0, TASK_0_1]
    assert not result.completeness.standby_shortfalls  # num.standby.replicas = 0


def test_probing_request_puts_deadline_on_leader_client_only() -> None:
    assignor = Recording(ta(KafkaStreamsAssignment.of_tasks(PID_1, [TASK_0_0]),
                            KafkaStreamsAssignment.of_tasks(PID_2, [TASK_0_1]), probing=True))
    result = rebalance(STATE, assignor, leader=PID_2)
    assert result.probing_rebalance_needed
    assert result.group.clients[PID_2].followup_rebalance_deadline == 65_000
    assert result.group.clients[PID_1].followup_rebalance_deadline is None
    default_leader = rebalance(STATE, assignor)
    assert default_leader.group.clients[PID_1].followup_rebalance_deadline == 65_000


def test_task_assignment_exception_keeps_previous_and_follows_up_immediately() -> None:
    assignor = Recording(TaskAssignmentException("cannot decide yet"))
    result = rebalance(STATE, assignor)
    assert result.fallback_reason == "cannot decide yet"
    assert result.error is AssignmentError.NONE
    assert list(result.group.clients[PID_1].active_tasks()) == [TASK_0_0]
    assert list(result.group.clients[PID_2].active_tasks()) == [TASK_0_1]
    assert list(result.group.clients[PID_2].standby_tasks()) == [TASK_0_0]
    assert all(a.followup_rebalance_deadline == IMMEDIATE_FOLLOWUP_MS for a in result.group.clients.values())


@pytest.mark.parametrize("error", [AssignmentError.UNKNOWN_TASK_ID, AssignmentError.UNKNOWN_PROCESS_ID])
def test_unknown_ids_abort_with_empty_assignment_in_callback(error: AssignmentError) -> None:
    entries = [KafkaStreamsAssignment.of_tasks(PID_1), KafkaStreamsAssignment.of_tasks(PID_2)]
    if error is AssignmentError.UNKNOWN_TASK_ID:
        entries[0] = KafkaStreamsAssignment.of_tasks(PID_1, [tid("7_7")])
    else:
        entries.append(KafkaStreamsAssignment.of_tasks(PID_3))
    assignor = Recording(ta(*entries))
    with pytest.raises(InvalidAssignmentError, match=error.name):
        rebalance(STATE, assignor)
    assert len(assignor.calls) == 1
    group, seen = assignor.calls[0]
    assert seen is error and dict(group.clients) == {}


def test_other_errors_abort_after_callback_saw_full_assignment() -> None:
    assignor = Recording(ta(KafkaStreamsAssignment.of_tasks(PID_1, [TASK_0_0])))
    with pytest.raises(InvalidAssignmentError, match="MISSING_PROCESS_ID"):
        rebalance(STATE, assignor)
    group, seen = assignor.calls[0]
    assert seen is AssignmentError.MISSING_PROCESS_ID
    assert list(group.clients) == [PID_1, PID_2]
    result = rebalance(STATE, assignor, raise_on_error=False)
    assert result.error is AssignmentError.MISSING_PROCESS_ID


def test_later_entry_for_same_client_wins() -> None:
    assignor = Recording(ta(KafkaStreamsAssignment.of_tasks(PID_1, [TASK_0_0]),
                            KafkaStreamsAssignment.of_tasks(PID_2, [TASK_0_1]),
                            KafkaStreamsAssignment.of_tasks(PID_1, [])))
    result = rebalance(STATE, assignor)
    assert not result.group.clients[PID_1].tasks
    assert result.completeness.unassigned_tasks == (TASK_0_0,)


def test_fallback_when_lags_unknown() -> None:
    unknown = app_state([task("0_0", end=-3)], [client(PID_1, prev_active=["0_0"]), client(PID_2)])

    class WantsFallback(Recording):
        fallback_when_lags_unknown = "identity"

    created: list[str] = []

    def factory(name: str) -> BaseTaskAssignor:
        created.append(name)
        from taskassign.assignors.identity import IdentityTaskAssignor

        return IdentityTaskAssignor()

    result = rebalance(unknown, WantsFallback(ta()), assignor_name="x", fallback_factory=factory)
    assert created == ["identity"]
    assert result.assignor.startswith("identity (instead of x")
    assert list(result.group.clients[PID_1].active_tasks()) == [TASK_0_0]


def test_non_task_assignment_return_is_reported() -> None:
    class Broken(BaseTaskAssignor):
        def assign(self, application_state: ApplicationState) -> TaskAssignment:
            return {}  # type: ignore[return-value]

    from taskassign.errors import TaskassignError

    with pytest.raises(TaskassignError, match="expected a TaskAssignment"):
        rebalance(STATE, Broken())


class Fixed(BaseTaskAssignor):
    def __init__(self, result: TaskAssignment) -> None:
        self.result = result

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return self.result


def test_threads_are_distributed_and_the_callback_sees_them() -> None:
    state = app_state([task("0_0"), task("0_1"), task("0_2", stateful=False)],
                      [client(PID_1, threads=2), client(PID_2)])
    seen: list[GroupAssignment] = []

    class Watching(Fixed):
        def on_assignment_computed(self, assignment: GroupAssignment, subscription: GroupSubscription,
                                   error: AssignmentError) -> None:
            seen.append(assignment)

    assignor = Watching(ta(KafkaStreamsAssignment.of_tasks(PID_1, [TASK_0_0, TASK_0_1, tid("0_2")]),
                           KafkaStreamsAssignment.of_tasks(PID_2)))
    result = rebalance(state, assignor)
    consumers = result.group.consumers
    assert consumers is not None and seen[0].consumers is consumers
    t1, t2 = (f"{PID_1}-StreamThread-{i}" for i in (1, 2))
    assert consumers[PID_1][t1].active == (TASK_0_0, tid("0_2")) and consumers[PID_1][t2].active == (TASK_0_1,)
    assert dict(consumers[PID_2]) == {f"{PID_2}-StreamThread-1": consumers[PID_2][f"{PID_2}-StreamThread-1"]}
    assert rebalance(state, assignor, distribute_threads=False).group.consumers is None


def test_moving_an_owned_task_between_clients_is_withheld_with_an_immediate_followup() -> None:
    state = app_state([task("0_0"), task("0_1")],
                      [client(PID_1, prev_active=["0_0", "0_1"]), client(PID_2, prev_standby=["0_1"])],
                      now_ms=5_000)
    moved = ta(KafkaStreamsAssignment.of_tasks(PID_1, [TASK_0_0]), KafkaStreamsAssignment.of_tasks(PID_2, [TASK_0_1]))
    result = rebalance(state, Fixed(moved))
    assert result.group.consumers is not None
    receiver = result.group.consumers[PID_2][f"{PID_2}-StreamThread-1"]
    assert receiver.active == () and receiver.withheld == (TASK_0_1,)
    assert receiver.standby == (TASK_0_1,)  # it had the task as a standby: kept warm meanwhile
    assert receiver.followup_rebalance_deadline == IMMEDIATE_FOLLOWUP_MS
    assert list(result.group.clients[PID_2].active_tasks()) == [TASK_0_1]  # the assignor's decision stays
    eager = app_state([task("0_0"), task("0_1")],
                      [client(PID_1, prev_active=["0_0", "0_1"]), client(PID_2)],
                      extensions={"taskassign.rebalance.protocol": "eager"})
    assert eager.configs.extension("taskassign.rebalance.protocol") == "eager"
    eager_result = rebalance(eager, Fixed(moved))
    assert eager_result.group.consumers is not None
    assert eager_result.group.consumers[PID_2][f"{PID_2}-StreamThread-1"].active == (TASK_0_1,)


def test_probing_deadline_rides_on_the_first_thread_of_the_leader_client() -> None:
    state = app_state([task("0_0")], [client(PID_1, threads=2), client(PID_2)], now_ms=1_000,
                      probing_rebalance_interval_ms=60_000)
    probing = ta(KafkaStreamsAssignment.of_tasks(PID_1, [TASK_0_0]), KafkaStreamsAssignment.of_tasks(PID_2),
                 probing=True)
    result = rebalance(state, Fixed(probing), leader=PID_1)
    assert result.group.consumers is not None
    first, second = result.group.consumers[PID_1].values()
    assert (first.followup_rebalance_deadline, second.followup_rebalance_deadline) == (61_000, None)


def test_an_unknown_task_behind_an_active_placed_twice_is_spread_as_stateless() -> None:
    # Every task of the application has a changelog, so the leader looks none up, unless the walk may have stopped
    # before an unknown task: an active placed twice is reported first, and the threads still see the assignment.
    state = app_state([task("1_0"), task("1_1")], [client(PID_1), client(PID_2), client(PID_3)])
    unknown = tid("0_5")
    result = rebalance(state, Fixed(ta(KafkaStreamsAssignment.of_tasks(PID_2, [tid("1_0")]),
                                        KafkaStreamsAssignment.of_tasks(PID_1, [tid("1_0")]),
                                        KafkaStreamsAssignment.of_tasks(PID_3, [unknown, tid("1_1")]))),
                       raise_on_error=False)
    assert result.error is AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES
    assert result.group.consumers is not None
    (only,) = result.group.consumers[PID_3].values()
    assert only.active == (tid("1_1"), unknown)  # stateful actives first, then the stateless (unknown) one
