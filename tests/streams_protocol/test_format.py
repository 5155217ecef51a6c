"""Streams-group files: the goldens read as they are, a tagged file round-trips, and every malformed value is
an error naming its JSON path."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from taskassign.errors import ScenarioError, UserInputError
from taskassign.formats.json_io import load_json_file
from taskassign.streams_protocol.format import (
    STREAMS_GROUP_FORMAT,
    is_streams_group_document,
    parse_assignment_document,
    parse_streams_group,
    read_streams_group,
    streams_group_name,
    streams_group_to_dict,
    write_streams_group,
)
from taskassign.streams_protocol.model import GroupMember, MemberAssignment, StreamsGroupAssignment
from tests.helpers import GOLDEN_DIR

FOLDER = GOLDEN_DIR / "streams_group"


def golden(case: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((FOLDER / f"{case}.input.json").read_text(encoding="utf-8"))
    return doc


def test_reads_a_golden_as_it_is() -> None:
    group = read_streams_group(FOLDER / "sticky_racks_tags.input.json")
    assert group.name == "sticky_racks_tags"
    assert group.assignor == "sticky"
    assert dict(group.configs) == {"rack.aware.assignment.tags": "zone", "num.standby.replicas": "1"}
    assert [(s.id, s.partitions, s.stateful) for s in group.subtopologies] == [("0", 6, True), ("1", 6, True),
                                                                            ("2", 6, False)]
    first = group.members[0]
    assert (first.member_id, first.process_id, first.rack_id) == ("m0", "p0", "r0")
    assert dict(first.client_tags) == {"zone": "z0"}


def test_offsets_and_warmups_are_read() -> None:
    group = read_streams_group(FOLDER / "sticky_warmup_in_prev.input.json")
    m1 = next(m for m in group.members if m.member_id == "m1")
    assert dict(m1.warmup_tasks) == {"0": (3, 4, 5)}
    assert {s: dict(o) for s, o in m1.task_offsets.items()} == {"0": {3: 90, 4: 90, 5: 90}}


def test_a_previous_task_listed_as_active_and_standby_is_kept() -> None:
    group = read_streams_group(FOLDER / "sticky_random_03.input.json")
    x0 = next(m for m in group.members if m.member_id == "x3-0")
    assert 8 in x0.active_tasks["0"] and 8 in x0.standby_tasks["0"]
    assert x0.standby_tasks["99"] == (0,)  # a subtopology the topology does not have


@pytest.mark.parametrize("case", ["sticky_random_03", "balanced_standby_offsets_rank", "sticky_racks_tags"])
def test_write_then_read_is_the_same_group(tmp_path: Path, case: str) -> None:
    group = read_streams_group(FOLDER / f"{case}.input.json")
    path = tmp_path / f"{case}.streams-group.json"
    write_streams_group(group, path)
    assert load_json_file(path)["format"] == STREAMS_GROUP_FORMAT
    again = read_streams_group(path)
    assert again == group
    assert streams_group_to_dict(again) == streams_group_to_dict(group)


def test_names_come_from_the_file_name() -> None:
    assert streams_group_name("a/b/case.input.json") == "case"
    assert streams_group_name("app.streams-group.json") == "app"
    assert read_streams_group(FOLDER / "sticky_cold_1sub_4p_2m.input.json").name == "sticky_cold_1sub_4p_2m"


def test_detection() -> None:
    assert is_streams_group_document(golden("sticky_chain_join"))
    assert is_streams_group_document({"format": STREAMS_GROUP_FORMAT})
    assert not is_streams_group_document({"format": "taskassign/scenario/v1", "members": [], "subtopologies": []})
    assert not is_streams_group_document({"members": []})
    assert not is_streams_group_document([])


def test_missing_fields_mean_empty() -> None:
    group = parse_streams_group({"subtopologies": [{"id": "0", "partitions": 2}],
                                 "members": [{"memberId": "m", "processId": "p"}]})
    member = group.members[0]
    assert group.assignor == "sticky" and dict(group.configs) == {}
    assert not group.subtopologies[0].stateful
    assert member == GroupMember("m", "p")


def _set(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(doc)
    target: Any = changed
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return changed


_DELETE = object()

BAD: list[tuple[tuple[Any, ...], Any, str, str]] = [
    (("format",), "taskassign/scenario/v1", "$.format", "expected 'taskassign/streams-group/v1'"),
    (("assignor",), "range", "$.assignor", "'sticky', 'balanced'"),
    (("configs", "num.standby.replicas"), 1, "$.configs.num.standby.replicas", "expected a string"),
    (("subtopologies", 0, "partitions"), -1, "$.subtopologies[0].partitions", "between 0 and"),
    (("subtopologies", 1, "id"), "0", "$.subtopologies[1].id", "listed twice"),
    (("subtopologies", 0, "stateful"), "yes", "$.subtopologies[0].stateful", "true or false"),
    (("subtopologies", 0, "partition"), 3, "$.subtopologies[0].partition", "unknown key"),
    (("members", 1, "memberId"), "m0", "$.members[1].memberId", "also $.members[0]"),
    (("members", 0, "processId"), _DELETE, "$.members[0]", "missing required key 'processId'"),
    (("members", 0, "activeTasks"), {"0": [1, 1]}, "$.members[0].activeTasks.0[1]", "listed twice"),
    (("members", 0, "standbyTasks"), {"0": ["1"]}, "$.members[0].standbyTasks.0[0]", "expected an integer"),
    (("members", 0, "taskOffsets"), {"0": {"x": 1}}, "$.members[0].taskOffsets.0.x", "partition number"),
    (("members", 0, "taskOffsets"), {"0": {"1": 1.5}}, "$.members[0].taskOffsets.0.1", "expected an integer"),
    (("members", 0, "clientTags"), {"zone": 1}, "$.members[0].clientTags.zone", "expected a string"),
    (("members", 0, "rackID"), "r", "$.members[0].rackID", "unknown key 'rackID'"),
    (("members",), _DELETE, "$", "missing required key 'members'"),
]


@pytest.mark.parametrize(("path", "value", "where", "message"), BAD)
def test_errors_name_the_json_path(path: tuple[Any, ...], value: Any, where: str, message: str) -> None:
    doc = _set(golden("sticky_cold_standby1_2proc_x3"), path, value)
    with pytest.raises(ScenarioError) as caught:
        parse_streams_group(doc, source="g.json")
    assert caught.value.path == where
    assert message in caught.value.message
    assert str(caught.value).startswith("g.json: ")
    assert isinstance(caught.value, UserInputError)


def test_output_documents_read_back() -> None:
    doc = json.loads((FOLDER / "sticky_warmup_in_prev.output.json").read_text(encoding="utf-8"))
    assignor, result = parse_assignment_document(doc)
    assert assignor == "sticky"
    assert isinstance(result, StreamsGroupAssignment)
    assert result.members["m2"] == MemberAssignment({"0": (2, 5)}, {})
    error = json.loads((FOLDER / "balanced_error_no_members.output.json").read_text(encoding="utf-8"))
    assert parse_assignment_document(error) == ("balanced", ("TaskAssignorException",
                                                             "No process available to assign active tasks."))


def test_partition_counts_are_bounded() -> None:
    """As in every input (issue 18): one partition count must not make billions of tasks."""
    from taskassign.model import MAX_PARTITIONS, MAX_TASKS

    doc = golden("sticky_racks_tags")
    doc["subtopologies"][0]["partitions"] = 2**31 - 1
    with pytest.raises(ScenarioError,
                       match=rf"\$\.subtopologies\[0\]\.partitions: must be between 0 and {MAX_PARTITIONS}"):
        parse_streams_group(doc)
    doc["subtopologies"] = [{"id": str(i), "partitions": MAX_PARTITIONS} for i in range(2)]
    with pytest.raises(ScenarioError, match=f"more than the {MAX_TASKS} taskassign assigns"):
        parse_streams_group(doc)
