"""Mixed-version groups and version probing (KIP-268), and what a member does with its assignment
(``StreamsPartitionAssignor#onAssignment``): the part of a rebalance that decides the *next* one.

Leader side: every member is answered with the lowest version any member used and the highest
version every member supports; a member on a newer (future) version makes it a version-probing
rebalance, which v1/v2 members cannot take part in. Member side: a member that learns the group can
speak a newer version, or that someone is older, switches version and rejoins at once; otherwise
it follows the leader's ``next_rebalance_ms``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from taskassign.wire.assignment_info import AssignmentInfo
from taskassign.wire.subscription_info import SubscriptionInfo
from taskassign.wire.types import HostInfo
from taskassign.wire.versions import (
    EARLIEST_PROBEABLE_VERSION,
    LATEST_SUPPORTED_VERSION,
    MIN_NEXT_REBALANCE_VERSION,
    NO_FOLLOWUP_MS,
    AssignorError,
)

__all__ = ("GroupVersions", "MemberReaction", "group_versions", "member_reaction")


@dataclass(frozen=True, slots=True)
class GroupVersions:
    """What the leader derives from the members' versions."""

    #: Lowest version any (non-future) member used: every AssignmentInfo is encoded with it.
    min_received: int
    #: Lowest latest-supported version (-1 if a v1/v2 member is present): the commonly supported one.
    min_supported: int
    #: The highest version above LATEST_SUPPORTED_VERSION some member used, or None.
    future_version: int | None

    @property
    def version_probing(self) -> bool:
        """A newer member is present: this rebalance only tells it which version to use."""
        return self.future_version is not None

    @property
    def probing_impossible(self) -> bool:
        """A future member next to a v1/v2 member: Kafka's leader gives up (ASSIGNMENT_ERROR)."""
        return self.future_version is not None and self.min_received < EARLIEST_PROBEABLE_VERSION


def group_versions(infos: Iterable[SubscriptionInfo]) -> GroupVersions:
    """Kafka's leader bookkeeping over the decoded subscriptions (``StreamsPartitionAssignor#assign``, KIP-268)."""
    min_received = min_supported = LATEST_SUPPORTED_VERSION
    future: int | None = None
    for info in infos:
        if info.is_future:
            future = max(future or 0, info.version)
        else:
            min_received = min(min_received, info.version)
        min_supported = min(min_supported, info.latest_supported_version)
    return GroupVersions(min_received, min_supported, future)


@dataclass(frozen=True, slots=True)
class MemberReaction:
    """What a member does after receiving its assignment."""

    #: The SubscriptionInfo version it sends at its next join.
    next_used_version: int
    #: When it rejoins: 0 = at once, an epoch-ms deadline, or None = no follow-up scheduled.
    next_rebalance_ms: int | None
    #: Why, in one sentence.
    reason: str
    #: The error the member acts on (NONE when the assignment is applied).
    error: str = "NONE"


def member_reaction(used_version: int, endpoint: HostInfo | None, info: AssignmentInfo) -> MemberReaction:
    """Kafka's ``onAssignment`` decisions for a member that sent ``used_version``."""
    if info.error_code != AssignorError.NONE:
        error = AssignorError.describe(info.error_code)
        effect = {
            AssignorError.INCOMPLETE_SOURCE_TOPIC_METADATA: "the thread fails with MissingSourceTopicException",
            AssignorError.ASSIGNMENT_ERROR: "the thread fails with TaskAssignmentException",
            AssignorError.SHUTDOWN_REQUESTED: "the thread shuts down (the application was asked to stop)",
            AssignorError.VERSION_PROBING: "the member only logs it (legacy code)",
        }.get(info.error_code, "the thread fails: unknown error code")  # type: ignore[call-overload]
        return MemberReaction(used_version, None, f"error assignment: {effect}", error)
    if info.version > used_version:
        return MemberReaction(used_version, None, f"received version {info.version} above its own {used_version}: "
                                                  "the member fails with TaskAssignmentException", "ASSIGNMENT_ERROR")
    if info.commonly_supported_version > LATEST_SUPPORTED_VERSION:
        return MemberReaction(used_version, None, "commonly supported version above the latest this member knows: "
                                                  "it fails with TaskAssignmentException", "ASSIGNMENT_ERROR")
    encoded = info.next_rebalance_ms if info.version >= MIN_NEXT_REBALANCE_VERSION else NO_FOLLOWUP_MS
    if info.version >= EARLIEST_PROBEABLE_VERSION:
        if info.commonly_supported_version > used_version:
            return MemberReaction(info.commonly_supported_version, 0,
                                  f"every member supports version {info.commonly_supported_version}: "
                                  f"upgrades from {used_version} and rejoins at once")
        if info.version < used_version:
            return MemberReaction(info.commonly_supported_version, 0,
                                  f"an older member is present: downgrades from {used_version} to "
                                  f"{info.commonly_supported_version} and rejoins at once")
    if endpoint is not None and info.partitions_by_host and endpoint not in info.partitions_by_host_map():
        return MemberReaction(used_version, 0, f"its endpoint {endpoint} is missing from the host map: "
                                               "rejoins at once")
    if encoded == 0:
        return MemberReaction(used_version, 0, "the leader asked for an immediate follow-up rebalance")
    if encoded < NO_FOLLOWUP_MS:
        return MemberReaction(used_version, encoded, f"the leader asked for a follow-up rebalance at {encoded}")
    return MemberReaction(used_version, None, "stable: no follow-up rebalance")
