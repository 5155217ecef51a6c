"""The comparison of taskassign's leader with Kafka's recorded bytes: what counts as a match, and how each
kind of difference is named."""

from __future__ import annotations

from dataclasses import replace

from taskassign.analysis.recorded_outcome import ORDER_ONLY, compare_outcome
from taskassign.ids import TaskId
from taskassign.wire import Assignment, AssignmentInfo, HostInfo
from taskassign.wire.versions import NO_FOLLOWUP_MS

A, B = HostInfo("a", 1), HostInfo("b", 2)
T00, T01, T10 = TaskId(0, 0), TaskId(0, 1), TaskId(1, 0)
BASE = AssignmentInfo(
    11, 11, active_tasks=(T00, T10), standby_tasks=((T01, (("in", 1),)),),
    partitions_by_host=((A, (("in", 0), ("rep", 0))), (B, (("in", 1),))),
    standby_partitions_by_host=((A, (("in", 1),)), (B, ())),
)


def encoded(info: AssignmentInfo, partitions: tuple[tuple[str, int], ...] = (("in", 0), ("rep", 0))) -> bytes:
    return Assignment.of(list(partitions), info.encode()).encode()


def only(kafka: AssignmentInfo, mine: AssignmentInfo) -> tuple[bool, tuple[str, ...]]:
    comparison = compare_outcome({"m": encoded(kafka)}, {"m": encoded(mine)})
    (member,) = comparison.members
    assert comparison.all_match is member.matches
    return member.matches, member.differences


def test_identical_bytes_match() -> None:
    assert only(BASE, BASE) == (True, ())


def test_a_follow_up_at_another_time_still_matches_but_is_said() -> None:
    kafka, mine = replace(BASE, next_rebalance_ms=1_000), replace(BASE, next_rebalance_ms=2_000)
    comparison = compare_outcome({"m": encoded(kafka)}, {"m": encoded(mine)})
    assert comparison.all_match and comparison.members[0].followup_time_differs


def test_a_follow_up_where_kafka_has_none_is_a_difference() -> None:
    matches, differences = only(replace(BASE, next_rebalance_ms=NO_FOLLOWUP_MS), replace(BASE, next_rebalance_ms=0))
    assert not matches and differences == ("follow-up: Kafka none, taskassign immediately",)


def test_host_maps_in_another_order_are_an_order_only_difference() -> None:
    mine = replace(BASE, partitions_by_host=(BASE.partitions_by_host[1], BASE.partitions_by_host[0]))
    matches, differences = only(BASE, mine)
    assert not matches and len(differences) == 1 and ORDER_ONLY in differences[0]
    assert differences[0].startswith("partitions by host")


def test_other_tasks_name_both_sides() -> None:
    mine = replace(BASE, standby_tasks=((T00, (("in", 0),)),))
    matches, differences = only(BASE, mine)
    assert not matches
    assert differences == ("standby tasks: only Kafka's [0_1:[('in', 1)]]; only taskassign's [0_0:[('in', 0)]]",)


def test_versions_and_partitions_are_compared() -> None:
    kafka = encoded(BASE)
    mine = Assignment.of([("in", 0), ("rep", 1)], replace(BASE, version=10).encode()).encode()
    (member,) = compare_outcome({"m": kafka}, {"m": mine}).members
    assert "assignment version: Kafka 11, taskassign 10" in member.differences
    assert any(d.startswith("partitions: only Kafka's [rep-0]") for d in member.differences)


def test_a_member_only_one_side_answered() -> None:
    comparison = compare_outcome({"x": encoded(BASE)}, {"y": encoded(BASE)})
    assert [(m.member_id, m.matches) for m in comparison.members] == [("x", False), ("y", False)]
    assert comparison.matching == 0 and not comparison.all_match
