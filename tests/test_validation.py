from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from taskassign.ids import ProcessId, TaskId
from taskassign.model import AssignmentError, KafkaStreamsAssignment, TaskAssignment
from taskassign.validation import check_completeness, validate_and_check_completeness, validate_task_assignment
from tests.helpers import PID_1, PID_2, PID_3, TASK_0_0, TASK_0_1, TASK_1_0, app_state, client, task

STATE = app_state([task("0_0"), task("0_1"), task("1_0", stateful=False)], [client(PID_1), client(PID_2)],
                  num_standby_replicas=1)


def ksa(pid: ProcessId, active: list[TaskId] = [], standby: list[TaskId] = []) -> KafkaStreamsAssignment:  # noqa: B006
    return KafkaStreamsAssignment.of_tasks(pid, active, standby)


def validate(*entries: KafkaStreamsAssignment, compat: bool | None = None) -> AssignmentError:
    return validate_task_assignment(STATE, TaskAssignment(entries), kafka_compat=compat)


def test_valid_assignment_is_none() -> None:
    assert validate(ksa(PID_1, [TASK_0_0, TASK_1_0], [TASK_0_1]), ksa(PID_2, [TASK_0_1], [TASK_0_0])) is \
        AssignmentError.NONE


def test_all_empty_assignments_are_valid() -> None:
    assert validate(ksa(PID_1), ksa(PID_2)) is AssignmentError.NONE


def test_unknown_task() -> None:
    assert validate(ksa(PID_1, [TaskId(13, 13)]), ksa(PID_2)) is AssignmentError.UNKNOWN_TASK_ID


def test_active_twice() -> None:
    assert validate(ksa(PID_1, [TASK_0_0]), ksa(PID_2, [TASK_0_0])) is \
        AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES


def test_first_problem_in_walk_order_wins() -> None:
    # duplicated active seen before an unknown task -> ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES (Kafka's order)
    assert validate(ksa(PID_1, [TASK_0_0]), ksa(PID_2, [TASK_0_0]), ksa(PID_3, [TaskId(9, 9)])) is \
        AssignmentError.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES
    assert validate(ksa(PID_3, [TaskId(9, 9)]), ksa(PID_1, [TASK_0_0]), ksa(PID_2, [TASK_0_0])) is \
        AssignmentError.UNKNOWN_TASK_ID


def test_stateless_standby_beats_missing_and_unknown_clients() -> None:
    assert validate(ksa(PID_1, [], [TASK_1_0]), ksa(PID_3)) is AssignmentError.INVALID_STANDBY_TASK


def test_missing_then_unknown_process() -> None:
    assert validate(ksa(PID_1)) is AssignmentError.MISSING_PROCESS_ID
    assert validate(ksa(PID_1), ksa(PID_2), ksa(PID_3)) is AssignmentError.UNKNOWN_PROCESS_ID
    assert validate(ksa(PID_1), ksa(PID_3)) is AssignmentError.MISSING_PROCESS_ID


def test_active_and_standby_on_one_client_via_two_entries() -> None:
    entries = (ksa(PID_1, [TASK_0_0]), ksa(PID_1, [], [TASK_0_0]), ksa(PID_2))
    assert validate(*entries) is AssignmentError.ACTIVE_AND_STANDBY_TASK_ASSIGNED_TO_SAME_KAFKASTREAMS
    assert validate(*entries, compat=True) is AssignmentError.NONE  # Kafka lets it through


def test_completeness_reports_unassigned_and_missing_standbys() -> None:
    report = check_completeness(STATE, TaskAssignment((ksa(PID_1, [TASK_0_0], [TASK_0_1]), ksa(PID_2, [TASK_0_1]))))
    assert report.unassigned_tasks == (TASK_1_0,)
    assert [(s.task, s.wanted, s.placed) for s in report.standby_shortfalls] == [(TASK_0_0, 1, 0)]
    assert not report.is_complete
    assert "1_0" in report.lines()[0]


def test_completeness_wanted_is_capped_by_clients() -> None:
    one_client = app_state([task("0_0")], [client(PID_1)], num_standby_replicas=2)
    report = check_completeness(one_client, TaskAssignment((ksa(PID_1, [TASK_0_0]),)))
    assert report.is_complete and report.lines() == []


@given(seed=st.integers(0, 2**32))
def test_one_walk_equals_validation_then_completeness(seed: int) -> None:
    """The leader's combined walk gives the same error and report as the two separate functions, broken
    assignments included (unknown tasks and clients, actives placed twice, clients with two entries)."""
    rng = random.Random(seed)
    known = [TASK_0_0, TASK_0_1, TASK_1_0]
    pool = [*known, TaskId(9, 9)] if rng.random() < 0.3 else known
    pids = [PID_1, PID_2] + ([PID_3] if rng.random() < 0.3 else [])
    entries = []
    for pid in rng.sample(pids, rng.randint(1, len(pids))) + ([rng.choice(pids)] if rng.random() < 0.3 else []):
        chosen = rng.sample(pool, rng.randint(0, len(pool)))
        split = rng.randint(0, len(chosen))
        entries.append(ksa(pid, chosen[:split], chosen[split:]))
    assignment = TaskAssignment(tuple(entries))
    for compat in (False, True):
        error, report = validate_and_check_completeness(STATE, assignment, kafka_compat=compat)
        assert error is validate_task_assignment(STATE, assignment, kafka_compat=compat)
        assert report == check_completeness(STATE, assignment)
