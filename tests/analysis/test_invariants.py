from __future__ import annotations

from collections.abc import Iterable

from taskassign.analysis.invariants import balance_problems, validity_problems
from taskassign.analysis.metrics import compute_metrics
from taskassign.ids import ProcessId
from taskassign.model import GroupAssignment, KafkaStreamsAssignment, TaskAssignment
from tests.helpers import PID_1, PID_2, PID_3, app_state, client, task, tid

STATE = app_state([task("0_0"), task("0_1"), task("1_0", stateful=False)],
                  [client(PID_1), client(PID_2), client(PID_3)], num_standby_replicas=1)


def ksa(pid: ProcessId, active: Iterable[str] = (), standby: Iterable[str] = ()) -> KafkaStreamsAssignment:
    return KafkaStreamsAssignment.of_tasks(pid, [tid(t) for t in active], [tid(t) for t in standby])


VALID = {PID_1: ksa(PID_1, ["0_0"]), PID_2: ksa(PID_2, ["0_1"], ["0_0"]), PID_3: ksa(PID_3, ["1_0"], ["0_1"])}


def test_a_valid_balanced_assignment_has_no_problems() -> None:
    assert validity_problems(STATE, VALID) == ()
    assert validity_problems(STATE, GroupAssignment(VALID)) == ()
    assert validity_problems(STATE, TaskAssignment(tuple(VALID.values()))) == ()
    assert balance_problems((STATE, VALID)) == ()


def test_active_twice_or_never_is_reported() -> None:
    twice = {**VALID, PID_3: ksa(PID_3, ["1_0", "0_0"])}
    assert "task 0_0 is active on 2 clients" in validity_problems(STATE, twice)[0]
    never = {**VALID, PID_3: ksa(PID_3, [], ["0_1"])}
    assert validity_problems(STATE, never) == ("task 1_0 is active on 0 clients (none)",)


def test_standby_without_changelog_and_unknown_tasks_are_reported() -> None:
    bad = {**VALID, PID_1: ksa(PID_1, ["0_0"], ["1_0", "7_7"])}
    problems = validity_problems(STATE, bad)
    assert "task 1_0 has no changelog but a standby on" in problems[0]
    assert any("task 7_7 is not a task of the application" in p for p in problems)


def test_replica_count_allows_the_given_number_of_warmups() -> None:
    warm = {**VALID, PID_1: ksa(PID_1, ["0_0"], ["0_1"]), PID_3: ksa(PID_3, ["1_0"], ["0_0", "0_1"])}
    assert len(validity_problems(STATE, warm)) == 2
    assert validity_problems(STATE, warm, allowed_warmups=1) == ("task 0_1 is held by 3 clients, expected 2",)
    assert validity_problems(STATE, warm, allowed_warmups=2) == ()
    missing = {**VALID, PID_2: ksa(PID_2, ["0_1"])}
    assert validity_problems(STATE, missing) == ("task 0_0 is held by 1 clients, expected 2",)


def test_balance_problems_follow_kafkas_bounds() -> None:
    lopsided = {PID_1: ksa(PID_1, ["0_0", "0_1", "1_0"]), PID_2: ksa(PID_2), PID_3: ksa(PID_3)}
    problems = balance_problems(compute_metrics(STATE, lopsided))
    assert problems == (
        "active tasks per thread range from 0 to 3 (skew 3 > 1)",
        "changelog-task replicas per thread skew 2 > 1",
        "subtopology 0: active tasks per client skew 2 > 1",
    )
    assert balance_problems(compute_metrics(STATE, lopsided), subtopology_skew_threshold=4)[-1].startswith(
        "changelog")
