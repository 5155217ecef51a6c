"""The balanced assignor as it was before issue 32 (quadratic ``_balance``, linear removals in ``_spread``): the
reference the sub-quadratic one must equal on any group (test_balanced_speedup.py). Not maintained: frozen.

Kafka's broker-side ``BalancedTaskAssignor`` (``"balanced"``, KAFKA-20998, PR #23419 revision), exactly.

Pinned revision: docs/streams-protocol.md. A port of the placement half of the classic high-availability assignor:
stateful actives dealt round-robin over processes in id order and balanced, standbys to the least loaded
process without the task and balanced, stateless actives by active load; then each process spreads its
tasks over its members, keeping a task with the member that owned it where the member's level allows.
Everything runs in sorted order (processes and members by Java string order, tasks by
``(subtopology id, partition)``), so no hash order matters; across processes the previous assignment is
ignored completely, and reported offsets are not read.

Loads and the move test are doubles, as in Kafka (integer division changes outputs and can
make ``balance`` loop for ever).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable

from taskassign.errors import TaskAssignorException
from taskassign.internals.java_order import java_string_key
from taskassign.streams_protocol._tasks import TaskIndex
from taskassign.streams_protocol.configs import balanced_configs
from taskassign.streams_protocol.model import (
    GroupMember,
    MemberAssignment,
    StreamsGroup,
    StreamsGroupAssignment,
)

__all__ = ("assign_balanced",)


class _Process:
    """One process: its members (sorted), the tasks it holds by role, and who of its members owned what."""

    __slots__ = ("all", "capacity", "key", "members", "owner", "standby", "stateful", "stateless")

    def __init__(self, process_id: str, members: list[GroupMember], index: TaskIndex) -> None:
        self.key = java_string_key(process_id)
        self.members = sorted((m.member_id for m in members), key=java_string_key)
        self.capacity = len(self.members)
        self.stateful: set[int] = set()
        self.stateless: set[int] = set()
        self.standby: set[int] = set()
        self.all: set[int] = set()
        owner: dict[int, str] = {}
        for member in sorted(members, key=lambda m: java_string_key(m.member_id), reverse=True):
            for tasks in (member.active_tasks, member.standby_tasks, member.warmup_tasks):
                owner.update(dict.fromkeys(index.tasks_of(tasks), member.member_id))  # the smallest id writes last
        self.owner = owner

    @property
    def count(self) -> int:
        return len(self.all)

    def assigned_load(self) -> float:
        return len(self.all) / self.capacity

    def active_load(self) -> float:
        return (len(self.stateful) + len(self.stateless)) / self.capacity

    def add(self, kind: set[int], task: int) -> None:
        kind.add(task)
        self.all.add(task)


def _should_move(source: _Process, destination: _Process) -> bool:
    s, d = len(source.all), len(destination.all)
    skew = s / source.capacity - d / destination.capacity
    if skew <= 0:
        return False
    proposed = (s - 1) / source.capacity - (d + 1) / destination.capacity
    return 0 <= proposed < skew


def _balance(processes: list[_Process], kind: Callable[[_Process], set[int]]) -> None:
    """Full passes over (source, destination) pairs in id order until one moves nothing; in each pair, while
    a move would reduce the skew, the source's tasks of ``kind`` in order go to the destination unless it
    holds them in any role.

    A move needs the source more loaded than the destination, so a source at the lowest load is skipped
    whole and a destination at or above the source's load at once (the loads are Kafka's doubles, kept
    current after every move): the same pairs move as in Kafka's double loop, without visiting the rest."""
    loads = [p.assigned_load() for p in processes]
    moved = True
    while moved:
        moved = False
        for a, source in enumerate(processes):
            if loads[a] <= min(loads):
                continue
            for b, destination in enumerate(processes):
                if loads[b] >= loads[a] or not _should_move(source, destination):
                    continue
                tasks = kind(source)
                target = kind(destination)
                for t in sorted(tasks):
                    if not _should_move(source, destination):
                        break
                    if t in destination.all:
                        continue
                    tasks.discard(t)
                    source.all.discard(t)
                    destination.add(target, t)
                    moved = True
                loads[a] = source.assigned_load()
                loads[b] = destination.assigned_load()


def _assign_standbys(processes: list[_Process], stateful: list[int], num_standby: int) -> None:
    # (load, process id) keys are distinct, so which process a poll returns depends on the keys alone, not on
    # the heap's layout: heapq's C heap (and its pop-and-push in one) polls as Java's PriorityQueue does
    queue = [(p.assigned_load(), p.key, k) for k, p in enumerate(processes)]
    heapq.heapify(queue)
    for t in stateful:
        for _ in range(num_standby):
            if queue and t not in processes[queue[0][2]].all:  # the usual case: the least loaded lacks it
                k = queue[0][2]
                chosen = processes[k]
                chosen.add(chosen.standby, t)
                heapq.heapreplace(queue, (chosen.assigned_load(), chosen.key, k))
                continue
            skipped = []
            found = None
            while queue:
                entry = heapq.heappop(queue)
                if t in processes[entry[2]].all:
                    skipped.append(entry)
                    continue
                found = processes[entry[2]]
                found.add(found.standby, t)
                heapq.heappush(queue, (found.assigned_load(), found.key, entry[2]))
                break
            for entry in skipped:
                heapq.heappush(queue, entry)
            if found is None:
                break  # every process holds the task: Kafka logs it and places no more of its replicas


def _assign_stateless(processes: list[_Process], stateless: list[int]) -> None:
    queue = [(p.active_load(), p.key, k) for k, p in enumerate(processes)]
    heapq.heapify(queue)
    for t in stateless:
        _, key, k = queue[0]
        process = processes[k]
        process.add(process.stateless, t)
        heapq.heapreplace(queue, (process.active_load(), key, k))  # polled and offered again


def _spread(process: _Process, active: dict[str, list[int]], standby: dict[str, list[int]]) -> None:
    """A process's tasks over its members: stateful actives, standbys (both sticky to their owner), then
    stateless actives; counts carry over from round to round (every role counts, members kept in member-id order)."""
    counts = dict.fromkeys(process.members, 0)
    placed = 0
    rounds = ((process.stateful, True, active), (process.standby, True, standby), (process.stateless, False, active))
    for kind, sticky, into in rounds:
        tasks = sorted(kind)
        level = (placed + len(tasks)) // process.capacity
        placed += len(tasks)

        def give(member: str, task: int, into: dict[str, list[int]] = into) -> None:
            into[member].append(task)
            counts[member] += 1

        unassigned: list[tuple[int, str | None]] = []
        for t in tasks:
            owner = process.owner.get(t) if sticky else None
            if owner is not None and counts[owner] < level:
                give(owner, t)
            else:
                unassigned.append((t, owner))
        below = deque(m for m in process.members if counts[m] < level)
        k = 0
        while below and k < len(unassigned):
            member = below.popleft()
            give(member, unassigned[k][0])
            k += 1
            if counts[member] < level:
                below.append(member)
        at_level = [m for m in process.members if counts[m] == level]
        rest: list[int] = []
        for t, owner in unassigned[k:]:
            if owner is not None and owner in at_level:
                at_level.remove(owner)
                give(owner, t)
            else:
                rest.append(t)
        for t in rest:
            give(at_level.pop(0), t)


def assign_balanced(group: StreamsGroup) -> StreamsGroupAssignment:
    """Kafka's balanced assignor on ``group``; raises TaskAssignorException where Kafka's throws."""
    configs = balanced_configs(group.configs)
    index = TaskIndex(group.subtopologies)
    by_process: dict[str, list[GroupMember]] = {}
    for member in group.members:
        by_process.setdefault(member.process_id, []).append(member)
    processes = [_Process(pid, by_process[pid], index) for pid in sorted(by_process, key=java_string_key)]
    stateful = index.stateful_tasks()
    stateful_set = set(stateful)
    stateless = [t for t in range(index.count) if t not in stateful_set]
    if not processes:
        if index.count:
            raise TaskAssignorException("No process available to assign active tasks.")
        return StreamsGroupAssignment({})

    for k, t in enumerate(stateful):
        process = processes[k % len(processes)]
        process.add(process.stateful, t)
    _balance(processes, lambda p: p.stateful)
    if configs.num_standby_replicas > 0:
        _assign_standbys(processes, stateful, configs.num_standby_replicas)
        _balance(processes, lambda p: p.standby)
    _assign_stateless(processes, stateless)

    members: dict[str, MemberAssignment] = {}
    for process in processes:
        active: dict[str, list[int]] = {m: [] for m in process.members}
        standby: dict[str, list[int]] = {m: [] for m in process.members}
        _spread(process, active, standby)
        for m in process.members:
            members[m] = MemberAssignment(index.task_map(active[m]), index.task_map(standby[m]))
    return StreamsGroupAssignment(dict(sorted(members.items(), key=lambda item: java_string_key(item[0]))))
