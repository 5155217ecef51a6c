"""Smoke tests of the live-Kafka lab: a real broker, real Kafka Streams instances, raw group bytes.

They prove the lab itself (what later `taskassign capture` tests stand on): the broker serves every request a
capture makes, each topology reaches RUNNING, and DescribeGroups hands back the members' subscription and
assignment bytes as the Streams leader saw them. Each instance's `Topology#describe()` must equal the text saved
under data/topologies/ (set TASKASSIGN_UPDATE_TOPOLOGIES=1 to rewrite those files, e.g. for another Kafka).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import kafka
import pytest
from kafka.coordinator.protocol import ConsumerProtocolMemberMetadata_v0

from tests.capture.kafka_cluster import (
    KafkaBroker,
    admin_client,
    broker_ids,
    create_topics,
    end_offsets,
    produce,
)
from tests.capture.kafka_groups import (
    GroupDescription,
    GroupInspector,
    assignment_info_version,
    describe_group,
    parse_assignment,
    parse_subscription,
    subscription_info_version,
)
from tests.capture.streams_apps import TOPOLOGIES, WORDCOUNT, StreamsInstance, StreamsLab

pytestmark = pytest.mark.kafka

TOPOLOGY_TEXTS = Path(__file__).parent / "data" / "topologies"
PARTITIONS = 4


def create_topology_topics(bootstrap: str, topology: str, partitions: int = PARTITIONS, prefix: str = "") -> None:
    create_topics(bootstrap, dict.fromkeys(TOPOLOGIES[topology].topics(prefix), partitions))


def check_topology_text(instance: StreamsInstance, file_name: str) -> None:
    """The instance printed exactly the saved `Topology#describe()` text."""
    text = instance.topology_description()
    assert text.startswith("Topologies:\n") and text.endswith("\n\n"), text
    path = TOPOLOGY_TEXTS / f"{file_name}.txt"
    if os.environ.get("TASKASSIGN_UPDATE_TOPOLOGIES") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.read_text() == text, f"{instance} describes another topology than {path}"


def check_raw_members(group: GroupDescription, topics: set[str]) -> None:
    """Every member has raw subscription and assignment bytes, and the subscription carries SubscriptionInfo."""
    for member in group.members:
        assert isinstance(member.metadata, bytes) and member.metadata, member
        assert isinstance(member.assignment, bytes) and member.assignment, member
        subscription = parse_subscription(member.metadata)
        assert subscription.version >= 0
        assert set(subscription.topics) == topics, member
        assert subscription_info_version(member.metadata) >= 1, member
        assert assignment_info_version(member.assignment) >= 1, member
        assigned = {topic for topic, _ in parse_assignment(member.assignment).partitions}
        assert assigned <= topics, member


def test_broker_serves_every_request_a_capture_makes(kafka_cluster: KafkaBroker) -> None:
    """Metadata, CreateTopics, Produce, ListOffsets, ListGroups, FindCoordinator and DescribeGroups all answer
    (a Kafka 4 broker no longer speaks every old protocol version kafka-python may choose)."""
    assert kafka.__version__.startswith("2."), "3.x decodes subscription user data as text; pin kafka-python 2.x"
    assert broker_ids(kafka_cluster.bootstrap) == [1]
    with admin_client(kafka_cluster.bootstrap) as admin:
        cluster = admin.describe_cluster()
    assert [broker["rack"] for broker in cluster["brokers"]] == [kafka_cluster.rack]
    assert "\n" not in cluster["cluster_id"] and len(cluster["cluster_id"]) == 22

    create_topics(kafka_cluster.bootstrap, {"lab-smoke": 3})
    assert produce(kafka_cluster.bootstrap, "lab-smoke", [("k", "v")] * 5, partition=2) == 5
    assert end_offsets(kafka_cluster.bootstrap, "lab-smoke") == {0: 0, 1: 0, 2: 5}

    with GroupInspector(kafka_cluster.bootstrap) as inspector:
        assert "lab-no-such-group" not in inspector.list_groups()
        assert inspector.find_coordinator("lab-no-such-group") == 1
        described = inspector.describe("lab-no-such-group")
    assert (described.state, described.members) == ("Dead", ())


def test_wordcount_two_instances_reach_running_and_expose_raw_group_bytes(
    kafka_cluster: KafkaBroker, streams_lab: StreamsLab
) -> None:
    bootstrap = kafka_cluster.bootstrap
    create_topology_topics(bootstrap, WORDCOUNT)
    produce(bootstrap, "wc-input", [(f"key-{i}", f"the quick brown fox {i}") for i in range(20)])
    props = {"num.stream.threads": 2, "num.standby.replicas": 1}
    instances = [streams_lab.start(WORDCOUNT, "lab-wordcount", name, props=props) for name in ("a", "b")]

    group = streams_lab.wait_stable("lab-wordcount")

    assert group.state == "Stable" and group.protocol_type == "consumer" and group.protocol == "stream"
    assert sorted(member.client_id for member in group.members) == [
        f"lab-wordcount-{name}-StreamThread-{thread}-consumer" for name in ("a", "b") for thread in (1, 2)
    ]
    check_raw_members(group, {"wc-input", "lab-wordcount-by-word-repartition"})
    for instance in instances:
        assert instance.state() == "RUNNING"
        check_topology_text(instance, WORDCOUNT)
    with GroupInspector(bootstrap) as inspector:
        assert inspector.list_groups()["lab-wordcount"] == "consumer"


def test_raw_subscription_keeps_what_describe_consumer_groups_drops(
    kafka_cluster: KafkaBroker, streams_lab: StreamsLab
) -> None:
    """kafka-python's own describe_consumer_groups decodes the subscription with the v0 schema: same user data,
    but the fields of consumer protocol v1+ after it (owned partitions, generation, rack) are gone."""
    create_topology_topics(kafka_cluster.bootstrap, "stateless", partitions=2, prefix="raw-")
    streams_lab.start("stateless", "lab-raw", "a", topic_prefix="raw-")
    raw = streams_lab.wait_stable("lab-raw").members[0]
    assert parse_subscription(raw.metadata).topics == ("raw-sl-input",)
    with admin_client(kafka_cluster.bootstrap) as admin:
        (decoded,) = admin.describe_consumer_groups(["lab-raw"])
    (member,) = decoded.members
    assert member.member_id == raw.member_id
    subscription = parse_subscription(raw.metadata)
    assert subscription.version >= 1
    assert member.member_metadata.user_data == subscription.user_data
    assert isinstance(member.member_metadata, ConsumerProtocolMemberMetadata_v0)
    assert len(member.member_metadata.encode()) < len(raw.metadata)


LAB_TOPOLOGIES: Mapping[str, dict[str, object]] = {
    "multi-store": {},
    "join": {},
    "stateless": {},
    "source-table": {},
    "source-table-optimized": {"topology.optimization": "all"},
}
STORES = {
    "multi-store": ["length-count-store", "length-reduce-store", "word-agg-store"],
    "join": ["order-payment-other-join-store", "order-payment-this-join-store"],
    "stateless": [],
    "source-table": ["st-table-store"],
    "source-table-optimized": [],  # the source topic st-input is the changelog
}


@pytest.mark.parametrize("variant", sorted(LAB_TOPOLOGIES))
def test_lab_topology_reaches_running(kafka_cluster: KafkaBroker, streams_lab: StreamsLab, variant: str) -> None:
    """Each of the lab's own topologies runs as one instance; its changelogs are the ones its stores imply."""
    topology = variant.removesuffix("-optimized")
    app_id = f"lab-{variant}"
    create_topology_topics(kafka_cluster.bootstrap, topology)
    instance = streams_lab.start(topology, app_id, "solo", props=LAB_TOPOLOGIES[variant])

    group = streams_lab.wait_stable(app_id)

    assert len(group.members) == 1
    check_raw_members(group, set(parse_subscription(group.members[0].metadata).topics))
    check_topology_text(instance, topology)
    with admin_client(kafka_cluster.bootstrap) as admin:
        internal = sorted(topic for topic in admin.list_topics() if topic.startswith(app_id + "-"))
    changelogs = [topic.removeprefix(app_id + "-").removesuffix("-changelog") for topic in internal]
    assert [name for name in changelogs if not name.endswith("-repartition")] == STORES[variant]


def test_rack_and_tag_configs_reach_the_group(kafka_cluster: KafkaBroker, streams_lab: StreamsLab) -> None:
    """Rack-aware assignment, client tags and standby settings are accepted, and each member's rack travels in
    its subscription (consumer protocol v3) for a capture to read."""
    create_topology_topics(kafka_cluster.bootstrap, "multi-store")
    common = {
        "num.standby.replicas": 1,
        "rack.aware.assignment.tags": "zone",
        "rack.aware.assignment.strategy": "min_traffic",
        "acceptable.recovery.lag": 1000,
        "probing.rebalance.interval.ms": 60000,
    }
    racks = {"a": "rack-a", "b": "rack-b"}
    for name, rack in racks.items():
        props = {**common, "client.rack": rack, "client.tag.zone": f"zone-{name}"}
        streams_lab.start("multi-store", "lab-racks", name, props=props)

    group = streams_lab.wait_stable("lab-racks")

    for member in group.members:
        subscription = parse_subscription(member.metadata)
        assert subscription.version >= 3
        assert subscription.rack_id == racks[member.client_id.split("-")[2]]
    check_raw_members(group, {"ms-input", "lab-racks-by-word-repartition", "lab-racks-by-length-repartition"})


def test_crash_and_clean_stop_each_rebalance_within_seconds(
    kafka_cluster: KafkaBroker, streams_lab: StreamsLab
) -> None:
    """SIGKILL: the 2 s session timeout drops the member; SIGTERM: LeaveGroup on close drops it at once.

    The 20 s bound is a functional one: with Kafka's defaults (45 s session timeout, no leave on close) the group
    would still list the dead instance's members.
    """
    create_topology_topics(kafka_cluster.bootstrap, "stateless")
    app_id = "lab-rebalance"
    props = {"num.stream.threads": 2}
    survivor = streams_lab.start("stateless", app_id, "a", props=props)
    victim = streams_lab.start("stateless", app_id, "b", props=props)
    assert len(streams_lab.wait_stable(app_id).members) == 4

    since = len(survivor.transitions())
    victim.crash()
    survivor.wait_state("REBALANCING", since=since, timeout=20)
    group = streams_lab.wait_stable(app_id, timeout=20)
    assert sorted(member.client_id for member in group.members) == [
        f"{app_id}-a-StreamThread-{thread}-consumer" for thread in (1, 2)
    ]

    restarted = streams_lab.start("stateless", app_id, "b", props=props)
    assert len(streams_lab.wait_stable(app_id).members) == 4
    restarted.stop()
    # Its members left on close: without LeaveGroup they would stay, Stable, until their session timed out.
    right_after = describe_group(kafka_cluster.bootstrap, app_id)
    assert (right_after.state, len(right_after.members)) != ("Stable", 4)
    assert len(streams_lab.wait_stable(app_id, timeout=20).members) == 2
