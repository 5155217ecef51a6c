from __future__ import annotations

import base64
from typing import Any

import pytest

from taskassign.errors import DecodeError, ScenarioError
from taskassign.formats.group import parse_group, read_group
from taskassign.wire import Subscription
from tests.group_helpers import group, member, member_json, v
from tests.helpers import EXAMPLES_DIR, PID_1, PID_2


def fails(doc: dict[str, Any], path: str, text: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_group(doc)
    assert info.value.path == path and text in info.value.message


def test_example_group_reads() -> None:
    spec = read_group(EXAMPLES_DIR / "groups" / "orders-app.group.json")
    assert spec.name == "orders-app" and len(spec.members) == 4 and spec.leader == spec.members[0].member_id
    assert spec.topics["orders-app-counts-changelog"].partitions[1].end_offset == 98_000


def test_subscription_forms_hex_base64_and_json_are_equivalent() -> None:
    info = v(11, PID_1, {"0_0": -2})
    data = Subscription.of(["topic1"], info.encode(), [("topic1", 0)]).encode()
    forms = [data.hex(), {"hex": data.hex()}, {"base64": base64.b64encode(data).decode()},
             member_json("m", info, [("topic1", 0)])["subscription"]]
    specs = [parse_group(group([{"member_id": "m", "subscription": f}])) for f in forms]
    assert len({s.members[0].subscription for s in specs}) == 1
    assert specs[0].members[0].info == info


def test_bad_subscription_bytes_name_member_field_and_offset() -> None:
    data = Subscription.of(["topic1"], v(11, PID_1).encode()[:10], []).encode()
    with pytest.raises(DecodeError) as info:
        parse_group(group([{"member_id": "m", "subscription": data.hex()}]))
    assert "$.members[0].subscription" in str(info.value) and info.value.field == "process_id"
    assert info.value.offset == data.index(v(11, PID_1).encode()[:10]) + 8


def test_structural_errors_name_the_json_path() -> None:
    fails(group([member("a", v(11, PID_1)), member("a", v(11, PID_2))]), "$.members[1].member_id", "duplicate")
    fails(group([member("a", v(11, PID_1))], leader="zz"), "$.leader", "not one of the members")
    doc = group([member("a", v(11, PID_1))], stateful=True)
    del doc["topics"]["app-store-changelog"]["partitions"][1]["end_offset"]
    fails(doc, "$.topics.app-store-changelog.partitions[1]", "no end_offset")
    doc = group([member("a", v(11, PID_1))])
    doc["topics"]["topic1"] = {"partitions": [{"partition": 1}]}
    fails(doc, "$.topics.topic1.partitions", "missing 0")
    doc = group([member("a", v(11, PID_1))], configs={"num.standby.replica": 1})
    fails(doc, "$.configs.num.standby.replica", "unknown config key")
    doc = group([{"member_id": "a", "subscription": 5}])
    fails(doc, "$.members[0].subscription", "expected subscription bytes")
    doc = group([member("a", v(11, PID_1))])
    doc["topology"]["subtopologies"].append({"id": 0, "source_topics": ["x"]})
    fails(doc, "$.topology.subtopologies[1].id", "duplicate subtopology id 0")


def test_non_streams_member_is_rejected() -> None:
    data = Subscription.of(["topic1"], None, []).encode()
    fails(group([{"member_id": "m", "subscription": data.hex()}]), "$.members[0].subscription", "no user data")


def test_repartition_topics_and_copartition_groups_are_checked() -> None:
    doc = group([member("a", v(11, PID_1))])
    doc["topology"]["repartition_topics"] = {"nobody-reads-me": None}
    fails(doc, "$.topology.repartition_topics.nobody-reads-me", "must be a source topic")
    doc = group([member("a", v(11, PID_1))])
    doc["topology"]["subtopologies"].append({"id": 1, "source_topics": ["rep"]})
    doc["topology"]["repartition_topics"] = {"rep": 0}
    fails(doc, "$.topology.repartition_topics.rep", "expected a partition count")
    doc = group([member("a", v(11, PID_1))])
    doc["topology"]["subtopologies"][0]["copartition_groups"] = [["topic1", "elsewhere"]]
    fails(doc, "$.topology.subtopologies[0].copartition_groups[0][1]", "'elsewhere' is not a source topic")
    doc = group([member("a", v(11, PID_1))])
    doc["topology"]["subtopologies"][0]["copartition_groups"] = [[]]
    fails(doc, "$.topology.subtopologies[0].copartition_groups[0]", "non-empty array")
    doc = group([member("a", v(11, PID_1))])
    doc["topology"]["subtopologies"][0]["sink_topics"] = "rep"
    fails(doc, "$.topology.subtopologies[0].sink_topics", "expected an array")


def _recorded(info_pid: Any = PID_1) -> tuple[dict[str, Any], bytes]:
    from taskassign.wire import Assignment, AssignmentInfo

    data = Subscription.of(["topic1"], v(11, info_pid).encode(), []).encode()
    assignment = Assignment.of([("topic1", 0)], AssignmentInfo(11, 11).encode()).encode()
    return {"member_id": "m", "subscription": {"hex": data.hex()}, "assignment": {"hex": assignment.hex()}}, assignment


def test_a_recorded_outcome_and_a_capture_block_are_read() -> None:
    entry, assignment = _recorded()
    doc = group([entry])
    doc["capture"] = {"bootstrap_server": "b:9092", "group": "g", "captured_at_ms": 5, "group_state": "Stable",
                      "topology_source": "t.txt", "configs_source": "c.properties", "leader_source": "inferred",
                      "assignor": "sticky", "notes": ["n"]}
    spec = parse_group(doc)
    assert spec.has_recorded_outcome and spec.members[0].recorded_assignment == assignment
    assert spec.capture is not None and spec.capture.assignor == "sticky" and spec.capture.notes == ("n",)


def test_decoded_beside_the_bytes_must_agree_with_them() -> None:
    from taskassign.formats.wire_documents import message_to_json
    from taskassign.wire import Subscription as Sub

    entry, _ = _recorded()
    other = Sub.of(["topic2"], v(11, PID_2).encode(), [])
    entry["subscription"]["decoded"] = message_to_json(other)
    fails(group([entry]), "$.members[0].subscription.decoded", "does not match the bytes")


def test_a_recorded_outcome_covers_every_member() -> None:
    entry, _ = _recorded()
    second = {"member_id": "n", "subscription": entry["subscription"]["hex"]}
    fails(group([entry, second]), "$.members[1]", "every member's assignment")
