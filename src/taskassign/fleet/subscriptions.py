"""What a member's raw SubscriptionInfo bytes tell the pipeline: process id, host, tags, offset sums.

A fleet's members send versions 7-11 (KIP-441 offset sums). ``decode_subscriptions`` reads a whole table's
members at once: each member's head (process id, host, tags, where its offset sums lie) with a few
``struct`` calls, then every member's offset sums as one numpy block (one per layout: version 10+, and the
per-subtopology blocks before it), checked, ordered and merged per member on whole columns, each distinct
task id made as text once. The generic field-by-field reader (``wire.subscription_info``), which took most
of the members' checks when it read every member (docs/performance.md), stays the reference: it reads every
other version, and any member's bytes the fast reader finds anything wrong with (truncated, a negative count
or id, a topology name, invalid UTF-8), so each error is the one it names, with its field and byte offset;
on valid bytes both give the same values (tested).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from taskassign.errors import DecodeError
from taskassign.wire.subscription_info import SubscriptionInfo, version_problem
from taskassign.wire.versions import LATEST_SUPPORTED_VERSION, MIN_CLIENT_TAGS_VERSION

__all__ = ("DecodedSubscriptions", "decode_subscription", "decode_subscription_columns", "decode_subscriptions")

IntArray = npt.NDArray[np.int64]

_HEAD = struct.Struct(">iiQQ")  # version, latest supported version, process id (most, least significant bits)
_I32 = struct.Struct(">i")
_GROUP = struct.Struct(">ii")  # v7-9: subtopology, number of partitions
_PARTITION_OFFSET = np.dtype([("part", ">i4"), ("sum", ">i8")])  # v7-9: partition, offset sum
#: v10+: subtopology, partition, offset sum, topology name length (-1: null).
_OFFSET_SUM_V10 = np.dtype([("sub", ">i4"), ("part", ">i4"), ("sum", ">i8"), ("name", ">i2")])
#: The versions the fast reader reads (offset sums, no version probing).
_FIRST, _LAST = 7, LATEST_SUPPORTED_VERSION


class _Unusual(Exception):
    """The fast reader stops: the generic one reads these bytes."""


@dataclass(frozen=True)
class DecodedSubscriptions:
    """Every member's subscription_info: ``members``, per member ``_sub_error``, ``_sub_process_id``,
    ``_sub_host`` and ``_sub_tags`` (all None without bytes); every task a member reports, column-wise, in
    member order and each member's tasks in task order: ``member`` (the member's position), ``task_ids``
    (text), ``offset_sums``."""

    members: list[dict[str, Any]]
    member: IntArray
    task_ids: pa.Array
    offset_sums: IntArray


def decode_subscription(data: bytes | None) -> dict[str, Any]:
    """``_sub_process_id``, ``_sub_host``, ``_sub_tags`` (pairs, v11+), ``_sub_offsets`` (task_id and
    offset_sum per task), or ``_sub_error`` saying why the bytes cannot be used; all None without bytes."""
    return _as_rows(decode_subscription_columns(data))


def decode_subscription_columns(data: bytes | None) -> dict[str, Any]:
    """``decode_subscription`` with the offset sums column-wise: ``_sub_task_ids`` and ``_sub_offset_sums``
    (one list each, None without offsets) instead of ``_sub_offsets`` (a dict per task)."""
    return _one(decode_subscriptions([data]), data)


def decode_subscriptions(values: Sequence[bytes | None]) -> DecodedSubscriptions:
    """Every member's bytes (None: the member sent none) read at once (see the module)."""
    return _decode(values, fallback=True)


def _one(found: DecodedSubscriptions, data: bytes | None) -> dict[str, Any]:
    decoded = dict(found.members[0])
    has_offsets = data is not None and decoded["_sub_error"] is None
    decoded["_sub_task_ids"] = found.task_ids.to_pylist() if has_offsets else None
    decoded["_sub_offset_sums"] = found.offset_sums.tolist() if has_offsets else None
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
    """The fast reader's answer for one member's bytes, with the offset sums as ``_read_generic`` gives them
    (raises where it would leave the bytes to the generic reader)."""
    return _as_rows(_one(_decode([data], fallback=False), data))


@dataclass
class _Blocks:
    """The members' offset sums as the fast reader found them: their bytes (one block per member of version
    10+, one per subtopology before it) and, per block, its member, record count and subtopology (-1: in
    the records)."""

    v10: list[bytes]
    v10_member: list[int]
    v10_count: list[int]
    groups: list[bytes]
    group_member: list[int]
    group_count: list[int]
    group_sub: list[int]


def _decode(values: Sequence[bytes | None], *, fallback: bool) -> DecodedSubscriptions:
    members: list[dict[str, Any]] = []
    blocks = _Blocks([], [], [], [], [], [], [])
    generic: dict[int, list[dict[str, Any]]] = {}
    absent = _fields(_empty())  # one (read-only) dict for every member without bytes
    for index, data in enumerate(values):
        if data is None:
            members.append(absent)
            continue
        try:
            members.append(_read_head(data, index, blocks))
        except (_Unusual, struct.error, UnicodeDecodeError):
            if not fallback:
                raise _Unusual from None
            members.append(_generic_member(data, index, generic))
    v10 = np.frombuffer(b"".join(blocks.v10), _OFFSET_SUM_V10)
    grouped = np.frombuffer(b"".join(blocks.groups), _PARTITION_OFFSET)
    member = np.concatenate([np.repeat(np.array(blocks.v10_member, np.int64), blocks.v10_count),
                             np.repeat(np.array(blocks.group_member, np.int64), blocks.group_count)])
    subs = np.concatenate([v10["sub"].astype(np.int64),
                           np.repeat(np.array(blocks.group_sub, np.int64), blocks.group_count)])
    parts = np.concatenate([v10["part"], grouped["part"]]).astype(np.int64)
    sums = np.concatenate([v10["sum"], grouped["sum"]]).astype(np.int64)
    # A negative id is an error, a named topology is rare: the generic reader reads both.
    bad = (subs < 0) | (parts < 0)
    bad[:len(v10)] |= v10["name"] != -1
    if bad.any():
        if not fallback:
            raise _Unusual
        unusual = np.unique(member[bad])
        for index in unusual.tolist():
            data = values[index]
            assert data is not None
            members[index] = _generic_member(data, index, generic)
        kept = ~np.isin(member, unusual)
        member, subs, parts, sums = member[kept], subs[kept], parts[kept], sums[kept]
    member, keys, sums = _merged(member, (subs << 32) | parts, sums)
    task_ids, member, sums = _with_generic(member, _task_names(keys), sums, generic)
    return DecodedSubscriptions(members, member, task_ids, sums)


def _read_head(data: bytes, index: int, blocks: _Blocks) -> dict[str, Any]:
    """Versions 7-11 read in the generic reader's field order (trailing bytes ignored, as there): the
    member's values, its offset sums' bytes added to ``blocks``; anything unusual raises, adding nothing."""
    version, latest, msb, lsb = _HEAD.unpack_from(data, 0)
    if not _FIRST <= version <= _LAST or version_problem(version, latest) is not None:
        raise _Unusual
    host, pos = _text(data, _HEAD.size)
    (count,) = _I32.unpack_from(data, pos)
    pos += 4
    if count < 0:
        raise _Unusual
    groups: list[tuple[int, int, int]] = []  # (subtopology, start, partitions) before version 10
    if version >= 10:
        start, pos = pos, pos + count * _OFFSET_SUM_V10.itemsize
        if pos > len(data):
            raise _Unusual
    else:
        for _ in range(count):
            sub, partitions = _GROUP.unpack_from(data, pos)
            pos += 8
            end = pos + partitions * _PARTITION_OFFSET.itemsize
            if sub < 0 or partitions < 0 or end > len(data):
                raise _Unusual
            groups.append((sub, pos, partitions))
            pos = end
    pos += 0 if version == 7 else 1 if version == 8 else 5  # unique_field (8+), error_code (9+): not used
    if pos > len(data):
        raise _Unusual
    tags = None
    if version >= MIN_CLIENT_TAGS_VERSION:
        (count_tags,) = _I32.unpack_from(data, pos)
        pos += 4
        if count_tags < 0:
            raise _Unusual
        entries = []
        for _ in range(count_tags):
            key, pos = _text(data, pos)
            value, pos = _text(data, pos)
            entries.append((key, value))
        tags = list(dict(entries).items())
    if version >= 10:
        blocks.v10.append(data[start:start + count * _OFFSET_SUM_V10.itemsize])
        blocks.v10_member.append(index)
        blocks.v10_count.append(count)
    for sub, start, partitions in groups:
        blocks.groups.append(data[start:start + partitions * _PARTITION_OFFSET.itemsize])
        blocks.group_member.append(index)
        blocks.group_count.append(partitions)
        blocks.group_sub.append(sub)
    return {"_sub_error": None, "_sub_process_id": _uuid_text(msb, lsb), "_sub_host": host or None, "_sub_tags": tags}


def _uuid_text(most: int, least: int) -> str:
    """``str(uuid.UUID(...))`` of a UUID's two halves, without making the UUID (a member each; tested equal)."""
    digits = f"{most:016x}{least:016x}"
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def _merged(member: IntArray, keys: IntArray, sums: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """The records in (member, task) order, a task a member reports twice keeping its last offset sum (as
    the generic reader's map does); one comparison and nothing more when they are in that order already."""
    if len(keys) > 1:
        if (member[1:] < member[:-1]).any():  # two layouts: each member's records are in one of them
            by_member = np.argsort(member, kind="stable")
            member, keys, sums = member[by_member], keys[by_member], sums[by_member]
        if not ((member[1:] != member[:-1]) | (keys[1:] > keys[:-1])).all():
            order = np.lexsort((np.arange(len(keys)), keys, member))
            member, keys, sums = member[order], keys[order], sums[order]
            last = np.ones(len(keys), dtype=np.bool_)
            last[:-1] = (member[1:] != member[:-1]) | (keys[1:] != keys[:-1])
            member, keys, sums = member[last], keys[last], sums[last]
    return member, keys, sums


def _task_names(keys: IntArray) -> pa.Array:
    """Task ids (subtopology << 32 | partition) as text, ``<subtopology>_<partition>``: each distinct one made once."""
    distinct, inverse = np.unique(keys, return_inverse=True)
    names = pc.binary_join_element_wise(pc.cast(pa.array(distinct >> 32), pa.string()),
                                        pc.cast(pa.array(distinct & 0xFFFFFFFF), pa.string()), "_")
    return names.take(pa.array(inverse.reshape(-1).astype(np.int64)))


def _generic_member(data: bytes, index: int, generic: dict[int, list[dict[str, Any]]]) -> dict[str, Any]:
    decoded = _read_generic(data)
    generic[index] = decoded["_sub_offsets"] or []
    return _fields(decoded)


def _with_generic(
    member: IntArray, task_ids: pa.Array, sums: IntArray, generic: dict[int, list[dict[str, Any]]]
) -> tuple[pa.Array, IntArray, IntArray]:
    """The fast reader's records with those of the members the generic reader read, in member order."""
    if not any(generic.values()):
        return task_ids, member, sums
    more = [(index, o["task_id"], o["offset_sum"]) for index in sorted(generic) for o in generic[index]]
    member = np.concatenate([member, np.array([m[0] for m in more], np.int64)])
    order = np.argsort(member, kind="stable")
    names = pa.concat_arrays([task_ids, pa.array([m[1] for m in more], pa.string())])
    sums = np.concatenate([sums, np.array([m[2] for m in more], np.int64)])
    return names.take(pa.array(order)), member[order], sums[order]


def _fields(decoded: dict[str, Any]) -> dict[str, Any]:
    """A member's values without its offset sums."""
    return {k: decoded[k] for k in ("_sub_error", "_sub_process_id", "_sub_host", "_sub_tags")}
