"""Kafka's wire formats for Streams rebalances: the consumer-protocol envelope and the Streams
SubscriptionInfo / AssignmentInfo it carries, versions 1-11, byte for byte (docs/wire.md).

Every decoder raises ``DecodeError`` (a UserInputError) naming the field and the byte offset for
any malformed input; nothing else escapes.
"""

from taskassign.wire.assignment_info import AssignmentInfo
from taskassign.wire.consumer_protocol import Assignment, Subscription
from taskassign.wire.subscription_info import SubscriptionInfo
from taskassign.wire.types import HostInfo, TopicPartition
from taskassign.wire.versions import LATEST_SUPPORTED_VERSION, NO_FOLLOWUP_MS, AssignorError

__all__ = (
    "LATEST_SUPPORTED_VERSION",
    "NO_FOLLOWUP_MS",
    "Assignment",
    "AssignmentInfo",
    "AssignorError",
    "HostInfo",
    "Subscription",
    "SubscriptionInfo",
    "TopicPartition",
)
