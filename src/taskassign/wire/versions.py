"""Version constants of Kafka Streams' assignment protocol (Kafka's ``StreamsAssignmentProtocolVersions``).

Kafka's bump checklist (StreamsAssignmentProtocolVersions), kept here because the same steps apply
to this port when Kafka adds version 12:

1. Raise ``LATEST_SUPPORTED_VERSION``.
2. SubscriptionInfo: add the new fields to its field table with ``"12+"`` (fields are only appended;
   the first two int32s, version and latest supported version, must never move: version probing of
   older leaders reads nothing else).
3. AssignmentInfo: add the new version to its field table and to the decoder's accepted range.
4. Leader: anything the new fields carry (and what older members lose) in the group rebalance;
   member side: the probing reaction in ``probing.py``.
5. Tests: a round trip for the new version, the mixed-version group tests, the hex examples.
"""

from __future__ import annotations

import enum

__all__ = (
    "CONSUMER_PROTOCOL_LATEST_VERSION",
    "EARLIEST_PROBEABLE_VERSION",
    "LATEST_SUPPORTED_VERSION",
    "MIN_CLIENT_TAGS_VERSION",
    "MIN_NAMED_TOPOLOGY_VERSION",
    "MIN_NEXT_REBALANCE_VERSION",
    "MIN_PARTITIONS_BY_HOST_VERSION",
    "MIN_VERSION_OFFSET_SUM_SUBSCRIPTION",
    "NO_FOLLOWUP_MS",
    "STREAMS_PROTOCOL_NAME",
    "UNKNOWN_VERSION",
    "AssignorError",
)

#: Highest SubscriptionInfo / AssignmentInfo version this code speaks.
LATEST_SUPPORTED_VERSION = 11
#: First version that carries the sender's latest supported version (version probing works from here).
EARLIEST_PROBEABLE_VERSION = 3
#: First version whose TaskIds can carry a named topology.
MIN_NAMED_TOPOLOGY_VERSION = 10
#: First SubscriptionInfo version that carries the client's tags (``client.tag.*``).
MIN_CLIENT_TAGS_VERSION = 11
#: First subscription version with per-task offset sums instead of previous/standby task sets.
MIN_VERSION_OFFSET_SUM_SUBSCRIPTION = 7
#: First AssignmentInfo version with ``nextRebalanceMs`` (follow-up deadlines).
MIN_NEXT_REBALANCE_VERSION = 7
#: First AssignmentInfo version with ``partitionsByHost`` (interactive-query metadata).
MIN_PARTITIONS_BY_HOST_VERSION = 2
#: "Unknown version": the decoded latest supported version of a v1/v2 subscription.
UNKNOWN_VERSION = -1
#: Highest consumer-protocol (Subscription / Assignment envelope) version; the consumer writes it.
CONSUMER_PROTOCOL_LATEST_VERSION = 3
#: ``nextRebalanceMs`` meaning "no follow-up requested" (Long.MAX_VALUE).
NO_FOLLOWUP_MS = 2**63 - 1
#: The name Kafka Streams registers its assignor under in the consumer group protocol.
STREAMS_PROTOCOL_NAME = "stream"


class AssignorError(enum.IntEnum):
    """The int32 error code an AssignmentInfo carries (Kafka's ``AssignorError``)."""

    NONE = 0
    INCOMPLETE_SOURCE_TOPIC_METADATA = 1
    VERSION_PROBING = 2
    ASSIGNMENT_ERROR = 3
    SHUTDOWN_REQUESTED = 4

    @classmethod
    def describe(cls, code: int) -> str:
        """The code's name, or ``UNKNOWN(<code>)`` for a code this version does not know."""
        try:
            return cls(code).name
        except ValueError:
            return f"UNKNOWN({code})"
