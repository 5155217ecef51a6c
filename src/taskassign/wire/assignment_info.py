"""Kafka Streams' ``AssignmentInfo``: what the leader tells every member, versions 1-11 (``AssignmentInfo#encode`` /
``#decode``).

It travels as the userData of the consumer-protocol Assignment: the member's active tasks (one per
assigned partition, in partition order), its standby tasks with their source partitions, the
interactive-query host maps (v2+; v5+ dictionary-coded; v6+ with standbys), an error code (v4+) and
the follow-up deadline ``next_rebalance_ms`` (v7+). Kafka writes it by hand with Java's
``DataOutputStream``, so strings are modified UTF-8 and, from v10, TaskIds carry their topology name
as UTF-16 characters.

Lists keep their wire order, so decoding and re-encoding gives the same bytes. The topic dictionary of
v5+ is rebuilt exactly as Kafka builds it: every partition of the host maps goes into one Java
``HashSet`` (in the maps' order), topics are numbered as that set first meets them, and the entries are
written in Java ``HashMap`` order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from taskassign.errors import EncodeError
from taskassign.ids import TaskId
from taskassign.internals.java_order import hash_iteration_order
from taskassign.wire.codec import (
    INT32,
    INT64,
    JCHARS,
    JUTF,
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
    task_id,
    unnamed_parts,
    write_fields,
)
from taskassign.wire.types import HostInfo, TopicPartition, topic_partition_java_hash
from taskassign.wire.versions import LATEST_SUPPORTED_VERSION, NO_FOLLOWUP_MS, UNKNOWN_VERSION, AssignorError

__all__ = ("MESSAGE", "AssignmentInfo", "HostPartitions", "StandbyTask")

MESSAGE = "AssignmentInfo"

#: A standby task and its source partitions.
StandbyTask = tuple[TaskId, tuple[TopicPartition, ...]]
#: An interactive-query host and the partitions it serves.
HostPartitions = tuple[HostInfo, tuple[TopicPartition, ...]]


def _topic_partition(value: Any) -> tuple[str, int]:
    topic, partition = value
    return (topic, partition)


_TASK_ID_V1 = Struct((("subtopology", INT32), ("partition", INT32)), task_id, unnamed_parts)
_TASK_ID_V10 = Struct(
    (("subtopology", INT32), ("partition", INT32), ("topology_name", JCHARS)),
    task_id,
    lambda t: (t.subtopology, t.partition, t.topology_name),
)
_PARTITION = Struct((("topic", JUTF), ("partition", INT32)), lambda t, p: (t, p), _topic_partition)


def _standby(task_codec: Struct) -> Array:
    return Array(Struct((("task", task_codec), ("partitions", Array(_PARTITION))),
                        lambda t, ps: (t, ps), lambda e: (e[0], e[1])))


def _host_parts(entry: Any) -> tuple[str, int, Any]:
    host, partitions = entry
    return (host.host, host.port, partitions)


_HOST_MAP_PLAIN = Array(Struct(
    (("host", JUTF), ("port", INT32), ("partitions", Array(_PARTITION))),
    lambda h, port, ps: (HostInfo(h, port), ps),
    _host_parts,
))
_DICT_ENTRY = Struct((("index", INT32), ("topic", JUTF)), lambda i, t: (i, t), lambda e: e)
_INDEXED_PARTITION = Struct((("topic_index", INT32), ("partition", INT32)), lambda i, p: (i, p), lambda e: e)
_HOST_MAP_INDEXED = Array(Struct(
    (("host", JUTF), ("port", INT32), ("partitions", Array(_INDEXED_PARTITION))),
    lambda h, port, ps: (HostInfo(h, port), ps),
    _host_parts,
))


class _DictionaryHostMaps:
    """v5+: a topic dictionary, then the host map(s) with partitions as (topic index, partition).

    v5 carries ``partitions_by_host`` only, v6+ also ``standby_partitions_by_host``.
    """

    min_size = 8

    def __init__(self, with_standby: bool) -> None:
        self.with_standby = with_standby

    def read(self, r: Reader) -> Any:
        try:
            entries = Array(_DICT_ENTRY).read(r)
        except FieldProblem as problem:
            raise problem.under("topic_dictionary") from None
        topics = dict(entries)
        names = ("partitions_by_host", "standby_partitions_by_host") if self.with_standby else ("partitions_by_host",)
        maps = []
        for name in names:
            start = r.offset
            try:
                raw = _HOST_MAP_INDEXED.read(r)
            except FieldProblem as problem:
                raise problem.under(name) from None
            maps.append(tuple((host, tuple(self._resolve(topics, ps, start, name))) for host, ps in raw))
        return tuple(maps) if self.with_standby else maps[0]

    @staticmethod
    def _resolve(topics: dict[int, str], parts: tuple[tuple[int, int], ...], start: int, name: str) -> Any:
        for index, partition in parts:
            topic = topics.get(index)
            if topic is None:
                raise FieldProblem(start, f"topic index {index} is not in the topic dictionary").under(name)
            yield (topic, partition)

    def write(self, w: Writer, value: Any) -> None:
        maps = value if self.with_standby else (value,)
        # Kafka collects every partition of the map(s) into one HashSet (Collectors.toSet, in the maps' order),
        # numbers the topics as that set first meets them, and writes the numbering in HashMap order.
        every = hash_iteration_order((tp for host_map in maps for _, partitions in host_map for tp in partitions),
                                     hash_of=topic_partition_java_hash)
        index: dict[str, int] = {}
        for topic, _ in every:
            index.setdefault(topic, len(index))
        entries = tuple((index[t], t) for t in hash_iteration_order(list(index)))
        try:
            Array(_DICT_ENTRY).write(w, entries)
        except FieldProblem as problem:
            raise problem.under("topic_dictionary") from None
        names = ("partitions_by_host", "standby_partitions_by_host")
        for name, host_map in zip(names, maps, strict=False):
            coded = tuple((host, tuple((index[t], p) for t, p in ps)) for host, ps in host_map)
            try:
                _HOST_MAP_INDEXED.write(w, coded)
            except FieldProblem as problem:
                raise problem.under(name) from None


#: The field table. The int32 version precedes it and selects the rows.
FIELDS = (
    field("commonly_supported_version", "3+", INT32),
    field("active_tasks", "1-9", Array(_TASK_ID_V1)),
    field("active_tasks", "10+", Array(_TASK_ID_V10)),
    field("standby_tasks", "1-9", _standby(_TASK_ID_V1)),
    field("standby_tasks", "10+", _standby(_TASK_ID_V10)),
    field("partitions_by_host", "2-4", _HOST_MAP_PLAIN),
    field("partitions_by_host", "5", _DictionaryHostMaps(with_standby=False), label=""),
    field(("partitions_by_host", "standby_partitions_by_host"), "6+", _DictionaryHostMaps(with_standby=True),
          label=""),
    field("error_code", "4+", INT32),
    field("next_rebalance_ms", "7+", INT64),
)


@dataclass(frozen=True, slots=True)
class AssignmentInfo(DecodableMessage):
    """One member's AssignmentInfo. Fields outside ``version`` are not written (as in Kafka)."""

    MESSAGE: ClassVar[str] = MESSAGE

    version: int
    #: v3+: the highest version every member supports (drives version probing).
    commonly_supported_version: int = UNKNOWN_VERSION
    #: The task of each assigned partition, parallel to the member's sorted partition list.
    active_tasks: tuple[TaskId, ...] = ()
    #: Standby tasks with their source partitions.
    standby_tasks: tuple[StandbyTask, ...] = ()
    #: v2+: interactive-query host -> partitions of its active tasks.
    partitions_by_host: tuple[HostPartitions, ...] = ()
    #: v6+: interactive-query host -> partitions of its standby tasks.
    standby_partitions_by_host: tuple[HostPartitions, ...] = ()
    #: v4+: AssignorError code (0 = NONE).
    error_code: int = 0
    #: v7+: epoch ms of the requested follow-up rebalance; 0 = immediately; Long.MAX_VALUE = none.
    next_rebalance_ms: int = NO_FOLLOWUP_MS

    @classmethod
    def error(cls, code: AssignorError) -> AssignmentInfo:
        """Kafka's error assignment: always version 11, whatever the members speak
        (``StreamsPartitionAssignor#errorAssignment``)."""
        return cls(LATEST_SUPPORTED_VERSION, LATEST_SUPPORTED_VERSION, error_code=int(code))

    def encode(self) -> bytes:
        """The bytes of this message; EncodeError names a field that cannot be written."""
        if not 1 <= self.version <= LATEST_SUPPORTED_VERSION:
            raise EncodeError(MESSAGE, "version", f"unknown version {self.version} (AssignmentInfo versions "
                                                  f"are 1 to {LATEST_SUPPORTED_VERSION})", version=self.version)
        return encode_message(MESSAGE, self.version, self._write)

    def _write(self, w: Writer) -> None:
        INT32.write(w, self.version)
        write_fields(FIELDS, self.version, w, self)

    @classmethod
    def _read(cls, r: Reader) -> AssignmentInfo:
        version = read_version(r, INT32)
        if not 1 <= version <= LATEST_SUPPORTED_VERSION:
            raise FieldProblem(r.base, f"unknown version {version} (this code reads versions 1 to "
                                       f"{LATEST_SUPPORTED_VERSION})").under("version")
        return cls(version, **read_fields(FIELDS, version, r))

    def partitions_by_host_map(self) -> dict[HostInfo, tuple[TopicPartition, ...]]:
        return dict(self.partitions_by_host)

    def standby_partitions_by_host_map(self) -> dict[HostInfo, tuple[TopicPartition, ...]]:
        return dict(self.standby_partitions_by_host)
