"""Captured consumer groups as a fleet snapshot: the pipeline's input tables (docs/pipeline.md) for every
Kafka Streams application of a cluster, written so that ``taskassign pipeline run`` assigns each one exactly
as ``taskassign rebalance`` assigns its GROUP.json (same active and standby tasks per client, same follow-ups).

``convert_group`` turns one parsed GROUP.json (``formats.group.GroupSpec``) into rows; ``write_snapshot``
writes the rows of many with the fleet's own writer (``fleet.snapshot_files``). Both are pure functions of
their input: the same groups give byte-identical files.

The mapping
-----------
* ``applications``: the group's configs as Kafka config text (``true``, ``10000``, ``a,b``; checked to parse
  back to the same configs), ``now_ms``, the leader member's process id, and as ``assignor`` the one a
  captured file names (``capture.assignor``: the assignor Kafka ran, which ``rebalance`` defaults to), else
  null (the run's default). ``pipeline run --assignor`` overrides it as ``rebalance --assignor`` does.
  A captured file's recorded assignments and other provenance are not part of the snapshot.
* ``subtopologies`` / ``repartition_topics``: the topology as written. A co-partition group is stored on
  the subtopology that reads its topics (the snapshot wants a row's groups to be its own source topics; the
  leader merges groups across subtopologies anyway, so nothing changes).
* ``topic_partitions``: every partition a task reads or restores from, with its racks, end offset and
  committed offset. That is the table's definition, so topics no task uses (and changelog partitions past
  the task count) are left out and named in the conversion's ``notes``.
* ``members``: one row per member with the *decoded* subscription: process id, ``client.rack``, host
  (``application.server``) and client tags (v11). The raw ``subscription_info`` bytes are not written,
  because with bytes the pipeline takes a member's offset sums only from them and rejects a member_tasks row
  for a task the bytes also report (both rows share the key (consumer, task)): a restoring active (owned
  partitions, offset sum >= 0) and a v1-6 member's stateless previous task could then not be expressed. The
  decoded columns carry everything the leader reads from the bytes.
* ``member_tasks``: one row per (member, task) the member owned or reported: ``ownership = active`` when
  the member owns a partition of the task (the leader's previous actives come from owned partitions), the
  offset sum for a task with a changelog. An offset sum of a task *without* a changelog (every v1-6
  member's previous tasks) is not an offset the pipeline accepts; it becomes ``active`` (for -2) or
  ``standby`` ownership, which is what the leader makes of it. Reports for tasks the topology does not have
  are written too: the pipeline rejects them (``UNKNOWN_TASK``) where the leader ignores them with a warning.

What the snapshot cannot express
--------------------------------
``convert_group`` raises ``UnsupportedGroupError`` (the caller reports "cannot use this group" with the
reason and skips it; ``write_snapshot`` collects them in ``SnapshotWritten.skipped``) where the pipeline
would assign or reject the application differently from the leader:

* a member on a future subscription version (above 11): the leader runs a version-probing rebalance with a
  synthetic client for such members; the snapshot holds one real process id per member;
* a member asking for shutdown (error code 4): the leader answers SHUTDOWN_REQUESTED instead of assigning;
* members of one client that disagree on rack, host or tags when the leader's choice (the first member in
  Kafka's member order: a HashMap by member id, ``leader.group.kafka_member_order``) differs from the
  pipeline's (the first by member id);
* members of one client that report the same task differently, when the leader's merge (the last member in
  Kafka's member order wins) and the pipeline's (any running active wins, offsets in member-id order) still
  disagree after every report of a changelog task carries the leader's merged offset sum (what the conversion
  writes when threads report one task with different offsets, as a healthy multi-thread client does: a note
  says so);
* a client that owns partitions of which none belongs to a task (Kafka's leader fails);
* a co-partition group over topics of several subtopologies; a repartition topic that exists with another
  partition count than the topology needs (Kafka's leader fails); a changelog topic with fewer partitions
  than its subtopology has tasks; end offsets marked unknown when no changelog partition without known
  racks can carry the mark (a changelog partition without end offset is the snapshot's way of saying it,
  and the pipeline then loses that partition's racks);
* values the pipeline's row checks reject but the group file allows: a blank application id, member id, topic,
  store or rack, client tags over Kafka's limits or missing a ``rack.aware.assignment.tags`` key, an
  ``application.server`` that does not parse (the leader reads only a client's first one), an offset sum
  that is neither -2, -3 nor >= 0 for a task with a changelog, configs that do not survive the text form.

The merge rules are not trusted, they are checked: each client's previous actives and standbys, changelog
offset sums, rack, host and tags as the pipeline will merge them from the rows are compared with the leader's
own derivation (``leader.group.group_scenario``); any difference refuses the group, so a gap in this mapping
shows up as a reason, never as a snapshot that assigns differently.

Kept on purpose, because the pipeline reaches the same outcome: a missing source topic or a topology the
leader cannot size or co-partition (the leader sends an error code, the pipeline rejects the application
with ``MISSING_SOURCE_TOPIC`` / ``INVALID_TOPOLOGY``), and mixed subscription versions up to 11 (they shape
only the assignment *bytes*, which the pipeline does not produce).

Thread level: ownership is recorded per (member, task); the pipeline derives each owned partition's member
from it, where the leader reads exact owned partitions. When the two differ (a member owning some of a
task's partitions, a running task whose partitions nobody lists as owned, a stateful task one member owns
and another reports) the conversion adds a note: client assignments still match, the spreading over threads
and the withheld tasks may not.

The directory
-------------
A snapshot written here carries ``_taskassign_snapshot.json`` (``"format": "taskassign/fleet-snapshot/v1"``:
the table files with their row counts, the applications, the skipped groups, the notes; no timestamps, so
the same input gives the same bytes). ``write_snapshot`` writes into a hidden staging directory beside the
target, then swaps it in: a reader sees the old snapshot or the new one. It replaces only an empty directory
or a snapshot taskassign wrote (``taskassign fleet generate`` writes the same marker) holding exactly what its
marker lists; anything else is an error naming the directory, which is left untouched (fleet.snapshot_dir).
A run killed mid-way may leave ``.NAME.capture-staging-*`` beside the directory: never read, safe to delete.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from taskassign.configs import REBALANCE_PROTOCOL, REBALANCE_PROTOCOL_EAGER, AssignmentConfigs
from taskassign.errors import ConfigError, UserInputError
from taskassign.fleet.snapshot_dir import (
    MARKER_FILE,
    SNAPSHOT_FORMAT,
    check_snapshot_target,
    marker_document,
    replace_snapshot,
)
from taskassign.fleet.snapshot_files import FORMATS, Format, SnapshotWriter, table_file_name
from taskassign.fleet.tables import INPUT_TABLES, OWNERSHIP_ACTIVE, OWNERSHIP_STANDBY
from taskassign.formats.group import GroupSpec
from taskassign.formats.json_io import to_json_text
from taskassign.ids import TaskId
from taskassign.leader.group import group_scenario, kafka_member_order
from taskassign.leader.partition_grouper import (
    ResolvedSubtopology,
    ResolvedTopology,
    TopologyError,
    resolve_topology,
)
from taskassign.leader.partition_grouper import SubtopologySpec as GrouperSubtopology
from taskassign.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM, KafkaStreamsState
from taskassign.wire.types import HostInfo, TopicPartition
from taskassign.wire.versions import LATEST_SUPPORTED_VERSION, MIN_CLIENT_TAGS_VERSION, AssignorError

__all__ = (
    "MARKER_FILE",
    "SNAPSHOT_FORMAT",
    "GroupConversion",
    "SkippedGroup",
    "SnapshotWritten",
    "UnsupportedGroupError",
    "convert_group",
    "group_to_snapshot_rows",
    "write_snapshot",
)

# The pipeline's member checks (fleet/checks.py; Kafka's own limits for client.tag.*).
MAX_CLIENT_TAGS, MAX_TAG_KEY, MAX_TAG_VALUE = 5, 20, 30

Row = dict[str, Any]


class UnsupportedGroupError(UserInputError):
    """A group the snapshot cannot express faithfully: ``reason`` says what and why."""

    def __init__(self, app_id: str, reason: str) -> None:
        self.app_id = app_id
        self.reason = reason
        super().__init__(f"cannot use group {app_id!r}: {reason}")


class _Cannot(Exception):
    """Raised inside the conversion; convert_group names the application."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class GroupConversion:
    """One application's snapshot rows (table -> rows) and what the snapshot leaves out (``notes``)."""

    app_id: str
    rows: Mapping[str, tuple[Row, ...]]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SkippedGroup:
    app_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class SnapshotWritten:
    """What ``write_snapshot`` wrote: the directory, each table's file and row count, the applications
    written (app id order), the groups skipped with their reason, and the notes per application."""

    directory: Path
    format: str
    files: Mapping[str, str]
    rows: Mapping[str, int]
    applications: tuple[str, ...]
    skipped: tuple[SkippedGroup, ...] = ()
    notes: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))


# -- one group ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Member:
    """A member as the snapshot's members row sees it (decoded from its subscription)."""

    member_id: str
    process_id: str
    rack: str | None
    host: str | None
    #: None below subscription version 11 (no tags on the wire).
    tags: Mapping[str, str] | None
    offsets: Mapping[TaskId, int]
    owned: tuple[TopicPartition, ...]


@dataclass(frozen=True, slots=True)
class _Topology:
    """The topology as the leader resolves it (``error`` set when it cannot: the pipeline rejects the
    application too), and which topic partitions the snapshot keeps: topic -> (partitions below this are
    used, the partitions need an end offset)."""

    groups: Mapping[int, tuple[tuple[str, ...], ...]]
    limits: Mapping[str, tuple[int, bool]]
    error: str | None = None
    #: Subtopology id -> its resolved task count and source topics (empty when ``error``).
    subtopologies: Mapping[int, ResolvedSubtopology] = field(default_factory=lambda: MappingProxyType({}))
    logged: frozenset[int] = frozenset()
    task_of: Mapping[TopicPartition, TaskId] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def resolved(self) -> bool:
        return self.error is None

    def knows(self, task: TaskId) -> bool:
        sub = self.subtopologies.get(task.subtopology)
        return sub is not None and task.topology_name is None and task.partition < sub.num_tasks

    def has_changelog(self, task: TaskId) -> bool:
        return task.subtopology in self.logged

    def source_partitions(self, task: TaskId) -> tuple[TopicPartition, ...]:
        sub = self.subtopologies[task.subtopology]
        return tuple((topic, task.partition) for topic in sub.source_partitions(task.partition))


@dataclass(frozen=True, slots=True)
class _Report:
    """One member_tasks row: what ``consumer`` owned (``ownership``) and reported (``offset_sum``)."""

    process_id: str
    consumer: str
    task: TaskId
    ownership: str | None
    offset_sum: int | None


def group_to_snapshot_rows(spec: GroupSpec, app_id: str) -> dict[str, list[dict[str, Any]]]:
    """The rows of every input table describing ``spec`` as application ``app_id``; raises
    UnsupportedGroupError when the snapshot cannot express it (see the module docstring)."""
    return {name: [dict(r) for r in rows] for name, rows in convert_group(spec, app_id).rows.items()}


def convert_group(spec: GroupSpec, app_id: str) -> GroupConversion:
    """``group_to_snapshot_rows`` with the notes on what the snapshot leaves out."""
    try:
        return _convert(spec, app_id)
    except _Cannot as exc:
        raise UnsupportedGroupError(app_id, exc.reason) from None


def _convert(spec: GroupSpec, app_id: str) -> GroupConversion:
    if not app_id.strip(" "):
        raise _Cannot("the application id is blank")
    members = _members(spec)
    configs = _config_texts(spec)
    topology = _topology(spec)
    reports = _reports(members, topology)
    leader_clients = _leader_clients(spec, topology)
    _check_client_views(members, leader_clients)
    notes: list[str] = []
    reports = _as_leader_merged(reports, leader_clients, topology, notes)
    _check_merges(reports, leader_clients, topology)
    partitions = _partition_rows(spec, app_id, topology, notes)
    notes += _ownership_notes(spec, members, reports, leader_clients, topology)
    leader = next(m.process_id for m in members if m.member_id == spec.leader)
    assignor = spec.capture.assignor if spec.capture is not None else None
    rows: dict[str, tuple[Row, ...]] = {
        "applications": ({"app_id": app_id, "assignor": assignor, "configs": configs, "now_ms": spec.now_ms,
                          "leader_process_id": leader},),
        "subtopologies": tuple(_subtopology_rows(spec, app_id, topology)),
        "repartition_topics": tuple({"app_id": app_id, "topic": t, "num_partitions": n}
                                    for t, n in sorted(spec.repartition_topics.items())),
        "topic_partitions": tuple(partitions),
        "members": tuple(_member_row(app_id, m) for m in sorted(members, key=lambda m: m.member_id)),
        "member_tasks": tuple({"app_id": app_id, "consumer_id": r.consumer, "task_id": str(r.task),
                               "ownership": r.ownership, "offset_sum": r.offset_sum}
                              for r in sorted(reports, key=lambda r: (r.consumer, _task_order(r.task)))),
    }
    assert rows.keys() == INPUT_TABLES.keys()
    return GroupConversion(app_id, MappingProxyType(rows), tuple(notes))


def _task_order(task: TaskId) -> tuple[str, int, int]:
    return task.topology_name or "", task.subtopology, task.partition


def _blank(text: str) -> bool:
    """Blank as the pipeline's row checks see it (they trim spaces only)."""
    return text.strip(" ") == ""


# -- members --------------------------------------------------------------------------------------------------------

def _members(spec: GroupSpec) -> list[_Member]:
    """Every member decoded, in the order Kafka's leader meets them (``kafka_member_order``: its subscriptions
    are a HashMap by member id), which decides a client's first member and which report wins; the
    subscriptions the snapshot cannot stand for raise _Cannot."""
    required = spec.configs.rack_aware_assignment_tags
    members = []
    for m in kafka_member_order(spec):
        info = m.info
        if info.is_future or info.process_id is None:
            raise _Cannot(f"member {m.member_id} sent subscription version {info.version}, newer than the "
                          f"{LATEST_SUPPORTED_VERSION} the leader reads: Kafka answers with version probing, "
                          "which a snapshot (one real process id per member) cannot express")
        if info.error_code == AssignorError.SHUTDOWN_REQUESTED:
            raise _Cannot(f"member {m.member_id} asks the application to shut down: the leader answers every "
                          "member SHUTDOWN_REQUESTED instead of assigning")
        if _blank(m.member_id):
            raise _Cannot(f"member id {m.member_id!r} is blank, which the pipeline rejects")
        tags = info.tags() if info.version >= MIN_CLIENT_TAGS_VERSION else None
        _check_tags(m.member_id, tags or {}, required)
        host = _host(m.member_id, info.user_endpoint)
        members.append(_Member(m.member_id, str(info.process_id), m.subscription.rack, host, tags, info.offset_sums(),
                               m.subscription.owned_topic_partitions()))
    return members


def _host(member_id: str, endpoint: str | None) -> str | None:
    """``application.server`` as the leader reads it (empty: none)."""
    if not endpoint:
        return None
    try:
        return str(HostInfo.parse(endpoint))
    except ValueError as exc:
        raise _Cannot(f"member {member_id}: user_endpoint {exc}") from None


def _check_tags(member_id: str, tags: Mapping[str, str], required: Sequence[str]) -> None:
    """Kafka's limits on client tags, which the pipeline enforces per member and the group file does not."""
    if len(tags) > MAX_CLIENT_TAGS:
        raise _Cannot(f"member {member_id} has {len(tags)} client tags; the pipeline allows {MAX_CLIENT_TAGS}")
    for key, value in tags.items():
        if not 0 < len(key) <= MAX_TAG_KEY or len(value) > MAX_TAG_VALUE:
            raise _Cannot(f"member {member_id}: client tag {key!r}={value!r} exceeds Kafka's limits (keys 1-"
                          f"{MAX_TAG_KEY} characters, values at most {MAX_TAG_VALUE}), which the pipeline enforces")
    missing = [k for k in required if k not in tags]
    if missing:
        raise _Cannot(f"member {member_id} lacks client tag(s) {', '.join(missing)} that rack.aware.assignment.tags "
                      "requires: the pipeline rejects such a member")


def _check_client_views(members: Sequence[_Member], leader: Mapping[str, KafkaStreamsState]) -> None:
    """The leader takes a client's rack, host and tags from its first member in Kafka's member order, the
    pipeline from its first by member id: they must agree."""
    first: dict[str, _Member] = {}
    for m in members:
        if m.process_id not in first or m.member_id < first[m.process_id].member_id:
            first[m.process_id] = m
    for pid, state in leader.items():
        chosen = first[pid]
        leader_view = (state.rack_id, state.host_info, dict(state.client_tags))
        if leader_view != (chosen.rack, chosen.host, dict(chosen.tags or {})):
            raise _Cannot(f"the members of client {pid} disagree on rack, host or tags: the leader takes them from "
                          f"its first member in Kafka's member order, the pipeline from {chosen.member_id} (first "
                          "by member id)")


def _member_row(app_id: str, m: _Member) -> Row:
    tags = None if m.tags is None else dict(sorted(m.tags.items()))
    return {"app_id": app_id, "consumer_id": m.member_id, "process_id": m.process_id, "rack": m.rack,
            "client_tags": tags, "host": m.host, "subscription_info": None}


# -- configs --------------------------------------------------------------------------------------------------------

def _config_texts(spec: GroupSpec) -> dict[str, str]:
    """The configs as Kafka's text (the table's map<string,string>), checked to read back as the same."""
    texts = {key: _config_text(value) for key, value in sorted(spec.raw_configs.items()) if value is not None}
    try:
        parsed = AssignmentConfigs.from_properties(texts, coerce_strings=True)
    except ConfigError as exc:
        raise _Cannot(f"configs do not survive their text form: {exc}") from None
    if parsed != spec.configs:
        raise _Cannot("configs do not survive their text form (a list item with a comma?)")
    return texts


def _config_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


# -- topology and partitions ----------------------------------------------------------------------------------------

def _topology(spec: GroupSpec) -> _Topology:
    _check_names(spec)
    groups = _rehomed_groups(spec)
    external = {name: len(t.partitions) for name, t in spec.topics.items() if name not in spec.repartition_topics}
    try:
        subs = [GrouperSubtopology(s.id, s.source_topics, s.sink_topics, s.copartition_groups)
                for s in spec.subtopologies]
        resolved = resolve_topology(subs, external, spec.repartition_topics, kafka_compat=spec.configs.kafka_compat)
    except TopologyError as exc:
        # The leader answers with an error code (or fails), the pipeline rejects the application: keep every
        # partition of the topology's topics so that it finds the same problem.
        mentioned = {t for s in spec.subtopologies for t in (*s.source_topics, *s.sink_topics, *s.changelog_topics)}
        limits = {t: (len(spec.topics[t].partitions), False) for t in mentioned if t in spec.topics}
        return _Topology(MappingProxyType(groups), MappingProxyType(limits), error=str(exc))
    for topic, count in resolved.repartition_partition_counts.items():
        existing = spec.topics.get(topic)
        if existing is not None and len(existing.partitions) != count:
            raise _Cannot(f"repartition topic {topic!r} exists with {len(existing.partitions)} partitions, the "
                          f"topology needs {count}: Kafka's leader fails, the pipeline would assign")
    tasks = {s.id: s.num_tasks for s in resolved.subtopologies}
    _check_changelog_sizes(spec, tasks)
    task_of = {(topic, p): TaskId(s.id, p) for s in resolved.subtopologies
               for p in range(s.num_tasks) for topic in s.source_partitions(p)}
    return _Topology(MappingProxyType(groups), MappingProxyType(_limits(spec, resolved)),
                     subtopologies=MappingProxyType({s.id: s for s in resolved.subtopologies}),
                     logged=frozenset(s.id for s in spec.subtopologies if s.changelog_topics),
                     task_of=MappingProxyType(task_of))


def _check_names(spec: GroupSpec) -> None:
    """Names the pipeline's row checks reject as blank (the group file rejects only empty ones)."""
    for s in spec.subtopologies:
        for name in (*s.source_topics, *s.sink_topics, *s.stores, *s.changelog_topics):
            if _blank(name):
                raise _Cannot(f"subtopology {s.id} names a blank topic or store {name!r}")
    for topic in spec.topics.values():
        if _blank(topic.name):
            raise _Cannot(f"topic name {topic.name!r} is blank")
        for p in topic.partitions:
            if any(_blank(r) for r in p.racks or ()):
                raise _Cannot(f"partition {topic.name}-{p.partition} has a blank rack, which the pipeline rejects")


def _rehomed_groups(spec: GroupSpec) -> dict[int, tuple[tuple[str, ...], ...]]:
    """Each co-partition group on the subtopology that reads all of its topics (a snapshot row may only
    list its own source topics; the leader merges groups over the whole topology, so this changes nothing)."""
    reader = {t: s.id for s in spec.subtopologies for t in s.source_topics}
    groups: dict[int, list[tuple[str, ...]]] = {s.id: [] for s in spec.subtopologies}
    for s in spec.subtopologies:
        for group in s.copartition_groups:
            owners = sorted({reader[t] for t in group})
            if len(owners) != 1:
                raise _Cannot(f"co-partition group {list(group)} spans subtopologies {owners}; a snapshot row "
                              "co-partitions only its own source topics")
            groups[owners[0]].append(group)
    return {sid: tuple(gs) for sid, gs in groups.items()}


def _check_changelog_sizes(spec: GroupSpec, tasks: Mapping[int, int]) -> None:
    """A changelog topic shorter than its subtopology's task count stops the leader (it reads partition p of
    every changelog topic for task p); the pipeline would read the missing partitions as unknown."""
    if spec.end_offsets_unknown:
        return  # the leader then reads no end offset
    for s in spec.subtopologies:
        for topic in s.changelog_topics:
            t = spec.topics.get(topic)
            if t is not None and len(t.partitions) < tasks[s.id]:
                raise _Cannot(f"changelog topic {topic!r} has {len(t.partitions)} partitions but subtopology {s.id} "
                              f"has {tasks[s.id]} tasks")


def _limits(spec: GroupSpec, resolved: ResolvedTopology) -> dict[str, tuple[int, bool]]:
    """The pipeline's partition references: a source topic's partitions are all read; a changelog topic's
    partitions below the task count are restored from and need an end offset unless it is also a source."""
    limits: dict[str, tuple[int, bool]] = {}
    changelogs = {s.id: s.changelog_topics for s in spec.subtopologies}
    for sub in resolved.subtopologies:
        topics = [(t, t in changelogs[sub.id], n) for t, n in sub.source_partition_counts.items()]
        entries = [(t, sub.num_tasks if is_changelog else n, False) for t, is_changelog, n in topics]
        entries += [(t, sub.num_tasks, True) for t in changelogs[sub.id] if t not in sub.source_partition_counts]
        for topic, limit, needs_end in entries:
            before = limits.get(topic, (0, False))
            limits[topic] = (max(before[0], limit), before[1] or needs_end)
    return limits


def _partition_rows(spec: GroupSpec, app_id: str, topology: _Topology, notes: list[str]) -> list[Row]:
    unknown = _unknown_end_marks(spec, topology) if spec.end_offsets_unknown and topology.resolved else set()
    rows: list[Row] = []
    unused_topics: list[str] = []
    unused_partitions: list[str] = []
    for name in sorted(spec.topics):
        if name not in topology.limits:
            unused_topics.append(name)
            continue
        limit, _ = topology.limits[name]
        for p in spec.topics[name].partitions:
            if p.partition >= limit:
                unused_partitions.append(f"{name}-{p.partition}")
                continue
            rows.append({"app_id": app_id, "topic": name, "partition": p.partition,
                         "replica_racks": None if p.racks is None else list(p.racks),
                         "end_offset": None if (name, p.partition) in unknown else p.end_offset,
                         "committed_offset": p.committed_offset, "size_bytes": None})
    if unused_topics:
        notes.append(f"topics no task reads or restores from are left out: {', '.join(unused_topics)}")
    if unused_partitions:
        notes.append(f"partitions no task uses are left out: {', '.join(unused_partitions)}")
    return rows


def _unknown_end_marks(spec: GroupSpec, topology: _Topology) -> set[tuple[str, int]]:
    """The changelog partitions written without end offset, so that the pipeline, like the leader, takes every
    end offset sum as unknown (-3). The pipeline does not use such a partition at all, so its racks must be
    unknown anyway."""
    needed = [(name, p) for name in sorted(spec.topics) if topology.limits.get(name, (0, False))[1]
              for p in spec.topics[name].partitions if p.partition < topology.limits[name][0]]
    if not needed:
        raise _Cannot("end offsets are marked unknown, but no changelog topic exists to carry the mark (the "
                      "snapshot says it with a changelog partition without end offset)")
    marked = [(name, p) for name, p in needed if p.end_offset is None]
    if not marked:  # every end offset is there: take one away, from a partition whose racks are unknown anyway
        marked = [next(((name, p) for name, p in needed if p.racks is None), needed[0])]
    for name, p in marked:
        if p.racks is not None:
            raise _Cannot(f"end offsets are marked unknown, which the snapshot says with a changelog partition "
                          f"without end offset; the pipeline then drops that partition ({name}-{p.partition}) and "
                          "its known racks")
    return {(name, p.partition) for name, p in marked}


def _subtopology_rows(spec: GroupSpec, app_id: str, topology: _Topology) -> list[Row]:
    return [{"app_id": app_id, "subtopology": s.id, "source_topics": list(s.source_topics),
             "sink_topics": list(s.sink_topics), "stores": list(s.stores), "changelog_topics": list(s.changelog_topics),
             "copartition_groups": [list(g) for g in topology.groups[s.id]]} for s in spec.subtopologies]


# -- what members owned and reported --------------------------------------------------------------------------------

def _reports(members: Sequence[_Member], topology: _Topology) -> list[_Report]:
    """One report per (member, task) it owned a partition of or reported an offset sum for."""
    reports = []
    for m in members:
        owned = {topology.task_of[p] for p in m.owned if p in topology.task_of}
        for task in sorted(owned | set(m.offsets), key=_task_order):
            offset = m.offsets.get(task)
            known = topology.knows(task)
            logged = known and topology.has_changelog(task)
            ownership: str | None = None
            if task in owned:
                ownership = OWNERSHIP_ACTIVE
            elif known and not logged:  # an offset sum of a task without changelog: what the leader makes of it
                ownership = OWNERSHIP_ACTIVE if offset == LATEST_OFFSET else OWNERSHIP_STANDBY
            if logged and offset is not None and offset < 0 and offset not in (LATEST_OFFSET, UNKNOWN_OFFSET_SUM):
                raise _Cannot(f"member {m.member_id} reports offset sum {offset} for task {task}, which the pipeline "
                              "rejects (-2, -3 or >= 0)")
            reports.append(_Report(m.process_id, m.member_id, task, ownership,
                                   offset if logged or not known else None))
    return reports


def _leader_clients(spec: GroupSpec, topology: _Topology) -> Mapping[str, KafkaStreamsState]:
    """The clients exactly as the leader derives them (``leader.group.group_scenario``), to hold the snapshot
    against; none when the topology does not resolve (both sides then reject the application)."""
    if not topology.resolved:
        return {}
    try:
        scenario = group_scenario(spec)
    except UserInputError as exc:  # e.g. owned partitions of no task: Kafka's leader fails
        raise _Cannot(f"{exc}; the pipeline would assign") from None
    return {str(pid): state for pid, state in scenario.state.clients.items()}


def _as_leader_merged(reports: Sequence[_Report], leader: Mapping[str, KafkaStreamsState], topology: _Topology,
                      notes: list[str]) -> list[_Report]:
    """Members of one client that report a changelog task with different offset sums (each StreamThread sends its
    own SubscriptionInfo, taken at its own moment: common in a healthy application with several threads) are
    merged by the leader into one value, the last report in Kafka's member order. Every report of that task then
    carries the leader's value, so the pipeline's merge (any order) gives the same one; which members reported
    the task, the thread-level input, is kept."""
    reported: dict[tuple[str, TaskId], set[int]] = {}
    for r in reports:
        if r.offset_sum is not None and topology.knows(r.task) and topology.has_changelog(r.task):
            reported.setdefault((r.process_id, r.task), set()).add(r.offset_sum)
    merged = {key for key, values in reported.items() if len(values) > 1}
    if not merged:
        return list(reports)
    out = []
    for r in reports:
        state = leader.get(r.process_id)
        if (r.process_id, r.task) in merged and state is not None and r.task in state.task_offset_sums:
            r = dataclasses.replace(r, offset_sum=state.task_offset_sums[r.task])
        out.append(r)
    shown = sorted(merged, key=lambda key: (key[0], _task_order(key[1])))
    notes.append(f"{len(merged)} task(s) reported with different offset sums by members of one client (e.g. "
                 + ", ".join(f"{t} on {pid[:8]}" for pid, t in shown[:3])
                 + "): every report carries the leader's merged value (the last in Kafka's member order)")
    return out


def _check_merges(reports: Sequence[_Report], leader: Mapping[str, KafkaStreamsState], topology: _Topology) -> None:
    """Per client, the leader's previous tasks and offset sums (owned partitions, then the last report in Kafka's
    member order) must be the pipeline's (owned or a running -2 anywhere; offsets in member-id order)."""
    reports_of: dict[str, list[_Report]] = {}
    for r in reports:
        if topology.knows(r.task):
            reports_of.setdefault(r.process_id, []).append(r)
    for pid, state in leader.items():
        offsets = {t: o for t, o in state.task_offset_sums.items() if topology.has_changelog(t)}
        wanted = _View(frozenset(state.previous_active_tasks), frozenset(state.previous_standby_tasks),
                       MappingProxyType(offsets))
        differ = sorted(wanted.differences(_pipeline_view(reports_of.get(pid, []), topology)), key=_task_order)
        if differ:
            raise _Cannot(f"members of client {pid} report task(s) {', '.join(map(str, differ[:5]))} differently: "
                          "the leader keeps the last report in Kafka's member order, the pipeline any running "
                          "active and the offsets in member-id order")


@dataclass(frozen=True, slots=True)
class _View:
    """A client's previous tasks and the offset sums of its changelog tasks, as one side merges reports."""

    active: frozenset[TaskId]
    standby: frozenset[TaskId]
    offsets: Mapping[TaskId, int]

    def differences(self, other: _View) -> set[TaskId]:
        offsets = {t for t in self.offsets.keys() | other.offsets.keys() if self.offsets.get(t) != other.offsets.get(t)}
        return set(self.active ^ other.active) | set(self.standby ^ other.standby) | offsets


def _pipeline_view(reports: Sequence[_Report], topology: _Topology) -> _View:
    """fleet/derive.py client_inputs: active if any member owned it or reported -2, the last offset by member id."""
    active: set[TaskId] = set()
    offsets: dict[TaskId, int] = {}
    for r in sorted(reports, key=lambda r: r.consumer):
        if r.ownership == OWNERSHIP_ACTIVE or (r.ownership is None and r.offset_sum == LATEST_OFFSET):
            active.add(r.task)
        if r.offset_sum is not None:
            offsets[r.task] = r.offset_sum
    tasks = {r.task for r in reports}
    logged = {t: o for t, o in offsets.items() if topology.has_changelog(t)}
    return _View(frozenset(active), frozenset(tasks - active), MappingProxyType(logged))


def _ownership_notes(spec: GroupSpec, members: Sequence[_Member], reports: Sequence[_Report],
                     leader: Mapping[str, KafkaStreamsState], topology: _Topology) -> list[str]:
    if not topology.resolved:
        return []
    notes = []
    unmapped = sorted({p for m in members for p in m.owned if p not in topology.task_of})
    if unmapped:
        notes.append("owned partitions that belong to no task are left out (the leader ignores them too): "
                     + ", ".join(f"{t}-{p}" for t, p in unmapped[:5]) + (" ..." if len(unmapped) > 5 else ""))
    if _exact_ownership(members, topology) != _derived_ownership(spec, reports, topology) or \
            _stateful_reporters(leader, topology) != _stateful_row_consumers(reports, topology):
        notes.append("thread level: the snapshot records ownership per (member, task) and the pipeline derives "
                     "each partition's owner from it, which here differs from the members' owned partitions; "
                     "client assignments match, consumer assignments and withheld tasks may not")
    return notes


_Owners = dict[tuple[str, TopicPartition], str]


def _exact_ownership(members: Sequence[_Member], topology: _Topology) -> _Owners:
    """What the leader withholds by: each task partition's owner (of the members of a client listing it, the
    last in Kafka's member order, which ``members`` follows)."""
    return {(m.process_id, p): m.member_id for m in members for p in m.owned if p in topology.task_of}


def _derived_ownership(spec: GroupSpec, reports: Sequence[_Report], topology: _Topology) -> _Owners:
    """leader/ownership.py ``ownership_from_state`` on the pipeline's clients: a previous active task's source
    partitions belong to the last member (by id) with a report of it; nothing under the EAGER protocol."""
    if spec.configs.extension(REBALANCE_PROTOCOL) == REBALANCE_PROTOCOL_EAGER:
        return {}
    by_task: dict[tuple[str, TaskId], list[_Report]] = {}
    for r in reports:
        if topology.knows(r.task):
            by_task.setdefault((r.process_id, r.task), []).append(r)
    owners: _Owners = {}
    for (pid, task), rs in by_task.items():
        if any(r.ownership == OWNERSHIP_ACTIVE or (r.ownership is None and r.offset_sum == LATEST_OFFSET) for r in rs):
            owner = max(r.consumer for r in rs)
            owners.update({(pid, p): owner for p in topology.source_partitions(task)})
    return owners


def _stateful_reporters(leader: Mapping[str, KafkaStreamsState], topology: _Topology) -> set[tuple[str, TaskId]]:
    """The leader's per-thread previous tasks that count for thread stickiness: those with a changelog."""
    return {(consumer, t) for state in leader.values() for consumer, tasks in state.consumer_previous_tasks.items()
            for t in tasks if topology.has_changelog(t)}


def _stateful_row_consumers(reports: Sequence[_Report], topology: _Topology) -> set[tuple[str, TaskId]]:
    return {(r.consumer, r.task) for r in reports if topology.knows(r.task) and topology.has_changelog(r.task)}


# -- writing --------------------------------------------------------------------------------------------------------

def write_snapshot(
    directory: str | Path, apps: Iterable[tuple[str, GroupSpec]], *, format: str = "parquet",
) -> SnapshotWritten:
    """Write the snapshot of ``apps`` ((app id, group) pairs) into ``directory`` as ``format`` (parquet, csv or
    json). Groups the snapshot cannot express are skipped with their reason (``skipped``); the directory must
    be absent, empty, or a snapshot taskassign wrote (else UserInputError naming it, and it is left
    untouched: fleet.snapshot_dir)."""
    fmt = _table_format(format)
    target = Path(directory).absolute()
    check_snapshot_target(target)
    conversions, skipped = _convert_all(apps)
    files = {name: table_file_name(name, fmt) for name in INPUT_TABLES}

    def write(staging: Path) -> dict[str, int]:
        rows = _write_tables(staging, fmt, conversions)
        marker = _marker(fmt, files, rows, conversions, skipped)
        (staging / MARKER_FILE).write_text(to_json_text(marker), encoding="utf-8")  # staging is private: no temp file
        return rows

    rows = replace_snapshot(target, "capture", write)
    return SnapshotWritten(target, fmt, MappingProxyType(files), MappingProxyType(rows),
                           tuple(c.app_id for c in conversions), tuple(skipped),
                           MappingProxyType({c.app_id: c.notes for c in conversions if c.notes}))


def _table_format(name: str) -> Format:
    for fmt in FORMATS:
        if fmt == name:
            return fmt
    raise UserInputError(f"unknown snapshot format {name!r}; one of {', '.join(FORMATS)}")


def _convert_all(apps: Iterable[tuple[str, GroupSpec]]) -> tuple[list[GroupConversion], list[SkippedGroup]]:
    """Every group converted, in app id order (so the files do not depend on the order groups were listed)."""
    pairs = sorted(apps, key=lambda pair: pair[0])
    seen: set[str] = set()
    for app_id, _ in pairs:
        if app_id in seen:
            raise UserInputError(f"application {app_id!r} is given twice")
        seen.add(app_id)
    conversions: list[GroupConversion] = []
    skipped: list[SkippedGroup] = []
    for app_id, spec in pairs:
        try:
            conversions.append(convert_group(spec, app_id))
        except UnsupportedGroupError as exc:
            skipped.append(SkippedGroup(app_id, exc.reason))
    return conversions, skipped


def _write_tables(staging: Path, fmt: Format, conversions: Sequence[GroupConversion]) -> dict[str, int]:
    with SnapshotWriter(staging, fmt) as writer:
        for name in INPUT_TABLES:
            for conversion in conversions:
                writer.write(name, conversion.rows[name])
    return dict(writer.rows_written)


def _marker(fmt: Format, files: Mapping[str, str], rows: Mapping[str, int], conversions: Sequence[GroupConversion],
            skipped: Sequence[SkippedGroup]) -> dict[str, Any]:
    """The marker: what this directory holds, so that a later write knows it may replace it."""
    return marker_document(
        "taskassign capture", fmt, files, rows,
        applications=[c.app_id for c in conversions],
        skipped=[{"app_id": s.app_id, "reason": s.reason} for s in skipped],
        notes={c.app_id: list(c.notes) for c in conversions if c.notes},
    )
