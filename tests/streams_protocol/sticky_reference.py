"""The streams sticky assignor (4.2 to trunk) as it was before issue 33 point 3 (per-placement heap calls): the
reference the batched one must equal on any group (test_sticky_speedup.py). Not maintained: frozen.

Kafka's broker-side ``StickyTaskAssignor`` (``"sticky"``, the streams group's default), exactly, per line.

``assign_sticky(group, kafka_line)``: 4.2 to trunk here; 4.1's task-pairs assignor is ``sticky41``
(``lines.STICKY_REVISIONS`` says what differs). From 4.2 on (KAFKA-19478, KAFKA-19661, KAFKA-20899): heaps
for the least-loaded process and member, actives visited partition-major, standbys below the total quota;
4.4 and trunk add KAFKA-20719 (reported task offsets make a restarted member the preferred owner of its
local state) and fill the process map with ``computeIfAbsent``. ``kafka-20719-proposed`` is the unmerged
revision the pinned goldens come from (offsets, ``putIfAbsent``, string configs). Decisions hang on Java's
collection orders, reproduced here:

* members are visited in the coordinator's ``HashMap<memberId, ...>`` order, processes in a
  ``HashMap<processId, ...>`` pre-sized to the member count (``putIfAbsent`` up to 4.3, ``computeIfAbsent``
  from 4.4: colliding process ids iterate newest first), and each process's members in a default
  ``HashMap`` pre-filled with every member at 0 tasks;
* the fill steps poll processes from a ``PriorityQueue`` keyed by load alone and a process's members from one
  keyed by task count alone, so ties leave in Java's heap order (``RoundsJavaPriorityQueue``: Java's array,
  read from a cached plan while every key is equal instead of sifted; docs/performance.md).

Quirks kept on purpose (each is in a golden): the last previous owner in member order wins a doubly claimed
task; ``leastLoadedPrev`` switches candidate only when strictly better on both load and count, and a
candidate over the quota gets nothing, with no fall-back to the next; the fill steps check no quota; standby
replicas that find no free process are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from taskassign.errors import TaskAssignorException
from taskassign.internals.java_order import (
    compute_if_absent_order,
    hash_iteration_order,
    java_hash,
    java_string_key,
)
from taskassign.internals.java_rounds import RoundsJavaPriorityQueue
from taskassign.streams_protocol._tasks import TaskIndex
from taskassign.streams_protocol.configs import sticky_num_standby
from taskassign.streams_protocol.lines import DEFAULT_STREAMS_LINE, StickyRevision, sticky_revision
from taskassign.streams_protocol.model import (
    GroupMember,
    MemberAssignment,
    StreamsGroup,
    StreamsGroupAssignment,
)

__all__ = ("assign_sticky",)


def _ceil_div(a: int, b: int) -> int:
    return 0 if b == 0 else -(-a // b)


class _Quota:
    """A per-member quota that shrinks as members reach it: when a member's count hits the quota, that member
    and its tasks leave the pool and the quota is recomputed over the rest."""

    __slots__ = ("cap", "remaining", "value")

    def __init__(self, tasks: int, members: int) -> None:
        self.remaining = tasks
        self.cap = members
        self.value = _ceil_div(tasks, members)

    def update(self, new_count: int) -> None:
        if new_count == self.value:
            self.cap -= 1
            self.remaining -= new_count
            self.value = _ceil_div(self.remaining, self.cap)


class _Run:
    """One ``assign`` call: members and processes as ints, their counts, and what each member got."""

    def __init__(self, group: StreamsGroup, index: TaskIndex, compute_if_absent: bool = False) -> None:
        self.index = index
        by_id = {m.member_id: m for m in group.members}
        hashes = {member_id: java_hash(member_id) for member_id in by_id}  # each id is hashed once
        self.members: list[GroupMember] = [by_id[i] for i in hash_iteration_order(by_id, hash_of=hashes.__getitem__)]
        n = len(self.members)
        first_seen: dict[str, list[int]] = {}
        for i, member in enumerate(self.members):
            first_seen.setdefault(member.process_id, []).append(i)
        if compute_if_absent:  # one call per member, in member order
            self.process_ids = compute_if_absent_order(
                (m.process_id for m in self.members), initial_capacity=n)
        else:
            self.process_ids = hash_iteration_order(first_seen, initial_capacity=n or None)
        process_of = {pid: j for j, pid in enumerate(self.process_ids)}
        self.member_process = [process_of[m.process_id] for m in self.members]
        self.process_members = [first_seen[pid] for pid in self.process_ids]
        # memberToTaskCounts: a default HashMap pre-filled in member order; the member heap is built from it.
        position = {m.member_id: i for i, m in enumerate(self.members)}
        self.count_map_order = [
            [position[member_id] for member_id in hash_iteration_order(
                (self.members[i].member_id for i in ids), hash_of=hashes.__getitem__)]
            for ids in self.process_members
        ]
        self.capacity = [len(ids) for ids in self.process_members]
        self.member_count = [0] * n
        self.process_count = [0] * len(self.process_ids)
        self.process_tasks: list[set[int]] = [set() for _ in self.process_ids]
        self.member_heap: list[RoundsJavaPriorityQueue[int] | None] = [None] * len(self.process_ids)
        self.active: list[list[int]] = [[] for _ in range(n)]
        self.standby: list[list[int]] = [[] for _ in range(n)]
        self.add_to_least_loaded_member = self._least_loaded_placer()

    def load(self, j: int) -> float:
        return self.process_count[j] / self.capacity[j]

    def add(self, i: int, task: int, active: bool) -> None:
        """A targeted placement on member ``i``: its process's member heap is discarded."""
        self.member_count[i] += 1
        j = self.member_process[i]
        self.process_count[j] += 1
        self.process_tasks[j].add(task)
        self.member_heap[j] = None
        (self.active if active else self.standby)[i].append(task)

    def _least_loaded_placer(self) -> Callable[[int, int, bool], int]:
        """``add_to_least_loaded_member(j, task, active)``: the task on process ``j``'s member with the fewest
        tasks (the member heap's order on ties), which it returns. A closure over the run's lists: it runs
        once per placement of the fill steps, tens of thousands of times."""
        counts, process_count, process_tasks = self.member_count, self.process_count, self.process_tasks
        capacity, process_members, heaps = self.capacity, self.process_members, self.member_heap
        count_map_order, active_lists, standby_lists = self.count_map_order, self.active, self.standby

        def place(j: int, task: int, active: bool) -> int:
            if capacity[j] == 1:
                i = process_members[j][0]
                counts[i] += 1
            else:
                heap = heaps[j]
                if heap is None:
                    heap = RoundsJavaPriorityQueue((counts[i], i) for i in count_map_order[j])
                    heaps[j] = heap
                i = heap.increment_head()  # polled, its count incremented, offered again
                counts[i] += 1
            process_count[j] += 1
            process_tasks[j].add(task)
            (active_lists if active else standby_lists)[i].append(task)
            return i

        return place

    def least_loaded_prev(self, candidates: list[int], exclude: int) -> int:
        """The first candidate, replaced only by a later one strictly less loaded on both its process's load
        and its own count; candidates whose process holds ``exclude`` are skipped. -1 for none."""
        best = -1
        best_load = 0.0
        best_count = 0
        for i in candidates:
            j = self.member_process[i]
            if exclude >= 0 and exclude in self.process_tasks[j]:
                continue
            load = self.process_count[j] / self.capacity[j]
            if best < 0 or (load < best_load and self.member_count[i] < best_count):
                best, best_load, best_count = i, load, self.member_count[i]
        return best

    def process_queue(self) -> RoundsJavaPriorityQueue[int]:
        """Every process, offered one by one in the processes map's order, keyed by load (Java's heap; while
        every load is equal, its rounds are read from a cached plan instead of sifted)."""
        return RoundsJavaPriorityQueue((self.load(j), j) for j in range(len(self.process_ids)))


def assign_sticky(group: StreamsGroup, kafka_line: str = DEFAULT_STREAMS_LINE) -> StreamsGroupAssignment:
    """Kafka's sticky assignor of ``kafka_line`` ("4.1" ... "4.4", "trunk", or "kafka-20719-proposed") on
    ``group``; raises TaskAssignorException / JavaNumberFormatException where Kafka's throws, and
    StreamsProtocolError for a line without streams groups (3.9, 4.0)."""
    revision = sticky_revision(kafka_line)
    if revision.task_pairs:
        from taskassign.streams_protocol.sticky41 import assign_sticky_41
        return assign_sticky_41(group)
    return _assign(group, revision)


def _assign(group: StreamsGroup, revision: StickyRevision) -> StreamsGroupAssignment:
    num_standby = sticky_num_standby(group.configs, typed=revision.typed_configs)
    index = TaskIndex(group.subtopologies)
    run = _Run(group, index, revision.compute_if_absent)
    n = len(run.members)
    total_active = index.count
    stateful = index.stateful_tasks()
    active_quota = _Quota(total_active, n)
    total_quota = _Quota(total_active + num_standby * len(stateful), n)

    prev_active = [-1] * index.count
    for i, member in enumerate(run.members):
        for t in index.tasks_of(member.active_tasks):
            prev_active[t] = i  # the last writer in member order wins
    prev_standby = _ranked_previous_holders(run, index, revision.task_offsets)

    # actives: previous owner, then previous standby / offset holder, each within the active quota
    unplaced: list[int] = []
    for t in index.partition_major():
        i = prev_active[t]
        if i >= 0 and run.member_count[i] < active_quota.value:
            run.add(i, t, True)
            active_quota.update(run.member_count[i])
            total_quota.update(run.member_count[i])
        else:
            unplaced.append(t)
    remaining: list[int] = []
    for t in unplaced:
        candidates = prev_standby.get(t)
        i = run.least_loaded_prev(candidates, -1) if candidates else -1
        if i >= 0 and run.member_count[i] < active_quota.value:
            run.add(i, t, True)
            active_quota.update(run.member_count[i])
            total_quota.update(run.member_count[i])
        else:
            remaining.append(t)
    # the rest to the least loaded process, no quota check (the active quota is not read after this step, so
    # only the total quota's updates are run)
    remaining.sort()
    queue = run.process_queue()
    head, requeue, place = queue.peek_item, queue.replace_head, run.add_to_least_loaded_member
    member_count, process_count, capacity = run.member_count, run.process_count, run.capacity
    if remaining and not queue:  # replace_head keeps the queue's size: checking once is checking every time
        raise TaskAssignorException(f"No process available to assign active task {index.name(remaining[0])}.")
    for t in remaining:
        j = head()  # polled, given the task, offered again
        count = member_count[place(j, t, True)]
        if count == total_quota.value:
            total_quota.update(count)
        requeue(process_count[j] / capacity[j])

    if num_standby > 0:
        _assign_standbys(run, num_standby, prev_active, prev_standby, total_quota)

    members = {
        run.members[i].member_id: MemberAssignment(index.task_map(run.active[i]), index.task_map(run.standby[i]))
        for i in range(n)
    }
    return StreamsGroupAssignment(dict(sorted(members.items(), key=lambda item: java_string_key(item[0]))))


def _ranked_previous_holders(run: _Run, index: TaskIndex, task_offsets: bool) -> dict[int, list[int]]:
    """Per task, the members that held it as standby (first) or reported offsets for it, highest offset sum
    first; a stable sort, so ties stay in member order. Without ``task_offsets`` (4.1-4.3: the coordinator
    passes none and the assignor reads none) the previous standbys in member order."""
    entries: dict[int, list[tuple[int, int, int]]] = {}
    rank, base, partitions = index.rank, index.base, index.partitions
    no_offsets: dict[str, dict[int, int]] = {}
    for i, member in enumerate(run.members):
        offsets = member.task_offsets if task_offsets else no_offsets
        for sid, standby in member.standby_tasks.items():
            r = rank.get(sid)
            if r is None:
                continue  # a subtopology the topology does not have: never looked up
            reported = offsets.get(sid, {})
            for p in standby:
                if p < partitions[r]:
                    entries.setdefault(base[r] + p, []).append((0, -reported.get(p, 0), i))
        for sid, reported in offsets.items():
            r = rank.get(sid)
            if r is None:
                continue
            listed = member.standby_tasks.get(sid, ())
            held: Collection[int] = frozenset(listed) if len(listed) > 8 else listed  # membership tests below
            for p, offset in reported.items():
                if p < partitions[r] and p not in held:
                    entries.setdefault(base[r] + p, []).append((1, -offset, i))
    return {t: [ranked[0][2]] if len(ranked) == 1 else [i for _, _, i in sorted(ranked)]
            for t, ranked in entries.items()}


def _assign_standbys(
    run: _Run, num_standby: int, prev_active: list[int], prev_standby: dict[int, list[int]],
    total_quota: _Quota,
) -> None:
    """Standbys: previous active's process, then previous standby / offset holders, within the total quota,
    tasks by (partition, subtopology) descending; the rest to the least loaded process without the task, tasks
    by (subtopology, partition) descending (``StickyTaskAssignor#assignStandby``'s two sorts)."""
    records: list[tuple[int, int]] = []
    for t in reversed(run.index.partition_major(stateful_only=True)):  # (partition, subtopology) descending
        if prev_active[t] < 0 and t not in prev_standby:  # nobody held it: every replica goes to the fill step
            records.append((t, num_standby))
            continue
        for replica in range(num_standby):
            i = prev_active[t]
            if i >= 0 and t not in run.process_tasks[run.member_process[i]] \
                    and run.member_count[i] < total_quota.value:
                run.add(i, t, False)
                total_quota.update(run.member_count[i])
                continue
            candidates = prev_standby.get(t)
            i = run.least_loaded_prev(candidates, t) if candidates else -1
            if i >= 0 and run.member_count[i] < total_quota.value:
                run.add(i, t, False)
                total_quota.update(run.member_count[i])
                continue
            records.append((t, num_standby - replica))
            break
    records.sort(reverse=True)  # by task: (subtopology, partition) descending
    queue = run.process_queue()
    head, requeue, place = queue.peek_item, queue.replace_head, run.add_to_least_loaded_member
    process_tasks, process_count, capacity = run.process_tasks, run.process_count, run.capacity
    has_processes = bool(queue)  # polls below re-offer everything they take: the size never changes
    for t, missing in records:
        for _ in range(missing):
            if has_processes and t not in process_tasks[j := head()]:  # the usual case: the least loaded lacks it
                place(j, t, False)
                requeue(process_count[j] / capacity[j])
            elif not _standby_on_least_loaded(run, queue, t):
                break  # every process holds the task: Kafka logs a warning and drops the rest


def _standby_on_least_loaded(run: _Run, queue: RoundsJavaPriorityQueue[int], task: int) -> bool:
    """Poll processes by load until one lacks ``task``; it gets the standby. Re-offers happen as Kafka's
    recursion unwinds: the chosen process first, then the skipped ones in reverse."""
    tasks = run.process_tasks
    skipped: list[int] = []
    found = False
    while queue:
        j = queue.poll_item()
        if task in tasks[j]:
            skipped.append(j)
            continue
        run.add_to_least_loaded_member(j, task, False)
        queue.offer(run.process_count[j] / run.capacity[j], j)
        found = True
        break
    for j in reversed(skipped):
        queue.offer(run.process_count[j] / run.capacity[j], j)
    return found
