"""Wire messages as JSON documents (``taskassign decode`` / ``encode``), and hex/base64 text.

The JSON mirrors the wire: a message lists exactly the fields of its version, in wire order, with
lists kept in wire order, so ``encode(decode(bytes))`` gives the bytes back. Reading is strict: a
field the version does not have, a value out of its wire range or an unknown key is an error naming
its JSON path. The userData of a consumer-protocol message is the nested Streams message, or
``{"hex": ...}`` / ``{"base64": ...}`` for bytes kept raw.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from taskassign.errors import ProcessIdFormatError, TaskIdFormatError, UserInputError
from taskassign.formats.json_io import JsonObject, check_int, describe, fail
from taskassign.ids import ProcessId, TaskId
from taskassign.wire import assignment_info, consumer_protocol, subscription_info
from taskassign.wire.assignment_info import AssignmentInfo
from taskassign.wire.codec import ANY_VERSION_ABOVE, Field
from taskassign.wire.consumer_protocol import Assignment, Subscription
from taskassign.wire.subscription_info import SubscriptionInfo
from taskassign.wire.types import HostInfo, TopicPartition
from taskassign.wire.versions import EARLIEST_PROBEABLE_VERSION, LATEST_SUPPORTED_VERSION, UNKNOWN_VERSION

__all__ = (
    "MESSAGE_KINDS",
    "WIRE_FORMAT",
    "WireMessage",
    "bytes_from_text",
    "decode_message",
    "message_from_json",
    "message_to_json",
)

WIRE_FORMAT = "taskassign/wire/v1"
T = TypeVar("T")
WireMessage = Subscription | Assignment | SubscriptionInfo | AssignmentInfo

INT8 = (-(2**7), 2**7 - 1)
INT16 = (-(2**15), 2**15 - 1)
INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)


# --- bytes as text ---------------------------------------------------------------------------------

_HEX_NOISE = re.compile(r"[\s:|,_]+")


def bytes_from_text(text: str, what: str = "input") -> bytes:
    """Hex (spaces, colons, ``|`` and an ``0x`` prefix allowed) or ``base64:<text>``."""
    stripped = text.strip()
    if stripped.lower().startswith("base64:"):
        return _base64(stripped[7:], what)
    digits = _HEX_NOISE.sub("", stripped)
    if digits[:2].lower() == "0x":
        digits = digits[2:]
    bad = re.search(r"[^0-9a-fA-F]", digits)
    if bad:
        raise UserInputError(f"{what}: {bad.group()!r} at character {bad.start()} of the hex digits is not a hex "
                             "digit (give hex, or base64 as 'base64:...')")
    if len(digits) % 2:
        raise UserInputError(f"{what}: odd number of hex digits ({len(digits)})")
    return bytes.fromhex(digits)


def _base64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise UserInputError(f"{what}: not valid base64 ({exc})") from None


# --- decoding by kind --------------------------------------------------------------------------------

MESSAGE_KINDS: dict[str, Callable[[bytes], tuple[WireMessage, int]]] = {
    "subscription": Subscription.decode_prefix,
    "assignment": Assignment.decode_prefix,
    "subscription_info": SubscriptionInfo.decode_prefix,
    "assignment_info": AssignmentInfo.decode_prefix,
}


def decode_message(kind: str, data: bytes) -> tuple[WireMessage, int]:
    """Decode ``data`` as ``kind`` (see MESSAGE_KINDS): the message and the number of bytes it took
    (Kafka ignores the rest). DecodeError names the field and the byte offset."""
    try:
        decode = MESSAGE_KINDS[kind.replace("-", "_")]
    except KeyError:
        raise UserInputError(f"unknown message kind {kind!r}; one of {', '.join(MESSAGE_KINDS)}") from None
    return decode(data)


# --- JSON <-> attribute values ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Json:
    """How one message attribute is written to JSON and read back (``read(value, path, source)``)."""

    out: Callable[[Any], Any]
    read: Callable[[Any, str, str | None], Any]


def _str(value: Any, path: str, source: str | None, *, nullable: bool = False) -> Any:
    if value is None and nullable:
        return None
    if not isinstance(value, str):
        fail(path, f"expected a string{' or null' if nullable else ''}, got {describe(value)}", source)
    return value


def _list(value: Any, path: str, source: str | None) -> list[Any]:
    if not isinstance(value, list):
        fail(path, f"expected an array, got {describe(value)}", source)
    return value


def _integer(low: int, high: int) -> _Json:
    return _Json(lambda v: v, lambda v, p, s: check_int(v, p, minimum=low, maximum=high, source=s))


def task_to_json(t: TaskId) -> Any:
    """``"0_1"`` / ``"name__0_1"``; an object when the name would not parse back from the string."""
    text = str(t)
    try:
        if TaskId.parse(text) == t:
            return text
    except TaskIdFormatError:
        pass
    return {"subtopology": t.subtopology, "partition": t.partition, "topology_name": t.topology_name}


def _task(value: Any, path: str, source: str | None) -> TaskId:
    if isinstance(value, dict):
        o = JsonObject(value, path, source)
        sub = o.integer("subtopology", minimum=0, maximum=INT32[1])
        part = o.integer("partition", minimum=0, maximum=INT32[1])
        name = o.string("topology_name", None, nullable=True)
        o.finish()
        return TaskId(sub, part, name)
    try:
        return TaskId.parse(_str(value, path, source))
    except TaskIdFormatError as exc:
        fail(path, str(exc), source)


def _each(read: Callable[[Any, str, str | None], Any]) -> Callable[[Any, str, str | None], tuple[Any, ...]]:
    """A reader of a JSON array whose elements ``read`` converts (paths ``key[i]``)."""
    return lambda v, p, s: tuple(read(x, f"{p}[{i}]", s) for i, x in enumerate(_list(v, p, s)))


def _partition_pair(value: Any, path: str, source: str | None) -> TopicPartition:
    if not isinstance(value, list) or len(value) != 2:
        fail(path, f"expected a [topic, partition] pair, got {describe(value)}", source)
    return (_str(value[0], f"{path}[0]", source),
            check_int(value[1], f"{path}[1]", minimum=INT32[0], maximum=INT32[1], source=source))


def _keyed(value: Any, path: str, source: str | None, read: Callable[[JsonObject], T]) -> T:
    obj = JsonObject(value, path, source)
    result = read(obj)
    obj.finish()
    return result


def _partitions_out(parts: tuple[TopicPartition, ...]) -> list[list[Any]]:
    return [[t, p] for t, p in parts]


_PARTITIONS = _each(_partition_pair)
_TASKS = _Json(lambda ts: [task_to_json(t) for t in ts], _each(_task))


def _read_offset_sum(value: Any, path: str, source: str | None) -> tuple[TaskId, int]:
    return _keyed(value, path, source, lambda o: (_task(o.raw("task"), o.sub("task"), source),
                                                  o.integer("offset_sum", minimum=INT64[0])))


def _read_standby(value: Any, path: str, source: str | None) -> tuple[TaskId, tuple[TopicPartition, ...]]:
    return _keyed(value, path, source, lambda o: (_task(o.raw("task"), o.sub("task"), source),
                                                  _PARTITIONS(o.raw("partitions"), o.sub("partitions"), source)))


def _read_host(value: Any, path: str, source: str | None) -> tuple[HostInfo, tuple[TopicPartition, ...]]:
    return _keyed(value, path, source, lambda o: (
        HostInfo(o.string("host"), o.integer("port", minimum=INT32[0], maximum=INT32[1])),
        _PARTITIONS(o.raw("partitions"), o.sub("partitions"), source)))


def _read_group(value: Any, path: str, source: str | None) -> tuple[str, tuple[int, ...]]:
    def read(o: JsonObject) -> tuple[str, tuple[int, ...]]:
        parts = o.array("partitions")
        return (o.string("topic"), tuple(check_int(x, f"{o.sub('partitions')}[{j}]", minimum=INT32[0],
                                                   maximum=INT32[1], source=source) for j, x in enumerate(parts)))
    return _keyed(value, path, source, read)


def _read_tags(value: Any, path: str, source: str | None) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        fail(path, f"expected an object of tag -> value, got {describe(value)}", source)
    return tuple((k, _str(v, f"{path}.{k}", source)) for k, v in value.items())


def _read_process_id(value: Any, path: str, source: str | None) -> ProcessId:
    try:
        return ProcessId(_str(value, path, source))
    except ProcessIdFormatError as exc:
        fail(path, str(exc), source)


_HOSTS = _Json(lambda hs: [{"host": h.host, "port": h.port, "partitions": _partitions_out(ps)} for h, ps in hs],
               _each(_read_host))
_GROUPS = _Json(lambda gs: [{"topic": t, "partitions": list(ps)} for t, ps in gs], _each(_read_group))

#: Per message: its class, field table, the JSON of each attribute, and the version range JSON accepts.
_SCHEMAS: dict[str, tuple[type[Any], Sequence[Field], dict[str, _Json], tuple[int, int]]] = {
    "subscription": (Subscription, consumer_protocol.SUBSCRIPTION_FIELDS, {
        "topics": _Json(list, _each(_str)),
        "owned_partitions": _GROUPS,
        "generation_id": _integer(*INT32),
        "rack_id": _Json(lambda r: r, lambda v, p, s: _str(v, p, s, nullable=True)),
    }, (0, INT16[1])),
    "assignment": (Assignment, consumer_protocol.ASSIGNMENT_FIELDS, {"assigned_partitions": _GROUPS},
                   (0, INT16[1])),
    "subscription_info": (SubscriptionInfo, subscription_info.FIELDS, {
        "latest_supported_version": _integer(*INT32),
        "process_id": _Json(str, _read_process_id),
        "prev_tasks": _TASKS,
        "standby_tasks": _TASKS,
        "user_endpoint": _Json(lambda e: e, lambda v, p, s: _str(v, p, s, nullable=True) or None),
        "task_offset_sums": _Json(lambda pairs: [{"task": task_to_json(t), "offset_sum": o} for t, o in pairs],
                                  _each(_read_offset_sum)),
        "unique_field": _integer(*INT8),
        "error_code": _integer(*INT32),
        "client_tags": _Json(dict, _read_tags),
    }, (1, INT32[1])),
    "assignment_info": (AssignmentInfo, assignment_info.FIELDS, {
        "commonly_supported_version": _integer(*INT32),
        "active_tasks": _TASKS,
        "standby_tasks": _Json(lambda ss: [{"task": task_to_json(t), "partitions": _partitions_out(ps)}
                                           for t, ps in ss], _each(_read_standby)),
        "partitions_by_host": _HOSTS,
        "standby_partitions_by_host": _HOSTS,
        "error_code": _integer(*INT32),
        "next_rebalance_ms": _integer(*INT64),
    }, (1, LATEST_SUPPORTED_VERSION)),
}
_KIND_OF = {cls: kind for kind, (cls, _, _, _) in _SCHEMAS.items()}


def _attributes(table: Sequence[Field], version: int | None = None) -> list[str]:
    """Attributes of ``table`` in wire order (only those present in ``version`` when given)."""
    names: dict[str, None] = {}
    for f in table:
        if version is None or f.present(version):
            names.update(dict.fromkeys(f.attrs))
    return list(names)


def _versions_of(table: Sequence[Field], attr: str) -> str:
    """``"7+"``, ``"1-6"``, ...: the versions (merged ranges) in which ``attr`` exists."""
    ranges = sorted((f.low, f.high) for f in table if attr in f.attrs)
    merged: list[list[int]] = []
    for low, high in ranges:
        if merged and low <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    return ", ".join(f"{a}+" if b >= ANY_VERSION_ABOVE else str(a) if a == b else f"{a}-{b}" for a, b in merged)


# --- to JSON -----------------------------------------------------------------------------------------


def message_to_json(message: WireMessage, *, raw_user_data: bool = False) -> dict[str, Any]:
    """The JSON document of a message; userData of a consumer-protocol message is decoded as the
    Streams message it carries (DecodeError with offsets into the outer bytes) unless ``raw_user_data``."""
    kind = _KIND_OF[type(message)]
    _, table, converters, _ = _SCHEMAS[kind]
    doc: dict[str, Any] = {"message": kind, "version": message.version}
    if isinstance(message, SubscriptionInfo) and message.is_future:
        doc["latest_supported_version"] = message.latest_supported_version
        return doc
    for attr in _attributes(table, message.version):
        value = getattr(message, attr)
        if attr == "user_data":
            inner = SubscriptionInfo if isinstance(message, Subscription) else AssignmentInfo
            offset = message.user_data_offset()  # type: ignore[union-attr]
            doc[attr] = _user_data_out(value, inner, raw_user_data, offset)
        else:
            doc[attr] = converters[attr].out(value)
    return doc


def _user_data_out(data: bytes | None, kind: Any, raw: bool, offset: int) -> Any:
    if data is None:
        return None
    if raw:
        return {"hex": data.hex()}
    return message_to_json(kind.decode(data, base=offset))


# --- from JSON ---------------------------------------------------------------------------------------


def message_from_json(doc: Any, *, path: str = "$", source: str | None = None) -> WireMessage:
    """Build the message a JSON document describes; errors name the JSON path."""
    obj = JsonObject(doc, path, source)
    if obj.has("format"):
        obj.expect_format(WIRE_FORMAT)
    kind = obj.string("message")
    if kind not in _SCHEMAS:
        obj.fail("message", f"unknown message {kind!r}; one of {', '.join(_SCHEMAS)}")
    cls, table, converters, (low, high) = _SCHEMAS[kind]
    version = check_int(obj.raw("version"), obj.sub("version"), minimum=low, maximum=high, source=source)
    if cls is SubscriptionInfo and version > LATEST_SUPPORTED_VERSION:
        latest = obj.integer("latest_supported_version", version, minimum=INT32[0], maximum=INT32[1])
        obj.finish()
        return SubscriptionInfo(version, None, latest)
    present = set(_attributes(table, version))
    values: dict[str, Any] = {}
    for attr in _attributes(table):
        if attr not in present:
            if obj.has(attr):
                obj.fail(attr, f"version {version} has no field {attr!r} (versions {_versions_of(table, attr)})")
        elif attr == "user_data":
            values[attr] = _user_data_in(obj, SubscriptionInfo if cls is Subscription else AssignmentInfo)
        elif attr == "process_id" or obj.has(attr):
            values[attr] = converters[attr].read(obj.raw(attr), obj.sub(attr), source)
    if cls is SubscriptionInfo and version < EARLIEST_PROBEABLE_VERSION:
        values["latest_supported_version"] = UNKNOWN_VERSION
    obj.finish()
    return cls(version, **values)  # type: ignore[no-any-return]


def _user_data_in(obj: JsonObject, kind: type[SubscriptionInfo] | type[AssignmentInfo]) -> bytes | None:
    value = obj.raw("user_data", None)
    if value is None:
        return None
    path = obj.sub("user_data")
    if isinstance(value, dict) and "message" not in value:
        raw = JsonObject(value, path, obj.source)
        if raw.has("hex") == raw.has("base64"):
            raw.fail(None, "give the nested message, or raw bytes as {\"hex\": ...} or {\"base64\": ...}")
        text = raw.string("hex") if raw.has("hex") else "base64:" + raw.string("base64")
        raw.finish()
        return bytes_from_text(text, path)
    nested = message_from_json(value, path=path, source=obj.source)
    if not isinstance(nested, kind):
        obj.fail("user_data", f"expected a {kind.__name__} here")
    return nested.encode()
