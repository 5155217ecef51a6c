from __future__ import annotations

from taskassign.ids import ProcessId
from taskassign.wire import AssignmentInfo, AssignorError, HostInfo, SubscriptionInfo
from taskassign.wire.probing import group_versions, member_reaction

PID = ProcessId.of_ints(0, 1)


def test_group_versions() -> None:
    infos = [SubscriptionInfo.of(7, PID, {}), SubscriptionInfo.of(10, PID, {}), SubscriptionInfo(12, None, 12)]
    g = group_versions(infos)
    assert (g.min_received, g.min_supported, g.future_version, g.version_probing) == (7, 11, 12, True)
    assert not g.probing_impossible
    assert group_versions([SubscriptionInfo.of(2, PID, {}), SubscriptionInfo(13, None, 13)]).probing_impossible


def test_member_reactions() -> None:
    me = HostInfo("me", 1)
    stable = member_reaction(11, me, AssignmentInfo(11, 11, partitions_by_host=((me, ()),)))
    assert stable.next_rebalance_ms is None and stable.next_used_version == 11
    assert member_reaction(11, None, AssignmentInfo(11, 11, next_rebalance_ms=99)).next_rebalance_ms == 99
    assert member_reaction(11, None, AssignmentInfo(6, 11, next_rebalance_ms=0)).next_used_version == 11
    moved = member_reaction(11, me, AssignmentInfo(11, 11, partitions_by_host=((HostInfo("x", 1), ()),)))
    assert moved.next_rebalance_ms == 0 and "endpoint" in moved.reason
    assert member_reaction(5, None, AssignmentInfo(7, 11)).error == "ASSIGNMENT_ERROR"
    assert member_reaction(2, None, AssignmentInfo(2)).next_rebalance_ms is None  # no probing below v3
    err = member_reaction(11, None, AssignmentInfo.error(AssignorError.INCOMPLETE_SOURCE_TOPIC_METADATA))
    assert err.error == "INCOMPLETE_SOURCE_TOPIC_METADATA" and "MissingSourceTopic" in err.reason
