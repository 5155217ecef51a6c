"""LegacyStickyTaskAssignor: examples from Kafka's LegacyStickyTaskAssignorTest (E12a/b) and stickiness within quota
(P31)."""

from __future__ import annotations

import pytest

from taskassign.assignors.fallback_prior import FallbackPriorTaskAssignor
from taskassign.assignors.legacy_sticky import LegacyStickyTaskAssignor
from taskassign.assignors.sticky import StickyTaskAssignor
from taskassign.errors import TaskAssignmentException
from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState, TaskAssignment
from tests.helpers import PID, PID_1, PID_2, PID_3, app_state, client, task, tid


def sets(result: TaskAssignment) -> dict[ProcessId, tuple[list[str], list[str]]]:
    return {pid: ([str(t) for t in a.active_tasks()], [str(t) for t in a.standby_tasks()])
            for pid, a in result.by_process().items()}


def test_e12a_previous_actives_stay_and_standbys_fill_the_other_clients() -> None:
    state = app_state([task("0_0"), task("0_1"), task("0_2")],
                      [client(PID_1, prev_active=["0_0"]), client(PID_2, prev_active=["0_1"]),
                       client(PID_3, prev_active=["0_2"])], num_standby_replicas=2)
    result = LegacyStickyTaskAssignor().assign(state)
    assert sets(result) == {
        PID_1: (["0_0"], ["0_1", "0_2"]),
        PID_2: (["0_1"], ["0_0", "0_2"]),
        PID_3: (["0_2"], ["0_0", "0_1"]),
    }
    assert result.probing_rebalance_needed is False


def test_e12b_fresh_clients_alternate_and_standbys_mirror() -> None:
    state = app_state([task(t) for t in ("0_0", "0_1", "1_0", "1_1")], [client(PID_1), client(PID_2)],
                      num_standby_replicas=1)
    assert sets(LegacyStickyTaskAssignor().assign(state)) == {
        PID_1: (["0_0", "1_0"], ["0_1", "1_1"]),
        PID_2: (["0_1", "1_1"], ["0_0", "1_0"]),
    }


ASSIGNORS = [LegacyStickyTaskAssignor, StickyTaskAssignor]


def _tasks(n: int) -> list[str]:
    return [f"0_{p}" for p in range(n)]


@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_p31_previous_actives_within_quota_stay(assignor: type) -> None:
    owners = {PID_1: ["0_0", "0_3"], PID_2: ["0_1", "0_4"], PID_3: ["0_2", "0_5"]}
    state = app_state([task(t) for t in _tasks(6)], [client(p, prev_active=ts) for p, ts in owners.items()])
    result = assignor().assign(state)
    assert {p: a.active_tasks() for p, a in result.by_process().items()} == \
        {p: {tid(t) for t in ts} for p, ts in owners.items()}


@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_p31_a_new_client_takes_tasks_without_flipping_tasks_between_old_ones(assignor: type) -> None:
    owners = {PID_1: _tasks(12)[:6], PID_2: _tasks(12)[6:]}
    clients = [client(p, prev_active=ts) for p, ts in owners.items()] + [client(PID_3)]
    result = assignor().assign(app_state([task(t) for t in _tasks(12)], clients))
    actives = {p: a.active_tasks() for p, a in result.by_process().items()}
    assert [len(actives[p]) for p in (PID_1, PID_2, PID_3)] == [4, 4, 4]
    for pid, before in owners.items():
        assert actives[pid] <= {tid(t) for t in before}  # kept or handed to the new client, never swapped


@pytest.mark.parametrize("assignor", ASSIGNORS)
@pytest.mark.parametrize(("num_clients", "num_tasks", "replicas"), [(4, 4, 1), (5, 10, 2), (3, 9, 1), (6, 6, 3)])
def test_p31_no_two_clients_get_the_same_task_set(assignor: type, num_clients: int, num_tasks: int,
                                                  replicas: int) -> None:
    state = app_state([task(t) for t in _tasks(num_tasks)], [client(PID[n]) for n in range(1, num_clients + 1)],
                      num_standby_replicas=replicas)
    held = [frozenset(a.tasks) for a in assignor().assign(state).assignments]
    assert len(set(held)) == len(held)
    for a in assignor().assign(state).assignments:
        assert not a.active_tasks() & a.standby_tasks()


@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_p31_more_threads_more_tasks(assignor: type) -> None:
    state = app_state([task(t) for t in _tasks(12)], [client(PID_1, threads=2), client(PID_2, threads=1)])
    counts = {p: len(a.active_tasks()) for p, a in assignor().assign(state).by_process().items()}
    assert counts == {PID_1: 8, PID_2: 4}


def test_capacity_tiebreak_is_what_separates_legacy_from_public() -> None:
    """Both clients end step a at load 1.0; for the last task the legacy assignor prefers the client
    with more threads (hasMoreAvailableCapacityThan), the public one keeps the first in hash order."""
    tie = ApplicationState(
        tasks=[task("0_0"), task("0_1"), task("0_2"), task("0_3")],
        clients=[client(PID_1, threads=1, prev_active=["0_0"]), client(PID_2, threads=2, prev_active=["0_1", "0_2"])],
    )
    last = TaskId(0, 3)
    assert last in LegacyStickyTaskAssignor().assign(tie).by_process()[PID_2].active_tasks()
    assert last in StickyTaskAssignor().assign(tie).by_process()[PID_1].active_tasks()


@pytest.mark.parametrize("assignor", [*ASSIGNORS, FallbackPriorTaskAssignor])
def test_a_client_without_threads_is_refused_with_its_id(assignor: type) -> None:
    state = ApplicationState(tasks=[task("0_0")], clients=[client(PID_1), client(PID_2, threads=0)])
    with pytest.raises(TaskAssignmentException, match=str(PID_2)):
        assignor().assign(state)


def test_without_rack_strategy_no_optimiser_runs_and_no_cost_is_reported() -> None:
    state = app_state([task("0_0"), task("0_1")], [client(PID_1), client(PID_2)], num_standby_replicas=1)
    assert "rack_optimizer_cost" not in LegacyStickyTaskAssignor().assign(state).details
