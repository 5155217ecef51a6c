from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import given, settings

from taskassign.assignors.high_availability import assign_high_availability
from taskassign.configs import AssignmentConfigs
from taskassign.errors import UserInputError
from taskassign.ids import ProcessId
from taskassign.model import ApplicationState, AssignmentError, KafkaStreamsAssignment, TaskAssignment
from taskassign.task_assignment_utils import default_standby_task_assignment, identity_assignment
from taskassign.validation import check_completeness, validate_task_assignment
from tests.assignors.strategies import applications
from tests.helpers import PID, PID_1, PID_2, PID_3, TASK_0_0, TASK_0_1, TASK_1_0, app_state, client, task, tid


def test_identity_assignment_copies_previous_tasks_for_every_client() -> None:
    state = app_state(
        [task("0_0"), task("0_1"), task("1_0", stateful=False)],
        [client(PID_1, prev_active=["0_0", "1_0"], prev_standby=["0_1"]), client(PID_2, prev_active=["0_1"]),
         client(PID_3)],
    )
    result = identity_assignment(state)
    assert list(result) == [PID_1, PID_2, PID_3]
    assert list(result[PID_1].active_tasks()) == [TASK_0_0, TASK_1_0]
    assert list(result[PID_1].standby_tasks()) == [TASK_0_1]
    assert list(result[PID_2].active_tasks()) == [TASK_0_1]
    assert not result[PID_3].tasks


# --- default_standby_task_assignment (TaskAssignmentUtils.defaultStandbyTaskAssignment) -------------

def _fresh(pid: ProcessId, active: list[str] = [], standby: list[str] = []) -> KafkaStreamsAssignment:  # noqa: B006
    return KafkaStreamsAssignment.of_tasks(pid, [tid(t) for t in active], [tid(t) for t in standby])


def _standbys(result: Mapping[ProcessId, KafkaStreamsAssignment]) -> dict[ProcessId, list[str]]:
    return {pid: [str(t) for t in a.standby_tasks()] for pid, a in result.items()}


def test_e14b_load_based_standbys_for_changelog_tasks_only() -> None:
    state = app_state([task("0_0"), task("0_1", stateful=False), task("0_2", stateful=False),
                       task("0_3", stateful=False), task("0_4", stateful=False), task("0_5", stateful=False)],
                      [client(PID[n], threads=5) for n in range(1, 6)], num_standby_replicas=3)
    given = {PID_1: _fresh(PID_1, ["0_0", "0_1", "0_2"]), PID_2: _fresh(PID_2, ["0_3", "0_4", "0_5"])}
    result = default_standby_task_assignment(state, given)
    assert list(result) == [PID[n] for n in range(1, 6)]  # every client gets an assignment
    assert _standbys(result) == {PID_1: [], PID_2: [], PID[3]: ["0_0"], PID[4]: ["0_0"], PID[5]: ["0_0"]}
    assert given[PID_1].standby_tasks() == frozenset()  # inputs untouched


def test_e14c_tag_based_standbys_avoid_the_active_zone() -> None:
    clients = [client(PID_1, tags={"az": "az1"}), client(PID_2, tags={"az": "az1"}),
               client(PID_3, tags={"az": "az2"}), client(PID[4], tags={"az": "az3"})]
    state = app_state([task("0_0")], clients, num_standby_replicas=2, rack_aware_assignment_tags=["az"])
    result = default_standby_task_assignment(state, {PID_1: _fresh(PID_1, ["0_0"])})
    assert _standbys(result) == {PID_1: [], PID_2: [], PID_3: ["0_0"], PID[4]: ["0_0"]}


@pytest.mark.parametrize(("compat", "expected"), [(False, []), (True, ["0_0"])])
def test_zero_replicas_with_tags_kafka_bug_11_2(compat: bool, expected: list[str]) -> None:
    clients = [client(PID_1, tags={"az": "a"}), client(PID_2, tags={"az": "b"})]
    configs = AssignmentConfigs(num_standby_replicas=0, rack_aware_assignment_tags=("az",),
                                extensions={"taskassign.kafka.compat": compat})
    state = ApplicationState([task("0_0")], clients, configs)
    result = default_standby_task_assignment(state, {PID_1: _fresh(PID_1, ["0_0"]), PID_2: _fresh(PID_2)})
    assert _standbys(result)[PID_2] == expected


def test_tasks_are_served_in_kafkas_hash_set_order() -> None:
    # 0_0..0_3 iterate as 0_3, 0_2, 0_1, 0_0 in Java: least loaded alternates P2, P3 in that order
    state = app_state([task(f"0_{p}") for p in range(4)], [client(PID_1, threads=4), client(PID_2), client(PID_3)],
                      num_standby_replicas=1)
    result = default_standby_task_assignment(state, {PID_1: _fresh(PID_1, [f"0_{p}" for p in range(4)])})
    assert _standbys(result) == {PID_1: [], PID_2: ["0_1", "0_3"], PID_3: ["0_0", "0_2"]}


def test_existing_standbys_and_deadlines_are_kept() -> None:
    state = app_state([task("0_0"), task("0_1")], [client(PID_1), client(PID_2), client(PID_3)],
                      num_standby_replicas=1)
    given = {PID_1: _fresh(PID_1, ["0_0", "0_1"]).with_followup_rebalance(42), PID_2: _fresh(PID_2, [], ["0_0"])}
    result = default_standby_task_assignment(state, given)
    assert result[PID_1].followup_rebalance_deadline == 42
    assert _standbys(result) == {PID_1: [], PID_2: ["0_0"], PID_3: ["0_0", "0_1"]}


def test_unknown_client_is_an_error() -> None:
    state = app_state([task("0_0")], [client(PID_1)], num_standby_replicas=1)
    with pytest.raises(UserInputError, match="not part of the application"):
        default_standby_task_assignment(state, {PID_2: _fresh(PID_2)})


@settings(max_examples=60)
@given(applications())
def test_standby_helper_on_high_availability_actives_is_valid_and_complete(state: ApplicationState) -> None:
    configs = state.configs
    if configs.num_standby_replicas == 0:
        return
    actives = {a.process_id: KafkaStreamsAssignment.of_tasks(a.process_id, a.active_tasks())
               for a in assign_high_availability(state).assignments}
    result = default_standby_task_assignment(state, actives)
    assignment = TaskAssignment(tuple(result.values()))
    assert validate_task_assignment(state, assignment) is AssignmentError.NONE
    assert check_completeness(state, assignment).is_complete


def test_old_module_name_still_serves_plugins() -> None:
    """``taskassign.utils`` was the module's name in 0.1: plug-ins that import from it keep working."""
    import taskassign.task_assignment_utils as current
    import taskassign.utils as old

    for name in old.__all__:
        assert getattr(old, name) is getattr(current, name)
    assert set(old.__all__) == set(current.__all__)
