from __future__ import annotations

from typing import Any

import pytest

from taskassign.errors import ScenarioError, UserInputError
from taskassign.formats.wire_documents import bytes_from_text, message_from_json, message_to_json, task_to_json
from taskassign.ids import ProcessId, TaskId
from taskassign.wire import AssignmentInfo, SubscriptionInfo


def fails(doc: dict[str, Any], path: str, text: str) -> None:
    with pytest.raises(ScenarioError) as info:
        message_from_json(doc)
    assert info.value.path == path and text in info.value.message


def test_fields_outside_the_version_are_rejected() -> None:
    base = message_to_json(SubscriptionInfo.of(6, ProcessId.of_ints(0, 1), {}))
    fails({**base, "task_offset_sums": []}, "$.task_offset_sums",
          "version 6 has no field 'task_offset_sums' (versions 7+)")
    fails({**base, "unique_field": 200}, "$.unique_field", "versions 8+")
    v11 = message_to_json(SubscriptionInfo.of(11, ProcessId.of_ints(0, 1), {}))
    fails({**v11, "unique_field": 200}, "$.unique_field", "between -128 and 127")
    fails({**v11, "extra": 1}, "$.extra", "unknown key")
    fails({**v11, "process_id": "nope"}, "$.process_id", "not a UUID")
    fails({"message": "assignment_info", "version": 12}, "$.version", "between 1 and 11")
    fails({"message": "assignment_info", "version": 4, "active_tasks": ["x"]}, "$.active_tasks[0]", "does not parse")
    fails({"message": "nope", "version": 1}, "$.message", "unknown message")


def test_odd_topology_names_use_the_object_form() -> None:
    assert task_to_json(TaskId(0, 1)) == "0_1" and task_to_json(TaskId(0, 1, "app")) == "app__0_1"
    odd = TaskId(0, 1, "line\nbreak")
    assert task_to_json(odd) == {"subtopology": 0, "partition": 1, "topology_name": "line\nbreak"}
    info = AssignmentInfo(10, 11, (odd,))
    assert message_from_json(message_to_json(info)) == info


def test_bytes_from_text() -> None:
    assert bytes_from_text("0x00 0a:FF|01") == b"\x00\x0a\xff\x01"
    assert bytes_from_text("base64:AAr/AQ==") == b"\x00\x0a\xff\x01"
    with pytest.raises(UserInputError, match="odd number"):
        bytes_from_text("abc")
    with pytest.raises(UserInputError, match="'g' at character 2"):
        bytes_from_text("00g0")
    with pytest.raises(UserInputError, match="not valid base64"):
        bytes_from_text("base64:!!")
