"""predict-check on a streams group's history (KIP-1071; ``api.predict_check`` says what is checked): the broker's
assignor predicts each new target assignment from the capture before it, the what-if's members (the earlier
targets, minus the processes that left, plus invented members for the processes that joined) moved towards the
later capture's one kind of input at a time; ``streams_protocol.replay`` finds computations the watch missed."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

from taskassign.api.prediction import (
    CAUSE_LAGS,
    CAUSE_MEMBER_IDS,
    CAUSE_NEW_IDS,
    CAUSE_RECONCILING,
    CAUSE_SUBSCRIPTION,
    CAUSE_TASKS,
    CAUSE_UNSEEN,
    ChangeCheck,
    Placement,
    attribute,
    best_pairing,
    describe_change,
    what_if_flags,
)
from taskassign.api.what_if import new_process_ids
from taskassign.errors import StreamsAssignorError
from taskassign.ids import ProcessId
from taskassign.streams_protocol.assignors import run_assignor
from taskassign.streams_protocol.format import read_streams_group
from taskassign.streams_protocol.lines import StreamsProtocolError
from taskassign.streams_protocol.model import EMPTY_TASKS, GroupMember, StreamsGroup, TaskMap, task_name
from taskassign.streams_protocol.replay import RECONCILING_NOTE, replay_step

__all__ = ("check_streams_pair", "read_streams")

Shape = tuple[int, str | None, tuple[tuple[str, str], ...]]


def read_streams(path: Path) -> StreamsGroup:
    return dataclasses.replace(read_streams_group(path), name=path.name)


def _epoch(group: StreamsGroup) -> int | None:
    value = (group.capture or {}).get("assignmentEpoch")
    return value if isinstance(value, int) else None


def _line(group: StreamsGroup) -> str | None:
    value = (group.capture or {}).get("brokerReleaseLine")
    return value if isinstance(value, str) else None


def placement_of(group: StreamsGroup, targets: Mapping[str, tuple[Mapping[str, Sequence[int]],
                                                                  Mapping[str, Sequence[int]]]]) -> Placement:
    """Each task's active process and standby processes, from per-member targets."""
    process = {m.member_id: m.process_id for m in group.members}
    result: dict[str, tuple[str | None, set[str]]] = {
        task_name(s.id, p): (None, set()) for s in group.subtopologies for p in range(s.partitions)}
    for member, (active, standby) in targets.items():
        for sid, parts in active.items():
            for p in parts:
                result[task_name(sid, p)] = (process[member], result.get(task_name(sid, p), (None, set()))[1])
        for sid, parts in standby.items():
            for p in parts:
                result.setdefault(task_name(sid, p), (None, set()))[1].add(process[member])
    return {t: (a, frozenset(s)) for t, (a, s) in result.items()}


def _kafka(group: StreamsGroup) -> Placement:
    return placement_of(group, {m.member_id: (m.active_tasks, m.standby_tasks) for m in group.members})


def _run(group: StreamsGroup, line: str | None) -> Placement:
    result = run_assignor(group) if line is None else run_assignor(group, kafka_line=line)
    return placement_of(group, {mid: (a.active_tasks, a.standby_tasks) for mid, a in result.members.items()})


def _shape(members: Sequence[GroupMember]) -> Shape:
    first = members[0]
    return len(members), first.rack_id, tuple(sorted(first.client_tags.items()))


def _uuid(text: str) -> ProcessId | None:
    """A process id as a UUID (Kafka Streams' own are; the protocol allows any string)."""
    try:
        return ProcessId(text)
    except ValueError:
        return None


def _held(group: StreamsGroup) -> dict[str, tuple[TaskMap, TaskMap]]:
    """Each member's current (reconciled) tasks as the capture read them, where they differ from its target."""
    members = (group.capture or {}).get("members")
    if not isinstance(members, Mapping):
        return {}
    held: dict[str, tuple[TaskMap, TaskMap]] = {}
    for m in group.members:
        current = members.get(m.member_id, {}).get("currentAssignment") if isinstance(members.get(m.member_id),
                                                                                     Mapping) else None
        if not isinstance(current, Mapping):
            continue
        active, standby = (_task_map(current.get("activeTasks")), _task_map(current.get("standbyTasks")))
        if (active, standby) != (dict(m.active_tasks), dict(m.standby_tasks)):
            held[m.member_id] = (MappingProxyType(active), MappingProxyType(standby))
    return held


def _task_map(raw: object) -> dict[str, tuple[int, ...]]:
    if not isinstance(raw, Mapping):
        return {}
    return {str(sid): tuple(int(p) for p in parts) for sid, parts in sorted(raw.items()) if isinstance(parts, list)}


def check_streams_pair(before: StreamsGroup, after: StreamsGroup) -> ChangeCheck:
    if _epoch(before) is not None and _epoch(before) == _epoch(after):
        return ChangeCheck(before.name, after.name, "no rebalance",
                           skipped=f"the same target assignment epoch ({_epoch(after)}): no new assignment to predict")
    old = {m.process_id for m in before.members}
    new_members: dict[str, list[GroupMember]] = {}
    for m in after.members:
        new_members.setdefault(m.process_id, []).append(m)
    removed = sorted(old - set(new_members))
    joined = sorted(p for p in new_members if p not in old)
    shapes: dict[Shape, list[str]] = {}
    for pid in joined:
        shapes.setdefault(_shape(new_members[pid]), []).append(pid)
    sets = {k: v for k, v in after.configs.items() if before.configs.get(k) != v}
    flags = what_if_flags(removed, {s: len(p) for s, p in shapes.items()}, sets)
    change = describe_change(removed, joined, sets)
    line = _line(before)
    kept = [dataclasses.replace(m, warmup_tasks=EMPTY_TASKS) for m in before.members if m.process_id not in removed]
    invented: dict[Shape, list[str]] = {}
    added: list[GroupMember] = []
    taken = [pid for pid in map(_uuid, sorted(old | set(new_members))) if pid is not None]
    for shape, pids in shapes.items():
        made = [str(p) for p in new_process_ids(f"{after.name}/{shape}", len(pids), taken)]
        taken += [ProcessId(p) for p in made]
        invented[shape] = made
        for pid in made:
            added += [GroupMember(f"predicted-{pid[:8]}-{i}", pid, rack_id=shape[1], client_tags=dict(shape[2]))
                      for i in range(shape[0])]
    base = dataclasses.replace(before, configs=MappingProxyType({**before.configs, **sets}))
    try:
        first = _run(dataclasses.replace(base, members=(*kept, *added)), line)
    except (StreamsAssignorError, StreamsProtocolError) as exc:
        return ChangeCheck(before.name, after.name, change, flags, before.assignor,
                           skipped=f"the broker's assignor fails on the what-if: {exc}")
    kafka = _kafka(after)
    rename = best_pairing(first, kafka, [invented[s] for s in shapes], [shapes[s] for s in shapes])
    steps, moved = _substitutions(base, before, after, kept, line, first)
    actives, standbys, standbys_right, misses = attribute(first, kafka, steps, rename)
    return ChangeCheck(before.name, after.name, change, flags, before.assignor, len(kafka), actives, standbys,
                       standbys_right, misses, tuple(moved))


def _substitutions(base: StreamsGroup, before: StreamsGroup, after: StreamsGroup, kept: Sequence[GroupMember],
                   line: str | None, first: Placement) -> tuple[list[tuple[str, Placement]], list[str]]:
    steps: list[tuple[str, Placement]] = []
    moved: list[str] = []
    group = base
    earlier = {m.member_id: m for m in kept}

    def step(cause: str, candidate: StreamsGroup, placement: Placement | None = None) -> None:
        nonlocal group
        if candidate == group and placement is None:
            return
        group = candidate
        moved.append(cause)
        steps.append((cause, placement if placement is not None else _run(candidate, line)))

    previous_ids = {m.process_id for m in before.members}
    # a member that joined, as the broker met it: nothing assigned, and (a fresh instance) no task offsets yet
    joined = [dataclasses.replace(m, active_tasks=EMPTY_TASKS, standby_tasks=EMPTY_TASKS, warmup_tasks=EMPTY_TASKS,
                                  task_offsets=MappingProxyType({}), task_end_offsets=MappingProxyType({}))
              for m in after.members if m.process_id not in previous_ids]
    group = dataclasses.replace(group, members=tuple(kept))
    if joined:
        step(CAUSE_NEW_IDS, dataclasses.replace(group, members=(*kept, *joined)))
    if group.subtopologies != after.subtopologies:
        step(CAUSE_TASKS, dataclasses.replace(group, subtopologies=after.subtopologies))
    # B's members of the processes that stayed, each with its earlier targets (none for a new member id), else
    # as it was in the capture before
    ids = [dataclasses.replace(earlier[m.member_id], instance_id=earlier[m.member_id].instance_id)
           if m.member_id in earlier else dataclasses.replace(
               m, active_tasks=EMPTY_TASKS, standby_tasks=EMPTY_TASKS, warmup_tasks=EMPTY_TASKS,
               task_offsets=MappingProxyType({}))
           for m in after.members]
    step(CAUSE_MEMBER_IDS, dataclasses.replace(group, members=tuple(ids)))
    subs = [dataclasses.replace(m, rack_id=b.rack_id, instance_id=b.instance_id, client_tags=b.client_tags,
                                process_id=b.process_id)
            for m, b in zip(group.members, after.members, strict=True)]
    step(CAUSE_SUBSCRIPTION, dataclasses.replace(group, members=tuple(subs)))
    held = _held(before)
    reconciling = [dataclasses.replace(m, active_tasks=held[m.member_id][0], standby_tasks=held[m.member_id][1])
                   if m.member_id in held else m for m in group.members]
    step(CAUSE_RECONCILING, dataclasses.replace(group, members=tuple(reconciling)))
    offsets = [dataclasses.replace(m, task_offsets=b.task_offsets, task_end_offsets=b.task_end_offsets)
               for m, b in zip(group.members, after.members, strict=True)]
    step(CAUSE_LAGS, dataclasses.replace(group, members=tuple(offsets)))
    replay = replay_step(before, after)
    kafka = _kafka(after)
    last = steps[-1][1] if steps else first
    # what the replay found: computations missed, the tasks members held mid-reconciliation (4.4+), or the offsets
    if replay.matches and last != kafka:
        held_then = any(note.startswith(RECONCILING_NOTE) for note in replay.notes)
        step(CAUSE_UNSEEN if len(replay.steps) > 1 else CAUSE_RECONCILING if held_then else CAUSE_LAGS, group, kafka)
    return steps, list(dict.fromkeys(moved))
