from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskassign.errors import ScenarioError
from taskassign.formats.assignment import assignment_to_dict, parse_assignment, read_assignment, write_assignment
from taskassign.model import AssignmentError, ConsumerAssignment, GroupAssignment, KafkaStreamsAssignment
from tests.helpers import GOLDEN_DIR, PID_1, PID_2, TASK_0_0, TASK_0_1, TASK_1_0


def test_write_then_read(tmp_path: Path) -> None:
    group = GroupAssignment(
        {PID_2: KafkaStreamsAssignment.of_tasks(PID_2, [TASK_0_1], [TASK_0_0]).with_followup_rebalance(99),
         PID_1: KafkaStreamsAssignment.of_tasks(PID_1, [TASK_1_0, TASK_0_0])},
        consumers={PID_1: {"c1": ConsumerAssignment((TASK_1_0,), ()),
                           "c2": ConsumerAssignment((), (), (TASK_0_0,), followup_rebalance_deadline=0)}},
    )
    doc = assignment_to_dict(group, assignor="x", probing_rebalance_needed=True)
    assert list(doc["clients"]) == [str(PID_1), str(PID_2)]
    assert doc["clients"][str(PID_1)]["active"] == ["0_0", "1_0"]
    consumers = doc["clients"][str(PID_1)]["consumers"]
    assert consumers["c1"] == {"active": ["1_0"], "standby": [], "withheld": [], "followup_rebalance_deadline_ms": None}
    assert consumers["c2"] == {"active": [], "standby": [], "withheld": ["0_0"], "followup_rebalance_deadline_ms": 0}
    write_assignment(doc, tmp_path / "a.assignment.json")
    back = read_assignment(tmp_path / "a.assignment.json")
    assert back.assignor == "x" and back.probing_rebalance_needed and back.error is AssignmentError.NONE
    by_pid = back.assignment.by_process()
    assert by_pid[PID_2].followup_rebalance_deadline == 99
    assert list(by_pid[PID_2].standby_tasks()) == [TASK_0_0]


def test_goldens_read() -> None:
    for path in sorted(GOLDEN_DIR.glob("*/*.assignment.json"))[:50]:
        assert read_assignment(path).error is AssignmentError.NONE


def test_active_and_standby_of_one_client_become_two_entries() -> None:
    doc = {"format": "taskassign/assignment/v1", "clients": {str(PID_1): {"active": ["0_0"], "standby": ["0_0"]}}}
    parsed = parse_assignment(doc)
    assert [(e.process_id, list(e.tasks)) for e in parsed.assignment.assignments] == [
        (PID_1, [TASK_0_0]), (PID_1, [TASK_0_0])]


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        ({"format": "nope", "clients": {}}, "$.format"),
        ({"format": "taskassign/assignment/v1", "clients": {"x": {}}}, "$.clients.x"),
        ({"format": "taskassign/assignment/v1", "clients": {str(PID_1): {"active": ["bad"]}}},
         f"$.clients.{PID_1}.active[0]"),
        ({"format": "taskassign/assignment/v1", "error": "OOPS", "clients": {}}, "$.error"),
        ({"format": "taskassign/assignment/v1", "clients": {}, "more": 1}, "$.more"),
    ],
)
def test_malformed_assignment_files(doc: dict[str, object], path: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_assignment(doc)
    assert info.value.path == path


def test_output_is_deterministic_json() -> None:
    group = GroupAssignment({PID_1: KafkaStreamsAssignment.of_tasks(PID_1, [TASK_0_0])})
    a = json.dumps(assignment_to_dict(group, assignor="x"))
    b = json.dumps(assignment_to_dict(group, assignor="x"))
    assert a == b
    assert GOLDEN_DIR.exists()
