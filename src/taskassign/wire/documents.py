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
from collections.abc import Callable
from typing import Any

from taskassign._json import JsonObject, check_int, describe, fail
from taskassign.errors import ProcessIdFormatError, TaskIdFormatError, UserInputError
from taskassign.ids import ProcessId, TaskId
from taskassign.wire._codec import ANY_VERSION_ABOVE
from taskassign.wire.assignment_info import AssignmentInfo
from taskassign.wire.consumer_protocol import Assignment, Subscription
from taskassign.wire.subscription_info import SubscriptionInfo
from taskassign.wire.types import HostInfo, TopicPartition
from taskassign.wire.versions import LATEST_SUPPORTED_VERSION

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


# --- to JSON -----------------------------------------------------------------------------------------


def message_to_json(message: WireMessage, *, raw_user_data: bool = False) -> dict[str, Any]:
    """The JSON document of a message; userData of a consumer-protocol message is decoded as the
    Streams message it carries (DecodeError with offsets into the outer bytes) unless ``raw_user_data``."""
    if isinstance(message, Subscription):
        doc: dict[str, Any] = {"message": "subscription", "version": message.version,
                               "topics": list(message.topics),
                               "user_data": _user_data(message.user_data, SubscriptionInfo, raw_user_data,
                                                       message.user_data_offset())}
        v = message.version
        if v >= 1:
            doc["owned_partitions"] = _grouped(message.owned_partitions)
        if v >= 2:
            doc["generation_id"] = message.generation_id
        if v >= 3:
            doc["rack_id"] = message.rack_id
        return doc
    if isinstance(message, Assignment):
        return {"message": "assignment", "version": message.version,
                "assigned_partitions": _grouped(message.assigned_partitions),
                "user_data": _user_data(message.user_data, AssignmentInfo, raw_user_data,
                                        message.user_data_offset())}
    if isinstance(message, SubscriptionInfo):
        return _subscription_info(message)
    return _assignment_info(message)


def _grouped(groups: tuple[tuple[str, tuple[int, ...]], ...]) -> list[dict[str, Any]]:
    return [{"topic": t, "partitions": list(ps)} for t, ps in groups]


def _user_data(data: bytes | None, kind: Any, raw: bool, offset: int) -> Any:
    if data is None:
        return None
    if raw:
        return {"hex": data.hex()}
    return message_to_json(kind.decode(data, base=offset))


def task_to_json(t: TaskId) -> Any:
    """``"0_1"`` / ``"name__0_1"``; an object when the name would not parse back from the string."""
    text = str(t)
    try:
        if TaskId.parse(text) == t:
            return text
    except TaskIdFormatError:
        pass
    return {"subtopology": t.subtopology, "partition": t.partition, "topology_name": t.topology_name}


def _partitions(parts: tuple[TopicPartition, ...]) -> list[list[Any]]:
    return [[t, p] for t, p in parts]


def _hosts(entries: tuple[tuple[HostInfo, tuple[TopicPartition, ...]], ...]) -> list[dict[str, Any]]:
    return [{"host": h.host, "port": h.port, "partitions": _partitions(ps)} for h, ps in entries]


def _subscription_info(info: SubscriptionInfo) -> dict[str, Any]:
    v = info.version
    doc: dict[str, Any] = {"message": "subscription_info", "version": v}
    if v >= 3:
        doc["latest_supported_version"] = info.latest_supported_version
    if info.is_future:
        return doc
    doc["process_id"] = str(info.process_id)
    if v <= 6:
        doc["prev_tasks"] = [task_to_json(t) for t in info.prev_tasks]
        doc["standby_tasks"] = [task_to_json(t) for t in info.standby_tasks]
    if v >= 2:
        doc["user_endpoint"] = info.user_endpoint
    if v >= 7:
        doc["task_offset_sums"] = [{"task": task_to_json(t), "offset_sum": o} for t, o in info.task_offset_sums]
    if v >= 8:
        doc["unique_field"] = info.unique_field
    if v >= 9:
        doc["error_code"] = info.error_code
    if v >= 11:
        doc["client_tags"] = dict(info.client_tags)
    return doc


def _assignment_info(info: AssignmentInfo) -> dict[str, Any]:
    v = info.version
    doc: dict[str, Any] = {"message": "assignment_info", "version": v}
    if v >= 3:
        doc["commonly_supported_version"] = info.commonly_supported_version
    doc["active_tasks"] = [task_to_json(t) for t in info.active_tasks]
    doc["standby_tasks"] = [{"task": task_to_json(t), "partitions": _partitions(ps)} for t, ps in info.standby_tasks]
    if v >= 2:
        doc["partitions_by_host"] = _hosts(info.partitions_by_host)
    if v >= 6:
        doc["standby_partitions_by_host"] = _hosts(info.standby_partitions_by_host)
    if v >= 4:
        doc["error_code"] = info.error_code
    if v >= 7:
        doc["next_rebalance_ms"] = info.next_rebalance_ms
    return doc


# --- from JSON ---------------------------------------------------------------------------------------


class _Versioned:
    """Reads the keys of a message object, rejecting keys the message's version does not have."""

    def __init__(self, obj: JsonObject, version: int) -> None:
        self.obj = obj
        self.version = version

    def get(self, key: str, low: int, high: int, default: Any) -> Any:
        if not low <= self.version <= high:
            if self.obj.has(key):
                have = f"{low}+" if high >= ANY_VERSION_ABOVE else f"{low}-{high}" if low != high else str(low)
                self.obj.fail(key, f"version {self.version} has no field {key!r} (versions {have})")
            return default
        return self.obj.raw(key, default)


def message_from_json(doc: Any, *, path: str = "$", source: str | None = None) -> WireMessage:
    """Build the message a JSON document describes; errors name the JSON path."""
    obj = JsonObject(doc, path, source)
    if obj.has("format"):
        fmt = obj.string("format")
        if fmt != WIRE_FORMAT:
            obj.fail("format", f"expected {WIRE_FORMAT!r}, got {fmt!r}")
    kind = obj.string("message")
    readers: dict[str, Callable[[JsonObject], WireMessage]] = {
        "subscription": _read_subscription,
        "assignment": _read_assignment,
        "subscription_info": _read_subscription_info,
        "assignment_info": _read_assignment_info,
    }
    if kind not in readers:
        obj.fail("message", f"unknown message {kind!r}; one of {', '.join(readers)}")
    message = readers[kind](obj)
    obj.finish()
    return message


def _int(obj: JsonObject, value: Any, key: str, bounds: tuple[int, int]) -> int:
    return check_int(value, obj.sub(key), minimum=bounds[0], maximum=bounds[1], source=obj.source)


def _version(obj: JsonObject, bounds: tuple[int, int]) -> int:
    return _int(obj, obj.raw("version"), "version", bounds)


def _list(obj: JsonObject, value: Any, key: str) -> list[Any]:
    if not isinstance(value, list):
        obj.fail(key, f"expected an array, got {describe(value)}")
    return value


def _str(value: Any, path: str, source: str | None, *, nullable: bool = False) -> Any:
    if value is None and nullable:
        return None
    if not isinstance(value, str):
        fail(path, f"expected a string{' or null' if nullable else ''}, got {describe(value)}", source)
    return value


def _task(value: Any, path: str, source: str | None) -> TaskId:
    if isinstance(value, dict):
        o = JsonObject(value, path, source)
        sub = o.integer("subtopology", minimum=0, maximum=INT32[1])
        part = o.integer("partition", minimum=0, maximum=INT32[1])
        name = o.string("topology_name", None, nullable=True)
        o.finish()
        return TaskId(sub, part, name)
    text = _str(value, path, source)
    try:
        return TaskId.parse(text)
    except TaskIdFormatError as exc:
        fail(path, str(exc), source)


def _tasks(obj: JsonObject, value: Any, key: str) -> tuple[TaskId, ...]:
    return tuple(_task(v, f"{obj.sub(key)}[{i}]", obj.source) for i, v in enumerate(_list(obj, value, key)))


def _topic_partitions(value: Any, path: str, source: str | None) -> tuple[TopicPartition, ...]:
    if not isinstance(value, list):
        fail(path, f"expected an array of [topic, partition] pairs, got {describe(value)}", source)
    out = []
    for i, pair in enumerate(value):
        where = f"{path}[{i}]"
        if not isinstance(pair, list) or len(pair) != 2:
            fail(where, f"expected a [topic, partition] pair, got {describe(pair)}", source)
        topic = _str(pair[0], f"{where}[0]", source)
        out.append((topic, check_int(pair[1], f"{where}[1]", minimum=INT32[0], maximum=INT32[1], source=source)))
    return tuple(out)


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


def _grouped_from(obj: JsonObject, value: Any, key: str) -> tuple[tuple[str, tuple[int, ...]], ...]:
    out = []
    for i, item in enumerate(_list(obj, value, key)):
        entry = JsonObject(item, f"{obj.sub(key)}[{i}]", obj.source)
        topic = entry.string("topic")
        parts = entry.array("partitions")
        ints = tuple(check_int(p, f"{entry.sub('partitions')}[{j}]", minimum=INT32[0], maximum=INT32[1],
                               source=obj.source) for j, p in enumerate(parts))
        entry.finish()
        out.append((topic, ints))
    return tuple(out)


def _read_subscription(obj: JsonObject) -> Subscription:
    version = _version(obj, (0, INT16[1]))
    fields = _Versioned(obj, version)
    topics = _list(obj, obj.raw("topics", []), "topics")
    owned = fields.get("owned_partitions", 1, ANY_VERSION_ABOVE, [])
    generation = fields.get("generation_id", 2, ANY_VERSION_ABOVE, -1)
    rack = fields.get("rack_id", 3, ANY_VERSION_ABOVE, None)
    return Subscription(
        version,
        tuple(_str(t, f"{obj.sub('topics')}[{i}]", obj.source) for i, t in enumerate(topics)),
        _user_data_in(obj, SubscriptionInfo),
        _grouped_from(obj, owned, "owned_partitions"),
        _int(obj, generation, "generation_id", INT32),
        _str(rack, obj.sub("rack_id"), obj.source, nullable=True),
    )


def _read_assignment(obj: JsonObject) -> Assignment:
    version = _version(obj, (0, INT16[1]))
    parts = obj.raw("assigned_partitions", [])
    return Assignment(version, _grouped_from(obj, parts, "assigned_partitions"), _user_data_in(obj, AssignmentInfo))


def _read_subscription_info(obj: JsonObject) -> SubscriptionInfo:
    version = _version(obj, (1, INT32[1]))
    fields = _Versioned(obj, version)
    default_latest = LATEST_SUPPORTED_VERSION if version <= LATEST_SUPPORTED_VERSION else version
    latest = _int(obj, fields.get("latest_supported_version", 3, ANY_VERSION_ABOVE, default_latest),
                  "latest_supported_version", INT32)
    if version < 3:
        latest = -1
    if version > LATEST_SUPPORTED_VERSION:
        return SubscriptionInfo(version, None, latest)
    pid_text = _str(obj.raw("process_id"), obj.sub("process_id"), obj.source)
    try:
        pid = ProcessId(pid_text)
    except ProcessIdFormatError as exc:
        obj.fail("process_id", str(exc))
    sums_raw = _list(obj, fields.get("task_offset_sums", 7, LATEST_SUPPORTED_VERSION, []), "task_offset_sums")
    sums = []
    for i, item in enumerate(sums_raw):
        entry = JsonObject(item, f"{obj.sub('task_offset_sums')}[{i}]", obj.source)
        t = _task(entry.raw("task"), entry.sub("task"), obj.source)
        sums.append((t, entry.integer("offset_sum", minimum=INT64[0])))
        entry.finish()
    tags_raw = fields.get("client_tags", 11, LATEST_SUPPORTED_VERSION, {})
    if not isinstance(tags_raw, dict):
        obj.fail("client_tags", f"expected an object of tag -> value, got {describe(tags_raw)}")
    tags = tuple((k, _str(v, f"{obj.sub('client_tags')}.{k}", obj.source)) for k, v in tags_raw.items())
    endpoint = fields.get("user_endpoint", 2, LATEST_SUPPORTED_VERSION, None)
    return SubscriptionInfo(
        version, pid, latest,
        prev_tasks=_tasks(obj, fields.get("prev_tasks", 1, 6, []), "prev_tasks"),
        standby_tasks=_tasks(obj, fields.get("standby_tasks", 1, 6, []), "standby_tasks"),
        user_endpoint=_str(endpoint, obj.sub("user_endpoint"), obj.source, nullable=True) or None,
        task_offset_sums=tuple(sums),
        unique_field=_int(obj, fields.get("unique_field", 8, LATEST_SUPPORTED_VERSION, 0), "unique_field", INT8),
        error_code=_int(obj, fields.get("error_code", 9, LATEST_SUPPORTED_VERSION, 0), "error_code", INT32),
        client_tags=tags,
    )


def _host_map(obj: JsonObject, value: Any, key: str) -> tuple[tuple[HostInfo, tuple[TopicPartition, ...]], ...]:
    out = []
    for i, item in enumerate(_list(obj, value, key)):
        entry = JsonObject(item, f"{obj.sub(key)}[{i}]", obj.source)
        host = HostInfo(entry.string("host"), entry.integer("port", minimum=INT32[0], maximum=INT32[1]))
        out.append((host, _topic_partitions(entry.raw("partitions"), entry.sub("partitions"), obj.source)))
        entry.finish()
    return tuple(out)


def _read_assignment_info(obj: JsonObject) -> AssignmentInfo:
    version = _version(obj, (1, LATEST_SUPPORTED_VERSION))
    fields = _Versioned(obj, version)
    top = LATEST_SUPPORTED_VERSION
    common = _int(obj, fields.get("commonly_supported_version", 3, top, -1), "commonly_supported_version", INT32)
    standbys = []
    for i, item in enumerate(_list(obj, obj.raw("standby_tasks", []), "standby_tasks")):
        entry = JsonObject(item, f"{obj.sub('standby_tasks')}[{i}]", obj.source)
        t = _task(entry.raw("task"), entry.sub("task"), obj.source)
        standbys.append((t, _topic_partitions(entry.raw("partitions"), entry.sub("partitions"), obj.source)))
        entry.finish()
    return AssignmentInfo(
        version, common,
        active_tasks=_tasks(obj, obj.raw("active_tasks", []), "active_tasks"),
        standby_tasks=tuple(standbys),
        partitions_by_host=_host_map(obj, fields.get("partitions_by_host", 2, top, []), "partitions_by_host"),
        standby_partitions_by_host=_host_map(
            obj, fields.get("standby_partitions_by_host", 6, top, []), "standby_partitions_by_host"),
        error_code=_int(obj, fields.get("error_code", 4, top, 0), "error_code", INT32),
        next_rebalance_ms=_int(obj, fields.get("next_rebalance_ms", 7, top, INT64[1]), "next_rebalance_ms", INT64),
    )
