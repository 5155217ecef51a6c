"""What a classic capture checks before it writes, on members Kafka's leader really assigned (the recorded histories
of tests/capture/data/histories): the topology against the members' subscriptions, ``num.standby.replicas``
against the standbys the members hold, and the DescribeGroups version that carries static members' instance ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskassign.capture.cluster import (
    DESCRIBE_GROUPS_MAX_VERSION,
    DescribedMember,
    _describe_groups_request_types,
    _member,
)
from taskassign.capture.group_capture import (
    _decode,
    check_topology_matches,
    settle_repartition_counts,
    standby_contradictions,
)
from taskassign.errors import UserInputError

HISTORY = Path(__file__).parent / "data" / "histories" / "02-kafka42-classic-wordcount" / "wc42-classic-gen-0005.json"


def _members() -> list:  # type: ignore[type-arg]
    doc = json.loads(HISTORY.read_text())
    return [_decode("wc42-classic", DescribedMember(m["member_id"], None, m["client_id"], m["client_host"],
                                                    bytes.fromhex(m["subscription"]["hex"]),
                                                    bytes.fromhex(m["assignment"]["hex"])))
            for m in doc["members"]]


def test_the_configured_standbys_agree_with_what_the_members_hold() -> None:
    # The application runs num.standby.replicas=2 (its recorded properties).
    assert standby_contradictions(_members(), {"num.standby.replicas": 2}, "app.properties") == []


@pytest.mark.parametrize(("configured", "expected"), [
    (0, "num.standby.replicas=0 (Kafka's defaults) contradicts the members"),
    (1, "num.standby.replicas=1 (Kafka's defaults) contradicts the members"),
])
def test_a_standby_count_the_members_contradict_is_named(configured: int, expected: str) -> None:
    (note,) = standby_contradictions(_members(), {"num.standby.replicas": configured}, "Kafka's defaults")
    assert note.startswith(expected) and "num.standby.replicas=2?" in note


def test_a_topology_of_another_application_is_refused_naming_the_topics() -> None:
    doc = json.loads(HISTORY.read_text())
    subscribed = sorted({t for m in _members() for t in m.subscription.topics})
    check_topology_matches("wc42-classic", doc["topology"], subscribed)  # its own: fine
    other = {"subtopologies": [{"source_topics": ["orders"]}]}
    with pytest.raises(UserInputError) as caught:
        check_topology_matches("wc42-classic", other, subscribed)
    message = str(caught.value)
    assert "it reads orders, which no member subscribes to" in message
    assert "the members subscribe to" in message and "which it does not read" in message


def test_describe_groups_is_asked_at_v4_for_the_instance_ids() -> None:
    from kafka.protocol.admin import DescribeGroupsRequest

    types = _describe_groups_request_types(DescribeGroupsRequest)
    assert DESCRIBE_GROUPS_MAX_VERSION == 4 and len(types) == 5
    response_type = types[4].RESPONSE_TYPE
    member = ("m-1", "wc-a-1", "client", "/127.0.0.1", b"sub", b"asg")
    raw = response_type.SCHEMA.encode([0, [(0, "g", "Stable", "consumer", "stream", [member], set())]])
    (group,) = response_type.decode(raw).groups
    decoded = _member(group[5][0], 4)
    assert (decoded.member_id, decoded.group_instance_id, decoded.metadata) == ("m-1", "wc-a-1", b"sub")
    dynamic = response_type.SCHEMA.encode([0, [(0, "g", "Stable", "consumer", "stream",
                                                 [("m-2", None, "c", "/h", b"", b"")], set())]])
    assert _member(response_type.decode(dynamic).groups[0][5][0], 4).group_instance_id is None


def _pattern_group(input_partitions: int) -> dict:  # type: ignore[type-arg]
    """The recorded WordCount (8-partition topics), its source read as if subscribed by a pattern, and that
    source now with ``input_partitions`` partitions (a new topic matching the pattern changed the count)."""
    doc = json.loads(HISTORY.read_text())
    doc["topics"]["wc-input"]["partitions"] = [{"partition": p, "racks": []} for p in range(input_partitions)]
    return dict(doc)


def test_a_pattern_sources_repartition_count_is_left_to_the_leader_when_it_moved() -> None:
    from taskassign.api.rebalance import rebalance_group_file
    from taskassign.formats.group import parse_group

    doc, notes = _pattern_group(12), []
    settle_repartition_counts(doc["topology"], doc["topics"], {"wc-input"}, notes)
    assert doc["topology"]["repartition_topics"] == {"wc42-classic-by-word-repartition": None}
    (note,) = notes
    assert "exists with 8 partitions" in note and "derives 12" in note and "fails" in note
    # The replay then fails where Kafka's leader failed, instead of predicting a normal assignment.
    failure = rebalance_group_file(parse_group(doc), "high_availability").result.failure
    assert failure is not None and "exists with 8 partitions, the topology needs 12" in str(failure)
    assert "Kafka's leader fails" in str(failure)


def test_a_repartition_count_stays_when_nothing_moved_or_no_pattern_feeds_it() -> None:
    for doc, patterns in ((_pattern_group(8), {"wc-input"}), (_pattern_group(12), set())):
        notes: list[str] = []
        settle_repartition_counts(doc["topology"], doc["topics"], patterns, notes)
        assert doc["topology"]["repartition_topics"] == {"wc42-classic-by-word-repartition": 8} and notes == []


def test_a_snapshot_directory_may_hold_the_streams_groups_capture_wrote(tmp_path: Path) -> None:
    """``capture --all-groups`` writes the snapshot, then the streams groups into its folder; the next capture must
    take that directory as its own, and a foreign file in the folder still stops it."""
    from taskassign.capture.snapshot import write_snapshot
    from taskassign.fleet.snapshot_dir import STREAMS_GROUPS_DIR, check_snapshot_target

    out = tmp_path / "fleet"
    write_snapshot(out, [])
    folder = out / STREAMS_GROUPS_DIR
    folder.mkdir()
    (folder / "app.streams-group.json").write_text(json.dumps({"format": "taskassign/streams-group/v1"}))
    check_snapshot_target(out)
    write_snapshot(out, [])  # replaces it (the streams groups are written again after it)
    only_streams = tmp_path / "streams-only"
    (only_streams / STREAMS_GROUPS_DIR).mkdir(parents=True)
    (only_streams / STREAMS_GROUPS_DIR / "a.streams-group.json").write_text(
        json.dumps({"format": "taskassign/streams-group/v1"}))
    check_snapshot_target(only_streams)
    (folder.parent / STREAMS_GROUPS_DIR).mkdir(exist_ok=True)
    (out / STREAMS_GROUPS_DIR / "notes.txt").write_text("mine")
    with pytest.raises(UserInputError, match="refusing to replace it"):
        check_snapshot_target(out)
