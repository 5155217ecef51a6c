from __future__ import annotations

from taskassign.analysis.moves import Move, explanations, moved_tasks
from taskassign.ids import TaskId
from taskassign.model import KafkaStreamsAssignment, TaskAssignment
from tests.helpers import PID_1, PID_2, PID_3, app_state, client, task, tid


def ids(*names: str) -> list[TaskId]:
    return [tid(n) for n in names]


def state():  # type: ignore[no-untyped-def]
    tasks = [task("0_0"), task("0_1"), task("1_0", stateful=False)]
    clients = [client(PID_1, prev_active=["0_0", "1_0"], prev_standby=["0_1"]), client(PID_2, prev_active=["0_1"]),
               client(PID_3)]
    return app_state(tasks, clients, num_standby_replicas=1)


def test_moves_of_actives_and_standbys_against_the_previous_assignment() -> None:
    after = TaskAssignment((
        KafkaStreamsAssignment.of_tasks(PID_1, active=ids("0_1"), standby=[]),  # 0_1: standby promoted, not a move
        KafkaStreamsAssignment.of_tasks(PID_2, active=[], standby=ids("0_1")),
        KafkaStreamsAssignment.of_tasks(PID_3, active=ids("0_0", "1_0"), standby=[]),
    ))
    moves = moved_tasks(state(), after)
    assert moves == [
        Move(tid("0_0"), "active", PID_1, PID_3),
        Move(tid("0_1"), "active", PID_2, PID_1),
        Move(tid("1_0"), "active", PID_1, PID_3),
    ]
    assert moves[0].sentence() == (f"Task 0_0 (active) moved from {PID_1} to {PID_3}; the assignor gave no reason.")


def test_a_standby_that_changes_client_is_a_move() -> None:
    after = TaskAssignment((
        KafkaStreamsAssignment.of_tasks(PID_1, active=ids("0_0", "1_0")),
        KafkaStreamsAssignment.of_tasks(PID_2, active=ids("0_1")),
        KafkaStreamsAssignment.of_tasks(PID_3, standby=ids("0_1")),
    ))
    assert moved_tasks(state(), after) == [Move(tid("0_1"), "standby", PID_1, PID_3)]


def test_the_assignors_own_sentences_win() -> None:
    after = TaskAssignment((KafkaStreamsAssignment.of_tasks(PID_3, active=ids("0_0", "0_1", "1_0")),),
                           details={"explanations": ["because"]})
    assert explanations(state(), after, after) == ["because"]  # type: ignore[arg-type]
    plain = TaskAssignment(after.assignments)
    assert len(explanations(state(), plain, plain)) == 3  # type: ignore[arg-type]
