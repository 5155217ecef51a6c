"""What a member's raw SubscriptionInfo bytes tell the pipeline: process id, host, tags, offset sums.

A fleet's members send versions 7-11 (KIP-441 offset sums). Those are read here with a few ``struct`` calls
(``_read_common``: the offset sums unpacked as one block) instead of the generic field-by-field reader
(``wire.subscription_info``), which took most of the members' checks (docs/performance.md). The generic
reader stays the reference: it reads every other version, and any bytes the fast reader finds anything
wrong with (truncated, a negative count or id, a topology name, invalid UTF-8), so each error is the one it
names, with its field and byte offset; on valid bytes both give the same values (tested).
"""

from __future__ import annotations

import struct
import uuid
from typing import Any

from taskassign.errors import DecodeError
from taskassign.wire.subscription_info import SubscriptionInfo, version_problem
from taskassign.wire.versions import LATEST_SUPPORTED_VERSION, MIN_CLIENT_TAGS_VERSION

__all__ = ("decode_subscription", "decode_subscription_columns")

_HEAD = struct.Struct(">iiQQ")  # version, latest supported version, process id (most, least significant bits)
_I32 = struct.Struct(">i")
_GROUP = struct.Struct(">ii")  # v7-9: subtopology, number of partitions
_PARTITION_OFFSET = struct.Struct(">iq")  # v7-9: partition, offset sum
_OFFSET_SUM_V10 = struct.Struct(">iiqh")  # v10+: subtopology, partition, offset sum, topology name length (-1: null)
#: The versions ``_read_common`` reads (offset sums, no version probing).
_FIRST, _LAST = 7, LATEST_SUPPORTED_VERSION


class _Unusual(Exception):
    """The fast reader stops: the generic one reads these bytes."""


def decode_subscription(data: bytes | None) -> dict[str, Any]:
    """``_sub_process_id``, ``_sub_host``, ``_sub_tags`` (pairs, v11+), ``_sub_offsets`` (task_id and
    offset_sum per task), or ``_sub_error`` saying why the bytes cannot be used; all None without bytes."""
    return _as_rows(decode_subscription_columns(data))


def decode_subscription_columns(data: bytes | None) -> dict[str, Any]:
    """``decode_subscription`` with the offset sums column-wise, as the members' checks take them:
    ``_sub_task_ids`` and ``_sub_offset_sums`` (one list each, None without offsets) instead of
    ``_sub_offsets`` (a dict per task)."""
    if data is None:
        return _as_columns(_empty())
    try:
        return _read_common_columns(data)
    except (_Unusual, struct.error, UnicodeDecodeError):
        return _as_columns(_read_generic(data))


def _as_columns(decoded: dict[str, Any]) -> dict[str, Any]:
    offsets = decoded.pop("_sub_offsets")
    decoded["_sub_task_ids"] = None if offsets is None else [o["task_id"] for o in offsets]
    decoded["_sub_offset_sums"] = None if offsets is None else [o["offset_sum"] for o in offsets]
    return decoded


def _as_rows(decoded: dict[str, Any]) -> dict[str, Any]:
    task_ids, sums = decoded.pop("_sub_task_ids"), decoded.pop("_sub_offset_sums")
    decoded["_sub_offsets"] = None if task_ids is None else [
        {"task_id": t, "offset_sum": o} for t, o in zip(task_ids, sums, strict=True)]
    return decoded


def _empty() -> dict[str, Any]:
    return {"_sub_error": None, "_sub_process_id": None, "_sub_host": None, "_sub_tags": None, "_sub_offsets": None}


def _read_generic(data: bytes) -> dict[str, Any]:
    """Any version, any bytes, through ``wire.subscription_info`` (errors name the field and byte offset)."""
    empty = _empty()
    try:
        info = SubscriptionInfo.decode(data)
    except DecodeError as exc:
        return {**empty, "_sub_error": f"subscription_info: {exc}"}
    if info.is_future or info.process_id is None:
        return {**empty, "_sub_error": f"subscription_info: version {info.version} is newer than this leader "
                                       f"reads ({LATEST_SUPPORTED_VERSION}); Kafka would answer with version "
                                       "probing"}
    return {
        "_sub_error": None,
        "_sub_process_id": str(info.process_id),
        "_sub_host": info.user_endpoint,
        "_sub_tags": list(info.tags().items()) if info.version >= MIN_CLIENT_TAGS_VERSION else None,
        "_sub_offsets": [{"task_id": str(t), "offset_sum": o} for t, o in sorted(info.offset_sums().items())],
    }


def _text(data: bytes, pos: int) -> tuple[str, int]:
    """Kafka bytes holding UTF-8 (int32 length): the text and the position after it."""
    (length,) = _I32.unpack_from(data, pos)
    start = pos + 4
    if length < 0 or start + length > len(data):
        raise _Unusual
    return data[start:start + length].decode("utf-8"), start + length


def _read_common(data: bytes) -> dict[str, Any]:
    """``_read_common_columns`` with the offset sums as ``_read_generic`` gives them."""
    return _as_rows(_read_common_columns(data))


def _read_common_columns(data: bytes) -> dict[str, Any]:
    """Versions 7-11 with every value valid, read in the generic reader's field order (trailing bytes
    ignored, as there); anything else raises for ``_read_generic`` to read."""
    version, latest, msb, lsb = _HEAD.unpack_from(data, 0)
    if not _FIRST <= version <= _LAST or version_problem(version, latest) is not None:
        raise _Unusual
    host, pos = _text(data, _HEAD.size)
    (count,) = _I32.unpack_from(data, pos)
    pos += 4
    if count < 0:
        raise _Unusual
    pairs: list[tuple[tuple[int, int], int]] = []
    if version >= 10:
        end = pos + count * _OFFSET_SUM_V10.size
        if end > len(data):
            raise _Unusual
        # A negative id is an error, a named topology is rare: the generic reader reads both.
        pairs = [((sub, part), offset) for sub, part, offset, name in _OFFSET_SUM_V10.iter_unpack(data[pos:end])
                 if sub >= 0 and part >= 0 and name == -1]
        if len(pairs) != count:
            raise _Unusual
        pos = end
    else:
        for _ in range(count):
            sub, partitions = _GROUP.unpack_from(data, pos)
            pos += 8
            end = pos + partitions * _PARTITION_OFFSET.size
            if sub < 0 or partitions < 0 or end > len(data):
                raise _Unusual
            read = [((sub, part), offset) for part, offset in _PARTITION_OFFSET.iter_unpack(data[pos:end]) if part >= 0]
            if len(read) != partitions:
                raise _Unusual
            pairs += read
            pos = end
    pos += 0 if version == 7 else 1 if version == 8 else 5  # unique_field (8+), error_code (9+): not used
    if pos > len(data):
        raise _Unusual
    tags = None
    if version >= MIN_CLIENT_TAGS_VERSION:
        (count,) = _I32.unpack_from(data, pos)
        pos += 4
        if count < 0:
            raise _Unusual
        entries = []
        for _ in range(count):
            key, pos = _text(data, pos)
            value, pos = _text(data, pos)
            entries.append((key, value))
        tags = list(dict(entries).items())
    merged = sorted(dict(pairs).items())
    return {
        "_sub_error": None,
        "_sub_process_id": str(uuid.UUID(int=(msb << 64) | lsb)),
        "_sub_host": host or None,
        "_sub_tags": tags,
        "_sub_task_ids": [f"{sub}_{part}" for (sub, part), _ in merged],
        "_sub_offset_sums": [o for _, o in merged],
    }
