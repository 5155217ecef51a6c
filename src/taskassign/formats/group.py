"""GROUP.json (``taskassign/group/v1``, see docs/group-file.md): a consumer group as its leader sees
it at a rebalance, from raw inputs: the members with their subscription bytes, the topology's
subtopologies, the topics' partitions with racks and offsets.

Reading validates everything and decodes every subscription (errors name the JSON path, and for
bytes the field and byte offset); it does not assign anything (``leader/group.py`` does).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

from taskassign.assignors.registry import BUILTIN_ASSIGNORS, builtin_name
from taskassign.configs import AssignmentConfigs
from taskassign.errors import DecodeError, EncodeError
from taskassign.formats.json_io import JsonObject, describe, fail, load_json_file
from taskassign.formats.scenario import parse_configs, typed_configs
from taskassign.formats.wire_documents import bytes_from_text, message_from_json, message_to_json
from taskassign.model import MAX_MEMBERS, MAX_PARTITIONS
from taskassign.wire.consumer_protocol import Assignment, Subscription
from taskassign.wire.subscription_info import SubscriptionInfo

__all__ = (
    "GROUP_FORMAT",
    "CaptureInfo",
    "GroupSpec",
    "MemberSpec",
    "PartitionSpec",
    "SubtopologySpec",
    "TopicSpec",
    "group_with_config_overrides",
    "parse_group",
    "read_group",
)

GROUP_FORMAT = "taskassign/group/v1"
M = TypeVar("M", Subscription, Assignment)
INT_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class SubtopologySpec:
    """One subtopology: its id, the topics it reads, its stores and their changelog topics, the topics it
    writes (only repartition topics matter: they size them) and its co-partition groups (join inputs)."""

    id: int
    source_topics: tuple[str, ...]
    stores: tuple[str, ...] = ()
    changelog_topics: tuple[str, ...] = ()
    sink_topics: tuple[str, ...] = ()
    copartition_groups: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class PartitionSpec:
    """One partition of a topic: replica racks (None = unknown), log end offset, the group's
    committed offset (used as the "end" of a source topic that is also a changelog)."""

    partition: int
    racks: tuple[str, ...] | None = None
    end_offset: int | None = None
    committed_offset: int | None = None


@dataclass(frozen=True, slots=True)
class TopicSpec:
    name: str
    partitions: tuple[PartitionSpec, ...]
    path: str = ""


@dataclass(frozen=True, slots=True)
class MemberSpec:
    """One member (consumer, i.e. StreamThread) and its decoded subscription; ``recorded_assignment`` is
    the consumer-protocol Assignment bytes Kafka's leader sent it (a captured group's recorded outcome)."""

    member_id: str
    subscription: Subscription
    info: SubscriptionInfo
    path: str = ""
    recorded_assignment: bytes | None = None
    client_id: str | None = None
    client_host: str | None = None
    group_instance_id: str | None = None


@dataclass(frozen=True, slots=True)
class CaptureInfo:
    """Where a captured group file came from (``taskassign capture``): the cluster, when, the group's state,
    where its topology and configs came from, and what the capture could not know (``notes``)."""

    bootstrap_server: str
    group: str
    captured_at_ms: int
    group_state: str
    topology_source: str
    configs_source: str
    leader_source: str
    #: The taskassign assignor that reproduces the one Kafka ran (from task.assignor.class); the default of
    #: ``taskassign rebalance`` on this file.
    assignor: str = "high_availability"
    notes: tuple[str, ...] = ()
    #: The broker's release line as its ApiVersions answer showed it (``line``, ``description``, ``evidence``,
    #: ``note``), or None. The application's own Kafka Streams version is ``kafka.version`` / --kafka-version.
    broker_kafka_line: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class GroupSpec:
    """A decoded GROUP.json."""

    name: str
    now_ms: int
    configs: AssignmentConfigs
    raw_configs: Mapping[str, Any]
    subtopologies: tuple[SubtopologySpec, ...]
    topics: Mapping[str, TopicSpec]
    members: tuple[MemberSpec, ...]
    #: The member id of the group leader (default: the first member).
    leader: str
    #: True to simulate a failed end-offset fetch: every changelog end offset sum is unknown (-3).
    end_offsets_unknown: bool = False
    source: str | None = field(default=None, compare=False)
    #: The topology's repartition topics: the partition count it fixes, or None (the leader computes it).
    repartition_topics: Mapping[str, int | None] = field(default_factory=lambda: MappingProxyType({}))
    #: Provenance of a captured file (None for a hand-written one).
    capture: CaptureInfo | None = None

    @property
    def has_recorded_outcome(self) -> bool:
        """True when the file carries the assignment Kafka's leader made (every member's bytes)."""
        return any(m.recorded_assignment is not None for m in self.members)


def read_group(path: str | Path) -> GroupSpec:
    p = Path(path)
    return parse_group(load_json_file(p), source=str(p), default_name=p.name.removesuffix(".json").removesuffix(
        ".group"))


def parse_group(doc: Any, *, source: str | None = None, default_name: str = "group") -> GroupSpec:
    root = JsonObject(doc, "$", source)
    root.expect_format(GROUP_FORMAT)
    name = root.string("name", default_name, non_empty=True)
    now_ms = root.integer("now_ms", 0, minimum=0)
    raw_configs = root.obj("configs")
    configs = parse_configs(raw_configs)
    if (problem := configs.now_ms_problem(now_ms)) is not None:
        root.fail("now_ms", problem)
    subtopologies, repartition = _topology(root.obj("topology"))
    topics = _topics(root.obj("topics"))
    members = _members(root.array("members"), source)
    leader = root.string("leader", members[0].member_id)
    if leader not in {m.member_id for m in members}:
        root.fail("leader", f"{leader!r} is not one of the members")
    unknown_offsets = root.boolean("end_offsets_unknown", False)
    capture = _capture(root.obj("capture", None)) if root.has("capture") else None
    root.finish()
    _check_changelogs(subtopologies, topics, unknown_offsets, source)
    recorded = [m for m in members if m.recorded_assignment is not None]
    if recorded and len(recorded) != len(members):
        missing = next(m for m in members if m.recorded_assignment is None)
        fail(missing.path, "a recorded outcome lists every member's assignment: this member has none", source)
    return GroupSpec(name, now_ms, configs, MappingProxyType(typed_configs(raw_configs.data)), subtopologies,
                     MappingProxyType(topics), members, leader, unknown_offsets, source, MappingProxyType(repartition),
                     capture)


def _capture(obj: JsonObject) -> CaptureInfo:
    info = CaptureInfo(
        bootstrap_server=obj.string("bootstrap_server"),
        group=obj.string("group"),
        captured_at_ms=obj.integer("captured_at_ms", minimum=0),
        group_state=obj.string("group_state"),
        topology_source=obj.string("topology_source"),
        configs_source=obj.string("configs_source"),
        leader_source=obj.string("leader_source"),
        assignor=obj.string("assignor", "high_availability", non_empty=True),
        notes=tuple(obj.string_list("notes", [])),
        broker_kafka_line=_broker_kafka_line(obj),
    )
    if builtin_name(info.assignor) is None:
        # The file is data: naming a plug-in here would make `rebalance` import and run it. A plug-in is
        # the user's explicit choice: --assignor.
        obj.fail("assignor", f"must name a built-in assignor ({', '.join(sorted(BUILTIN_ASSIGNORS))}), got "
                             f"{info.assignor!r}: a plug-in (module:Class, file.py:Class) is code, which a group "
                             "file cannot make taskassign run; give it with --assignor instead")
    obj.finish()
    return info


def _broker_kafka_line(obj: JsonObject) -> Mapping[str, Any] | None:
    raw = obj.raw("broker_kafka_line", None)
    if raw is None:
        return None
    if not isinstance(raw, dict) or not (raw.get("line") is None or isinstance(raw.get("line"), str)):
        obj.fail("broker_kafka_line", "expected an object whose 'line' is a release line or null")
    return MappingProxyType(dict(raw))


def _unique_strings(obj: JsonObject, key: str, *, required: bool = False) -> tuple[str, ...]:
    values = obj.string_list(key) if required else obj.string_list(key, [])
    for i, v in enumerate(values):
        if not v:
            fail(f"{obj.sub(key)}[{i}]", "must not be empty", obj.source)
    return tuple(values)


def _topology(topology: JsonObject) -> tuple[tuple[SubtopologySpec, ...], dict[str, int | None]]:
    items = topology.array("subtopologies")

    def partition_count(value: Any, path: str) -> int | None:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not 1 <= value <= MAX_PARTITIONS):
            fail(path, f"expected a partition count (1 to {MAX_PARTITIONS}) or null (the leader computes it), "
                       f"got {describe(value)}", topology.source)
        return value

    repartition = topology.map_of("repartition_topics", partition_count)
    topology.finish()
    subtopologies = _subtopologies(topology, items)
    sources = {t for s in subtopologies for t in s.source_topics}
    for name in repartition:
        if name not in sources:
            fail(f"{topology.sub('repartition_topics')}.{name}", "a repartition topic must be a source topic of a "
                                                                 "subtopology", topology.source)
    return subtopologies, repartition


def _subtopologies(topology: JsonObject, items: list[Any]) -> tuple[SubtopologySpec, ...]:
    if not items:
        topology.fail("subtopologies", "a topology needs at least one subtopology")
    result: list[SubtopologySpec] = []
    for i, item in enumerate(items):
        obj = JsonObject(item, f"{topology.sub('subtopologies')}[{i}]", topology.source)
        sid = obj.integer("id", minimum=0, maximum=INT_MAX)
        if any(s.id == sid for s in result):
            obj.fail("id", f"duplicate subtopology id {sid}")
        sources = _unique_strings(obj, "source_topics", required=True)
        if not sources:
            obj.fail("source_topics", "a subtopology reads at least one source topic")
        stores = _unique_strings(obj, "stores")
        changelogs = _unique_strings(obj, "changelog_topics")
        if changelogs and not stores:
            obj.fail("changelog_topics", "changelog topics belong to state stores: list the stores too")
        sinks = _unique_strings(obj, "sink_topics")
        groups = tuple(_copartition_group(obj, j, group) for j, group in enumerate(obj.array("copartition_groups", [])))
        obj.finish()
        result.append(SubtopologySpec(sid, sources, stores, changelogs, sinks, groups))
    owner: dict[str, int] = {}
    readable = {t for s in result for t in s.source_topics}
    for i, s in enumerate(result):
        for j, group in enumerate(s.copartition_groups):
            for k, topic in enumerate(group):
                if topic not in readable:
                    fail(f"{topology.sub('subtopologies')}[{i}].copartition_groups[{j}][{k}]",
                         f"{topic!r} is not a source topic of any subtopology", topology.source)
    for s in result:
        for t in s.source_topics:
            if t in owner:
                fail(topology.sub("subtopologies"), f"topic {t!r} is a source of subtopologies {owner[t]} and {s.id}; "
                                                    "Kafka lets one subtopology read a topic", topology.source)
            owner[t] = s.id
    for i, s in enumerate(result):
        for k, t in enumerate(s.changelog_topics):
            # A changelog partition belongs to one task: the changelog of one subtopology's store.
            if owner.setdefault(t, s.id) != s.id:
                fail(f"{topology.sub('subtopologies')}[{i}].changelog_topics[{k}]",
                     f"topic {t!r} is also a topic of subtopology {owner[t]}; a changelog topic belongs to the "
                     "subtopology of its store only", topology.source)
    return tuple(sorted(result, key=lambda s: s.id))


def _copartition_group(obj: JsonObject, j: int, group: Any) -> tuple[str, ...]:
    """One co-partition group: source topics (of any subtopology) that must have equal partition counts."""
    path = f"{obj.sub('copartition_groups')}[{j}]"
    if not isinstance(group, list) or not group:
        fail(path, f"expected a non-empty array of topic names, got {describe(group)}", obj.source)
    for k, topic in enumerate(group):
        if not isinstance(topic, str) or not topic:
            fail(f"{path}[{k}]", f"expected a topic name, got {describe(topic)}", obj.source)
    return tuple(dict.fromkeys(group))


def _topics(obj: JsonObject) -> dict[str, TopicSpec]:
    topics: dict[str, TopicSpec] = {}
    for name in obj.data:
        entry = obj.obj(name)
        if not name:
            entry.fail(None, "topic names must not be empty")
        raw = entry.raw("partitions")
        if isinstance(raw, int) and not isinstance(raw, bool):
            if not 1 <= raw <= MAX_PARTITIONS:
                entry.fail("partitions", f"a topic has 1 to {MAX_PARTITIONS} partitions, got {raw}")
            partitions = tuple(PartitionSpec(p) for p in range(raw))
        elif isinstance(raw, list):
            partitions = _partition_list(entry, raw)
        else:
            entry.fail("partitions", f"expected a partition count or a list of partitions, got {describe(raw)}")
        entry.finish()
        topics[name] = TopicSpec(name, partitions, entry.path)
    return topics


def _partition_list(entry: JsonObject, items: list[Any]) -> tuple[PartitionSpec, ...]:
    if not items:
        entry.fail("partitions", "a topic has at least one partition")
    by_number: dict[int, PartitionSpec] = {}
    for j, item in enumerate(items):
        obj = JsonObject(item, f"{entry.sub('partitions')}[{j}]", entry.source)
        number = obj.integer("partition", minimum=0, maximum=MAX_PARTITIONS - 1)
        if number in by_number:
            obj.fail("partition", f"partition {number} is listed twice")
        racks = tuple(obj.string_list("racks")) if obj.raw("racks", None) is not None else None
        end = obj.integer("end_offset", None, minimum=0, nullable=True)
        committed = obj.integer("committed_offset", None, minimum=0, nullable=True)
        obj.finish()
        by_number[number] = PartitionSpec(number, racks, end, committed)
    missing = sorted(set(range(len(by_number))) - set(by_number))
    if missing:
        entry.fail("partitions", f"partitions are numbered 0 to {len(by_number) - 1}; missing {missing[0]}")
    return tuple(by_number[p] for p in range(len(by_number)))


def _members(items: list[Any], source: str | None) -> tuple[MemberSpec, ...]:
    if len(items) > MAX_MEMBERS:
        fail("$.members", f"{len(items)} members, more than the {MAX_MEMBERS} taskassign takes per group "
                        "(docs/security.md, Work)", source)
    if not items:
        fail("$.members", "a group has at least one member", source)
    members: list[MemberSpec] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        obj = JsonObject(item, f"$.members[{i}]", source)
        member_id = obj.string("member_id", non_empty=True)
        if member_id in seen:
            obj.fail("member_id", f"duplicate member id {member_id!r}")
        seen.add(member_id)
        subscription, _ = _wire_bytes(obj, "subscription", Subscription)
        recorded = _wire_bytes(obj, "assignment", Assignment)[1] if obj.has("assignment") else None
        client_id = obj.string("client_id", None, nullable=True)
        client_host = obj.string("client_host", None, nullable=True)
        instance_id = obj.string("group_instance_id", None, nullable=True)
        obj.finish()
        where = obj.sub("subscription")
        if subscription.user_data is None:
            fail(where, "the subscription has no user data: not a Kafka Streams member", source)
        try:
            info = SubscriptionInfo.decode(subscription.user_data, base=subscription.user_data_offset())
        except DecodeError as exc:
            raise exc.located(f"{source + ': ' if source else ''}{where}") from None
        members.append(MemberSpec(member_id, subscription, info, obj.path, recorded, client_id, client_host,
                                  instance_id))
    return tuple(members)


def _wire_bytes(obj: JsonObject, key: str, kind: type[M]) -> tuple[M, bytes]:
    """A consumer-protocol message given as hex text, ``{"hex": ...}`` / ``{"base64": ...}`` (optionally with
    ``"decoded"``: the message as ``taskassign decode`` prints it, which must agree with the bytes), or the
    decoded message alone. Returns the message and its bytes."""
    value = obj.raw(key)
    where = obj.sub(key)
    prefix = f"{obj.source}: {where}" if obj.source else where
    label = kind.__name__.lower()
    if isinstance(value, dict) and "message" in value:
        message = message_from_json(value, path=where, source=obj.source)
        if not isinstance(message, kind):
            obj.fail(key, f"expected a consumer-protocol {label} (\"message\": \"{label}\")")
        try:
            return message, message.encode()
        except EncodeError as exc:
            obj.fail(key, str(exc))
    decoded: Any = None
    if isinstance(value, dict):
        raw = JsonObject(value, where, obj.source)
        if raw.has("hex") == raw.has("base64"):
            raw.fail(None, "give the bytes as {\"hex\": ...} or {\"base64\": ...}, a hex string, or the message")
        text = raw.string("hex") if raw.has("hex") else "base64:" + raw.string("base64")
        decoded = raw.raw("decoded", None)
        raw.finish()
    elif isinstance(value, str):
        text = value
    else:
        obj.fail(key, f"expected {label} bytes (hex string, {{\"hex\"}}, {{\"base64\"}}) or the message as JSON, "
                      f"got {describe(value)}")
    data = bytes_from_text(text, prefix)
    try:
        message = kind.decode(data)
    except DecodeError as exc:
        raise exc.located(prefix) from None
    if decoded is not None and message_to_json(message) != decoded:
        fail(f"{where}.decoded", "does not match the bytes beside it: edit the bytes, or drop them and keep only "
                                 "the decoded message", obj.source)
    return message, data


def _check_changelogs(
    subtopologies: tuple[SubtopologySpec, ...], topics: Mapping[str, TopicSpec], unknown: bool, source: str | None
) -> None:
    """Every existing changelog topic must give the end offset of each partition (the committed offset
    for a source topic that is its own changelog, which defaults to 0 as in Kafka)."""
    if unknown:
        return
    for s in subtopologies:
        for topic in s.changelog_topics:
            spec = topics.get(topic)
            if spec is None or topic in s.source_topics:
                continue
            for j, p in enumerate(spec.partitions):
                if p.end_offset is None:
                    fail(f"{spec.path}.partitions[{j}]" if spec.path else f"$.topics.{topic}",
                         f"changelog topic {topic!r} partition {p.partition} has no end_offset (the leader fetches "
                         "it to compute lags; omit the topic if this rebalance creates it, or set "
                         "end_offsets_unknown)", source)


def group_with_config_overrides(spec: GroupSpec, overrides: Mapping[str, Any]) -> GroupSpec:
    """A copy of ``spec`` whose configs have ``overrides`` applied (validated like the file's)."""
    if not overrides:
        return spec
    raw = {**spec.raw_configs, **overrides}
    return replace(spec, configs=AssignmentConfigs.from_properties(raw), raw_configs=MappingProxyType(raw))
