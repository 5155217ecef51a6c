"""One application under both protocols: a classic scenario as a streams group, and back.

``scenario_to_streams_group`` puts what a classic group leader knows (docs/formats.md's scenario) into the
broker's terms (docs/streams-protocol.md, "From a classic scenario"):

* one subtopology per classic subtopology, its id the number as a string (so the broker orders "10" before
  "9"), ``partitions`` its task count and ``stateful`` whether its tasks have a changelog;
* one member per stream thread: member id = the consumer id, process id = the client's UUID, the client's
  rack and tags; members are listed client by client (ProcessId order), consumers in sorted order, which is
  the order the coordinator's member map is filled in;
* each member's current target: the consumer's previous tasks from ``consumer_previous``, a previous active
  as active, a previous standby as standby. A client without ``consumer_previous`` has its previous tasks
  dealt out (actives, then standbys, in TaskId order, each to the consumer with the fewest so far); a
  previous active no consumer lists is dealt the same way, and a previous standby no consumer lists is state
  left on disk: its offsets are reported (by a dealt member) but it is nobody's target;
* task offsets from the reported offset sums and lags: a running active (-2) reports the changelog end
  offset sum (it is caught up), an unknown sum (-3) is not reported, state ahead of the changelog reports 0
  (the classic leader restores it from scratch too), anything else its offset sum; end offsets likewise.

``classic_group_assignment`` turns the members' answer back into a classic GroupAssignment (per client, and
per consumer = member), so metrics, assignment files and the simulator take it unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from taskassign.errors import UserInputError
from taskassign.formats.scenario import Scenario
from taskassign.ids import ProcessId, TaskId
from taskassign.model import (
    ACTIVE,
    LATEST_OFFSET,
    STANDBY,
    UNKNOWN_OFFSET_SUM,
    ApplicationState,
    AssignedTask,
    ConsumerAssignment,
    GroupAssignment,
    KafkaStreamsAssignment,
    KafkaStreamsState,
    compute_lag,
    new_assigned_task,
    new_consumer_assignment,
)
from taskassign.streams_protocol.configs import NUM_STANDBY_REPLICAS, RACK_AWARE_ASSIGNMENT_TAGS
from taskassign.streams_protocol.model import (
    DEFAULT_ASSIGNOR_NAME,
    GroupMember,
    StreamsGroup,
    StreamsGroupAssignment,
    Subtopology,
    TaskMap,
)

__all__ = ("classic_group_assignment", "scenario_to_streams_group")


def scenario_to_streams_group(scenario: Scenario, assignor: str = DEFAULT_ASSIGNOR_NAME) -> StreamsGroup:
    """The scenario's application as a streams group at a target-assignment computation."""
    state = scenario.state
    subtopologies = _subtopologies(state)
    configs = {NUM_STANDBY_REPLICAS: str(state.configs.num_standby_replicas)}
    if state.configs.rack_aware_assignment_tags:
        configs[RACK_AWARE_ASSIGNMENT_TAGS] = ",".join(state.configs.rack_aware_assignment_tags)
    members = tuple(member for pid in state.process_ids for member in _members(state, state.clients[pid]))
    return StreamsGroup(name=scenario.name, subtopologies=subtopologies, members=members,
                        configs=MappingProxyType(configs), assignor=assignor)


def _subtopologies(state: ApplicationState) -> tuple[Subtopology, ...]:
    partitions: dict[int, list[TaskId]] = {}
    for t in state.tasks:
        if t.topology_name is not None:
            raise UserInputError(f"task {t}: the streams protocol has no named topologies, so this application "
                                 "cannot be put under it")
        partitions.setdefault(t.subtopology, []).append(t)
    result = []
    for sub, tasks in sorted(partitions.items()):
        numbers = [t.partition for t in tasks]
        if numbers != list(range(len(numbers))):
            missing = sorted(set(range(max(numbers) + 1)) - set(numbers))
            raise UserInputError(f"subtopology {sub} has no task {sub}_{missing[0]}: a streams group's subtopology "
                                 f"has one task per partition 0..n-1, so this application cannot be put under it")
        stateful = {state.tasks[t].has_changelog for t in tasks}
        if len(stateful) > 1:
            raise UserInputError(f"subtopology {sub}: some of its tasks have a changelog and some do not; the streams "
                                 "protocol knows statefulness per subtopology")
        result.append(Subtopology(str(sub), len(tasks), stateful.pop()))
    return tuple(result)


def _members(state: ApplicationState, client: KafkaStreamsState) -> list[GroupMember]:
    consumers = client.consumer_client_ids
    listed = client.consumer_previous_tasks
    previous_active, previous_standby = client.previous_active_tasks, client.previous_standby_tasks
    owner: dict[TaskId, str] = {}
    for consumer in consumers:  # sorted: a task listed by several consumers stays with the later one
        owner.update(dict.fromkeys(listed.get(consumer, ()), consumer))
    mine: dict[str, list[TaskId]] = {c: [] for c in consumers}
    for t, consumer in owner.items():
        mine[consumer].append(t)
    targets: set[TaskId] = set(owner)
    unlisted = [t for t in previous_active if t not in owner] + [t for t in previous_standby if t not in owner]
    for t in unlisted:
        consumer = min(consumers, key=lambda c: len(mine[c]))  # the first with the fewest
        mine[consumer].append(t)
        if not listed or t in previous_active:
            targets.add(t)
    ends = state.changelog_end_offset_sums
    offset_sums = client.task_offset_sums
    pid = str(client.process_id)
    members = []
    for consumer in consumers:
        active: dict[str, list[int]] = {}
        standby: dict[str, list[int]] = {}
        offsets: dict[str, dict[int, int]] = {}
        end_offsets: dict[str, dict[int, int]] = {}
        for t in sorted(mine[consumer]):
            sid = _SUBTOPOLOGY_IDS[t.subtopology] if t.subtopology < len(_SUBTOPOLOGY_IDS) else str(t.subtopology)
            if t in targets:
                if t in previous_active:
                    active.setdefault(sid, []).append(t.partition)
                elif t in previous_standby:
                    standby.setdefault(sid, []).append(t.partition)
            end = ends.get(t)
            offset = _reported_offset(offset_sums.get(t), end)
            if offset is not None:
                offsets.setdefault(sid, {})[t.partition] = offset
                if end is not None and end != UNKNOWN_OFFSET_SUM:
                    end_offsets.setdefault(sid, {})[t.partition] = end
        members.append(GroupMember(
            member_id=consumer, process_id=pid, rack_id=client.rack_id, client_tags=client.client_tags,
            active_tasks=_frozen_tasks(active), standby_tasks=_frozen_tasks(standby),
            task_offsets=_frozen(offsets), task_end_offsets=_frozen(end_offsets),
        ))
    return members


#: ``str(n)`` of the usual subtopology numbers, made once.
_SUBTOPOLOGY_IDS = tuple(str(n) for n in range(1024))


def _frozen_tasks(tasks: dict[str, list[int]]) -> TaskMap:
    """Partitions arrive ascending (tasks in TaskId order); subtopology keys in numeric order, which no
    assignor depends on."""
    return MappingProxyType({sid: tuple(partitions) for sid, partitions in tasks.items()})


def _reported_offset(offset_sum: int | None, end: int | None) -> int | None:
    """The offset sum a member would report under the streams protocol, from the classic report."""
    if offset_sum is None or end is None or offset_sum == UNKNOWN_OFFSET_SUM:
        return None
    if end == UNKNOWN_OFFSET_SUM:
        return None if offset_sum == LATEST_OFFSET else offset_sum
    return end - (0 if offset_sum == LATEST_OFFSET else compute_lag(end, offset_sum))


def _frozen(offsets: dict[str, dict[int, int]]) -> Mapping[str, Mapping[int, int]]:
    return MappingProxyType({s: MappingProxyType(o) for s, o in offsets.items()})


def classic_group_assignment(
    group: StreamsGroup, result: StreamsGroupAssignment, task_ids: Iterable[TaskId] = ()
) -> GroupAssignment:
    """The members' answer as a classic GroupAssignment: per client (process) and per consumer (member).
    Only for groups whose process ids are UUIDs and subtopology ids numbers (a converted scenario), whose
    ``task_ids`` (TaskId order) may be given to reuse them."""
    known: dict[str, list[TaskId]] = {}
    for t in task_ids:
        known.setdefault(str(t.subtopology), []).append(t)
    clients: dict[ProcessId, dict[TaskId, AssignedTask]] = {}
    consumers: dict[ProcessId, dict[str, ConsumerAssignment]] = {}
    process_ids: dict[str, ProcessId] = {}
    for member in group.members:
        pid = process_ids.get(member.process_id)
        if pid is None:
            pid = process_ids[member.process_id] = _process_id(member.process_id)
            clients[pid] = {}
            consumers[pid] = {}
        assignment = result.members[member.member_id]
        active = _task_ids(assignment.active_tasks, known)
        standby = _task_ids(assignment.standby_tasks, known)
        tasks = clients[pid]
        tasks.update((t, new_assigned_task(t, ACTIVE)) for t in active)
        tasks.update((t, new_assigned_task(t, STANDBY)) for t in standby)
        consumers[pid][member.member_id] = new_consumer_assignment(tuple(active), tuple(standby))
    return GroupAssignment(
        {pid: KafkaStreamsAssignment(pid, MappingProxyType(dict(sorted(tasks.items()))))
         for pid, tasks in clients.items()},
        MappingProxyType({pid: MappingProxyType(dict(sorted(shares.items())))
                          for pid, shares in sorted(consumers.items())}),
    )


def _process_id(text: str) -> ProcessId:
    try:
        return ProcessId(text)
    except UserInputError:
        raise UserInputError(f"process {text!r} is not a UUID: only a streams group converted from a scenario "
                             "has a classic form") from None


def _task_ids(tasks: Mapping[str, tuple[int, ...]], known: Mapping[str, list[TaskId]]) -> list[TaskId]:
    result: list[TaskId] = []
    for sid, partitions in tasks.items():
        ids = known.get(sid)
        last = partitions[-1]
        if ids is not None and len(ids) > last and ids[last][2] == last:  # TaskId: (name, subtopology, partition)
            result.extend(map(ids.__getitem__, partitions))  # a contiguous subtopology: partition p is ids[p]
            continue
        try:
            sub = int(sid)
        except ValueError:
            raise UserInputError(f"subtopology id {sid!r} is not a number: only a streams group converted from a "
                                 "scenario has a classic form") from None
        result.extend(TaskId(sub, p) for p in partitions)
    return result
