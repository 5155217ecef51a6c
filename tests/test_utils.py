from __future__ import annotations

from taskassign.utils import identity_assignment
from tests.helpers import PID_1, PID_2, PID_3, TASK_0_0, TASK_0_1, TASK_1_0, app_state, client, task


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
