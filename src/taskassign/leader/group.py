"""The group leader end to end, from raw inputs to every member's assignment bytes
(Kafka's ``StreamsPartitionAssignor#assign``, run as the group leader runs it).

``rebalance_group`` decodes the members' subscriptions into clients (the first subscription of a
process decides its endpoint, tags and rack), builds the tasks from the topology and the topics'
partitions, the changelog end offsets and lags, the previous tasks (owned partitions first, then
offset sums), checks the members' versions, runs the leader (assignor, validation, follow-ups,
threads), builds the interactive-query host maps and encodes one AssignmentInfo per member inside
a consumer-protocol Assignment, then predicts what each member does with it.

Kafka's error assignments are reproduced: shutdown requested (4), a missing source topic (1), a
future-version member next to a v1/v2 member or a TaskAssignmentException (3); error assignments are
always version 11 (``StreamsPartitionAssignor#errorAssignment``). Where Kafka's leader itself would fail (an invalid
assignment, owned partitions that map to no task), the result carries the reason and no member bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from taskassign.assignors.registry import (
    DEFAULT_ASSIGNOR,
    KAFKA_INTERNAL_ASSIGNORS,
    ResolvedAssignor,
    create_assignor,
    resolve,
)
from taskassign.configs import KAFKA_COMPAT, REBALANCE_PROTOCOL, REBALANCE_PROTOCOL_EAGER, kafka_line_at_least
from taskassign.errors import EncodeError, TaskAssignmentException, UserInputError
from taskassign.formats.group import GroupSpec, MemberSpec, SubtopologySpec
from taskassign.formats.scenario import Scenario
from taskassign.ids import ProcessId, TaskId
from taskassign.internals.java_order import hash_iteration_order, leader_subtopology_walk
from taskassign.leader.host_maps import HostMaps, TaskOrder, host_maps
from taskassign.leader.ownership import ClientOwnership, PartitionOwnership
from taskassign.leader.partition_grouper import INVALID_TOPOLOGY, MISSING_SOURCE_TOPIC, TopologyError, resolve_topology
from taskassign.leader.partition_grouper import SubtopologySpec as TopologySubtopology
from taskassign.leader.run import RebalanceResult, rebalance
from taskassign.model import (
    LATEST_OFFSET,
    UNKNOWN_OFFSET_SUM,
    ApplicationState,
    AssignmentError,
    ConsumerAssignment,
    KafkaStreamsState,
    SortedFrozenSet,
    TaskInfo,
    TaskTopicPartition,
    new_task_info,
)
from taskassign.wire.assignment_info import AssignmentInfo
from taskassign.wire.consumer_protocol import Assignment
from taskassign.wire.probing import GroupVersions, MemberReaction, group_versions, member_reaction
from taskassign.wire.types import HostInfo, TopicPartition, topic_partition_java_hash
from taskassign.wire.versions import (
    MIN_NEXT_REBALANCE_VERSION,
    MIN_PARTITIONS_BY_HOST_VERSION,
    NO_FOLLOWUP_MS,
    AssignorError,
)

__all__ = ("FUTURE_PROCESS_ID", "GroupRebalanceResult", "MemberOutcome", "group_scenario", "kafka_member_order",
           "kafka_task_partitions", "rebalance_group")

#: The one client that stands for every future-version member (Kafka: a random UUID per leader JVM).
FUTURE_PROCESS_ID = ProcessId("ffffffff-ffff-ffff-ffff-fffffffffffe")
LONG_MAX = 2**63 - 1
#: Stands for the leader's own process when it is folded into the future client: it then gets no probing deadline.
_NOT_A_CLIENT = ProcessId("ffffffff-ffff-ffff-ffff-ffffffffffff")


@dataclass(frozen=True, slots=True)
class MemberOutcome:
    """What one member receives and what it does next."""

    member_id: str
    #: The client the member belongs to (FUTURE_PROCESS_ID for a future-version member).
    process_id: ProcessId
    assignment: Assignment
    info: AssignmentInfo
    reaction: MemberReaction
    #: The thread-level share this member got (tasks withheld for cooperative rebalancing included).
    consumer: ConsumerAssignment = field(default_factory=ConsumerAssignment)

    @property
    def assignment_bytes(self) -> bytes:
        return self.assignment.encode()


@dataclass(frozen=True, slots=True)
class GroupRebalanceResult:
    """One rebalance of a GROUP.json."""

    group: str
    assignor: str
    error_code: AssignorError
    versions: GroupVersions
    #: Member id -> outcome, in the file's member order; empty when ``failure`` is set.
    members: Mapping[str, MemberOutcome]
    #: The leader's rebalance (None when an error assignment was sent before the assignor ran).
    rebalance: RebalanceResult | None = None
    state: ApplicationState | None = None
    host_maps: HostMaps = field(default_factory=HostMaps)
    #: Why Kafka's leader would fail instead of answering (nothing is sent then).
    failure: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def stable(self) -> bool:
        """Kafka's "stable" flag: no error, no version probing, nothing withheld, no follow-up requested."""
        if self.failure is not None or self.error_code is not AssignorError.NONE or self.versions.version_probing:
            return False
        group = self.rebalance.group if self.rebalance else None
        if group is None:
            return True
        if any(a.followup_rebalance_deadline is not None for a in group.clients.values()):
            return False
        return not any(c.withheld for cs in (group.consumers or {}).values() for c in cs.values())


@dataclass
class _Client:
    """Kafka's ClientMetadata while subscriptions are decoded (mutable scratch, private)."""

    process_id: ProcessId
    host: HostInfo | None
    tags: dict[str, str]
    rack: str | None
    consumers: list[str] = field(default_factory=list)
    owned: dict[TopicPartition, str] = field(default_factory=dict)
    offset_sums: dict[TaskId, int] = field(default_factory=dict)
    consumer_tasks: dict[str, set[TaskId]] = field(default_factory=dict)


def rebalance_group(spec: GroupSpec, assignor: ResolvedAssignor | str = DEFAULT_ASSIGNOR) -> GroupRebalanceResult:
    """Run the leader over ``spec`` with ``assignor`` (a spec is resolved here, by ``registry.resolve``)."""
    warnings: list[str] = []
    clients, member_client = _decode_members(spec)
    versions = group_versions(m.info for m in spec.members)
    resolved = resolve(assignor)
    name = resolved.name
    warnings.extend(_rack_warnings(spec, member_client))

    def error(code: AssignorError, reason: str) -> GroupRebalanceResult:
        warnings.append(reason)
        return _error_assignment(spec, name, code, versions, member_client, tuple(warnings))

    line = spec.configs.kafka_version
    if spec.configs.extension(REBALANCE_PROTOCOL) == REBALANCE_PROTOCOL_EAGER and kafka_line_at_least(line, "4.0"):
        return _failure(spec, name, versions, f"Kafka {line} has no eager rebalancing: 4.0 removed it (KAFKA-18839; "
                        "StreamsPartitionAssignor.supportedProtocols() is [COOPERATIVE], so an EAGER-only group "
                        "cannot form); give --kafka-version 3.9 to replay an eager group", warnings)
    if any(m.info.error_code == AssignorError.SHUTDOWN_REQUESTED for m in spec.members):
        asking = [m.member_id for m in spec.members if m.info.error_code == AssignorError.SHUTDOWN_REQUESTED]
        return error(AssignorError.SHUTDOWN_REQUESTED, f"shutdown requested by {', '.join(asking)}")
    try:
        counts = source_partition_counts(spec)
    except TopologyError as exc:
        if exc.code == MISSING_SOURCE_TOPIC:
            return error(AssignorError.INCOMPLETE_SOURCE_TOPIC_METADATA, str(exc))
        if exc.assignment_error:
            return error(AssignorError.ASSIGNMENT_ERROR, str(exc))
        return _failure(spec, name, versions, f"{exc} (Kafka's leader fails: no assignment is sent)", warnings)
    if versions.probing_impossible:
        return error(AssignorError.ASSIGNMENT_ERROR, f"a member on future version {versions.future_version} next to "
                                                     f"a version {versions.min_received} member: probing impossible")

    tasks = _tasks(spec, counts)
    task_of: dict[TopicPartition, TaskId] = {}
    for info in tasks.values():
        for p in info.source_partitions:
            task_of[p.topic_partition] = info.id
    states: list[KafkaStreamsState] = []
    for client in clients.values():
        state, problem = _client_state(client, task_of, tasks, warnings)
        if problem:
            return _failure(spec, name, versions, problem, warnings)
        states.append(state)
    app = ApplicationState(tasks=tasks, clients={c.process_id: c for c in states}, configs=spec.configs,
                           now_ms=spec.now_ms, subtopology_walk_order=_leader_walk(spec),
                           client_arrival_order=tuple(c.process_id for c in states))

    def make(name_: str) -> Any:
        return create_assignor(name_, spec.raw_configs)

    ownership = PartitionOwnership(
        MappingProxyType({c.process_id: ClientOwnership(MappingProxyType(dict(c.owned))) for c in clients.values()}),
        frozenset(p for c in clients.values() for p in c.owned),
    )
    leader = member_client[spec.leader]
    if leader == FUTURE_PROCESS_ID:
        leader = _NOT_A_CLIENT
        warnings.append("the leader sent a future-version subscription: it cannot find its own client, so no "
                        "probing follow-up can be scheduled (as in Kafka)")
    try:
        result = rebalance(app, resolved.create(spec.raw_configs), assignor_name=name, leader=leader,
                           raise_on_error=False, fallback_factory=make, ownership=ownership)
    except TaskAssignmentException as exc:
        return error(AssignorError.ASSIGNMENT_ERROR, f"TaskAssignmentException during thread distribution: {exc}")
    if result.error is not AssignmentError.NONE:
        return _failure(spec, result.assignor, versions, f"task assignment with {result.assignor} returned an error: "
                        f"{result.error.name}; Kafka's leader fails and sends no assignment", warnings, result, app)
    if result.fallback_reason is not None and spec.configs.extension(KAFKA_COMPAT):
        return error(AssignorError.ASSIGNMENT_ERROR, f"the assignor raised TaskAssignmentException "
                                                     f"({result.fallback_reason})")
    maps = HostMaps()
    task_partitions = kafka_task_partitions(spec, tasks)
    if versions.min_received >= MIN_PARTITIONS_BY_HOST_VERSION:
        # Kafka's clientMetadataMap is a HashMap of process ids, filled as the members are met
        client_order = hash_iteration_order(list(clients))
        maps = host_maps(result.group.clients, {c.process_id: c.host for c in clients.values()}, task_partitions,
                         client_order=client_order, task_order=_task_order(result.assignor))
        warnings.extend(f"two clients share the endpoint {h}" for h in maps.collisions)
    try:
        outcomes = _encode_members(spec, result, maps, versions, member_client, clients, task_partitions)
    except EncodeError as exc:
        return error(AssignorError.ASSIGNMENT_ERROR, f"encoding failed: {exc}")
    return GroupRebalanceResult(spec.name, result.assignor, AssignorError.NONE, versions,
                                MappingProxyType(outcomes), result, app, maps, None, tuple(warnings))


def _leader_walk(spec: GroupSpec) -> tuple[tuple[str | None, int], ...]:
    """The order Kafka's leader walks the subtopologies (node-group order into its topic-groups HashMap)."""
    return leader_subtopology_walk([(None, s.id) for s in sorted(spec.subtopologies, key=lambda s: s.id)])


def kafka_member_order(spec: GroupSpec) -> list[MemberSpec]:
    """The members as Kafka's leader iterates them: its subscriptions are a ``HashMap`` keyed by member id,
    filled in the JoinGroup response's order (the file's order)."""
    by_id = {m.member_id: m for m in spec.members}
    return [by_id[i] for i in hash_iteration_order(list(by_id))]


def _decode_members(spec: GroupSpec) -> tuple[dict[ProcessId, _Client], dict[str, ProcessId]]:
    """As Kafka's leader decodes subscriptions: one client per process id (all future members share one), the first
    subscription in Kafka's member order wins."""
    clients: dict[ProcessId, _Client] = {}
    member_client: dict[str, ProcessId] = {}
    for m in kafka_member_order(spec):
        info = m.info
        pid = FUTURE_PROCESS_ID if info.is_future else info.process_id
        assert pid is not None  # only future subscriptions lack one
        member_client[m.member_id] = pid
        client = clients.get(pid)
        if client is None:
            host = None
            if not info.is_future and info.user_endpoint:
                try:
                    host = HostInfo.parse(info.user_endpoint)
                except ValueError as exc:
                    raise UserInputError(f"{m.path}: user_endpoint {exc}") from None
            tags = {} if info.is_future else info.tags()
            client = clients[pid] = _Client(pid, host, tags, m.subscription.rack)
        client.consumers.append(m.member_id)
        for p in m.subscription.owned_topic_partitions():
            client.owned[p] = m.member_id
        sums = {} if info.is_future else info.offset_sums()
        client.offset_sums.update(sums)
        client.consumer_tasks[m.member_id] = set(sums)
    if any(m.info.is_future for m in spec.members):
        for m in spec.members:
            if not m.info.is_future and m.info.process_id in (FUTURE_PROCESS_ID, _NOT_A_CLIENT):
                raise UserInputError(f"{m.path}: process id {m.info.process_id} is reserved: with future-version "
                                     "members present it stands for them")
    return clients, member_client


def _rack_warnings(spec: GroupSpec, member_client: Mapping[str, ProcessId]) -> list[str]:
    """Kafka's internal assignors use racks only when every consumer has one and the consumers of a
    process agree; say so when the members break that (the client keeps its first rack)."""
    racks: dict[ProcessId, set[str | None]] = {}
    for m in spec.members:
        racks.setdefault(member_client[m.member_id], set()).add(m.subscription.rack)
    every = set().union(*racks.values())
    if every == {None}:
        return []
    out = [f"consumers of client {pid} report different racks ({', '.join(sorted(str(r) for r in rs))}); "
           "Kafka's built-in assignors then ignore racks, a custom assignor sees the first member's rack"
           for pid, rs in racks.items() if len(rs) > 1]
    if None in every and not out:
        out.append("some members report no rack: Kafka's built-in assignors then ignore racks for this rebalance")
    return out


def source_partition_counts(spec: GroupSpec) -> dict[int, Mapping[str, int]]:
    """``RepartitionTopics#setup``: every subtopology's source topics with their partition counts, repartition topics
    sized and co-partition groups enforced as Kafka's leader does (leader.partition_grouper). Raises TopologyError.

    A repartition topic that already exists in ``topics`` must have the computed count (Kafka's
    ``makeReady`` fails otherwise)."""
    external = {name: len(t.partitions) for name, t in spec.topics.items() if name not in spec.repartition_topics}
    resolved = resolve_topology(
        [TopologySubtopology(s.id, s.source_topics, s.sink_topics, s.copartition_groups) for s in spec.subtopologies],
        external, spec.repartition_topics, kafka_compat=spec.configs.kafka_compat)
    for topic, count in resolved.repartition_partition_counts.items():
        existing = spec.topics.get(topic)
        if existing is not None and len(existing.partitions) != count:
            raise TopologyError(INVALID_TOPOLOGY, f"{existing.path or topic}: repartition topic {topic!r} exists with "
                                                  f"{len(existing.partitions)} partitions, the topology needs {count}")
    return {s.id: s.source_partition_counts for s in resolved.subtopologies}


def _tasks(spec: GroupSpec, source_counts: Mapping[int, Mapping[str, int]]) -> dict[TaskId, TaskInfo]:
    """Partition grouper, ``ChangelogTopics#setup`` and the leader's end offsets: tasks per subtopology from its source
    topics' partition counts, their source and changelog partitions with racks, and their changelog end offset sums."""
    tasks: dict[TaskId, TaskInfo] = {}
    for s in spec.subtopologies:
        counts = source_counts[s.id]
        for p in range(max(counts.values())):
            parts: dict[str, TaskTopicPartition] = {}
            for topic in s.source_topics:
                if counts[topic] > p:
                    is_changelog = topic in s.changelog_topics
                    parts[topic] = TaskTopicPartition(topic, p, True, is_changelog, _racks(spec, topic, p))
            for topic in s.changelog_topics:
                if topic not in parts:
                    parts[topic] = TaskTopicPartition(topic, p, False, True, _racks(spec, topic, p))
            end = _end_offset_sum(spec, s, p) if s.changelog_topics else 0
            tid = TaskId(s.id, p)
            tasks[tid] = new_task_info(tid, s.stores, parts.values(), end)
    return tasks


def _racks(spec: GroupSpec, topic: str, partition: int) -> SortedFrozenSet[str] | None:
    t = spec.topics.get(topic)
    if t is None or partition >= len(t.partitions):
        return None
    racks = t.partitions[partition].racks
    return None if racks is None else SortedFrozenSet(racks)


def _end_offset_sum(spec: GroupSpec, s: SubtopologySpec, partition: int) -> int:
    if spec.end_offsets_unknown:
        return UNKNOWN_OFFSET_SUM
    total = 0
    for topic in s.changelog_topics:
        t = spec.topics.get(topic)
        if t is None:
            continue  # created by this rebalance: empty
        if partition >= len(t.partitions):
            raise UserInputError(f"{t.path}: changelog topic {topic!r} has {len(t.partitions)} partitions, but "
                                 f"subtopology {s.id} has a task for partition {partition}")
        p = t.partitions[partition]
        offset = (p.committed_offset or 0) if topic in s.source_topics else p.end_offset
        total += offset or 0
        if total > LONG_MAX:
            return LONG_MAX
    return total


def _client_state(
    client: _Client, task_of: Mapping[TopicPartition, TaskId], tasks: Mapping[TaskId, TaskInfo], warnings: list[str]
) -> tuple[KafkaStreamsState, str | None]:
    """``ClientState#initializePrevTasks``: previous actives from owned partitions, then from offset sums (-2 active,
    else standby)."""
    prev_active: set[TaskId] = set()
    unmapped = []
    for p in sorted(client.owned):
        t = task_of.get(p)
        if t is None:
            unmapped.append(p)
        else:
            prev_active.add(t)
    if unmapped:
        warnings.append(f"client {client.process_id} owns partitions that belong to no task: "
                        + ", ".join(f"{t}-{p}" for t, p in unmapped[:5]))
        if not prev_active:
            return KafkaStreamsState(client.process_id, tuple(client.consumers)), (
                f"client {client.process_id} owns partitions but none maps to a task; Kafka's leader fails with "
                "IllegalStateException")
    unknown = sorted(t for t in client.offset_sums if t not in tasks)
    if unknown:
        warnings.append(f"client {client.process_id} reported offsets for tasks not in the topology (ignored): "
                        + ", ".join(map(str, unknown[:5])))
    sums = {t: o for t, o in client.offset_sums.items() if t in tasks}
    prev_standby: set[TaskId] = set()
    for t, offset in sums.items():
        if t not in prev_active:
            (prev_active if offset == LATEST_OFFSET else prev_standby).add(t)
    state = KafkaStreamsState(
        process_id=client.process_id,
        consumer_client_ids=tuple(client.consumers),
        previous_active_tasks=SortedFrozenSet(prev_active),
        previous_standby_tasks=SortedFrozenSet(prev_standby),
        task_offset_sums=sums,
        host_info=None if client.host is None else str(client.host),
        client_tags=client.tags,
        rack_id=client.rack,
        consumer_previous_tasks={c: SortedFrozenSet(t for t in ts if t in tasks)
                                 for c, ts in client.consumer_tasks.items()},
    )
    return state, None


def _encode_members(
    spec: GroupSpec,
    result: RebalanceResult,
    maps: HostMaps,
    versions: GroupVersions,
    member_client: Mapping[str, ProcessId],
    clients: Mapping[ProcessId, _Client],
    task_partitions: Mapping[TaskId, tuple[TopicPartition, ...]],
) -> dict[str, MemberOutcome]:
    """``computeNewAssignment``'s encoding: per consumer, its partitions sorted with their tasks, its standbys with
    their source partitions (a HashMap of TaskIds, each task's partitions in the grouper's order), the shared
    host maps, and its follow-up (carried only by v7+)."""
    consumers = result.group.consumers or {}
    outcomes: dict[str, MemberOutcome] = {}
    for m in spec.members:
        pid = member_client[m.member_id]
        mine = consumers.get(pid, {}).get(m.member_id, ConsumerAssignment())
        pairs = sorted((p, t) for t in mine.active for p in task_partitions[t])
        deadline = mine.followup_rebalance_deadline
        info = AssignmentInfo(
            versions.min_received,
            versions.min_supported,
            active_tasks=tuple(t for _, t in pairs),
            standby_tasks=tuple((t, task_partitions[t]) for t in hash_iteration_order(mine.standby)),
            partitions_by_host=maps.partitions_by_host,
            standby_partitions_by_host=maps.standby_partitions_by_host,
            next_rebalance_ms=NO_FOLLOWUP_MS if deadline is None or versions.min_received < MIN_NEXT_REBALANCE_VERSION
            else deadline,
        )
        assignment = Assignment.of([p for p, _ in pairs], info.encode())
        outcomes[m.member_id] = MemberOutcome(m.member_id, pid, assignment, info,
                                              member_reaction(m.info.version, clients[pid].host, info), mine)
    return outcomes


def _error_assignment(
    spec: GroupSpec, name: str, code: AssignorError, versions: GroupVersions, member_client: Mapping[str, ProcessId],
    warnings: tuple[str, ...],
) -> GroupRebalanceResult:
    """``errorAssignment``: every member gets no partitions and an AssignmentInfo v11 carrying ``code``."""
    info = AssignmentInfo.error(code)
    outcomes = {}
    for m in spec.members:
        assignment = Assignment.of([], info.encode())
        outcomes[m.member_id] = MemberOutcome(m.member_id, member_client[m.member_id], assignment, info,
                                              member_reaction(m.info.version, None, info))
    return GroupRebalanceResult(spec.name, name, code, versions, MappingProxyType(outcomes), warnings=warnings)


def _failure(
    spec: GroupSpec, name: str, versions: GroupVersions, reason: str, warnings: list[str],
    result: RebalanceResult | None = None, state: ApplicationState | None = None,
) -> GroupRebalanceResult:
    return GroupRebalanceResult(spec.name, name, AssignorError.NONE, versions, MappingProxyType({}), result, state,
                                failure=reason, warnings=tuple(warnings))


def kafka_task_partitions(
    spec: GroupSpec, tasks: Mapping[TaskId, TaskInfo]
) -> dict[TaskId, tuple[TopicPartition, ...]]:
    """Each task's source partitions in the order of Kafka's partition grouper: a ``HashSet`` sized for the
    subtopology's source topics, filled in the order of its ``HashSet`` of source topic names."""
    topic_orders = {s.id: hash_iteration_order(sorted(s.source_topics)) for s in spec.subtopologies}
    sizes = {s.id: len(s.source_topics) for s in spec.subtopologies}
    result: dict[TaskId, tuple[TopicPartition, ...]] = {}
    for tid, info in tasks.items():
        present = {p.topic for p in info.source_partitions}
        order = topic_orders.get(tid.subtopology, sorted(present))
        ordered = [(topic, tid.partition) for topic in order if topic in present]
        result[tid] = tuple(hash_iteration_order(ordered, initial_capacity=sizes.get(tid.subtopology, len(ordered)),
                                                 hash_of=topic_partition_java_hash))
    return result


def _task_order(assignor: str) -> TaskOrder:
    """How Kafka's ClientState iterates a client's assigned tasks: a ``TreeSet`` (TaskId order) after its
    internal assignors; a ``HashSet`` (``Collectors.toSet``) after a KIP-924 assignor's result."""
    if assignor in KAFKA_INTERNAL_ASSIGNORS:
        return sorted
    return lambda tasks: hash_iteration_order(sorted(tasks))


def group_scenario(spec: GroupSpec) -> Scenario:
    """The application a group file describes, as the leader derives it before assigning (tasks from the
    topology and partition counts, clients from the subscriptions, lags from the offsets): what
    ``taskassign assign`` and ``simulate`` run on a GROUP.json. A group the leader would not assign (a
    shutdown request, a missing source topic, a topology it cannot size, owned partitions of no task) is an
    input error naming why."""
    warnings: list[str] = []
    clients, member_client = _decode_members(spec)
    asking = [m.member_id for m in spec.members if m.info.error_code == AssignorError.SHUTDOWN_REQUESTED]
    if asking:
        raise UserInputError(f"{spec.name}: shutdown requested by {', '.join(asking)}: the leader assigns nothing")
    if any(m.info.is_future for m in spec.members):
        raise UserInputError(f"{spec.name}: a member speaks a future subscription version: only `taskassign "
                             "rebalance` models the version-probing rebalance that follows")
    tasks = _tasks(spec, source_partition_counts(spec))
    task_of = {p.topic_partition: info.id for info in tasks.values() for p in info.source_partitions}
    states: list[KafkaStreamsState] = []
    for client in clients.values():
        state, problem = _client_state(client, task_of, tasks, warnings)
        if problem:
            raise UserInputError(f"{spec.name}: {problem}")
        states.append(state)
    app = ApplicationState(tasks=tasks, clients={c.process_id: c for c in states}, configs=spec.configs,
                           now_ms=spec.now_ms, subtopology_walk_order=_leader_walk(spec),
                           client_arrival_order=tuple(c.process_id for c in states))
    return Scenario(spec.name, app, spec.raw_configs, None, member_client[spec.leader])
