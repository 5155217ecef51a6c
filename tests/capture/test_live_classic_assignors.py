"""Kafka's other classic assignors against Kafka's own leader: ``LegacyStickyTaskAssignor`` and
``FallbackPriorTaskAssignor`` (``internal.task.assignor.class``) and the public KIP-924 ``StickyTaskAssignor``
(``task.assignor.class``) on real rebalances of real Kafka Streams instances.

Instances run 1 to 3 threads, with 1 or 2 standbys, on a chain of five sub-topologies joined by ``repartition()``
and on a foreign-key join; they join, leave cleanly and crash. After every rebalance the group is captured and
``rebalance`` must send every member the bytes Kafka's leader sent (the legacy assignors), or, for the public
sticky assignor, whose standby and thread order come from identity hash codes, the same tasks per client and the
same follow-up decision (compared as sets, as ``rebalance`` says up front).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from taskassign.formats.group import GroupSpec
from taskassign.wire import NO_FOLLOWUP_MS, Assignment, AssignmentInfo
from tests.capture.kafka_cluster import KafkaBroker
from tests.capture.streams_apps import StreamsInstance, StreamsLab
from tests.capture.test_live_capture import QUICK_STATE, check_capture, feed_and_settle, topics_for

pytestmark = pytest.mark.kafka

INTERNAL = "org.apache.kafka.streams.processor.internals.assignment."
ASSIGNORS = {
    "legacy_sticky": ("internal.task.assignor.class", INTERNAL + "LegacyStickyTaskAssignor"),
    "fallback_prior": ("internal.task.assignor.class", INTERNAL + "FallbackPriorTaskAssignor"),
    "sticky": ("task.assignor.class", "org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor"),
}


def lab_line(bootstrap: str) -> str:
    """The lab's Kafka line, which is its Streams library's too (one build): the leader is replayed as that line
    (the public sticky changed in 4.4, KAFKA-20198)."""
    from taskassign.capture.streams_client import StreamsClient

    with StreamsClient(bootstrap, timeout=30) as client:
        line = client.broker_line.line
    assert line is not None, client.broker_line.description
    return line


def followups(spec: GroupSpec) -> list[int]:
    """The follow-up deadlines Kafka's leader sent (none: the leader scheduled no follow-up rebalance)."""
    found = []
    for member in spec.members:
        assert member.recorded_assignment is not None
        info = AssignmentInfo.decode(Assignment.decode(member.recorded_assignment).user_data or b"")
        if info.version >= 7 and info.next_rebalance_ms != NO_FOLLOWUP_MS:
            found.append(info.next_rebalance_ms)
    return found


class Run:
    """One application under one assignor: its instances and a capture-and-replay after each event."""

    def __init__(self, lab: StreamsLab, tmp_path: Path, app: str, prefix: str, topology: str,
                 config: Mapping[str, object]) -> None:
        self.lab, self.tmp_path, self.app, self.prefix, self.topology = lab, tmp_path, app, prefix, topology
        self.config = dict(config)
        self.instances: dict[str, StreamsInstance] = {}
        self.checked: list[GroupSpec] = []

    def start(self, name: str, threads: int) -> None:
        props = {**self.config, "num.stream.threads": threads}
        self.instances[name] = self.lab.start(self.topology, self.app, name, props=props, topic_prefix=self.prefix)

    def check(self, label: str, assignor: str) -> GroupSpec:
        alive = next(i for i in self.instances.values() if i.alive())
        spec = check_capture(self.lab, self.app, alive, self.tmp_path, streams_config=self.config, label=label,
                             kafka_line=lab_line(self.lab.bootstrap))
        assert spec.capture is not None and spec.capture.assignor == assignor, spec.capture
        self.checked.append(spec)
        return spec


@pytest.mark.parametrize("assignor", sorted(ASSIGNORS))
def test_a_chain_of_five_subtopologies_through_joins_a_leave_and_a_crash(
    kafka_cluster: KafkaBroker, streams_lab: StreamsLab, tmp_path: Path, assignor: str
) -> None:
    """Three instances of 1, 2 and 3 threads, one standby; a fourth joins, one leaves, one crashes."""
    app, prefix = f"live-chain-{assignor}", f"ch{assignor[:4]}{len(assignor)}-"
    key, value = ASSIGNORS[assignor]
    topics_for(kafka_cluster.bootstrap, "chain", prefix, partitions=4)
    run = Run(streams_lab, tmp_path, app, prefix, "chain",
              {"num.standby.replicas": 1, key: value, **QUICK_STATE})
    for name, threads in (("i1", 1), ("i2", 2), ("i3", 3)):
        run.start(name, threads)
    spec = run.check("-cold", assignor)
    assert len(spec.subtopologies) == 5
    feed_and_settle(kafka_cluster.bootstrap, app, "chain", prefix)
    run.start("i4", 1)
    run.check("-joined", assignor)
    run.instances["i2"].stop()
    run.check("-left", assignor)
    run.instances["i3"].crash()
    run.check("-crashed", assignor)
    if assignor == "sticky":
        # Kafka's public sticky assignor schedules no follow-up rebalance: it has no warm-ups to check on
        assert not any(followups(s) for s in run.checked), [followups(s) for s in run.checked]


@pytest.mark.parametrize("assignor", sorted(ASSIGNORS))
def test_a_foreign_key_join_with_two_standbys(
    kafka_cluster: KafkaBroker, streams_lab: StreamsLab, tmp_path: Path, assignor: str
) -> None:
    """Three instances of 2, 1 and 3 threads, two standbys, a foreign-key join; a fourth joins, one crashes."""
    app, prefix = f"live-fk-{assignor}", f"fk{assignor[:4]}{len(assignor)}-"
    key, value = ASSIGNORS[assignor]
    topics_for(kafka_cluster.bootstrap, "fk-join", prefix, partitions=3)
    run = Run(streams_lab, tmp_path, app, prefix, "fk-join",
              {"num.standby.replicas": 2, key: value, **QUICK_STATE})
    for name, threads in (("i1", 2), ("i2", 1), ("i3", 3)):
        run.start(name, threads)
    spec = run.check("-cold", assignor)
    assert spec.configs.num_standby_replicas == 2
    assert any("subscription-registration" in t.lower() for s in spec.subtopologies for t in s.source_topics), \
        [s.source_topics for s in spec.subtopologies]
    feed_and_settle(kafka_cluster.bootstrap, app, "fk-join", prefix)
    run.start("i4", 2)
    run.check("-joined", assignor)
    run.instances["i1"].crash()
    run.check("-crashed", assignor)
