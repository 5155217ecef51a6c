"""Kafka's wire protocol, exactly, for the few requests a streams-group capture sends and kafka-python 2.x does
not know (StreamsGroupDescribe, api key 89) or knows only in older versions.

Every message here is a *flexible* version (KIP-482): compact strings and arrays (unsigned varint length + 1),
and a tagged-field section after every struct. Tagged fields this module does not know are skipped, never
fatal: a newer broker may add them (that is what they are for). The layouts follow Kafka's message schemas
(``clients/src/main/resources/common/message/*.json``), named per function:

* ``ApiVersionsRequest/Response`` v3 (the response header is always v0; a broker that does not speak v3
  answers ``UNSUPPORTED_VERSION`` in the v0 layout, which ``decode_api_versions`` reads too);
* ``FindCoordinatorRequest/Response`` v4-v6 (batched coordinator keys);
* ``StreamsGroupDescribeRequest/Response`` v0 and v1 (v1: KIP-1331's topology description, KIP-1357's
  assignor name);
* ``ListGroupsRequest/Response`` v5 (``TypesFilter``: classic, consumer, share, streams);
* ``DescribeConfigsRequest/Response`` v4 (resource type 32 = GROUP);
* ``MetadataRequest/Response`` v12;
* ``SaslHandshakeRequest/Response`` v1 (not flexible: request header v1, response header v0) and
  ``SaslAuthenticateRequest/Response`` v2 (flexible), the SASL exchange of KIP-152 and KIP-368.

Malformed bytes raise ``DecodeError`` naming the message, the field and the byte offset.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from taskassign.errors import DecodeError

__all__ = (
    "ApiVersions",
    "ConfigEntry",
    "Coordinator",
    "GroupConfigs",
    "ListedGroup",
    "MetadataTopic",
    "Reader",
    "SaslAuthenticated",
    "StreamsDescribedGroup",
    "StreamsMember",
    "StreamsSubtopology",
    "TopicInfo",
    "Writer",
    "decode_api_versions",
    "decode_describe_configs",
    "decode_find_coordinator",
    "decode_list_groups",
    "decode_metadata",
    "decode_sasl_authenticate",
    "decode_sasl_handshake",
    "decode_streams_group_describe",
    "encode_api_versions",
    "encode_describe_configs",
    "encode_find_coordinator",
    "encode_list_groups",
    "encode_metadata",
    "encode_sasl_authenticate",
    "encode_sasl_handshake",
    "encode_streams_group_describe",
    "request_header",
    "request_header_v1",
)

T = TypeVar("T")

API_VERSIONS, FIND_COORDINATOR, LIST_GROUPS, DESCRIBE_CONFIGS, METADATA = 18, 10, 16, 32, 3
STREAMS_GROUP_DESCRIBE, STREAMS_GROUP_HEARTBEAT = 89, 88
SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36
#: DescribeConfigs' resource type of a group (ConfigResource.Type.GROUP).
GROUP_RESOURCE = 32
UNSUPPORTED_VERSION = 35


class Reader:
    """A cursor over one response body; every read names its field for the error it may raise."""

    def __init__(self, data: bytes, message: str, version: int) -> None:
        self.data = data
        self.pos = 0
        self.message = message
        self.version = version

    def fail(self, name: str, reason: str) -> DecodeError:
        return DecodeError(self.message, name, self.pos, reason, version=self.version)

    def _take(self, n: int, name: str) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise self.fail(name, f"needs {n} bytes, {len(self.data) - self.pos} left")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def int8(self, name: str) -> int:
        return int(struct.unpack(">b", self._take(1, name))[0])

    def bool(self, name: str) -> bool:
        return self.int8(name) != 0

    def int16(self, name: str) -> int:
        return int(struct.unpack(">h", self._take(2, name))[0])

    def uint16(self, name: str) -> int:
        return int(struct.unpack(">H", self._take(2, name))[0])

    def int32(self, name: str) -> int:
        return int(struct.unpack(">i", self._take(4, name))[0])

    def int64(self, name: str) -> int:
        return int(struct.unpack(">q", self._take(8, name))[0])

    def uuid(self, name: str) -> str:
        return str(uuid.UUID(bytes=self._take(16, name)))

    def uvarint(self, name: str) -> int:
        value, shift = 0, 0
        while True:
            (byte,) = self._take(1, name)
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
            if shift > 28:
                raise self.fail(name, "unsigned varint longer than 5 bytes")

    def compact_nullable_string(self, name: str) -> str | None:
        n = self.uvarint(name)
        if n == 0:
            return None
        raw = self._take(n - 1, name)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail(name, "not UTF-8") from None

    def compact_string(self, name: str) -> str:
        value = self.compact_nullable_string(name)
        if value is None:
            raise self.fail(name, "null where Kafka's schema has a non-nullable string")
        return value

    def compact_nullable_array(self, name: str, item: Callable[[Reader, str], T]) -> list[T] | None:
        n = self.uvarint(name)
        if n == 0:
            return None
        if n - 1 > len(self.data) - self.pos:  # every element takes at least one byte
            raise self.fail(name, f"array of {n - 1} elements in {len(self.data) - self.pos} bytes")
        return [item(self, f"{name}[{i}]") for i in range(n - 1)]

    def compact_array(self, name: str, item: Callable[[Reader, str], T]) -> list[T]:
        values = self.compact_nullable_array(name, item)
        if values is None:
            raise self.fail(name, "null where Kafka's schema has a non-nullable array")
        return values

    def tagged_fields(self, name: str) -> dict[int, bytes]:
        """The tagged-field section: every tag's raw bytes (callers decode the tags they know)."""
        tags: dict[int, bytes] = {}
        for _ in range(self.uvarint(f"{name}.tagged_fields")):
            tag = self.uvarint(f"{name}.tag")
            size = self.uvarint(f"{name}.tag[{tag}].size")
            tags[tag] = self._take(size, f"{name}.tag[{tag}]")
        return tags

    def compact_bytes(self, name: str) -> bytes | None:
        """COMPACT_(NULLABLE_)BYTES: unsigned varint length + 1 (0: null), then the bytes."""
        n = self.uvarint(name)
        return None if n == 0 else self._take(n - 1, name)

    def string(self, name: str) -> str:
        """STRING (not flexible): an int16 length, then UTF-8."""
        n = self.int16(name)
        try:
            return self._take(n, name).decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail(name, "not UTF-8") from None

    def finish(self) -> None:
        if self.pos != len(self.data):
            raise self.fail("(end)", f"{len(self.data) - self.pos} bytes left after the last field")


class Writer:
    """Builds a request body."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def int8(self, value: int) -> Writer:
        self.parts.append(struct.pack(">b", value))
        return self

    def bool(self, value: bool) -> Writer:
        return self.int8(1 if value else 0)

    def int16(self, value: int) -> Writer:
        self.parts.append(struct.pack(">h", value))
        return self

    def int32(self, value: int) -> Writer:
        self.parts.append(struct.pack(">i", value))
        return self

    def uuid(self, value: str | None) -> Writer:
        self.parts.append(uuid.UUID(value).bytes if value else bytes(16))
        return self

    def uvarint(self, value: int) -> Writer:
        out = bytearray()
        while True:
            byte = value & 0x7F
            value >>= 7
            if value:
                out.append(byte | 0x80)
            else:
                out.append(byte)
                break
        self.parts.append(bytes(out))
        return self

    def compact_string(self, value: str | None) -> Writer:
        if value is None:
            return self.uvarint(0)
        raw = value.encode("utf-8")
        self.uvarint(len(raw) + 1)
        self.parts.append(raw)
        return self

    def compact_array(self, values: Sequence[T] | None, item: Callable[[Writer, T], object]) -> Writer:
        if values is None:
            return self.uvarint(0)
        self.uvarint(len(values) + 1)
        for value in values:
            item(self, value)
        return self

    def compact_bytes(self, value: bytes) -> Writer:
        self.uvarint(len(value) + 1)
        self.parts.append(value)
        return self

    def string(self, value: str) -> Writer:
        raw = value.encode("utf-8")
        self.int16(len(raw))
        self.parts.append(raw)
        return self

    def tagged_fields(self) -> Writer:
        return self.uvarint(0)

    def bytes(self) -> bytes:
        return b"".join(self.parts)


def request_header(api_key: int, version: int, correlation_id: int, client_id: str) -> bytes:
    """Request header v2 (every flexible request, ApiVersions v3+ included): the client id keeps its int16
    length (not compact), then an empty tagged-field section."""
    raw = client_id.encode("utf-8")
    return struct.pack(">hhih", api_key, version, correlation_id, len(raw)) + raw + b"\x00"


def request_header_v1(api_key: int, version: int, correlation_id: int, client_id: str) -> bytes:
    """Request header v1 (requests that are not flexible, SaslHandshake here): v2 without the tagged fields."""
    return request_header(api_key, version, correlation_id, client_id)[:-1]


def _string(r: Reader, name: str) -> str:
    return r.compact_string(name)


def _int32(r: Reader, name: str) -> int:
    return r.int32(name)


# --- ApiVersions ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ApiVersions:
    """The broker's answer: ``ranges`` api key -> (min, max); ``finalized_features`` name -> max level
    (``streams.version`` among them on brokers with the streams protocol)."""

    error_code: int
    ranges: dict[int, tuple[int, int]]
    supported_features: dict[str, tuple[int, int]] = field(default_factory=dict)
    finalized_features: dict[str, int] = field(default_factory=dict)


def encode_api_versions(software_name: str, software_version: str) -> bytes:
    return Writer().compact_string(software_name).compact_string(software_version).tagged_fields().bytes()


def decode_api_versions(body: bytes, version: int = 3) -> ApiVersions:
    """ApiVersionsResponse v3 (or the v0 layout a broker answers UNSUPPORTED_VERSION in)."""
    r = Reader(body, "ApiVersionsResponse", version)
    error = r.int16("ErrorCode")
    if error == UNSUPPORTED_VERSION:  # the broker answers in v0: an int32-length array of (key, min, max)
        count = r.int32("ApiKeys")
        ranges: dict[int, tuple[int, int]] = {}
        for i in range(max(0, count)):
            key = r.int16(f"ApiKeys[{i}].ApiKey")
            ranges[key] = (r.int16(f"ApiKeys[{i}].MinVersion"), r.int16(f"ApiKeys[{i}].MaxVersion"))
        return ApiVersions(error, ranges)

    def api(r: Reader, name: str) -> tuple[int, int, int]:
        key, low, high = r.int16(f"{name}.ApiKey"), r.int16(f"{name}.MinVersion"), r.int16(f"{name}.MaxVersion")
        r.tagged_fields(name)
        return key, low, high

    keys = r.compact_array("ApiKeys", api)
    r.int32("ThrottleTimeMs")
    tags = r.tagged_fields("ApiVersionsResponse")
    r.finish()
    supported: dict[str, tuple[int, int]] = {}
    finalized: dict[str, int] = {}
    if 0 in tags:
        t = Reader(tags[0], "ApiVersionsResponse.SupportedFeatures", version)

        def feature(t: Reader, name: str) -> tuple[str, int, int]:
            entry = t.compact_string(f"{name}.Name"), t.int16(f"{name}.MinVersion"), t.int16(f"{name}.MaxVersion")
            t.tagged_fields(name)
            return entry

        supported = {n: (lo, hi) for n, lo, hi in t.compact_array("SupportedFeatures", feature)}
    if 2 in tags:
        t = Reader(tags[2], "ApiVersionsResponse.FinalizedFeatures", version)

        def finalized_feature(t: Reader, name: str) -> tuple[str, int]:
            entry = t.compact_string(f"{name}.Name"), t.int16(f"{name}.MaxVersionLevel")
            t.int16(f"{name}.MinVersionLevel")
            t.tagged_fields(name)
            return entry

        finalized = dict(t.compact_array("FinalizedFeatures", finalized_feature))
    return ApiVersions(error, {k: (lo, hi) for k, lo, hi in keys}, supported, finalized)


# --- FindCoordinator -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Coordinator:
    key: str
    node_id: int
    host: str
    port: int
    error_code: int
    error_message: str | None


def encode_find_coordinator(group_id: str) -> bytes:
    """FindCoordinatorRequest v4-v6: KeyType 0 (group), one coordinator key."""
    return Writer().int8(0).compact_array([group_id], Writer.compact_string).tagged_fields().bytes()


def decode_find_coordinator(body: bytes, version: int) -> list[Coordinator]:
    r = Reader(body, "FindCoordinatorResponse", version)
    r.int32("ThrottleTimeMs")

    def coordinator(r: Reader, name: str) -> Coordinator:
        c = Coordinator(r.compact_string(f"{name}.Key"), r.int32(f"{name}.NodeId"), r.compact_string(f"{name}.Host"),
                        r.int32(f"{name}.Port"), r.int16(f"{name}.ErrorCode"),
                        r.compact_nullable_string(f"{name}.ErrorMessage"))
        r.tagged_fields(name)
        return c

    found = r.compact_array("Coordinators", coordinator)
    r.tagged_fields("FindCoordinatorResponse")
    r.finish()
    return found


# --- ListGroups ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ListedGroup:
    group_id: str
    protocol_type: str
    state: str
    group_type: str


def encode_list_groups(types: Sequence[str] = ()) -> bytes:
    """ListGroupsRequest v5: no state filter, ``types`` as the type filter (empty: every type)."""
    return (Writer().compact_array([], Writer.compact_string).compact_array(list(types), Writer.compact_string)
            .tagged_fields().bytes())


def decode_list_groups(body: bytes, version: int = 5) -> tuple[int, list[ListedGroup]]:
    r = Reader(body, "ListGroupsResponse", version)
    r.int32("ThrottleTimeMs")
    error = r.int16("ErrorCode")

    def group(r: Reader, name: str) -> ListedGroup:
        g = ListedGroup(r.compact_string(f"{name}.GroupId"), r.compact_string(f"{name}.ProtocolType"),
                        r.compact_string(f"{name}.GroupState"), r.compact_string(f"{name}.GroupType"))
        r.tagged_fields(name)
        return g

    groups = r.compact_array("Groups", group)
    r.tagged_fields("ListGroupsResponse")
    r.finish()
    return error, groups


# --- DescribeConfigs -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """One config: ``source`` is Kafka's ConfigSource (5 DEFAULT_CONFIG, 8 GROUP_CONFIG, ...)."""

    name: str
    value: str | None
    read_only: bool
    source: int


@dataclass(frozen=True, slots=True)
class GroupConfigs:
    error_code: int
    error_message: str | None
    configs: tuple[ConfigEntry, ...]


def encode_describe_configs(group_id: str, *, synonyms: bool = True) -> bytes:
    """DescribeConfigsRequest v4 for one GROUP resource, every key."""
    def resource(w: Writer, name: str) -> None:
        w.int8(GROUP_RESOURCE).compact_string(name).compact_array(None, Writer.compact_string).tagged_fields()

    return Writer().compact_array([group_id], resource).bool(synonyms).bool(False).tagged_fields().bytes()


def decode_describe_configs(body: bytes, version: int = 4) -> GroupConfigs:
    r = Reader(body, "DescribeConfigsResponse", version)
    r.int32("ThrottleTimeMs")

    def synonym(r: Reader, name: str) -> None:
        r.compact_string(f"{name}.Name")
        r.compact_nullable_string(f"{name}.Value")
        r.int8(f"{name}.Source")
        r.tagged_fields(name)

    def config(r: Reader, name: str) -> ConfigEntry:
        key, value = r.compact_string(f"{name}.Name"), r.compact_nullable_string(f"{name}.Value")
        read_only, source = r.bool(f"{name}.ReadOnly"), r.int8(f"{name}.ConfigSource")
        r.bool(f"{name}.IsSensitive")
        r.compact_array(f"{name}.Synonyms", synonym)
        r.int8(f"{name}.ConfigType")
        r.compact_nullable_string(f"{name}.Documentation")
        r.tagged_fields(name)
        return ConfigEntry(key, value, read_only, source)

    def result(r: Reader, name: str) -> GroupConfigs:
        error, message = r.int16(f"{name}.ErrorCode"), r.compact_nullable_string(f"{name}.ErrorMessage")
        r.int8(f"{name}.ResourceType")
        r.compact_string(f"{name}.ResourceName")
        configs = r.compact_array(f"{name}.Configs", config)
        r.tagged_fields(name)
        return GroupConfigs(error, message, tuple(configs))

    results = r.compact_array("Results", result)
    r.tagged_fields("DescribeConfigsResponse")
    r.finish()
    if len(results) != 1:
        raise r.fail("Results", f"expected the one resource asked for, got {len(results)}")
    return results[0]


# --- Metadata --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MetadataTopic:
    name: str
    error_code: int
    #: (partition, leader, replicas) per partition.
    partitions: tuple[tuple[int, int, tuple[int, ...]], ...]


def encode_metadata(topics: Sequence[str]) -> bytes:
    """MetadataRequest v12 for ``topics`` (no topic id), no auto-creation, no authorized operations."""
    def topic(w: Writer, name: str) -> None:
        w.uuid(None).compact_string(name).tagged_fields()

    return Writer().compact_array(list(topics), topic).bool(False).bool(False).tagged_fields().bytes()


def decode_metadata(body: bytes, version: int = 12) -> tuple[dict[int, str | None], list[MetadataTopic]]:
    """Brokers' racks by node id, and the topics."""
    r = Reader(body, "MetadataResponse", version)
    r.int32("ThrottleTimeMs")

    def broker(r: Reader, name: str) -> tuple[int, str | None]:
        node = r.int32(f"{name}.NodeId")
        r.compact_string(f"{name}.Host")
        r.int32(f"{name}.Port")
        rack = r.compact_nullable_string(f"{name}.Rack")
        r.tagged_fields(name)
        return node, rack

    def partition(r: Reader, name: str) -> tuple[int, int, tuple[int, ...]]:
        r.int16(f"{name}.ErrorCode")
        index, leader = r.int32(f"{name}.PartitionIndex"), r.int32(f"{name}.LeaderId")
        r.int32(f"{name}.LeaderEpoch")
        replicas = tuple(r.compact_array(f"{name}.ReplicaNodes", _int32))
        r.compact_array(f"{name}.IsrNodes", _int32)
        r.compact_array(f"{name}.OfflineReplicas", _int32)
        r.tagged_fields(name)
        return index, leader, replicas

    def topic(r: Reader, name: str) -> MetadataTopic:
        error, topic_name = r.int16(f"{name}.ErrorCode"), r.compact_nullable_string(f"{name}.Name")
        r.uuid(f"{name}.TopicId")
        r.bool(f"{name}.IsInternal")
        parts = r.compact_array(f"{name}.Partitions", partition)
        r.int32(f"{name}.TopicAuthorizedOperations")
        r.tagged_fields(name)
        return MetadataTopic(topic_name or "", error, tuple(sorted(parts)))

    brokers = dict(r.compact_array("Brokers", broker))
    r.compact_nullable_string("ClusterId")
    r.int32("ControllerId")
    topics = r.compact_array("Topics", topic)
    if version >= 13:
        r.int16("ErrorCode")
    r.tagged_fields("MetadataResponse")
    r.finish()
    return brokers, topics


# --- StreamsGroupDescribe --------------------------------------------------------------------------------


def encode_streams_group_describe(group_id: str, version: int) -> bytes:
    """StreamsGroupDescribeRequest v0/v1 for one group (v1 asks for the topology description, KIP-1331)."""
    w = Writer().compact_array([group_id], Writer.compact_string).bool(False)
    if version >= 1:
        w.bool(True)
    return w.tagged_fields().bytes()


@dataclass(frozen=True, slots=True)
class TopicInfo:
    name: str
    partitions: int
    replication_factor: int
    configs: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class StreamsSubtopology:
    subtopology_id: str
    source_topics: tuple[str, ...]
    repartition_sink_topics: tuple[str, ...]
    state_changelog_topics: tuple[TopicInfo, ...]
    repartition_source_topics: tuple[TopicInfo, ...]


#: Tasks by subtopology id as the broker lists them: (subtopology id, partitions).
Tasks = tuple[tuple[str, tuple[int, ...]], ...]


@dataclass(frozen=True, slots=True)
class StreamsAssignment:
    active: Tasks
    standby: Tasks
    warmup: Tasks


@dataclass(frozen=True, slots=True)
class StreamsMember:
    member_id: str
    member_epoch: int
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    topology_epoch: int
    process_id: str
    user_endpoint: tuple[str, int] | None
    client_tags: tuple[tuple[str, str], ...]
    #: (subtopology id, partition, offset) as the member reported them.
    task_offsets: tuple[tuple[str, int, int], ...]
    task_end_offsets: tuple[tuple[str, int, int], ...]
    assignment: StreamsAssignment
    target_assignment: StreamsAssignment
    is_classic: bool


@dataclass(frozen=True, slots=True)
class StreamsDescribedGroup:
    error_code: int
    error_message: str | None
    group_id: str
    state: str
    group_epoch: int
    assignment_epoch: int
    topology_epoch: int | None
    #: None: the broker holds no configured topology (uninitialised, source topics missing).
    subtopologies: tuple[StreamsSubtopology, ...] | None
    members: tuple[StreamsMember, ...]
    #: v1 (KIP-1331): the description as JSON-ready data, and its status (0 NOT_REQUESTED .. 3 AVAILABLE).
    topology_description: dict[str, object] | None = None
    topology_description_status: int | None = None
    #: v1 (KIP-1357): the assignor the coordinator uses for the next computation.
    assignor_name: str | None = None
    #: tags a newer broker sent that this version of taskassign does not know (skipped), by where.
    unknown_tags: tuple[str, ...] = ()


def _key_value(r: Reader, name: str) -> tuple[str, str]:
    kv = r.compact_string(f"{name}.Key"), r.compact_string(f"{name}.Value")
    r.tagged_fields(name)
    return kv


def _topic_info(r: Reader, name: str) -> TopicInfo:
    info = TopicInfo(r.compact_string(f"{name}.Name"), r.int32(f"{name}.Partitions"),
                     r.int16(f"{name}.ReplicationFactor"), tuple(r.compact_array(f"{name}.TopicConfigs", _key_value)))
    r.tagged_fields(name)
    return info


def _task_ids(r: Reader, name: str) -> tuple[str, tuple[int, ...]]:
    entry = r.compact_string(f"{name}.SubtopologyId"), tuple(r.compact_array(f"{name}.Partitions", _int32))
    r.tagged_fields(name)
    return entry


def _task_offset(r: Reader, name: str) -> tuple[str, int, int]:
    entry = r.compact_string(f"{name}.SubtopologyId"), r.int32(f"{name}.Partition"), r.int64(f"{name}.Offset")
    r.tagged_fields(name)
    return entry


def _node(r: Reader, name: str) -> dict[str, object]:
    node: dict[str, object] = {"name": r.compact_string(f"{name}.Name")}
    node["type"] = {1: "source", 2: "processor", 3: "sink"}.get(r.int8(f"{name}.NodeType"), "unknown")
    node["source_topics"] = r.compact_array(f"{name}.SourceTopics", _string)
    node["sink_topic"] = r.compact_nullable_string(f"{name}.SinkTopic")
    node["stores"] = r.compact_array(f"{name}.Stores", _string)
    node["successors"] = r.compact_array(f"{name}.Successors", _string)
    r.tagged_fields(name)
    return node


def _description(r: Reader, name: str) -> dict[str, object]:
    def sub(r: Reader, name: str) -> dict[str, object]:
        entry: dict[str, object] = {"id": r.compact_string(f"{name}.SubtopologyId")}
        entry["nodes"] = r.compact_array(f"{name}.Nodes", _node)
        r.tagged_fields(name)
        return entry

    def global_store(r: Reader, name: str) -> dict[str, object]:
        entry: dict[str, object] = {"source": _node(r, f"{name}.Source"), "processor": _node(r, f"{name}.Processor")}
        r.tagged_fields(name)
        return entry

    result: dict[str, object] = {"subtopologies": r.compact_array(f"{name}.Subtopologies", sub),
              "global_stores": r.compact_array(f"{name}.GlobalStores", global_store)}
    r.tagged_fields(name)
    return result


def decode_streams_group_describe(body: bytes, version: int) -> list[StreamsDescribedGroup]:
    """StreamsGroupDescribeResponse v0/v1, every group; unknown tagged fields are skipped and named in
    ``unknown_tags``."""
    r = Reader(body, "StreamsGroupDescribeResponse", version)
    unknown: list[str] = []

    def tagged(name: str) -> None:
        unknown.extend(f"{name} tag {t}" for t in r.tagged_fields(name))

    r.int32("ThrottleTimeMs")

    def assignment(r: Reader, name: str) -> StreamsAssignment:
        a = StreamsAssignment(tuple(r.compact_array(f"{name}.ActiveTasks", _task_ids)),
                              tuple(r.compact_array(f"{name}.StandbyTasks", _task_ids)),
                              tuple(r.compact_array(f"{name}.WarmupTasks", _task_ids)))
        tagged(name)
        return a

    def subtopology(r: Reader, name: str) -> StreamsSubtopology:
        s = StreamsSubtopology(r.compact_string(f"{name}.SubtopologyId"),
                               tuple(r.compact_array(f"{name}.SourceTopics", _string)),
                               tuple(r.compact_array(f"{name}.RepartitionSinkTopics", _string)),
                               tuple(r.compact_array(f"{name}.StateChangelogTopics", _topic_info)),
                               tuple(r.compact_array(f"{name}.RepartitionSourceTopics", _topic_info)))
        tagged(name)
        return s

    def endpoint(name: str) -> tuple[str, int] | None:
        present = r.int8(f"{name}")  # a nullable struct: -1 null, 1 present
        if present < 0:
            return None
        value = r.compact_string(f"{name}.Host"), r.uint16(f"{name}.Port")
        tagged(name)
        return value

    def member(r: Reader, name: str) -> StreamsMember:
        member_id, epoch = r.compact_string(f"{name}.MemberId"), r.int32(f"{name}.MemberEpoch")
        instance, rack = r.compact_nullable_string(f"{name}.InstanceId"), r.compact_nullable_string(f"{name}.RackId")
        client_id, host = r.compact_string(f"{name}.ClientId"), r.compact_string(f"{name}.ClientHost")
        topology_epoch, process = r.int32(f"{name}.TopologyEpoch"), r.compact_string(f"{name}.ProcessId")
        user_endpoint = endpoint(f"{name}.UserEndpoint")
        tags = tuple(r.compact_array(f"{name}.ClientTags", _key_value))
        offsets = tuple(r.compact_array(f"{name}.TaskOffsets", _task_offset))
        end_offsets = tuple(r.compact_array(f"{name}.TaskEndOffsets", _task_offset))
        current, target = assignment(r, f"{name}.Assignment"), assignment(r, f"{name}.TargetAssignment")
        is_classic = r.bool(f"{name}.IsClassic")
        tagged(name)
        return StreamsMember(member_id, epoch, instance, rack, client_id, host, topology_epoch, process,
                             user_endpoint, tags, offsets, end_offsets, current, target, is_classic)

    def group(r: Reader, name: str) -> StreamsDescribedGroup:
        error, message = r.int16(f"{name}.ErrorCode"), r.compact_nullable_string(f"{name}.ErrorMessage")
        group_id, state = r.compact_string(f"{name}.GroupId"), r.compact_string(f"{name}.GroupState")
        group_epoch, assignment_epoch = r.int32(f"{name}.GroupEpoch"), r.int32(f"{name}.AssignmentEpoch")
        topology_epoch: int | None = None
        subtopologies: list[StreamsSubtopology] | None = None
        if r.int8(f"{name}.Topology") >= 0:  # nullable struct
            topology_epoch = r.int32(f"{name}.Topology.Epoch")
            subtopologies = r.compact_nullable_array(f"{name}.Topology.Subtopologies", subtopology)
            tagged(f"{name}.Topology")
        members = tuple(r.compact_array(f"{name}.Members", member))
        r.int32(f"{name}.AuthorizedOperations")
        description: dict[str, object] | None = None
        status: int | None = None
        assignor: str | None = None
        if version >= 1:
            if r.int8(f"{name}.TopologyDescription") >= 0:
                description = _description(r, f"{name}.TopologyDescription")
            status = r.int8(f"{name}.TopologyDescriptionStatus")
            assignor = r.compact_nullable_string(f"{name}.AssignorName")
        tagged(name)
        return StreamsDescribedGroup(error, message, group_id, state, group_epoch, assignment_epoch, topology_epoch,
                                     None if subtopologies is None else tuple(subtopologies), members, description,
                                     status, assignor)

    groups = r.compact_array("Groups", group)
    tagged("StreamsGroupDescribeResponse")
    r.finish()
    if unknown:
        groups = [StreamsDescribedGroup(**{**{f: getattr(g, f) for f in g.__dataclass_fields__},
                                           "unknown_tags": tuple(unknown)}) for g in groups]
    return groups


# --- SaslHandshake and SaslAuthenticate ----------------------------------------------------------------------


def encode_sasl_handshake(mechanism: str) -> bytes:
    """SaslHandshakeRequest v1: the mechanism's name (v1: the SASL tokens then go in SaslAuthenticate)."""
    return Writer().string(mechanism).bytes()


def decode_sasl_handshake(body: bytes, version: int = 1) -> tuple[int, tuple[str, ...]]:
    """SaslHandshakeResponse v1: (error code, the mechanisms the listener enables)."""
    r = Reader(body, "SaslHandshakeResponse", version)
    error = r.int16("ErrorCode")
    count = r.int32("Mechanisms")
    if count > len(body) - r.pos:
        raise r.fail("Mechanisms", f"array of {count} strings in {len(body) - r.pos} bytes")
    mechanisms = tuple(r.string(f"Mechanisms[{i}]") for i in range(max(0, count)))
    r.finish()
    return error, mechanisms


@dataclass(frozen=True, slots=True, repr=False)
class SaslAuthenticated:
    """SaslAuthenticateResponse v2. ``auth_bytes`` is the server's SASL token (never shown: ``repr`` leaves it
    out); ``session_lifetime_ms`` 0 means the broker sets no re-authentication deadline (KIP-368)."""

    error_code: int
    error_message: str | None
    auth_bytes: bytes
    session_lifetime_ms: int

    def __repr__(self) -> str:
        return (f"SaslAuthenticated(error_code={self.error_code}, error_message={self.error_message!r}, "
                f"auth_bytes=<{len(self.auth_bytes)} bytes>, session_lifetime_ms={self.session_lifetime_ms})")


def encode_sasl_authenticate(auth_bytes: bytes) -> bytes:
    """SaslAuthenticateRequest v2: one client token of the mechanism's exchange."""
    return Writer().compact_bytes(auth_bytes).tagged_fields().bytes()


def decode_sasl_authenticate(body: bytes, version: int = 2) -> SaslAuthenticated:
    r = Reader(body, "SaslAuthenticateResponse", version)
    error = r.int16("ErrorCode")
    message = r.compact_nullable_string("ErrorMessage")
    token = r.compact_bytes("AuthBytes")
    if token is None:
        raise r.fail("AuthBytes", "null where Kafka's schema has non-nullable bytes")
    lifetime = r.int64("SessionLifetimeMs")
    r.tagged_fields("SaslAuthenticateResponse")
    r.finish()
    return SaslAuthenticated(error, message, token, lifetime)
