"""The consumer group protocol envelope: ``ConsumerProtocolSubscription`` and ``...Assignment``
(``ConsumerProtocolSubscription`` / ``ConsumerProtocolAssignment``), which carry Kafka Streams' SubscriptionInfo /
AssignmentInfo as their userData.

Both start with an int16 version. The consumer writes version 3; a higher version is read with the
version-3 schema (fields are only ever appended) and its extra bytes are ignored, as Kafka does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from taskassign.errors import EncodeError
from taskassign.wire.codec import (
    INT16,
    INT32,
    KSTRING,
    NULLABLE_KBYTES,
    NULLABLE_KSTRING,
    Array,
    DecodableMessage,
    FieldProblem,
    Reader,
    Struct,
    Writer,
    encode_message,
    field,
    read_fields,
    read_version,
    write_fields,
)
from taskassign.wire.types import TopicPartition
from taskassign.wire.versions import CONSUMER_PROTOCOL_LATEST_VERSION

__all__ = ("Assignment", "Subscription", "TopicPartitions", "group_by_topic")

#: A topic and some of its partitions, as the consumer protocol groups them.
TopicPartitions = tuple[str, tuple[int, ...]]

_TOPIC_PARTITIONS = Struct(
    (("topic", KSTRING), ("partitions", Array(INT32))),
    lambda t, ps: (t, ps),
    lambda e: (e[0], tuple(e[1])),
)

SUBSCRIPTION_FIELDS = (
    field("topics", "0+", Array(KSTRING)),
    field("user_data", "0+", NULLABLE_KBYTES),
    field("owned_partitions", "1+", Array(_TOPIC_PARTITIONS)),
    field("generation_id", "2+", INT32),
    field("rack_id", "3+", NULLABLE_KSTRING),
)

ASSIGNMENT_FIELDS = (
    field("assigned_partitions", "0+", Array(_TOPIC_PARTITIONS)),
    field("user_data", "0+", NULLABLE_KBYTES),
)


def group_by_topic(partitions: Iterable[TopicPartition]) -> tuple[TopicPartitions, ...]:
    """Group ``(topic, partition)`` pairs by topic in order of first appearance (Kafka's assignment
    serialiser; the subscription's client sorts first, so both agree on sorted input)."""
    groups: dict[str, list[int]] = {}
    for topic, partition in partitions:
        groups.setdefault(topic, []).append(partition)
    return tuple((t, tuple(ps)) for t, ps in groups.items())


def _flatten(groups: tuple[TopicPartitions, ...]) -> tuple[TopicPartition, ...]:
    return tuple((topic, p) for topic, ps in groups for p in ps)


def _kstring_size(text: str) -> int:
    return 2 + len(text.encode("utf-8", "surrogatepass"))


def _check_version(message: str, version: int) -> None:
    if not 0 <= version <= 0x7FFF:
        raise EncodeError(message, "version", f"version must be 0 to 32767, got {version}", version=version)


def _read_versioned(table: Any, r: Reader) -> tuple[int, dict[str, Any]]:
    version = read_version(r, INT16)
    if version < 0:
        raise FieldProblem(r.base, f"negative version {version}").under("version")
    return version, read_fields(table, min(version, CONSUMER_PROTOCOL_LATEST_VERSION), r)


def _encode(message: str, table: Any, value: Any) -> bytes:
    _check_version(message, value.version)

    def write(w: Writer) -> None:
        INT16.write(w, value.version)
        write_fields(table, min(value.version, CONSUMER_PROTOCOL_LATEST_VERSION), w, value)

    return encode_message(message, value.version, write)


@dataclass(frozen=True, slots=True)
class Subscription(DecodableMessage):
    """A member's JoinGroup metadata for the ``stream`` protocol."""

    version: int = CONSUMER_PROTOCOL_LATEST_VERSION
    topics: tuple[str, ...] = ()
    #: Kafka Streams puts the encoded SubscriptionInfo here.
    user_data: bytes | None = None
    #: v1+: the partitions the member owns now, grouped by topic.
    owned_partitions: tuple[TopicPartitions, ...] = ()
    #: v2+: unused by Kafka Streams.
    generation_id: int = -1
    #: v3+: ``client.rack``; an empty string counts as no rack.
    rack_id: str | None = None

    MESSAGE = "ConsumerProtocolSubscription"

    @classmethod
    def of(
        cls,
        topics: Iterable[str],
        user_data: bytes | None,
        owned: Iterable[TopicPartition] = (),
        *,
        rack_id: str | None = None,
        generation_id: int = -1,
        version: int = CONSUMER_PROTOCOL_LATEST_VERSION,
    ) -> Subscription:
        """What Kafka's consumer sends: topics sorted, owned partitions sorted and grouped by topic."""
        return cls(version, tuple(sorted(topics)), user_data, group_by_topic(sorted(owned)), generation_id, rack_id)

    def owned_topic_partitions(self) -> tuple[TopicPartition, ...]:
        return _flatten(self.owned_partitions)

    def user_data_offset(self) -> int:
        """Byte offset of the userData bytes in the encoded message (for nested error offsets)."""
        return 2 + 4 + sum(_kstring_size(t) for t in self.topics) + 4

    @property
    def rack(self) -> str | None:
        """The rack as the leader uses it: absent for null or an empty string."""
        return self.rack_id or None

    def encode(self) -> bytes:
        return _encode(self.MESSAGE, SUBSCRIPTION_FIELDS, self)

    @classmethod
    def _read(cls, r: Reader) -> Subscription:
        version, values = _read_versioned(SUBSCRIPTION_FIELDS, r)
        return cls(version, **values)


@dataclass(frozen=True, slots=True)
class Assignment(DecodableMessage):
    """The leader's SyncGroup answer for one member."""

    version: int = CONSUMER_PROTOCOL_LATEST_VERSION
    assigned_partitions: tuple[TopicPartitions, ...] = ()
    #: Kafka Streams puts the encoded AssignmentInfo here.
    user_data: bytes | None = None

    MESSAGE = "ConsumerProtocolAssignment"

    @classmethod
    def of(cls, partitions: Iterable[TopicPartition], user_data: bytes | None,
           version: int = CONSUMER_PROTOCOL_LATEST_VERSION) -> Assignment:
        return cls(version, group_by_topic(partitions), user_data)

    def topic_partitions(self) -> tuple[TopicPartition, ...]:
        return _flatten(self.assigned_partitions)

    def user_data_offset(self) -> int:
        """Byte offset of the userData bytes in the encoded message (for nested error offsets)."""
        return 2 + 4 + sum(_kstring_size(t) + 4 + 4 * len(ps) for t, ps in self.assigned_partitions) + 4

    def encode(self) -> bytes:
        return _encode(self.MESSAGE, ASSIGNMENT_FIELDS, self)

    @classmethod
    def _read(cls, r: Reader) -> Assignment:
        version, values = _read_versioned(ASSIGNMENT_FIELDS, r)
        return cls(version, **values)
