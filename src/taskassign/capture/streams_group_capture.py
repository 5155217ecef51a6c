"""One streams group (KIP-1071, ``group.protocol=streams``) read from its broker into a streams-group file
(``taskassign/streams-group/v1``, docs/formats.md) that ``assign``, ``compare``, ``rebalance`` and the rest
read.

Under the streams protocol the broker assigns: the group coordinator keeps each member's *target* assignment
and computes a new one (its assignor, ``sticky`` by default) whenever the group epoch moves. What a capture
reads, and where it goes in the file:

* StreamsGroupDescribe (v0; v1 from Kafka 4.4): every member (a stream thread) with its process id, rack,
  client tags, instance id (static membership, 4.4), epochs, task offsets and end offsets (sent by 4.4
  clients), its current assignment and its target assignment (active, standby, warm-up tasks per
  subtopology); the group's state and epochs; the topology as the broker holds it (subtopologies with their
  source, repartition and changelog topics); from v1 the topology description (KIP-1331) and the assignor's
  name (KIP-1357). The members' *target* assignments are the file's ``activeTasks`` / ``standbyTasks`` /
  ``warmupTasks``: the input of the broker's next computation, and what ``taskassign rebalance`` compares a
  replay with. Current assignments, epochs and the rest go to the file's ``capture`` section.
* DescribeConfigs on the GROUP resource: the group's ``streams.*`` configs with their sources. The broker's
  own default (``group.streams.num.standby.replicas``) does not show there: a group without an override
  reports Kafka's static default. The standby count the assignor ran with is then read off the target
  assignment (the most standbys any stateful task has), and the file says so.
* Metadata of the topology's source topics: each subtopology's task count (its input topics' partitions).
* ApiVersions: the broker's release line (``capture.broker_line``: the exact line or the range its versions
  allow, ``brokerKafkaLine``; the one line its assignor is replayed as, ``brokerReleaseLine``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from taskassign.capture import kafka_codec as codec
from taskassign.capture.broker_line import broker_line
from taskassign.capture.streams_client import GROUP_ID_NOT_FOUND, UNSUPPORTED_VERSION, StreamsClient, check_error
from taskassign.errors import CaptureError, GroupNotCapturableError
from taskassign.internals.java_order import java_string_key
from taskassign.streams_protocol.format import STREAMS_GROUP_FORMAT
from taskassign.streams_protocol.model import ASSIGNOR_NAMES, DEFAULT_ASSIGNOR_NAME

__all__ = (
    "STREAMS_CAPTURE_FORMAT",
    "CapturedStreamsGroup",
    "capture_streams_group",
    "check_capturable_streams_group",
    "complete_streams_group",
    "describe_streams_group",
    "streams_group_document",
)

#: The version of the file's ``capture`` section.
STREAMS_CAPTURE_FORMAT = "taskassign/streams-capture/v1"
NUM_STANDBY = "num.standby.replicas"
GROUP_NUM_STANDBY = "streams.num.standby.replicas"
GROUP_ASSIGNOR = "streams.assignor.name"
GROUP_RACK_TAGS = "streams.rack.aware.assignment.tags"
RACK_TAGS = "rack.aware.assignment.tags"
#: DescribeConfigs' ConfigSource of a value set on the group itself (IncrementalAlterConfigs on GROUP).
GROUP_CONFIG_SOURCE = 8
#: Sources whose value is the one the coordinator uses: a group override, or (Kafka 4.4 reports them) the
#: broker's own setting. DEFAULT_CONFIG is not trusted: Kafka 4.2 reports its static default there even when
#: the broker's ``group.streams.num.standby.replicas`` differs.
TRUSTED_SOURCES = (GROUP_CONFIG_SOURCE, 2, 3, 4)
CONFIG_SOURCES = {0: "UNKNOWN", 1: "TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG", 3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
                  4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG", 6: "DYNAMIC_BROKER_LOGGER_CONFIG",
                  7: "CLIENT_METRICS_CONFIG", 8: "GROUP_CONFIG"}
DESCRIPTION_STATUS = {0: "NOT_REQUESTED", 1: "NOT_STORED", 2: "ERROR", 3: "AVAILABLE"}
DEAD_STATES = ("Dead",)


@dataclass(frozen=True, slots=True)
class CapturedStreamsGroup:
    """The streams-group file's document and the notes on what the capture could not know."""

    document: dict[str, Any]
    notes: tuple[str, ...]


def capture_streams_group(client: StreamsClient, group_id: str, *, captured_at_ms: int) -> CapturedStreamsGroup:
    """Read the streams group ``group_id`` and everything its broker-side assignor used."""
    described = describe_streams_group(client, group_id)
    return complete_streams_group(client, described, captured_at_ms=captured_at_ms)


def describe_streams_group(client: StreamsClient, group_id: str) -> codec.StreamsDescribedGroup:
    """StreamsGroupDescribe of ``group_id`` on its coordinator, with the clear error of a missing group."""
    client.streams_describe_version()
    described = client.describe_streams_group(group_id, client.coordinator(group_id))
    if described.error_code == GROUP_ID_NOT_FOUND:
        raise _not_found(client, group_id, described.error_message)
    if described.error_code == UNSUPPORTED_VERSION:
        raise CaptureError(
            f"the broker at {client.bootstrap} advertises StreamsGroupDescribe but its group coordinator answers "
            f"UNSUPPORTED_VERSION{f' ({described.error_message})' if described.error_message else ''}: the streams "
            "rebalance protocol is not enabled there (group.coordinator.rebalance.protocols must include streams)")
    check_error(described.error_code, f"StreamsGroupDescribe({group_id!r})", resource=f"group {group_id!r}",
                message=described.error_message)
    return described


def complete_streams_group(client: StreamsClient, described: codec.StreamsDescribedGroup, *,
                           captured_at_ms: int) -> CapturedStreamsGroup:
    """The file of a described group: its configs (DescribeConfigs) and topics' partitions (Metadata) added."""
    group_id = described.group_id
    check_capturable_streams_group(described)
    configs = client.group_configs(group_id)
    if configs.error_code == GROUP_ID_NOT_FOUND:
        raise GroupNotCapturableError(f"group {group_id!r} was deleted while it was read (DescribeConfigs: "
                                      f"{configs.error_message or 'GROUP_ID_NOT_FOUND'})")
    check_error(configs.error_code, f"DescribeConfigs(group {group_id!r})", resource=f"group {group_id!r}",
                message=configs.error_message, acl="DESCRIBE_CONFIGS on the group")
    topics = sorted({t for s in described.subtopologies or () for t in s.source_topics}
                    | {i.name for s in described.subtopologies or () for i in s.repartition_source_topics})
    partitions: dict[str, int] = {}
    if topics:
        _, found = client.metadata(topics)
        partitions = {t.name: len(t.partitions) for t in found if t.error_code == 0}
    return streams_group_document(
        described, configs, partitions, api_versions=client.api_versions, release_line=client.release_line,
        describe_version=client.streams_describe_version(), bootstrap=client.bootstrap,
        captured_at_ms=captured_at_ms)


def check_capturable_streams_group(described: codec.StreamsDescribedGroup) -> None:
    """GroupNotCapturableError unless the group has members, each with a process id, and a configured topology."""
    group_id = described.group_id
    if described.state in DEAD_STATES:
        raise GroupNotCapturableError(f"group {group_id!r} is being deleted (state {described.state}); nothing to "
                                      "capture")
    if not described.members:
        raise GroupNotCapturableError(f"group {group_id!r} has no members (state {described.state}): none of its "
                                      "instances is running")
    for m in described.members:
        if not m.process_id:
            raise GroupNotCapturableError(
                f"group {group_id!r}, member {m.member_id!r} (client {m.client_id!r}) has no process id: the broker "
                "assigns tasks per process, so this group cannot be replayed (a client that is not Kafka Streams?)")
    if described.subtopologies is None:
        raise GroupNotCapturableError(
            f"group {group_id!r} has no configured topology on the broker (state {described.state}): its source "
            "topics are missing or wrongly partitioned, or it has not been initialised; capture again once it "
            "assigns tasks")


def _not_found(client: StreamsClient, group_id: str, message: str | None) -> GroupNotCapturableError:
    """GROUP_ID_NOT_FOUND: no such group, a group of another type, or one being deleted; ListGroups says which."""
    listed = {g.group_id: g for g in client.list_groups()}
    other = listed.get(group_id)
    if other is not None and other.group_type != "streams":
        return GroupNotCapturableError(
            f"group {group_id!r} is not a streams group: it is a {other.group_type} group (protocol type "
            f"{other.protocol_type!r}, state {other.state}); capture it with --protocol classic")
    if other is not None:
        return GroupNotCapturableError(f"group {group_id!r} is being deleted or not loaded yet (state {other.state}; "
                                       f"StreamsGroupDescribe: {message or 'GROUP_ID_NOT_FOUND'}); try again")
    return GroupNotCapturableError(f"group {group_id!r} does not exist on {client.bootstrap} (StreamsGroupDescribe: "
                                   f"{message or 'GROUP_ID_NOT_FOUND'}): is the application.id right, and has it "
                                   "started with group.protocol=streams?")


def _tasks(tasks: codec.Tasks) -> dict[str, list[int]]:
    merged: dict[str, set[int]] = {}
    for sid, parts in tasks:
        merged.setdefault(sid, set()).update(parts)
    return {sid: sorted(merged[sid]) for sid in sorted(merged, key=java_string_key) if merged[sid]}


def _offsets(entries: Sequence[tuple[str, int, int]]) -> dict[str, dict[str, int]]:
    result: dict[str, dict[int, int]] = {}
    for sid, partition, offset in entries:
        result.setdefault(sid, {})[partition] = offset
    return {sid: {str(p): result[sid][p] for p in sorted(result[sid])} for sid in sorted(result, key=java_string_key)}


def _assignment(a: codec.StreamsAssignment) -> dict[str, Any]:
    return {"activeTasks": _tasks(a.active), "standbyTasks": _tasks(a.standby), "warmupTasks": _tasks(a.warmup)}


def _topic_info(info: codec.TopicInfo) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": info.name, "partitions": info.partitions}
    if info.replication_factor:
        entry["replicationFactor"] = info.replication_factor
    if info.configs:
        entry["configs"] = dict(info.configs)
    return entry


def streams_group_document(
    described: codec.StreamsDescribedGroup,
    configs: codec.GroupConfigs,
    partitions: Mapping[str, int],
    *,
    api_versions: codec.ApiVersions,
    release_line: str | None,
    describe_version: int,
    bootstrap: str,
    captured_at_ms: int,
) -> CapturedStreamsGroup:
    """The streams-group file of one described group (see the module's docstring for what goes where)."""
    group_id = described.group_id
    notes: list[str] = []
    check_capturable_streams_group(described)
    assert described.subtopologies is not None
    if described.unknown_tags:
        notes.append(f"the broker sent fields this taskassign does not know (skipped): "
                     f"{', '.join(described.unknown_tags[:8])}")
    subtopologies, topology = _topology(described.subtopologies, partitions, notes)
    group_configs = {c.name: {"value": c.value, "source": CONFIG_SOURCES.get(c.source, str(c.source)),
                              "readOnly": c.read_only} for c in configs.configs}
    standby, standby_source = _num_standby(configs.configs, described.members, subtopologies, notes)
    assignor = _assignor(described, configs.configs, notes)
    members = []
    captured_members = {}
    for m in described.members:
        target = _assignment(m.target_assignment)
        members.append({
            "memberId": m.member_id, "processId": m.process_id, "rackId": m.rack_id, "instanceId": m.instance_id,
            "clientTags": dict(m.client_tags), **target,
            "taskOffsets": _offsets(m.task_offsets), "taskEndOffsets": _offsets(m.task_end_offsets),
        })
        captured_members[m.member_id] = {
            "memberEpoch": m.member_epoch, "clientId": m.client_id, "clientHost": m.client_host,
            "topologyEpoch": m.topology_epoch, "isClassic": m.is_classic,
            "userEndpoint": None if m.user_endpoint is None else {"host": m.user_endpoint[0],
                                                                   "port": m.user_endpoint[1]},
            "currentAssignment": _assignment(m.assignment),
        }
    lagging = sorted(m.member_id for m in described.members if m.member_epoch != described.assignment_epoch)
    if lagging:
        notes.append(f"{len(lagging)} member(s) have not reached the target assignment epoch "
                     f"{described.assignment_epoch} yet (still reconciling): their current assignment differs from "
                     "the target")
    if described.group_epoch != described.assignment_epoch:
        notes.append(f"group epoch {described.group_epoch} is ahead of the assignment epoch "
                     f"{described.assignment_epoch}: the broker has not computed the new target yet (a 4.3+ broker "
                     "batches computations, group.streams.assignment.interval.ms)")
    if not any(m.task_offsets for m in described.members):
        notes.append("no member reported task offsets (Kafka Streams clients send them from 4.4): the broker's "
                     "assignor saw no lags")
    capture: dict[str, Any] = {
        "format": STREAMS_CAPTURE_FORMAT,
        "bootstrapServer": bootstrap,
        "group": group_id,
        "capturedAtMs": captured_at_ms,
        "brokerReleaseLine": release_line,
        "brokerKafkaLine": broker_line(api_versions.ranges).to_document(),
        "streamsGroupDescribeVersion": describe_version,
        "apiVersions": {str(k): list(v) for k, v in sorted(api_versions.ranges.items())},
        "finalizedFeatures": dict(sorted(api_versions.finalized_features.items())),
        "groupState": described.state,
        "groupEpoch": described.group_epoch,
        "assignmentEpoch": described.assignment_epoch,
        "topologyEpoch": described.topology_epoch,
        "topology": topology,
        "topologyDescriptionStatus": (None if described.topology_description_status is None
                                      else DESCRIPTION_STATUS.get(described.topology_description_status,
                                                                  str(described.topology_description_status))),
        "topologyDescription": described.topology_description,
        "assignorName": described.assignor_name,
        "groupConfigs": dict(sorted(group_configs.items())),
        "numStandbyReplicasSource": standby_source,
        "members": captured_members,
        "notes": notes,
    }
    document: dict[str, Any] = {
        "format": STREAMS_GROUP_FORMAT,
        "name": group_id,
        "note": f"captured from {bootstrap} at group epoch {described.group_epoch} (target assignment epoch "
                f"{described.assignment_epoch})",
        "assignor": assignor,
        "configs": _assignor_configs(standby, configs.configs, notes),
        "subtopologies": subtopologies,
        "members": members,
        "capture": capture,
    }
    return CapturedStreamsGroup(document, tuple(notes))


def _topology(subs: Sequence[codec.StreamsSubtopology], partitions: Mapping[str, int],
              notes: list[str]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The file's subtopologies (tasks = the most partitions of any input topic, as the broker's configured
    topology counts them; stateful = has a changelog) and the broker's view, as the broker holds it."""
    result = []
    for s in subs:
        counts = [partitions.get(t, 0) for t in s.source_topics]
        counts += [i.partitions or partitions.get(i.name, 0) for i in s.repartition_source_topics]
        missing = [t for t in s.source_topics if t not in partitions]
        if missing:
            notes.append(f"subtopology {s.subtopology_id}: no metadata for {', '.join(missing)}")
        result.append({"id": s.subtopology_id, "partitions": max(counts, default=0),
                       "stateful": bool(s.state_changelog_topics)})
    topology = {"subtopologies": [
        {"id": s.subtopology_id, "sourceTopics": list(s.source_topics),
         "repartitionSinkTopics": list(s.repartition_sink_topics),
         "stateChangelogTopics": [_topic_info(i) for i in s.state_changelog_topics],
         "repartitionSourceTopics": [_topic_info(i) for i in s.repartition_source_topics]}
        for s in subs
    ], "sourceTopicPartitions": dict(sorted(partitions.items()))}
    return result, topology


def _num_standby(configs: Sequence[codec.ConfigEntry], members: Sequence[codec.StreamsMember],
                 subtopologies: Sequence[Mapping[str, Any]], notes: list[str]) -> tuple[int, str]:
    entry = next((c for c in configs if c.name == GROUP_NUM_STANDBY), None)
    if entry is not None and entry.source in TRUSTED_SOURCES and entry.value is not None and entry.value.isdigit():
        return int(entry.value), (f"streams.num.standby.replicas from DescribeConfigs (source "
                                  f"{CONFIG_SOURCES[entry.source]})")
    holders: Counter[tuple[str, int]] = Counter()
    for m in members:
        for sid, parts in m.target_assignment.standby:
            holders.update((sid, p) for p in parts)
    inferred = max(holders.values(), default=0)
    shown = entry.value if entry is not None else None
    stateful = any(s["stateful"] for s in subtopologies)
    notes.append(f"num.standby.replicas = {inferred}: read off the target assignment (the most standbys of any task; "
                 "a lower bound when the group has fewer processes than standbys + 1); DescribeConfigs shows "
                 f"{shown!r} with source DEFAULT_CONFIG, which a Kafka 4.2 broker reports even when its "
                 "group.streams.num.standby.replicas says otherwise"
                 + ("" if stateful else " (no stateful subtopology: standbys do not apply)"))
    return inferred, "inferred from the target assignment (no group override)"


def _assignor_configs(standby: int, configs: Sequence[codec.ConfigEntry], notes: list[str]) -> dict[str, str]:
    """The map the coordinator hands the assignor (Kafka 4.4's ``streamsGroupAssignmentConfigs``): the standby
    count, and the rack-aware assignment tags when set (a group override or, from 4.4, the broker's setting)."""
    result = {NUM_STANDBY: str(standby)}
    tags = next((c for c in configs if c.name == GROUP_RACK_TAGS), None)
    if tags is not None and tags.value and tags.source in TRUSTED_SOURCES:
        result[RACK_TAGS] = ",".join(t.strip() for t in tags.value.split(",") if t.strip())
    elif tags is not None and tags.value:
        notes.append(f"{GROUP_RACK_TAGS} = {tags.value!r} (source {CONFIG_SOURCES.get(tags.source, tags.source)}) "
                     "is Kafka's default as DescribeConfigs reports it: whether the broker's assignor received it is "
                     "not visible")
    return result


def _assignor(described: codec.StreamsDescribedGroup, configs: Sequence[codec.ConfigEntry],
              notes: list[str]) -> str:
    """The broker's assignor: v1's AssignorName (KIP-1357), else the group config, else Kafka's default."""
    name = described.assignor_name
    if name is None:
        entry = next((c for c in configs if c.name == GROUP_ASSIGNOR), None)
        name = entry.value if entry is not None else None
    if name is None:
        return DEFAULT_ASSIGNOR_NAME
    if name not in ASSIGNOR_NAMES:
        notes.append(f"the broker names the assignor {name!r}, which taskassign does not model; the file says "
                     f"{DEFAULT_ASSIGNOR_NAME!r}")
        return DEFAULT_ASSIGNOR_NAME
    return name
