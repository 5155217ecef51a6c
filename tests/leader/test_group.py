"""The leader end to end over GROUP.json, against the expectations of Kafka's StreamsPartitionAssignorTest."""

from __future__ import annotations

from typing import Any

import pytest

from taskassign.formats.group import parse_group
from taskassign.ids import TaskId
from taskassign.leader.group import FUTURE_PROCESS_ID, GroupRebalanceResult, rebalance_group
from taskassign.wire import AssignmentInfo, AssignorError, HostInfo, SubscriptionInfo
from taskassign.wire.versions import NO_FOLLOWUP_MS
from tests.group_helpers import RR, group, member, member_json, v
from tests.helpers import PID, PID_1, PID_2, PID_3

T = TaskId.parse


def run(doc: dict[str, Any], assignor: str = RR) -> GroupRebalanceResult:
    return rebalance_group(parse_group(doc), assignor)


def infos(result: GroupRebalanceResult) -> dict[str, AssignmentInfo]:
    return {m: o.info for m, o in result.members.items()}


@pytest.mark.parametrize(("low", "high"), [(1, 2), (1, 3), (2, 3)])
def test_every_member_gets_the_lowest_version(low: int, high: int) -> None:
    result = run(group([member("consumer1", v(low, PID_1)), member("consumer2", v(high, PID_2))]))
    assert {i.version for i in infos(result).values()} == {low}
    assert result.versions.min_supported == -1  # a v1/v2 member cannot tell its latest version
    assert result.error_code is AssignorError.NONE


def test_v7_v10_v11_group_speaks_v7_and_keeps_followups_but_v5_drops_them() -> None:
    members = [member("a", v(7, PID_1)), member("b", v(10, PID_2)), member("c", v(11, PID_3))]
    result = run(group(members), "tests.group_helpers:FollowupAssignor")
    assert {(i.version, i.commonly_supported_version) for i in infos(result).values()} == {(7, 11)}
    assert {i.next_rebalance_ms for i in infos(result).values()} == {5_000}
    older = run(group([*members, member("d", v(5, PID[4]))]), "tests.group_helpers:FollowupAssignor")
    assert {i.version for i in infos(older).values()} == {5}
    assert {i.next_rebalance_ms for i in infos(older).values()} == {NO_FOLLOWUP_MS}  # not on the wire below v7
    assert not older.stable  # the leader still wanted a follow-up
    assert "upgrades from 5" in older.members["d"].reaction.reason  # it supports 11 like everyone


def test_members_react_to_versions_like_kafka() -> None:
    result = run(group([member("old", v(10, PID_1)), member("new", v(11, PID_2))]))
    old, new = result.members["old"].reaction, result.members["new"].reaction
    assert (old.next_used_version, old.next_rebalance_ms) == (11, 0) and "upgrades" in old.reason
    assert (new.next_used_version, new.next_rebalance_ms) == (11, 0) and "older member" in new.reason


def test_future_member_triggers_version_probing_and_gets_tasks() -> None:
    future = SubscriptionInfo(12, None, 12)
    result = run(group([member("current", v(11, PID_1)), member("future", future)], partitions=4))
    assert result.versions.version_probing and result.versions.future_version == 12
    assert not result.stable
    assert result.members["future"].process_id == FUTURE_PROCESS_ID
    assert {i.version for i in infos(result).values()} == {11}
    assert sorted(infos(result)["future"].active_tasks + infos(result)["current"].active_tasks) == \
        [T("0_0"), T("0_1"), T("0_2"), T("0_3")]


def test_only_future_members_share_one_client_and_interleave() -> None:
    future = SubscriptionInfo(12, None, 12)
    result = run(group([member("consumer1", future), member("consumer2", future)],
                       configs={"probing.rebalance.interval.ms": 60_000}), "tests.group_helpers:ProbingAssignor")
    assert {o.process_id for o in result.members.values()} == {FUTURE_PROCESS_ID}
    assert {(i.version, i.commonly_supported_version) for i in infos(result).values()} == {(11, 11)}
    assert infos(result)["consumer1"].active_tasks == (T("0_0"), T("0_2"))
    assert infos(result)["consumer2"].active_tasks == (T("0_1"),)
    # the leader is folded into the future client, so it cannot put the probing deadline anywhere
    assert {i.next_rebalance_ms for i in infos(result).values()} == {NO_FOLLOWUP_MS}
    assert any("future-version subscription" in w for w in result.warnings)


def test_future_member_next_to_a_v1_or_v2_member_is_an_assignment_error() -> None:
    for old in (1, 2):
        result = run(group([member("old", v(old, PID_1)), member("future", SubscriptionInfo(12, None, 12))]))
        assert result.error_code is AssignorError.ASSIGNMENT_ERROR
        assert {(i.version, i.error_code) for i in infos(result).values()} == {(11, 3)}


def test_shutdown_request_reaches_everyone() -> None:
    result = run(group([member("a", v(11, PID_1, error_code=4)), member("b", v(11, PID_2))]))
    assert result.error_code is AssignorError.SHUTDOWN_REQUESTED
    assert all(i.error_code == 4 and i.version == 11 and not i.active_tasks for i in infos(result).values())
    assert "shuts down" in result.members["b"].reaction.reason


def test_missing_source_topic_is_incomplete_metadata() -> None:
    doc = group([member("a", v(11, PID_1))])
    doc["topology"]["subtopologies"][0]["source_topics"].append("not-there")
    result = run(doc)
    assert result.error_code is AssignorError.INCOMPLETE_SOURCE_TOPIC_METADATA
    assert any("not-there" in w for w in result.warnings)


def test_no_temporary_standby_for_a_member_whose_tasks_are_withheld() -> None:
    members = [member("consumer10", v(11, PID_1, {}), owned=[("topic1", 0), ("topic1", 2)]),
               member("consumer11", v(11, PID_1, {}), owned=[("topic1", 1), ("topic1", 3)]),
               member("consumer20", v(11, PID_2))]
    result = run(group(members, partitions=4))
    info20 = infos(result)["consumer20"]
    assert info20.active_tasks == () and info20.standby_tasks == ()
    assert result.members["consumer20"].consumer.withheld == (T("0_1"), T("0_3"))
    assert info20.next_rebalance_ms == 0 and result.members["consumer20"].reaction.next_rebalance_ms == 0
    assert result.members["consumer20"].assignment.topic_partitions() == ()


def test_revoked_tasks_trigger_an_immediate_rebalance_and_stateless_ones_are_no_standbys() -> None:
    everything = [("topic1", 0), ("topic1", 1), ("topic1", 2)]
    members = [member("consumer1", v(11, PID_1), owned=everything),
               member("consumer2", v(11, PID_1, {"0_0": 0, "0_1": 0, "0_2": 0}))]
    result = run(group(members), "tests.group_helpers:RoundRobinAssignor")
    assert result.members["consumer1"].assignment.topic_partitions() != tuple(everything)
    info2 = infos(result)["consumer2"]
    assert info2.active_tasks == () and info2.standby_tasks == () and info2.next_rebalance_ms == 0
    assert result.members["consumer2"].reaction.next_rebalance_ms == 0


def test_active_tasks_are_parallel_to_sorted_partitions() -> None:
    doc = group([member("consumer10", v(11, PID_1)), member("consumer11", v(11, PID_1))], partitions=4)
    doc["topology"]["subtopologies"].append({"id": 1, "source_topics": ["topic2"]})
    doc["topics"]["topic2"] = {"partitions": 4}
    result = run(doc)
    a10 = result.members["consumer10"]
    assert a10.info.active_tasks == (T("0_0"), T("0_2"), T("1_0"), T("1_2"))
    assert a10.assignment.topic_partitions() == (("topic1", 0), ("topic1", 2), ("topic2", 0), ("topic2", 2))


def test_partitions_by_host_and_standby_partitions_by_host() -> None:
    members = [member("consumer1", v(11, PID_1, user_endpoint="localhost:8080")),
               member("consumer2", v(11, PID_2, user_endpoint="other:9090"))]
    result = run(group(members, stateful=True, configs={"num.standby.replicas": 1}))
    info = infos(result)["consumer1"]
    assert info == AssignmentInfo.decode(result.members["consumer1"].assignment.user_data or b"")
    active = info.partitions_by_host_map()
    standby = info.standby_partitions_by_host_map()
    me, other = HostInfo("localhost", 8080), HostInfo("other", 9090)
    assert active[me] == standby[other] and active[other] == standby[me]
    assert set(active[me]) | set(active[other]) == {("topic1", 0), ("topic1", 1), ("topic1", 2)}
    assert infos(result)["consumer2"].partitions_by_host == info.partitions_by_host  # everyone gets the same maps
    v1 = run(group([member("consumer1", v(1, PID_1)), member("c2", v(11, PID_2, user_endpoint="h:1"))]))
    assert all(not i.partitions_by_host for i in infos(v1).values())


def test_probing_deadline_goes_to_the_first_thread_of_the_leader_client() -> None:
    members = [member("b-2", v(11, PID_2)), member("a-1", v(11, PID_1)), member("a-2", v(11, PID_1))]
    doc = group(members, leader="a-2", configs={"probing.rebalance.interval.ms": 60_000})
    result = run(doc, "tests.group_helpers:ProbingAssignor")
    deadlines = {m: i.next_rebalance_ms for m, i in infos(result).items()}
    assert deadlines == {"b-2": NO_FOLLOWUP_MS, "a-1": 61_000, "a-2": NO_FOLLOWUP_MS}
    assert result.members["a-1"].reaction.next_rebalance_ms == 61_000


def test_task_assignment_exception_keeps_previous_or_is_an_error_with_kafka_compat() -> None:
    doc = group([member("a", v(11, PID_1), owned=[("topic1", 0)])])
    kept = run(doc, "tests.group_helpers:GivingUpAssignor")
    assert kept.error_code is AssignorError.NONE and infos(kept)["a"].active_tasks == (T("0_0"),)
    assert infos(kept)["a"].next_rebalance_ms == 0
    doc["configs"] = {"taskassign.kafka.compat": True}
    compat = run(doc, "tests.group_helpers:GivingUpAssignor")
    assert compat.error_code is AssignorError.ASSIGNMENT_ERROR


def test_invalid_assignment_makes_the_leader_fail_without_sending_anything() -> None:
    result = run(group([member("a", v(11, PID_1)), member("b", v(11, PID_2))]),
                 "tests.group_helpers:DuplicatingAssignor")
    assert result.failure is not None and "ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES" in result.failure
    assert not result.members and not result.stable


def test_lags_and_previous_tasks_come_from_offset_sums_and_owned_partitions() -> None:
    members = [member_json("a", v(11, PID_1, {"0_0": -2, "0_1": 40}), owned=[("topic1", 0)]),
               member("b", v(6, PID_2, {"0_1": -2, "0_2": 5}))]  # v6: prev -> -2, standby -> -3
    result = run(group(members, stateful=True), "identity")
    assert result.state is not None
    a, b = result.state.clients[PID_1], result.state.clients[PID_2]
    assert list(a.previous_active_tasks) == [T("0_0")] and list(a.previous_standby_tasks) == [T("0_1")]
    assert a.lag_for(T("0_1")) == 60 and a.lag_for(T("0_2")) == 100
    assert b.lag_for(T("0_2")) == -3 and list(b.previous_active_tasks) == [T("0_1")]
    assert a.host_info is None and result.stable


def test_unknown_tasks_in_offset_sums_are_reported_and_ignored() -> None:
    result = run(group([member("a", v(11, PID_1, {"7_7": 3}))]))
    assert any("7_7" in w for w in result.warnings)


def test_owned_partitions_mapping_to_no_task_make_the_leader_fail() -> None:
    result = run(group([member("a", v(11, PID_1), owned=[("elsewhere", 0)], topics=["topic1", "elsewhere"])]))
    assert result.failure is not None and "IllegalStateException" in result.failure


def test_inconsistent_racks_are_reported() -> None:
    members = [member("a1", v(11, PID_1), rack="r1"), member("a2", v(11, PID_1), rack="r2"),
               member("b", v(11, PID_2), rack="r1")]
    result = run(group(members))
    assert any("report different racks (r1, r2)" in w for w in result.warnings)
    assert result.state is not None and result.state.clients[PID_1].rack_id == "r1"
    partial = run(group([member("a", v(11, PID_1), rack="r1"), member("b", v(11, PID_2))]))
    assert any("no rack" in w for w in partial.warnings)
    assert not run(group([member("a", v(11, PID_1))])).warnings


def test_end_offsets_source_changelogs_new_changelogs_and_unknown() -> None:
    doc = group([member("a", v(11, PID_1, {"0_0": 30, "1_0": 5}))], partitions=1)
    doc["topology"]["subtopologies"] = [
        {"id": 0, "source_topics": ["topic1"], "stores": ["s"], "changelog_topics": ["topic1"]},  # source table
        {"id": 1, "source_topics": ["topic2"], "stores": ["s2"], "changelog_topics": ["app-s2-changelog"]},
    ]
    doc["topics"] = {"topic1": {"partitions": [{"partition": 0, "end_offset": 999, "committed_offset": 40}]},
                     "topic2": {"partitions": 1}}  # app-s2-changelog is created by this rebalance
    result = run(doc, "identity")
    assert result.state is not None
    ends = result.state.changelog_end_offset_sums
    assert ends[T("0_0")] == 40 and ends[T("1_0")] == 0
    info = result.state.tasks[T("0_0")]
    assert [(p.topic, p.is_source, p.is_changelog) for p in info.topic_partitions] == [("topic1", True, True)]
    assert result.state.clients[PID_1].lag_for(T("0_0")) == 10
    unknown = run({**doc, "end_offsets_unknown": True}, "identity")
    assert unknown.state is not None and unknown.state.clients[PID_1].lag_for(T("0_0")) == -3


def _repartitioned(members: list[dict[str, Any]], *, fixed: int | None = None, **top: Any) -> dict[str, Any]:
    """Subtopology 0 reads topic1 (3 partitions) and writes ``rep``; subtopology 1 joins ``rep`` with
    ``lookup`` (3 partitions): ``rep`` is sized by the leader unless ``fixed``."""
    doc = group(members, **top)
    subs = doc["topology"]["subtopologies"]
    subs[0]["sink_topics"] = ["rep"]
    subs.append({"id": 1, "source_topics": ["rep", "lookup"], "copartition_groups": [["rep", "lookup"]]})
    doc["topology"]["repartition_topics"] = {"rep": fixed}
    doc["topics"]["lookup"] = {"partitions": 3}
    return doc


def test_repartition_topics_are_sized_by_the_leader() -> None:
    result = run(_repartitioned([member("a", v(11, PID_1)), member("b", v(11, PID_2))]))
    assert result.error_code is AssignorError.NONE and result.failure is None
    assigned = {t for i in infos(result).values() for t in i.active_tasks}  # one entry per partition
    assert assigned == {T(s) for s in ("0_0", "0_1", "0_2", "1_0", "1_1", "1_2")}
    partitions = sorted(tp for o in result.members.values() for tp in o.assignment.topic_partitions())
    assert [tp for tp in partitions if tp[0] == "rep"] == [("rep", 0), ("rep", 1), ("rep", 2)]


def test_a_repartition_topic_takes_the_count_of_its_external_join_partner() -> None:
    doc = _repartitioned([member("a", v(11, PID_1))])
    doc["topics"]["lookup"] = {"partitions": 4}
    result = run(doc)
    assert result.failure is None
    assert {t for i in infos(result).values() for t in i.active_tasks if t.subtopology == 1} == {
        T(f"1_{p}") for p in range(4)}


def test_join_inputs_that_are_not_copartitioned_make_the_leader_fail() -> None:
    doc = _repartitioned([member("a", v(11, PID_1))])
    subs = doc["topology"]["subtopologies"]
    subs[1]["source_topics"].append("lookup2")
    subs[1]["copartition_groups"] = [["rep", "lookup", "lookup2"]]
    doc["topics"]["lookup2"] = {"partitions": 4}
    result = run(doc)
    assert result.failure is not None and "not co-partitioned" in result.failure and not result.members


def test_a_fixed_repartition_count_that_disagrees_with_its_join_partner_fails() -> None:
    result = run(_repartitioned([member("a", v(11, PID_1))], fixed=5))
    assert result.failure is not None and "fixed partition count of 5" in result.failure


def test_a_repartition_topic_nobody_can_size_is_an_assignment_error() -> None:
    doc = _repartitioned([member("a", v(11, PID_1))])
    doc["topology"]["subtopologies"][0]["sink_topics"] = []
    result = run(doc)
    assert result.error_code is AssignorError.ASSIGNMENT_ERROR
    assert all(i.error_code == 3 for i in infos(result).values())


def test_an_existing_repartition_topic_with_the_wrong_count_fails() -> None:
    doc = _repartitioned([member("a", v(11, PID_1))])
    doc["topics"]["rep"] = {"partitions": 2}
    result = run(doc)
    assert result.failure is not None and "exists with 2 partitions, the topology needs 3" in result.failure
    doc["topics"]["rep"] = {"partitions": [{"partition": p, "racks": ["r1"]} for p in range(3)]}
    assert run(doc).failure is None


def test_without_repartition_topics_kafka_compat_skips_the_copartition_check() -> None:
    def joined(**top: Any) -> dict[str, Any]:
        doc = group([member("a", v(11, PID_1))], **top)
        sub = doc["topology"]["subtopologies"][0]
        sub["source_topics"].append("other")
        sub["copartition_groups"] = [["topic1", "other"]]
        doc["topics"]["other"] = {"partitions": 5}
        return doc

    checked = run(joined())
    assert checked.failure is not None and "not co-partitioned" in checked.failure
    kafka = run(joined(configs={"taskassign.kafka.compat": True}))
    assert kafka.failure is None
    assert {t for i in infos(kafka).values() for t in i.active_tasks} == {T(f"0_{p}") for p in range(5)}
