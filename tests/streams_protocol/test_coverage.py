"""What a streams-group answer leaves uncovered."""

from __future__ import annotations

from taskassign.streams_protocol.coverage import StandbyShortfall, coverage
from taskassign.streams_protocol.model import (
    GroupMember,
    MemberAssignment,
    StreamsGroup,
    StreamsGroupAssignment,
    Subtopology,
    task_map,
)

GROUP = StreamsGroup("g", (Subtopology("0", 2, True), Subtopology("1", 1, False)),
                     (GroupMember("a", "p1"), GroupMember("b", "p2"), GroupMember("c", "p3")))


def test_complete_when_every_task_runs_and_has_its_standbys() -> None:
    answer = StreamsGroupAssignment({
        "a": MemberAssignment(task_map([("0", 0), ("1", 0)]), task_map([("0", 1)])),
        "b": MemberAssignment(task_map([("0", 1)]), task_map([("0", 0)])),
        "c": MemberAssignment(),
    })
    assert coverage(GROUP, answer, 1).is_complete


def test_unassigned_tasks_and_shortfalls_capped_by_processes() -> None:
    answer = StreamsGroupAssignment({
        "a": MemberAssignment(task_map([("0", 0)]), task_map([("0", 1)])),
        "b": MemberAssignment(task_map([("0", 1)]), task_map([])),
        "c": MemberAssignment(),
    })
    result = coverage(GROUP, answer, 5)  # three processes: at most two standbys fit
    assert result.unassigned_tasks == ("1_0",)
    assert result.standby_shortfalls == (StandbyShortfall("0_0", 2, 0), StandbyShortfall("0_1", 2, 1))
    assert not result.is_complete
