"""One Kafka Streams application's group, read from its cluster into a GROUP.json that
``taskassign rebalance`` replays and checks against what Kafka's leader did.

What the leader used at the group's last rebalance, and where each part comes from:

* the members' subscriptions and the assignments the leader sent (DescribeGroups, raw bytes, kept as
  they are and decoded beside them): the recorded outcome;
* the topology: the ``Topology#describe()`` text when given (``capture.topology_text``), else what the
  members' assignments show (which partitions make each subtopology's tasks, which tasks report state)
  and the cluster's ``<application.id>-*-changelog`` topics, with notes on what that leaves unknown;
* the topics' partitions with their replicas' racks (Metadata), the changelogs' end offsets (ListOffsets)
  and, for a source table whose changelog is its source topic, the group's committed offsets;
* the leader's configs from the application's properties file, Kafka's defaults otherwise, with
  ``taskassign.kafka.compat`` on: a captured file predicts Kafka, quirks included;
* the leader's clock (``now_ms``): read off a probing deadline the leader recorded when there is one
  (deadline - probing interval), else the capture's own time;
* the leader: DescribeGroups does not say which member it is; a member whose client carries the probing
  follow-up Kafka's internal assignors schedule on the leader's client is taken, else the first member.

End offsets are read at capture time: if the application wrote to its changelogs since the rebalance,
lags differ from the ones the leader computed (docs/capture.md). Capture is read-only throughout.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from taskassign.assignors.registry import KAFKA_INTERNAL_ASSIGNORS
from taskassign.capture.broker_line import LIBRARY_NOTE, broker_line
from taskassign.capture.cluster import ClusterReader, DescribedGroup, DescribedMember, TopicMetadata
from taskassign.capture.streams_config import StreamsConfig
from taskassign.capture.topology_inference import source_table_stores, to_group_topology
from taskassign.capture.topology_text import TopologyDescription
from taskassign.configs import (
    DEFAULT_MAX_WARMUP_REPLICAS,
    DEFAULT_NUM_STANDBY_REPLICAS,
    DEFAULT_PROBING_REBALANCE_INTERVAL_MS,
    KAFKA_COMPAT,
    LONG_MAX,
    MAX_WARMUP_REPLICAS,
    NUM_STANDBY_REPLICAS,
    PROBING_REBALANCE_INTERVAL_MS,
)
from taskassign.errors import DecodeError, GroupNotCapturableError, UserInputError
from taskassign.formats.group import GROUP_FORMAT
from taskassign.formats.wire_documents import message_to_json
from taskassign.ids import TaskId
from taskassign.leader.partition_grouper import SubtopologySpec as TopologySubtopology
from taskassign.leader.partition_grouper import TopologyError, resolve_topology
from taskassign.wire.assignment_info import AssignmentInfo
from taskassign.wire.consumer_protocol import Assignment, Subscription
from taskassign.wire.subscription_info import SubscriptionInfo
from taskassign.wire.versions import MIN_NEXT_REBALANCE_VERSION, NO_FOLLOWUP_MS

__all__ = ("CapturedGroup", "capture_group", "check_capturable")

STREAMS_PROTOCOL_TYPE = "consumer"
STREAMS_PROTOCOL = "stream"
REBALANCING_STATES = ("PreparingRebalance", "CompletingRebalance")
CHANGELOG_SUFFIX = "-changelog"
REPARTITION_SUFFIX = "-repartition"


@dataclass(frozen=True, slots=True)
class CapturedGroup:
    """The group file's document and the notes on what the capture could not know."""

    document: dict[str, Any]
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Member:
    described: DescribedMember
    subscription: Subscription
    info: SubscriptionInfo
    assignment: Assignment
    assignment_info: AssignmentInfo


def check_capturable(group: DescribedGroup) -> None:
    """Raise GroupNotCapturableError unless ``group`` is a Kafka Streams group with a finished rebalance."""
    name = group.group_id
    if group.state == "Dead" or (not group.members and group.state in ("", "Empty", "Dead")):
        raise GroupNotCapturableError(f"group {name!r} has no members (state {group.state or 'unknown'}): it does "
                                      "not exist, or none of its instances is running")
    if group.protocol_type != STREAMS_PROTOCOL_TYPE:
        raise GroupNotCapturableError(f"group {name!r} is not a Kafka Streams group: protocol type "
                                      f"{group.protocol_type!r} (Kafka Streams members use 'consumer')")
    if group.state in REBALANCING_STATES or any(not m.assignment for m in group.members):
        raise GroupNotCapturableError(f"group {name!r} is rebalancing (state {group.state}): its members have no "
                                      "assignment yet; capture again once it is Stable")
    if group.protocol != STREAMS_PROTOCOL:
        raise GroupNotCapturableError(f"group {name!r} is a consumer group using the {group.protocol!r} assignor, "
                                      f"not a Kafka Streams application ('{STREAMS_PROTOCOL}')")


def capture_group(
    reader: ClusterReader,
    group_id: str,
    *,
    topology: TopologyDescription | None,
    topology_source: str | None,
    config: StreamsConfig,
    configs_source: str,
    captured_at_ms: int,
) -> CapturedGroup:
    """Read the group ``group_id`` (its application id) and everything its leader used."""
    described = reader.describe_group(group_id)
    check_capturable(described)
    members = [_decode(group_id, m) for m in described.members]
    notes: list[str] = list(config.notes)
    subscribed = sorted({t for m in members for t in m.subscription.topics})
    if topology is not None:
        group_topology = _described_topology(reader, group_id, topology, subscribed, notes)
        topology_from = topology_source or "the Topology#describe() text given"
    else:
        group_topology = _inferred_topology(reader, group_id, members, notes)
        topology_from = "inferred from the members' assignments and the cluster's topic names (no --topology)"
    topics = _topics(reader, group_id, group_topology, notes)
    if topology is not None:
        settle_repartition_counts(group_topology, topics, _pattern_topics(topology, subscribed), notes)
    notes.extend(standby_contradictions(members, config.configs, configs_source))
    # The file is there to predict Kafka: Kafka's exact behaviour, quirks included (docs/kafka-differences.md).
    configs = {**config.configs, KAFKA_COMPAT: True}
    interval = int(configs.get(PROBING_REBALANCE_INTERVAL_MS, DEFAULT_PROBING_REBALANCE_INTERVAL_MS))
    leader, leader_source, now_ms = _leader_and_clock(members, interval, captured_at_ms,
                                                      probing_on_leader=config.assignor in KAFKA_INTERNAL_ASSIGNORS)
    if now_ms > LONG_MAX - interval:  # the file would hold a deadline past Long.MAX: taskassign could not read it
        raise UserInputError(
            f"{configs_source}: {PROBING_REBALANCE_INTERVAL_MS}={interval} with the leader's clock at {now_ms} ms puts "
            f"the probing rebalance deadline past Long.MAX_VALUE ({LONG_MAX}); Kafka's leader would overflow it too. "
            f"Give the value the application runs with (at most {LONG_MAX - now_ms})")
    document: dict[str, Any] = {
        "format": GROUP_FORMAT,
        "name": group_id,
        "now_ms": now_ms,
        "leader": leader,
        "configs": configs,
        "topology": group_topology,
        "topics": topics,
        "members": [_member_document(m) for m in members],
        "capture": {
            "bootstrap_server": reader.bootstrap,
            "group": group_id,
            "captured_at_ms": captured_at_ms,
            "group_state": described.state,
            "topology_source": topology_from,
            "configs_source": configs_source,
            "leader_source": leader_source,
            "assignor": config.assignor,
            "notes": notes,
        },
    }
    line = _broker_line(reader)
    if line is not None:
        document["capture"]["broker_kafka_line"] = line
        notes.append(f"the broker runs {line['description']} (its ApiVersions answer); {LIBRARY_NOTE}")
    return CapturedGroup(document, tuple(notes))


# --- members ----------------------------------------------------------------------------------------------


def _broker_line(reader: ClusterReader) -> dict[str, Any] | None:
    """The broker's release line as its ApiVersions answer shows it, with the evidence (capture.broker_line)."""
    advertised = getattr(reader, "api_versions", lambda: None)()
    return None if not advertised else broker_line(advertised).to_document()


def _decode(group_id: str, member: DescribedMember) -> _Member:
    where = f"group {group_id!r}, member {member.member_id!r}"
    try:
        subscription = Subscription.decode(member.metadata)
        if subscription.user_data is None:
            raise GroupNotCapturableError(f"{where}: its subscription carries no Streams metadata: not a Kafka "
                                          "Streams member")
        info = SubscriptionInfo.decode(subscription.user_data, base=subscription.user_data_offset())
        assignment = Assignment.decode(member.assignment)
        if assignment.user_data is None:
            raise GroupNotCapturableError(f"{where}: its assignment carries no Streams metadata")
        assignment_info = AssignmentInfo.decode(assignment.user_data, base=assignment.user_data_offset())
    except DecodeError as exc:
        raise exc.located(where) from None
    return _Member(member, subscription, info, assignment, assignment_info)


def _member_document(m: _Member) -> dict[str, Any]:
    d = m.described
    return {
        "member_id": d.member_id,
        "group_instance_id": d.group_instance_id,
        "client_id": d.client_id,
        "client_host": d.client_host,
        "subscription": {"hex": d.metadata.hex(), "decoded": message_to_json(m.subscription)},
        "assignment": {"hex": d.assignment.hex(), "decoded": message_to_json(m.assignment)},
    }


def _leader_and_clock(members: Sequence[_Member], interval_ms: int, captured_at_ms: int, *,
                      probing_on_leader: bool) -> tuple[str, str, int]:
    """The leader member, how it was found, and the leader's clock at the rebalance. Kafka's internal
    assignors put their probing follow-up (at now + probing interval) on the leader's own client; a KIP-924
    assignor's follow-ups say nothing about the leader."""
    timed = sorted((m.assignment_info.next_rebalance_ms, m.described.member_id) for m in members
                   if m.assignment_info.version >= MIN_NEXT_REBALANCE_VERSION
                   and m.assignment_info.next_rebalance_ms not in (0, NO_FOLLOWUP_MS))
    if timed and probing_on_leader:
        deadline, member = timed[0]
        return (member, "inferred: its client carries the probing rebalance Kafka's leader scheduled on the leader's "
                        "own client", max(0, deadline - interval_ms))
    first = sorted(m.described.member_id for m in members)[0]
    return (first, "unknown (DescribeGroups does not say); no member carries a probing follow-up, so which member "
                   "led does not change the assignment", captured_at_ms)


# --- topology ---------------------------------------------------------------------------------------------


def _pattern_topics(description: TopologyDescription, subscribed: Sequence[str]) -> set[str]:
    return {t for p in description.topic_patterns for t in subscribed if re.fullmatch(p, t)}


def settle_repartition_counts(topology: dict[str, Any], topics: Mapping[str, Any], pattern_topics: set[str],
                              notes: list[str]) -> None:
    """A repartition topic's count, when the topology does not fix it, is the leader's to derive from its writers'
    source topics (``RepartitionTopics#setup``), and an existing topic with another count makes Kafka's leader
    fail (``InternalTopicManager#makeReady``: invalid partitions). The text does not show a fixed count, so the
    capture takes an existing topic's count as fixed; but not downstream of a pattern source, whose topics come
    and go: there the count is left to the leader, which then fails where Kafka's did (a new topic matching the
    pattern with more partitions), instead of the file predicting a normal assignment."""
    fixed = {t: n for t, n in topology.get("repartition_topics", {}).items() if n is not None}
    if not fixed or not pattern_topics:
        return
    subs = topology["subtopologies"]
    fed: set[str] = set()
    changed = True
    while changed:  # repartition topics written by a subtopology that reads a pattern topic, transitively
        changed = False
        for s in subs:
            if set(s["source_topics"]) & (pattern_topics | fed):
                new = {t for t in s.get("sink_topics", []) if t in fixed} - fed
                fed |= new
                changed = changed or bool(new)
    if not fed:
        return
    external = {name: len(t["partitions"]) for name, t in topics.items()
                if name not in topology.get("repartition_topics", {})}
    counts = {t: (None if t in fed else n) for t, n in topology["repartition_topics"].items()}
    try:
        derived = resolve_topology([TopologySubtopology(s["id"], tuple(s["source_topics"]),
                                                        tuple(s.get("sink_topics", [])),
                                                        tuple(tuple(g) for g in s.get("copartition_groups", [])))
                                    for s in subs], external, counts).repartition_partition_counts
    except TopologyError:
        return  # the leader fails on it anyway (a missing source topic, ...): the replay says so
    for topic in sorted(fed):
        if derived.get(topic) != fixed[topic]:
            topology["repartition_topics"][topic] = None
            notes.append(f"repartition topic {topic!r} exists with {fixed[topic]} partitions but, fed by a pattern "
                         f"source, the leader derives {derived.get(topic)} from its source topics now: Kafka's leader "
                         "fails (InternalTopicManager#makeReady: invalid partitions), and so does the replay; the "
                         "count is left to the leader (a count fixed by Repartitioned#withNumberOfPartitions does not "
                         "show in the topology text)")


def standby_contradictions(members: Sequence[_Member], configs: Mapping[str, Any], source: str) -> list[str]:
    """The standbys Kafka's leader gave against ``num.standby.replicas`` as the capture takes it: the configs are
    the user's file (or Kafka's defaults), the standbys are what the members hold. More tasks with extra standbys
    than ``max.warmup.replicas`` warm-ups explain, or no standby at all where some are configured, means the file
    is not what the application runs with (replays then differ in standbys, for no reason the file shows)."""
    configured = int(configs.get(NUM_STANDBY_REPLICAS, DEFAULT_NUM_STANDBY_REPLICAS))
    warmups = int(configs.get(MAX_WARMUP_REPLICAS, DEFAULT_MAX_WARMUP_REPLICAS))
    counts = Counter(task for m in members for task, _ in m.assignment_info.standby_tasks)
    clients = {m.info.process_id for m in members}
    above = sorted(t for t, n in counts.items() if n > configured)
    if len(above) > warmups:
        common = Counter(counts.values()).most_common(1)[0][0]
        return [f"num.standby.replicas={configured} ({source}) contradicts the members: Kafka's leader gave "
                f"{len(above)} task(s) more standbys than that (most tasks {common}; warm-ups explain at most "
                f"{warmups}): the application runs with num.standby.replicas={common}? Give its own properties "
                "with --streams-config"]
    if configured > 0 and not counts and len(clients) > 1:
        return [f"num.standby.replicas={configured} ({source}) contradicts the members: Kafka's leader gave no task "
                "a standby on a group of several clients: the application runs with num.standby.replicas=0? Give "
                "its own properties with --streams-config"]
    return []


def _described_topology(
    reader: ClusterReader, app_id: str, description: TopologyDescription, subscribed: Sequence[str],
    notes: list[str],
) -> dict[str, Any]:
    """The text's topology with Kafka's internal names, settled against the cluster where the text is silent:
    a store whose ``<app>-<store>-changelog`` topic does not exist has logging disabled, or (a source table)
    uses its source topic, as ``topology.optimization=all`` makes it; a repartition topic that exists keeps
    its partition count (a count the topology fixes does not show in the text)."""
    patterns = {p: [t for t in subscribed if re.fullmatch(p, t)] for p in description.topic_patterns}
    first = to_group_topology(description, app_id, pattern_topics=patterns)
    stores = sorted({store for sub in description.subtopologies for store in sub.stores})
    changelog_names = {store: f"{app_id}-{store}{CHANGELOG_SUFFIX}" for store in stores}
    repartition_names = sorted(first.topology.get("repartition_topics", {}))
    existing, _missing = reader.topics([*changelog_names.values(), *repartition_names])
    overrides: dict[str, str | None] = {}
    for sub in description.subtopologies:
        tables = source_table_stores(sub)
        for store in sub.stores:
            if changelog_names[store] in existing:
                overrides[store] = changelog_names[store]
            elif store in tables:
                overrides[store] = tables[store]
                notes.append(f"store {store!r}: no topic {changelog_names[store]}; its source topic {tables[store]!r} "
                             "is its changelog (topology.optimization=all)")
            else:
                overrides[store] = None
                notes.append(f"store {store!r}: no topic {changelog_names[store]} in the cluster: taken as a store "
                             "with logging disabled (no lags, no standbys)")
    counts = {t: len(existing[t].partitions) for t in repartition_names if t in existing}
    result = to_group_topology(description, app_id, pattern_topics=patterns, changelog_overrides=overrides,
                               repartition_partitions=counts)
    notes.extend(result.notes)
    topology = dict(result.topology)
    check_topology_matches(app_id, topology, subscribed)
    return topology


def check_topology_matches(app_id: str, topology: Mapping[str, Any], subscribed: Sequence[str]) -> None:
    """A Kafka Streams member subscribes to every source topic of its topology (repartition topics included,
    ``StreamsPartitionAssignor`` reads the subscription's topics): a topology text that reads other topics, or
    not all of them, is another application's (or another version's), and would make the leader's tasks wrong."""
    sources = {t for s in topology["subtopologies"] for t in s["source_topics"]}
    unexpected = sorted(sources - set(subscribed))
    unread = sorted(set(subscribed) - sources)
    if not unexpected and not unread:
        return
    parts = []
    if unexpected:
        parts.append(f"it reads {_listed(unexpected)}, which no member subscribes to")
    if unread:
        parts.append(f"the members subscribe to {_listed(unread)}, which it does not read")
    raise UserInputError(f"the topology does not match group {app_id!r}: {'; '.join(parts)}. Is the --topology "
                         "text this application's, complete (every sub-topology) and of the version running?")


def _listed(topics: Sequence[str], limit: int = 5) -> str:
    return ", ".join(topics[:limit]) + (f" and {len(topics) - limit} more" if len(topics) > limit else "")


def _inferred_topology(
    reader: ClusterReader, app_id: str, members: Sequence[_Member], notes: list[str]
) -> dict[str, Any]:
    """Subtopologies as the assignments show them: each task's partitions (active and standby) give its
    subtopology's source topics; a task with reported state or a standby is stateful; the cluster's
    ``<app>-*-changelog`` topics go to the stateful subtopology with their partition count when that is
    unambiguous."""
    sources: dict[int, set[str]] = {}
    partitions_of: dict[int, int] = {}
    stateful: set[int] = set()
    for m in members:
        info = m.assignment_info
        for (topic, partition), task in zip(m.assignment.topic_partitions(), info.active_tasks, strict=False):
            sources.setdefault(task.subtopology, set()).add(topic)
            partitions_of[task.subtopology] = max(partitions_of.get(task.subtopology, 0), partition + 1)
        for task, parts in info.standby_tasks:
            stateful.add(task.subtopology)
            sources.setdefault(task.subtopology, set()).update(t for t, _ in parts)
        stateful.update(t.subtopology for t in _reported_tasks(m.info))
    notes.append("no --topology: subtopologies come from the members' assignments; stores, co-partitioned joins and "
                 "repartition sizing are unknown (give the application's Topology#describe() text to know them)")
    topic_names = reader.all_topic_names()
    candidates = sorted(t for t in topic_names if t.startswith(f"{app_id}-") and t.endswith(CHANGELOG_SUFFIX))
    metadata, _ = reader.topics(candidates)
    changelogs: dict[int, list[str]] = {}
    unplaced: list[str] = []
    for topic in candidates:
        count = len(metadata[topic].partitions) if topic in metadata else -1
        fits = [s for s in sorted(stateful) if partitions_of.get(s) == count] if len(stateful) > 1 else sorted(stateful)
        if len(fits) == 1:
            changelogs.setdefault(fits[0], []).append(topic)
        else:
            unplaced.append(topic)
    if unplaced:
        notes.append(f"changelog topics not placed (no single stateful subtopology matches them): "
                     f"{', '.join(unplaced)}; their tasks' lags are unknown")
    subtopologies = []
    for sid in sorted(sources):
        entry: dict[str, Any] = {"id": sid, "source_topics": sorted(sources[sid])}
        if sid in stateful:
            logs = changelogs.get(sid, [])
            entry["stores"] = [t.removeprefix(f"{app_id}-").removesuffix(CHANGELOG_SUFFIX) for t in logs] or [
                f"unknown-store-{sid}"]
            entry["changelog_topics"] = logs
            if not logs:
                notes.append(f"subtopology {sid} keeps state but no changelog topic could be tied to it: its tasks "
                             "get no lags and no standbys here")
        subtopologies.append(entry)
    subscribed = {t for m in members for t in m.subscription.topics}
    unseen = sorted(subscribed - {t for s in sources.values() for t in s})
    if unseen:
        notes.append(f"subscribed topics no task was seen to read: {', '.join(unseen)} (left out of the topology)")
    return {"subtopologies": subtopologies}


def _reported_tasks(info: SubscriptionInfo) -> list[TaskId]:
    """The tasks a member reported state for (offset sums from v7; previous and standby sets before)."""
    return list(info.offset_sums())


# --- topics -----------------------------------------------------------------------------------------------


def _topics(reader: ClusterReader, app_id: str, topology: Mapping[str, Any], notes: list[str]) -> dict[str, Any]:
    """Every topic the leader's metadata holds for this topology: partitions with replica racks, changelog end
    offsets, and committed offsets of source topics that are also changelogs."""
    subs = topology["subtopologies"]
    sources = {t for s in subs for t in s["source_topics"]}
    changelogs = {t for s in subs for t in s.get("changelog_topics", [])}
    repartition = set(topology.get("repartition_topics", {}))
    wanted = sources | changelogs | repartition
    found, missing = reader.topics(wanted)
    if missing - changelogs - repartition:
        notes.append(f"source topics the cluster does not have: {', '.join(sorted(missing - changelogs - repartition))}"
                     " (Kafka's leader answers INCOMPLETE_SOURCE_TOPIC_METADATA)")
    if missing & changelogs:
        notes.append(f"changelog topics not created yet: {', '.join(sorted(missing & changelogs))} (end offset 0)")
    logs = [(t, p.partition) for t in sorted(changelogs & set(found)) for p in found[t].partitions]
    ends = reader.end_offsets(logs)
    source_logs = sorted(changelogs & sources)
    committed = reader.committed_offsets(app_id, [(t, p.partition) for t in source_logs if t in found
                                                  for p in found[t].partitions])
    return {name: {"partitions": [_partition(found[name], p.partition, ends, committed, name in changelogs)
                                  for p in found[name].partitions]}
            for name in sorted(found)}


def _partition(topic: TopicMetadata, partition: int, ends: Mapping[tuple[str, int], int],
               committed: Mapping[tuple[str, int], int], is_changelog: bool) -> dict[str, Any]:
    meta = topic.partitions[partition]
    entry: dict[str, Any] = {"partition": partition, "racks": sorted({r for r in meta.racks if r is not None})}
    if is_changelog:
        entry["end_offset"] = ends.get((topic.name, partition), 0)
    if (topic.name, partition) in committed:
        entry["committed_offset"] = committed[(topic.name, partition)]
    return entry
