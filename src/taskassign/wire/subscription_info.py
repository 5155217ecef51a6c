"""Kafka Streams' ``SubscriptionInfo``: what every member tells the leader, versions 1-11
(``SubscriptionInfoData.json``).

It travels as the userData of the consumer-protocol Subscription. Versions 1-6 carry the previous
active and standby task sets, 7+ per-task offset sums (KIP-441), 8+ a counter that makes every
re-join differ, 9+ an error code (4 asks the whole application to shut down), 11 client tags.
A *future* version (above 11) is read as its first two int32s only: that is all an older leader can
know, and all version probing needs (KIP-268).

Element order inside the lists is kept exactly as on the wire, so decoding and re-encoding gives the
same bytes; ``offset_sums()`` is the map Kafka's leader builds from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from taskassign.errors import EncodeError
from taskassign.ids import ProcessId, TaskId
from taskassign.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM
from taskassign.wire.codec import (
    INT8,
    INT32,
    INT64,
    NULLABLE_KSTRING,
    UTF8_KBYTES,
    UTF8_KBYTES_EMPTY_IS_NONE,
    UUID,
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
from taskassign.wire.versions import (
    EARLIEST_PROBEABLE_VERSION,
    LATEST_SUPPORTED_VERSION,
    MIN_CLIENT_TAGS_VERSION,
    MIN_VERSION_OFFSET_SUM_SUBSCRIPTION,
    UNKNOWN_VERSION,
)

__all__ = ("MESSAGE", "SubscriptionInfo")

MESSAGE = "SubscriptionInfo"

_TASK_ID_V1 = Struct((("subtopology", INT32), ("partition", INT32)), task_id, unnamed_parts)
_PARTITION_OFFSET = Struct((("partition", INT32), ("offset_sum", INT64)), lambda p, o: (p, o), lambda x: x)
_OFFSET_SUM_V10 = Struct(
    (("subtopology", INT32), ("partition", INT32), ("offset_sum", INT64), ("topology_name", NULLABLE_KSTRING)),
    lambda s, p, o, name: (task_id(s, p, name), o),
    lambda pair: (pair[0].subtopology, pair[0].partition, pair[1], pair[0].topology_name),
)
_CLIENT_TAG = Struct((("key", UTF8_KBYTES), ("value", UTF8_KBYTES)), lambda k, v: (k, v), lambda kv: kv)


class _GroupedOffsetSums:
    """v7-9 TaskOffsetSum: one entry per subtopology with its partitions' offset sums, flattened to
    ``(TaskId, offset)`` pairs; written grouped by subtopology in order of first appearance."""

    min_size = 4
    _groups = Array(Struct(
        (("subtopology", INT32), ("partitions", Array(_PARTITION_OFFSET))),
        lambda s, parts: (s, parts),
        lambda g: g,
    ))

    def read(self, r: Reader) -> tuple[tuple[TaskId, int], ...]:
        start = r.offset
        pairs = []
        for subtopology, parts in self._groups.read(r):
            for partition, offset in parts:
                try:
                    pairs.append((task_id(subtopology, partition), offset))
                except ValueError as exc:
                    raise FieldProblem(start, str(exc)) from None
        return tuple(pairs)

    def write(self, w: Writer, value: Any) -> None:
        groups: dict[int, list[tuple[int, int]]] = {}
        for i, pair in enumerate(value):
            try:
                subtopology, partition = unnamed_parts(pair[0])
            except (TypeError, ValueError, IndexError) as exc:
                raise FieldProblem(w.offset, str(exc)).under(f"[{i}]") from None
            groups.setdefault(subtopology, []).append((partition, pair[1]))
        self._groups.write(w, tuple(groups.items()))


#: The field table. Field 1, the int32 version, precedes it and selects the rows.
FIELDS = (
    field("latest_supported_version", "3+", INT32),
    field("process_id", "1+", UUID),
    field("prev_tasks", "1-6", Array(_TASK_ID_V1)),
    field("standby_tasks", "1-6", Array(_TASK_ID_V1)),
    field("user_endpoint", "2+", UTF8_KBYTES_EMPTY_IS_NONE),
    field("task_offset_sums", "7-9", _GroupedOffsetSums()),
    field("task_offset_sums", "10+", Array(_OFFSET_SUM_V10)),
    field("unique_field", "8+", INT8),
    field("error_code", "9+", INT32),
    field("client_tags", "11+", Array(_CLIENT_TAG)),
)


@dataclass(frozen=True, slots=True)
class SubscriptionInfo(DecodableMessage):
    """One member's SubscriptionInfo. Fields outside ``version`` are not written (as in Kafka).

    ``process_id`` is None only for a future-version subscription, whose content beyond the two
    version numbers this code cannot read.
    """

    MESSAGE: ClassVar[str] = MESSAGE

    version: int
    process_id: ProcessId | None = None
    latest_supported_version: int = LATEST_SUPPORTED_VERSION
    #: v1-6: tasks the member runs as RUNNING actives.
    prev_tasks: tuple[TaskId, ...] = ()
    #: v1-6: every other task it has state for.
    standby_tasks: tuple[TaskId, ...] = ()
    #: v2+: ``application.server`` (None when unset, sent as empty bytes).
    user_endpoint: str | None = None
    #: v7+: (task, offset sum) pairs in wire order; -2 = RUNNING active.
    task_offset_sums: tuple[tuple[TaskId, int], ...] = ()
    #: v8+: per-thread counter making every re-join's metadata different (int8, wraps).
    unique_field: int = 0
    #: v9+: the thread's error code (4 = SHUTDOWN_REQUESTED).
    error_code: int = 0
    #: v11: ``client.tag.*`` pairs in wire order.
    client_tags: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(
        cls,
        version: int,
        process_id: ProcessId,
        offset_sums: Mapping[TaskId, int],
        *,
        user_endpoint: str | None = None,
        unique_field: int = 0,
        error_code: int = 0,
        client_tags: Mapping[str, str] | None = None,
    ) -> SubscriptionInfo:
        """What a Kafka Streams member sends at ``version`` (``StreamsPartitionAssignor#subscriptionUserData``),
        keeping only the fields that version has: before v7 the offset sums become previous (-2) and standby (others)
        sets."""
        sums = tuple(sorted(offset_sums.items()))
        fields: dict[str, Any] = {}
        if version < MIN_VERSION_OFFSET_SUM_SUBSCRIPTION:
            fields["prev_tasks"] = tuple(t for t, o in sums if o == LATEST_OFFSET)
            fields["standby_tasks"] = tuple(t for t, o in sums if o != LATEST_OFFSET)
        else:
            fields["task_offset_sums"] = sums
        return cls(
            version,
            process_id,
            LATEST_SUPPORTED_VERSION if version >= EARLIEST_PROBEABLE_VERSION else UNKNOWN_VERSION,
            user_endpoint=user_endpoint if version >= 2 else None,
            unique_field=unique_field if version >= 8 else 0,
            error_code=error_code if version >= 9 else 0,
            client_tags=tuple(sorted((client_tags or {}).items())) if version >= MIN_CLIENT_TAGS_VERSION else (),
            **fields,
        )

    @property
    def is_future(self) -> bool:
        """True for a version above the latest this code knows (the sender is newer)."""
        return self.version > LATEST_SUPPORTED_VERSION

    def offset_sums(self) -> dict[TaskId, int]:
        """The task -> offset sum map Kafka's leader builds (v1-6: previous -2, standby -3)."""
        if self.version >= MIN_VERSION_OFFSET_SUM_SUBSCRIPTION:
            return dict(self.task_offset_sums)
        sums = dict.fromkeys(self.prev_tasks, LATEST_OFFSET)
        sums.update(dict.fromkeys(self.standby_tasks, UNKNOWN_OFFSET_SUM))
        return sums

    def tags(self) -> dict[str, str]:
        return dict(self.client_tags)

    def encode(self) -> bytes:
        """The bytes of this message; EncodeError names a field that cannot be written."""
        invalid = version_problem(self.version, self.latest_supported_version)
        if invalid:
            raise EncodeError(MESSAGE, invalid[0], invalid[1], version=self.version)
        if self.process_id is None and not self.is_future:
            raise EncodeError(MESSAGE, "process_id", "required (only a future version may omit it)",
                              version=self.version)
        return encode_message(MESSAGE, self.version, self._write)

    def _write(self, w: Writer) -> None:
        INT32.write(w, self.version)
        if self.is_future:
            INT32.write(w, self.latest_supported_version)
        else:
            write_fields(FIELDS, self.version, w, self)

    @classmethod
    def _read(cls, r: Reader) -> SubscriptionInfo:
        version = read_version(r, INT32)
        if version > LATEST_SUPPORTED_VERSION:
            info = cls(version, None, _read_latest(r))
        else:
            values = read_fields(FIELDS, version, r) if version >= 1 else {}
            latest = values.pop("latest_supported_version", UNKNOWN_VERSION)
            info = cls(version, latest_supported_version=latest, **values)
        invalid = version_problem(info.version, info.latest_supported_version)
        if invalid:
            name, reason = invalid
            raise FieldProblem(r.base + (0 if name == "version" else 4), reason).under(name)
        return info


def _read_latest(r: Reader) -> int:
    try:
        return r.int32()
    except FieldProblem as problem:
        raise problem.under("latest_supported_version") from None


def version_problem(version: int, latest: int) -> tuple[str, str] | None:
    """Kafka's version check of a SubscriptionInfo: (field, reason) or None when valid."""
    if version < 1:
        return ("version", f"unknown version {version} (SubscriptionInfo versions start at 1)")
    if latest == UNKNOWN_VERSION:
        if version > 2:
            return ("latest_supported_version",
                    "latest supported version is unknown (-1), which only versions 1 and 2 may send")
        return None
    if version > latest:
        return ("latest_supported_version",
                f"used version {version} is above the sender's latest supported version {latest}")
    return None
