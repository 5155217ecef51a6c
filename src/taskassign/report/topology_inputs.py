"""Group files, scenarios and streams groups as a ``TopologyView``: the topology each file holds, its processes
named as the operator knows them, the placement the file records and the one an assignor computes from it.

- GROUP.json (``taskassign/group/v1``): the ``topology`` object (sources, sinks, stores, changelogs,
  co-partition groups, repartition topics; derived from ``Topology#describe()`` by ``taskassign capture``),
  the members' previous tasks (their subscriptions), or Kafka's recorded assignment in a captured file ->
  the assignor's answer (the file's captured assignor, else high_availability). Clients are named by their
  client id (without ``-StreamThread-N-consumer``) or host, as DescribeGroups reported them, else their
  endpoint.
- Scenario (``taskassign/scenario/v1``): topics from the tasks' partitions (a scenario has no sinks), the
  clients' previous tasks -> the assignor's answer.
- Streams group (``taskassign/streams-group/v1``): the broker's topology when the file was captured (source,
  repartition and changelog topics; stores and sinks from the ``Topology#describe()`` text a 4.4 broker keeps,
  KIP-1331, parsed by ``capture.topology_text``), else each subtopology's task count; the members' target assignment ->
  the group's broker-side assignor's answer.

The classic protocol does not mark warm-ups: a stateful task's standbys beyond ``num.standby.replicas`` are
shown as warm-ups, on the processes that held no copy of it before (the high-availability assignor's warm-up
goes to a client that is to take the task over, KIP-441).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from taskassign.errors import DecodeError, UserInputError
from taskassign.formats.group import GroupSpec
from taskassign.formats.scenario import Scenario
from taskassign.model import ApplicationState, AssignedTask, GroupAssignment, KafkaStreamsState
from taskassign.report.topology_model import Placement, ProcessNode, SubtopologyNode, TaskKey, TopologyView
from taskassign.streams_protocol.model import StreamsGroup, StreamsGroupAssignment, TaskMap
from taskassign.wire.assignment_info import AssignmentInfo
from taskassign.wire.consumer_protocol import Assignment

__all__ = ("classic_placement", "client_name", "group_view", "plan_placement", "recorded_placement", "scenario_view",
           "streams_group_view")

_THREAD_SUFFIX = re.compile(r"-StreamThread-\d+(-consumer|-restore-consumer)?$")
Copies = dict[str, dict[TaskKey, set[str]]]
NOTHING: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())


def client_name(client_id: str | None) -> str | None:
    """A Streams client id as the operator set it: a consumer's ``<client.id>-StreamThread-N-consumer`` without
    the thread part."""
    if not client_id:
        return None
    return _THREAD_SUFFIX.sub("", client_id) or client_id


def _short_ids(ids: Sequence[str]) -> dict[str, str]:
    """Process ids cut short: the first 8 characters when they tell the ids apart, else the last 8 to 12 (made-up
    ids such as ``00000000-...-000000000001`` differ at the end), else the whole id."""
    candidates = [{pid: pid[:8] for pid in ids}]
    candidates += [{pid: "…" + pid[-n:] for pid in ids} for n in range(8, 13)]
    for short in candidates:
        if len(set(short.values())) == len(ids):
            return short
    return {pid: pid for pid in ids}


def _unique_labels(names: Mapping[str, str | None], ids: Sequence[str]) -> dict[str, str]:
    """Each process's name, or its short id; a name several processes share gets the short id appended."""
    short = _short_ids(ids)
    counts: dict[str, int] = {}
    for pid in ids:
        name = names.get(pid)
        if name:
            counts[name] = counts.get(name, 0) + 1
    labels = {}
    for pid in ids:
        name = names.get(pid)
        labels[pid] = short[pid] if not name else name if counts[name] == 1 else f"{name} ({short[pid]})"
    return labels


def _band(rack: str | None, tags: Mapping[str, str], tag_names: Sequence[str]) -> tuple[str | None, str]:
    if rack:
        return rack, "rack"
    for tag in (*tag_names, "zone", "rack"):
        if tags.get(tag):
            return tags[tag], tag
    return None, "rack"


def _band_kind(kinds: Iterable[str]) -> str:
    named = sorted(set(kinds))
    return named[0] if len(named) == 1 else "rack"


# --------------------------------------------------------------------------------------------- classic


def _classic_subtopologies(state: ApplicationState) -> dict[int, SubtopologyNode]:
    by_sub: dict[int, list[Any]] = {}
    for info in state.tasks.values():
        by_sub.setdefault(info.id.subtopology, []).append(info)
    result = {}
    for sub, infos in sorted(by_sub.items()):
        sources = dict.fromkeys(p.topic for i in infos for p in i.source_partitions)
        changelogs = dict.fromkeys(p.topic for i in infos for p in i.changelog_partitions)
        stores = dict.fromkeys(s for i in infos for s in i.state_store_names)
        result[sub] = SubtopologyNode(
            id=str(sub), source_topics=tuple(sources), stores=tuple(sorted(stores)),
            changelog_topics=tuple(changelogs), partitions=tuple(sorted(i.id.partition for i in infos)),
            repartition_sources=tuple(t for t in sources if t.endswith("-repartition")),
            stateful=any(i.is_stateful for i in infos))
    return result


def _previous(state: ApplicationState, label: str) -> Placement:
    copies: Copies = {"active": {}, "standby": {}}
    for client in state.clients.values():
        for role, tasks in (("active", client.previous_active_tasks), ("standby", client.previous_standby_tasks)):
            for t in tasks:
                copies[role].setdefault((str(t.subtopology), t.partition), set()).add(str(client.process_id))
    return Placement.of(label, copies)


def classic_placement(assignment: GroupAssignment, before: Placement | None, num_standby: int,
                      label: str) -> Placement:
    """A classic assignment as a placement; standbys beyond ``num_standby`` on processes that held no copy in
    ``before`` are warm-ups."""
    copies: Copies = {"active": {}, "standby": {}, "warmup": {}}
    for pid, client in assignment.clients.items():
        for t, assigned in client.tasks.items():
            role = "active" if assigned.type is AssignedTask.Type.ACTIVE else "standby"
            copies[role].setdefault((str(t.subtopology), t.partition), set()).add(str(pid))
    return _with_warmups(copies, before, num_standby, label)


def plan_placement(clients: Mapping[str, Mapping[str, Sequence[str]]], before: Placement | None, num_standby: int,
                   label: str, process_of: Mapping[str, str] | None = None) -> Placement:
    """A plan's assignment (``taskassign plan``: ``{process: {"active": [...], "standby": [...]}}``, tasks
    ``s_p``; a streams plan names members and ``s:p`` tasks, ``process_of`` maps members to processes)."""
    copies: Copies = {"active": {}, "standby": {}}
    for owner, tasks in clients.items():
        pid = process_of.get(owner, owner) if process_of is not None else owner
        for role in ("active", "standby"):
            for name in tasks.get(role, ()):
                sub, _, part = name.replace(":", "_").rpartition("_")
                copies[role].setdefault((sub, int(part)), set()).add(pid)
    return _with_warmups(copies, before, num_standby, label)


def _with_warmups(copies: Copies, before: Placement | None, num_standby: int, label: str) -> Placement:
    copies.setdefault("warmup", {})
    for task, holders in list(copies["standby"].items()):
        extra = len(holders) - num_standby
        if extra <= 0:
            continue
        fresh = sorted(p for p in holders if before is None or not any(
            p in before.holders(role, task) for role in ("active", "standby", "warmup")))
        for p in fresh[:extra]:
            holders.discard(p)
            copies["warmup"].setdefault(task, set()).add(p)
    return Placement.of(label, copies)


def _classic_processes(state: ApplicationState, names: Mapping[str, str | None]) -> tuple[tuple[ProcessNode, ...], str]:
    ids = [str(pid) for pid in state.process_ids]
    labels, short = _unique_labels(names, ids), _short_ids(ids)
    tags = state.configs.rack_aware_assignment_tags
    nodes, kinds = [], []
    for pid in state.process_ids:
        client: KafkaStreamsState = state.clients[pid]
        band, kind = _band(client.rack_id, client.client_tags, tags)
        if band is not None:
            kinds.append(kind)
        nodes.append(ProcessNode(str(pid), labels[str(pid)], band, len(client.consumer_client_ids) or None,
                                 short[str(pid)]))
    return tuple(nodes), _band_kind(kinds)


def _scenario_names(state: ApplicationState) -> dict[str, str | None]:
    names: dict[str, str | None] = {}
    for pid, client in state.clients.items():
        consumers = {client_name(c) for c in client.consumer_client_ids} - {None}
        names[str(pid)] = (client.host_info if client.host_info else
                           next(iter(consumers)) if len(consumers) == 1 else None)
    return names


def scenario_view(scenario: Scenario, after: GroupAssignment | None = None, *, after_label: str = "",
                  kind: str = "scenario", names: Mapping[str, str | None] | None = None,
                  subtopologies: Mapping[int, SubtopologyNode] | None = None,
                  before_label: str = "previous tasks") -> TopologyView:
    """The view of ``scenario``: its clients' previous tasks, then ``after`` when given."""
    state = scenario.state
    subs = dict(subtopologies) if subtopologies is not None else _classic_subtopologies(state)
    processes, band_kind = _classic_processes(state, names if names is not None else _scenario_names(state))
    has_previous = any(c.previous_active_tasks or c.previous_standby_tasks for c in state.clients.values())
    before = _previous(state, before_label) if has_previous or after is None else None
    placed = None if after is None else classic_placement(after, before, state.configs.num_standby_replicas,
                                                          after_label)
    notes = () if has_previous or after is None else ("no client reported previous tasks: nothing moves",)
    return TopologyView(scenario.name, kind, tuple(_linked(subs.values())), processes, before, placed,
                        notes, band_kind)


def _linked(subs: Iterable[SubtopologyNode]) -> list[SubtopologyNode]:
    """The subtopologies with ``repartition_sinks``/``repartition_sources`` filled from what each writes and
    the others read."""
    items = list(subs)
    readers = {t for s in items for t in s.source_topics}
    writers = {t for s in items for t in s.sink_topics}
    result = []
    for s in items:
        rsources = tuple(dict.fromkeys([*s.repartition_sources, *(t for t in s.source_topics if t in writers)]))
        rsinks = tuple(t for t in s.sink_topics if t in readers)
        result.append(SubtopologyNode(s.id, s.source_topics, s.sink_topics, s.stores, s.changelog_topics,
                                      s.copartition_groups, s.partitions, rsources, rsinks, s.stateful))
    return result


def recorded_placement(spec: GroupSpec, previous: Placement | None, num_standby: int) -> Placement | None:
    """Kafka's recorded assignment of a captured group file (every member's AssignmentInfo), or None."""
    if not spec.has_recorded_outcome:
        return None
    copies: Copies = {"active": {}, "standby": {}}
    for m in spec.members:
        try:
            info = AssignmentInfo.decode(Assignment.decode(m.recorded_assignment or b"").user_data or b"")
        except DecodeError:
            return None
        pid = str(m.info.process_id)
        for t in info.active_tasks:
            copies["active"].setdefault((str(t.subtopology), t.partition), set()).add(pid)
        for t, _ in info.standby_tasks:
            copies["standby"].setdefault((str(t.subtopology), t.partition), set()).add(pid)
    return _with_warmups(copies, previous, num_standby, "Kafka's recorded assignment")


def group_view(spec: GroupSpec, scenario: Scenario, after: GroupAssignment | None, *,
               after_label: str = "") -> TopologyView:
    """The view of a group file: its topology object, its members named by client id or host, their previous
    tasks (or, in a captured file, the assignment Kafka's leader made), then ``after`` (the assignor's answer)
    when given. ``scenario`` is the file as the leader derives it (``leader.group.group_scenario``)."""
    derived = _classic_subtopologies(scenario.state)
    subs: dict[int, SubtopologyNode] = {}
    for s in spec.subtopologies:
        d = derived.get(s.id)
        subs[s.id] = SubtopologyNode(
            id=str(s.id), source_topics=s.source_topics, sink_topics=s.sink_topics, stores=s.stores,
            changelog_topics=s.changelog_topics, copartition_groups=s.copartition_groups,
            partitions=d.partitions if d else (),
            repartition_sources=tuple(t for t in s.source_topics if t in spec.repartition_topics),
            stateful=bool(s.stores))
    names: dict[str, str | None] = {}
    by_process: dict[str, list[Any]] = {}
    for m in spec.members:
        by_process.setdefault(str(m.info.process_id), []).append(m)
    for pid, members in by_process.items():
        clients = sorted({n for m in members if (n := client_name(m.client_id))})
        hosts = sorted({m.client_host.lstrip("/") for m in members if m.client_host})
        endpoint = next((m.info.user_endpoint for m in members if m.info.user_endpoint), None)
        names[pid] = (clients[0] if len(clients) == 1 else hosts[0] if len(hosts) == 1 else endpoint or None)
    view = scenario_view(scenario, after, after_label=after_label, kind="group file", names=names,
                         subtopologies=subs, before_label="the members' previous tasks")
    recorded = recorded_placement(spec, view.before, scenario.state.configs.num_standby_replicas)
    if recorded is None:
        return view
    placed = None if after is None else classic_placement(after, recorded, scenario.state.configs.num_standby_replicas,
                                                          after_label)
    return replace(view, before=recorded, after=placed, notes=())


# --------------------------------------------------------------------------------------------- streams groups


def _streams_topology(group: StreamsGroup) -> dict[str, dict[str, Any]]:
    capture = group.capture or {}
    topology = capture.get("topology") if isinstance(capture, Mapping) else None
    subs = topology.get("subtopologies") if isinstance(topology, Mapping) else None
    result: dict[str, dict[str, Any]] = {}
    for s in subs if isinstance(subs, list) else ():
        if isinstance(s, Mapping) and "id" in s:
            result[str(s["id"])] = dict(s)
    return result


def _described(group: StreamsGroup) -> tuple[dict[str, tuple[tuple[str, ...], tuple[str, ...]]], tuple[str, ...]]:
    """Stores and external sink topics per subtopology from the ``Topology#describe()`` text a 4.4 broker keeps
    (KIP-1331, the capture's ``topologyDescription``), and a note when that text does not parse."""
    from taskassign.capture.topology_text import INTERNAL_SUFFIXES, parse_topology_description

    text = (group.capture or {}).get("topologyDescription") if isinstance(group.capture, Mapping) else None
    if not isinstance(text, str) or not text.strip():
        return {}, ()
    try:
        described = parse_topology_description(text, source="capture.topologyDescription")
    except UserInputError as exc:
        return {}, (f"the broker's topology description was not read: {exc}",)
    result = {}
    for sub in described.subtopologies:
        sinks = tuple(t for t in sub.sink_topics if not t.endswith(INTERNAL_SUFFIXES))
        result[str(sub.id)] = (sub.stores, sinks)
    return result, ()


def _topic_names(items: Any) -> tuple[str, ...]:
    names = []
    for item in items if isinstance(items, list) else ():
        name = item.get("name") if isinstance(item, Mapping) else item
        if isinstance(name, str):
            names.append(name)
    return tuple(names)


def _streams_copies(members: Iterable[tuple[str, Mapping[str, TaskMap]]]) -> Copies:
    copies: Copies = {"active": {}, "standby": {}, "warmup": {}}
    for pid, maps in members:
        for role, tasks in maps.items():
            for sub, partitions in tasks.items():
                for p in partitions:
                    copies[role].setdefault((sub, p), set()).add(pid)
    return copies


def streams_group_view(group: StreamsGroup, after: StreamsGroupAssignment | None, *,
                       after_label: str = "") -> TopologyView:
    """The view of a streams group: the broker's topology when captured, the members' target assignment, then
    ``after`` (the broker-side assignor's answer) when given."""
    broker = _streams_topology(group)
    described, notes = _described(group)
    subs = []
    for s in group.subtopologies:
        b = broker.get(s.id, {})
        rsources = _topic_names(b.get("repartitionSourceTopics"))
        changelogs = _topic_names(b.get("stateChangelogTopics"))
        stores, sinks = described.get(s.id, NOTHING)
        subs.append(SubtopologyNode(
            id=s.id, source_topics=(*_topic_names(b.get("sourceTopics")), *rsources),
            sink_topics=(*_topic_names(b.get("repartitionSinkTopics")), *sinks), stores=stores,
            changelog_topics=changelogs, partitions=tuple(range(s.partitions)), repartition_sources=rsources,
            stateful=s.stateful))
    member_process = {m.member_id: m.process_id for m in group.members}
    captured = (group.capture or {}).get("members") if isinstance(group.capture, Mapping) else None
    names: dict[str, str | None] = {}
    threads: dict[str, int] = {}
    bands: dict[str, tuple[str | None, str]] = {}
    tags = [t for t in group.configs.get("rack.aware.assignment.tags", "").split(",") if t]
    for m in group.members:
        threads[m.process_id] = threads.get(m.process_id, 0) + 1
        info = captured.get(m.member_id) if isinstance(captured, Mapping) else None
        name = None
        if isinstance(info, Mapping):
            name = client_name(info.get("clientId")) or (info.get("clientHost") or "").lstrip("/") or None
        names[m.process_id] = names.get(m.process_id) or name or m.instance_id
        bands.setdefault(m.process_id, _band(m.rack_id, m.client_tags, tags))
    ids = sorted(threads)
    labels, short = _unique_labels(names, ids), _short_ids(ids)
    processes = tuple(ProcessNode(pid, labels[pid], bands[pid][0], threads[pid], short[pid]) for pid in ids)
    before = Placement.of("the members' target assignment", _streams_copies(
        (m.process_id, {"active": m.active_tasks, "standby": m.standby_tasks, "warmup": m.warmup_tasks})
        for m in group.members))
    placed = None
    if after is not None:
        placed = Placement.of(after_label, _streams_copies(
            (member_process[mid], {"active": a.active_tasks, "standby": a.standby_tasks})
            for mid, a in after.members.items() if mid in member_process))
    kinds = [bands[p][1] for p in ids if bands[p][0] is not None]
    return TopologyView(group.name, "streams group", tuple(_linked(subs)), processes, before, placed, notes,
                        _band_kind(kinds))
