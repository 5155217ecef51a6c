"""Small value types the wire messages carry: topic partitions and interactive-query hosts."""

from __future__ import annotations

import re
from typing import NamedTuple

from taskassign.ids import java_string_hash, to_int32

__all__ = ("HostInfo", "TopicPartition", "sort_partitions", "topic_partition_java_hash")

#: ``(topic, partition)``; sorts like Kafka's assignor (topic string, then partition number).
TopicPartition = tuple[str, int]

_HOST_PORT = re.compile(r"^(?P<host>.+):(?P<port>[0-9]{1,5})$")


class HostInfo(NamedTuple):
    """An ``application.server`` endpoint (Kafka's ``HostInfo``)."""

    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> HostInfo:
        """``"host:port"`` -> HostInfo; ValueError names the text (Kafka's config check)."""
        match = _HOST_PORT.match(text)
        if match is None or int(match["port"]) > 65535:
            raise ValueError(f"{text!r} is not 'host:port' (Kafka's application.server format)")
        return cls(match["host"], int(match["port"]))

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"

    def java_hash(self) -> int:
        """Kafka's ``HostInfo.hashCode``: ``31 * host.hashCode() + port`` (the host maps are HashMaps)."""
        return to_int32(31 * java_string_hash(self.host) + self.port)


def topic_partition_java_hash(tp: TopicPartition) -> int:
    """Kafka's ``TopicPartition.hashCode``: ``31 * (31 + partition) + topic.hashCode()`` (every partition set
    the leader writes is a HashSet, so this decides the order on the wire)."""
    return to_int32(31 * (31 + tp[1]) + java_string_hash(tp[0]))


def sort_partitions(partitions: set[TopicPartition] | frozenset[TopicPartition]) -> tuple[TopicPartition, ...]:
    return tuple(sorted(partitions))
