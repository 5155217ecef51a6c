from __future__ import annotations

import pytest

from taskassign.fleet.reasons import INVALID_TOPOLOGY, MISSING_SOURCE_TOPIC
from taskassign.leader.partition_grouper import ResolvedTopology, SubtopologySpec, TopologyError, resolve_topology


def resolve(subs: list[SubtopologySpec], counts: dict[str, int], repartition: dict[str, int | None] | None = None,
            **kwargs: bool) -> ResolvedTopology:
    return resolve_topology(subs, counts, repartition or {}, **kwargs)


def test_grouper_builds_max_tasks_and_shorter_topics_stop_contributing() -> None:
    # testAssignWithNewTasks: a subtopology reading a 3- and a 4-partition topic has 4 tasks; task 3
    # reads only the longer topic.
    result = resolve([SubtopologySpec(0, ("topic1", "topic3"))], {"topic1": 3, "topic3": 4}, kafka_compat=True)
    (sub,) = result.subtopologies
    assert sub.num_tasks == 4
    assert sub.source_partitions(2) == ("topic1", "topic3")
    assert sub.source_partitions(3) == ("topic3",)


def test_repartition_topic_takes_the_largest_count_of_its_writers_sources() -> None:
    subs = [
        SubtopologySpec(0, ("a",), sink_topics=("rep",)),
        SubtopologySpec(1, ("b",), sink_topics=("rep",)),
        SubtopologySpec(2, ("rep",)),
    ]
    result = resolve(subs, {"a": 3, "b": 5}, {"rep": None})
    assert result.repartition_partition_counts == {"rep": 5}
    assert [s.num_tasks for s in result.subtopologies] == [3, 5, 5]


def test_chained_repartition_topics_resolve_through_the_fixed_point() -> None:
    # rep2 is written by the subtopology reading rep1, listed before rep1's writer is known.
    subs = [
        SubtopologySpec(0, ("rep1",), sink_topics=("rep2",)),
        SubtopologySpec(1, ("rep2",)),
        SubtopologySpec(2, ("in",), sink_topics=("rep1",)),
    ]
    result = resolve(subs, {"in": 7}, {"rep1": None, "rep2": None})
    assert result.repartition_partition_counts == {"rep1": 7, "rep2": 7}


def test_fixed_repartition_count_is_kept() -> None:
    subs = [SubtopologySpec(0, ("in",), sink_topics=("rep",)), SubtopologySpec(1, ("rep",))]
    result = resolve(subs, {"in": 8}, {"rep": 3})
    assert [s.num_tasks for s in result.subtopologies] == [8, 3]


def test_missing_source_topic_is_kafkas_incomplete_metadata() -> None:
    with pytest.raises(TopologyError) as err:
        resolve([SubtopologySpec(0, ("present", "absent"))], {"present": 2})
    assert err.value.code == MISSING_SOURCE_TOPIC
    assert "absent" in str(err.value)


def test_repartition_topic_nobody_writes_cannot_be_sized() -> None:
    with pytest.raises(TopologyError) as err:
        resolve([SubtopologySpec(0, ("rep",))], {}, {"rep": None})
    assert err.value.code == INVALID_TOPOLOGY
    assert "rep" in str(err.value)


def test_copartitioned_external_topics_must_match() -> None:
    sub = SubtopologySpec(0, ("left", "right"), copartition_groups=(("left", "right"),))
    with pytest.raises(TopologyError) as err:
        resolve([sub], {"left": 4, "right": 6})
    assert err.value.code == INVALID_TOPOLOGY
    assert "left=4, right=6" in str(err.value)


def test_kafka_checks_copartitioning_only_with_repartition_topics() -> None:
    # RepartitionTopics.setup quirk (docs/kafka-differences.md T1): without any repartition topic Kafka skips the check
    # and builds max tasks.
    sub = SubtopologySpec(0, ("left", "right"), copartition_groups=(("left", "right"),))
    (resolved,) = resolve([sub], {"left": 4, "right": 6}, kafka_compat=True).subtopologies
    assert resolved.num_tasks == 6
    with_repartition = [sub, SubtopologySpec(1, ("x",), sink_topics=("rep",)), SubtopologySpec(2, ("rep",))]
    with pytest.raises(TopologyError):
        resolve(with_repartition, {"left": 4, "right": 6, "x": 2}, {"rep": None}, kafka_compat=True)


def test_copartitioning_resizes_repartition_topics_to_the_external_count() -> None:
    subs = [
        SubtopologySpec(0, ("small",), sink_topics=("rep",)),
        SubtopologySpec(1, ("rep", "table"), copartition_groups=(("rep", "table"),)),
    ]
    result = resolve(subs, {"small": 2, "table": 6}, {"rep": None})
    assert result.repartition_partition_counts == {"rep": 6}
    assert result.subtopologies[1].num_tasks == 6


def test_fixed_repartition_count_conflicting_with_its_copartitioned_topic_fails() -> None:
    subs = [
        SubtopologySpec(0, ("small",), sink_topics=("rep",)),
        SubtopologySpec(1, ("rep", "table"), copartition_groups=(("rep", "table"),)),
    ]
    with pytest.raises(TopologyError, match="fixed partition count of 3"):
        resolve(subs, {"small": 2, "table": 6}, {"rep": 3})


def test_all_internal_group_uses_the_fixed_count_or_the_max() -> None:
    subs = [
        SubtopologySpec(0, ("a",), sink_topics=("r1",)),
        SubtopologySpec(1, ("b",), sink_topics=("r2",)),
        SubtopologySpec(2, ("r1", "r2"), copartition_groups=(("r1", "r2"),)),
    ]
    assert resolve(subs, {"a": 2, "b": 5}, {"r1": None, "r2": None}).repartition_partition_counts == {
        "r1": 5, "r2": 5}
    assert resolve(subs, {"a": 2, "b": 5}, {"r1": 4, "r2": None}).repartition_partition_counts == {
        "r1": 4, "r2": 4}
    with pytest.raises(TopologyError, match="fixed partition counts"):
        resolve(subs, {"a": 2, "b": 5}, {"r1": 4, "r2": 3})


def test_groups_sharing_a_topic_merge() -> None:
    subs = [
        SubtopologySpec(0, ("a", "b", "c"), copartition_groups=(("a", "b"), ("b", "c"))),
    ]
    with pytest.raises(TopologyError, match="a=2, b=2, c=3"):
        resolve(subs, {"a": 2, "b": 2, "c": 3})


def test_a_topic_read_by_two_subtopologies_is_invalid() -> None:
    with pytest.raises(TopologyError, match="read by subtopologies 0 and 1"):
        resolve([SubtopologySpec(0, ("t",)), SubtopologySpec(1, ("t",))], {"t": 1})


def test_declared_repartition_topics_nobody_reads_are_ignored() -> None:
    result = resolve([SubtopologySpec(0, ("in",))], {"in": 2}, {"unused": None})
    assert result.repartition_partition_counts == {}
