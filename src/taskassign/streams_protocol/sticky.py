"""Kafka's broker-side ``StickyTaskAssignor`` (``"sticky"``, the streams group's default), exactly, per line.

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

Speed (issue 33: at least as fast as Kafka's Java on 10^3-10^4 members): the fill steps take a round of the
process queue at once and give each process's tasks to its members afterwards, all processes with one plan;
with one standby replica the previous-holder step and the standby fill run on numpy arrays between the few
places where a decision hangs on another (a task with several holders, a process that already holds its task,
a member reaching the quota); the answer's task maps come from one sort. tests/streams_protocol/
test_sticky_speedup.py holds the answers to the per-placement implementation before this (sticky_reference.py).

Quirks kept on purpose (each is in a golden): the last previous owner in member order wins a doubly claimed
task; ``leastLoadedPrev`` switches candidate only when strictly better on both load and count, and a
candidate over the quota gets nothing, with no fall-back to the next; the fill steps check no quota; standby
replicas that find no free process are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from itertools import pairwise

import numpy as np

from taskassign.errors import TaskAssignorException
from taskassign.internals.gc_pause import gc_paused
from taskassign.internals.java_order import (
    compute_if_absent_order,
    grown_capacity,
    hash_iteration_order,
    java_string_key,
)
from taskassign.internals.java_rounds import RoundsJavaPriorityQueue
from taskassign.internals.string_hashes import java_string_hashes
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


def _count_map_orders(process_members: list[list[int]], hashes: list[int]) -> list[list[int]]:
    """Per process, its members in the iteration order of ``memberToTaskCounts`` (a default HashMap filled in
    member order; the member heap is built from it): ``hash_iteration_order`` written out on spread hashes
    computed once, for the thousands of small processes of a large group."""
    spread = [(h & 0xFFFFFFFF) ^ ((h & 0xFFFFFFFF) >> 16) for h in hashes]
    small = [h & 15 for h in spread]  # the bucket in a 16-bucket table: up to 12 members
    orders = []
    for members in process_members:
        if len(members) < 2:
            orders.append(members)
        elif len(members) <= 12:
            orders.append(sorted(members, key=small.__getitem__))  # a stable sort: insertion order per bucket
        else:
            mask = grown_capacity(len(members)) - 1
            orders.append(sorted(members, key=lambda i: spread[i] & mask))
    return orders


def _scatter(values: list[int] | np.ndarray, at: list[int], new: list[int]) -> np.ndarray:
    """``values`` with ``values[at[k]] = new[k]`` for every k, at C speed."""
    array = np.array(values, dtype=np.int64)
    array[np.asarray(at, dtype=np.int64)] = new
    return array


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

    def reached_at_once(self, before: np.ndarray, after: np.ndarray, members: np.ndarray) -> bool:
        """Members going from counts ``before`` to ``after`` one task at a time, ``members[k]`` getting the k-th:
        if every one of those tasks passes a ``count < value`` check (the value may change only at the last
        one, after every check), run the updates and say True; else change nothing and say False."""
        value = self.value
        if not len(after) or int(after.max()) < value:
            return True
        if int(after.max()) > value:
            return False
        reached = (after == value) & (before < value)
        times = int(np.count_nonzero(reached))
        if times > 1 and _ceil_div(self.remaining - (times - 1) * value, self.cap - (times - 1)) != value:
            return False  # the value falls before the last update: later checks would read the new one
        remaining, cap = self.remaining - times * value, self.cap - times
        if _ceil_div(remaining, cap) != value:  # it falls at the last update: that must be the last task
            last = np.full(len(after), -1, dtype=np.int64)
            np.maximum.at(last, members, np.arange(len(members), dtype=np.int64))
            if int(last[reached].max()) != len(members) - 1:
                return False
        self.remaining, self.cap, self.value = remaining, cap, _ceil_div(remaining, cap)
        return True

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
        hashes = dict(zip(by_id, java_string_hashes(list(by_id)), strict=True))  # each id is hashed once
        self.members: list[GroupMember] = [by_id[i] for i in hash_iteration_order(by_id, hash_of=hashes.__getitem__)]
        n = len(self.members)
        first_seen: dict[str, list[int]] = {}
        for i, member in enumerate(self.members):
            first_seen.setdefault(member.process_id, []).append(i)
        process_hashes = dict(zip(first_seen, java_string_hashes(list(first_seen)), strict=True))
        if compute_if_absent:  # one call per member, in member order
            self.process_ids = compute_if_absent_order(
                (m.process_id for m in self.members), initial_capacity=n, hash_of=process_hashes.__getitem__)
        else:
            self.process_ids = hash_iteration_order(first_seen, initial_capacity=n or None,
                                                    hash_of=process_hashes.__getitem__)
        process_of = {pid: j for j, pid in enumerate(self.process_ids)}
        self.member_process = [process_of[m.process_id] for m in self.members]
        self.process_members = [first_seen[pid] for pid in self.process_ids]
        self.count_map_order = _count_map_orders(self.process_members, [hashes[m.member_id] for m in self.members])
        self.capacity = [len(ids) for ids in self.process_members]
        #: Every process has as many members: equal loads then mean equal counts, and one more task each gives
        #: equal loads again (a whole round of the process queue goes at once).
        self.uniform = len(set(self.capacity)) <= 1
        self.capacity_array = np.asarray(self.capacity, dtype=np.int64)
        self.member_count = [0] * n
        self.process_count = [0] * len(self.process_ids)
        self.process_tasks: list[set[int]] = [set() for _ in self.process_ids]
        self.member_heap: list[RoundsJavaPriorityQueue[int] | None] = [None] * len(self.process_ids)
        #: What each member got: every task's active owner, and (owner, task) pairs of the standbys.
        self.active_owner: list[int] | np.ndarray = [-1] * index.count
        self.standby_owner: list[int] = []
        self.standby_task: list[int] = []
        self.standby_chunks: list[tuple[np.ndarray, np.ndarray]] = []  # (owners, tasks) placed at once

    def load(self, j: int) -> float:
        return self.process_count[j] / self.capacity[j]

    def _heap(self, j: int) -> RoundsJavaPriorityQueue[int]:
        heap = self.member_heap[j]
        if heap is None:
            counts, order = self.member_count, self.count_map_order[j]
            first = counts[order[0]]
            if all(counts[i] == first for i in order):  # no sift moves equal keys: the array is the order
                heap = RoundsJavaPriorityQueue.equal_keys(first, order)
            else:
                heap = RoundsJavaPriorityQueue((counts[i], i) for i in order)
            self.member_heap[j] = heap
        return heap

    def distribute_at_once(self, processes: Sequence[int] | np.ndarray, tasks: Sequence[int] | np.ndarray,
                           active: bool, note_tasks: bool = True) -> bool:
        """``distribute`` of the placements ``tasks[k]`` on ``processes[k]`` with one plan per number of tasks a
        process got, when every process has the same number of members (two or more) and the member heaps of
        those that got tasks are all at the same step of a round; False, changing nothing, when not."""
        size = self.capacity[0] if self.capacity else 0
        if not len(tasks) or not self.uniform or size < 2:
            return False
        at = np.asarray(processes, dtype=np.int64)
        sizes = np.bincount(at, minlength=len(self.process_ids))
        getting = np.flatnonzero(sizes).tolist()
        heaps = [self._heap(j) for j in getting]
        position = heaps[0].increment_position()
        if position is None or any(heap.increment_position() != position for heap in heaps):
            return False
        given = np.asarray(tasks, dtype=np.int64)[np.argsort(at, kind="stable")]  # by process, in their order
        first = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        owner_parts, task_parts = [], []
        for k in np.unique(sizes[sizes > 0]).tolist():
            group = np.flatnonzero(sizes == k)
            heads = RoundsJavaPriorityQueue.increment_rounds([self.member_heap[j] for j in group.tolist()], k)
            assert heads is not None  # every heap was checked above
            owner_parts.append(heads.reshape(-1))
            task_parts.append(given[(first[group][:, None] + np.arange(k)).reshape(-1)])
        owners, placed = np.concatenate(owner_parts), np.concatenate(task_parts)
        if active:
            owner = np.asarray(self.active_owner, dtype=np.int64)
            owner[placed] = owners
            self.active_owner = owner
        else:
            self.standby_chunks.append((owners, placed))
        added = np.bincount(owners, minlength=len(self.member_count))
        self.member_count = (np.asarray(self.member_count, dtype=np.int64) + added).tolist()
        if note_tasks:  # (``note_tasks=False``: nobody reads the processes' tasks any more)
            bounds = [0, *np.cumsum(sizes).tolist()]
            grouped = given.tolist()
            for j in getting:
                self.process_tasks[j].update(grouped[bounds[j]:bounds[j + 1]])
        return True

    def place_on_member(self, j: int, task: int, active: bool) -> int:
        """``addTaskToLeastLoadedMember`` at the member level (the process's count and tasks are the caller's):
        the task on process ``j``'s member with the fewest tasks (the member heap's order on ties)."""
        i = self.process_members[j][0] if self.capacity[j] == 1 else self._heap(j).increment_head()
        self.member_count[i] += 1
        if active:
            self.active_owner[task] = i
        else:
            self.standby_owner.append(i)
            self.standby_task.append(task)
        return i

    def distribute(self, placed: list[list[int]], active: bool) -> None:
        """Each process's fill tasks (in the order it got them) to its least loaded members, a process at a time:
        a member heap sees only its own process's placements, so the order across processes does not matter
        (the caller checked that no quota update hangs on it). The counts go up at once at the end."""
        owners: list[int] = []
        tasks: list[int] = []
        process_members, capacity = self.process_members, self.capacity
        for j, given in enumerate(placed):
            if not given:
                continue
            if capacity[j] == 1:
                owners += [process_members[j][0]] * len(given)
            else:
                owners += self._heap(j).increment_many(len(given))
            tasks += given
        if not owners:
            return
        if active:
            self.active_owner = _scatter(self.active_owner, tasks, owners)
        else:
            self.standby_owner += owners
            self.standby_task += tasks
        added = np.bincount(np.asarray(owners, dtype=np.int64), minlength=len(self.member_count))
        self.member_count = (np.asarray(self.member_count, dtype=np.int64) + added).tolist()

    def count_bound(self, placed: list[list[int]]) -> int:
        """An upper bound on any member's count after ``distribute(placed)``: least-loaded-first placement
        leaves no member above the old largest count plus ``ceil(k / members) + 1`` on a process given k."""
        capacity = self.capacity
        most = max((-(-len(tasks) // capacity[j]) for j, tasks in enumerate(placed) if tasks), default=0)
        return max(self.member_count, default=0) + most + 1

    def least_loaded_prev(self, candidates: Sequence[int], exclude: int) -> int:
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

    def batch(self, queue: RoundsJavaPriorityQueue[int], counts: np.ndarray | list[int]) -> tuple[list[int], float]:
        """The processes the queue's current round polls next that may each take one task without leaving the
        round (their new load is the round's re-offer key), and that key; ``[]`` outside a round. ``counts``:
        the processes' task counts (a fill step keeps them in an array)."""
        rest, key = queue.round_rest()
        if not rest:
            return rest, 0.0
        first = rest[0]
        new = (int(counts[first]) + 1) / self.capacity[first]
        if key is None:
            key = new
        elif new != key:
            return [], 0.0
        if self.uniform:  # equal loads and sizes: equal counts, so every new load is the first's
            return rest, key
        at = np.asarray(rest, dtype=np.int64)
        differ = np.flatnonzero((np.asarray(counts, dtype=np.int64)[at] + 1) / self.capacity_array[at] != key)
        return (rest[:int(differ[0])] if len(differ) else rest), key

    def by_process(self, processes: Sequence[int] | np.ndarray, tasks: Sequence[int] | np.ndarray) -> list[list[int]]:
        """Per process, the tasks of ``tasks`` whose entry in ``processes`` is it, in their order."""
        if not len(processes):
            return [[] for _ in self.process_ids]
        at = np.asarray(processes, dtype=np.int64)
        grouped = np.asarray(tasks, dtype=np.int64)[np.argsort(at, kind="stable")].tolist()
        bounds = [0, *np.cumsum(np.bincount(at, minlength=len(self.process_ids))).tolist()]
        return [grouped[a:b] for a, b in pairwise(bounds)]


def assign_sticky(group: StreamsGroup, kafka_line: str = DEFAULT_STREAMS_LINE) -> StreamsGroupAssignment:
    """Kafka's sticky assignor of ``kafka_line`` ("4.1" ... "4.4", "trunk", or "kafka-20719-proposed") on
    ``group``; raises TaskAssignorException / JavaNumberFormatException where Kafka's throws, and
    StreamsProtocolError for a line without streams groups (3.9, 4.0)."""
    revision = sticky_revision(kafka_line)
    if revision.task_pairs:
        from taskassign.streams_protocol.sticky41 import assign_sticky_41
        return assign_sticky_41(group)
    with gc_paused():  # hundreds of thousands of small objects, none of them garbage (internals.gc_pause)
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
    where = index.where()
    for i, member in enumerate(run.members):  # ``index.tasks_of``, written out: every member, every call
        for sid, parts in member.active_tasks.items():
            at = where.get(sid)
            if at is None:
                continue  # a subtopology the topology does not have
            first, limit = at
            for p in parts:
                if p < limit:
                    prev_active[first + p] = i  # the last writer in member order wins
    prev_standby, single_holder = _ranked_previous_holders(run, index, revision.task_offsets)

    # actives: previous owner, then previous standby / offset holder, each within the active quota. A targeted
    # placement (``ProcessState.addTask``: counts up, the task noted, the process's member heap discarded, as
    # its member counts moved) and the quotas' checks are written out: these loops visit every task
    member_count, member_process, process_count = run.member_count, run.member_process, run.process_count
    process_tasks, member_heap, active_owner = run.process_tasks, run.member_heap, run.active_owner
    unplaced: list[int] = []
    cold = max(prev_active, default=-1) < 0 and not prev_standby
    if cold:  # nobody owned anything: every task goes to the fill step
        pass
    elif max(prev_active, default=-1) < 0:
        unplaced = index.partition_major()
    else:
        for t in index.partition_major():
            i = prev_active[t]
            if i >= 0 and member_count[i] < active_quota.value:
                member_count[i] = count = member_count[i] + 1
                j = member_process[i]
                process_count[j] += 1
                process_tasks[j].add(t)
                member_heap[j] = None
                active_owner[t] = i
                if count == active_quota.value:
                    active_quota.update(count)
                if count == total_quota.value:
                    total_quota.update(count)
            else:
                unplaced.append(t)
    remaining: list[int] = []
    if cold:
        remaining = list(range(index.count))  # already in the fill step's order
    elif not prev_standby:
        remaining = sorted(unplaced)
    else:
        least_loaded_prev = run.least_loaded_prev
        for t in unplaced:
            candidates = prev_standby.get(t)
            i = least_loaded_prev(candidates, -1) if candidates else -1
            if i >= 0 and member_count[i] < active_quota.value:
                member_count[i] = count = member_count[i] + 1
                j = member_process[i]
                process_count[j] += 1
                process_tasks[j].add(t)
                member_heap[j] = None
                active_owner[t] = i
                if count == active_quota.value:
                    active_quota.update(count)
                if count == total_quota.value:
                    total_quota.update(count)
            else:
                remaining.append(t)
        remaining.sort()
    # the rest to the least loaded process, no quota check (the active quota is not read after this step, so
    # only the total quota's updates are run)
    _fill_actives(run, remaining, total_quota)

    if num_standby > 0:
        _assign_standbys(run, num_standby, prev_active, prev_standby, single_holder, total_quota)

    actives = index.task_maps(np.asarray(run.active_owner, dtype=np.int64), np.arange(index.count), n)
    owners, tasks = zip(*run.standby_chunks, strict=True) if run.standby_chunks else ((), ())
    standbys = index.task_maps(
        np.concatenate([np.asarray(run.standby_owner, dtype=np.int64), *owners]),
        np.concatenate([np.asarray(run.standby_task, dtype=np.int64), *tasks]), n)
    ids = [m.member_id for m in run.members]
    # Java's String order is the code points' order but for characters beyond the BMP (UTF-16 surrogates)
    by_id = sorted(range(n), key=ids.__getitem__ if all(map(str.isascii, ids)) else
                   lambda i: java_string_key(ids[i]))
    return StreamsGroupAssignment({ids[i]: MemberAssignment(actives[i], standbys[i]) for i in by_id})


def _fill_actives(run: _Run, remaining: list[int], total_quota: _Quota) -> None:
    """Step 3 of ``assignActive``: each task to the least loaded process (polled, given it, offered again). The
    process queue's rounds go at once (``_Run.batch``); the members take their process's tasks afterwards
    (``_Run.distribute``) unless a member's count could reach the total quota, whose updates hang on the
    order across processes: then member by member in the tasks' order, as Kafka does."""
    queue = run.process_queue()
    if remaining and not queue:  # replace_head keeps the queue's size: checking once is checking every time
        raise TaskAssignorException(f"No process available to assign active task {run.index.name(remaining[0])}.")
    capacity = run.capacity
    counts = np.asarray(run.process_count, dtype=np.int64)  # nothing else reads them during this step
    pos, total = 0, len(remaining)
    order = np.empty(total, dtype=np.int64)  # the process of each task of ``remaining``
    while pos < total:
        processes, key = run.batch(queue, counts)
        if processes:
            at = np.asarray(processes[:total - pos], dtype=np.int64)
            counts[at] += 1  # a round polls each process once
            order[pos:pos + len(at)] = at
            queue.skip(len(at), key)
            pos += len(at)
        else:
            j = queue.peek_item()
            counts[j] += 1
            order[pos] = j
            queue.replace_head(int(counts[j]) / capacity[j])
            pos += 1
    run.process_count[:] = counts.tolist()
    most = int(np.bincount(order).max()) if total else 0
    # the quota's value only falls: if no member's count can reach it, no update can happen
    if (run.uniform and run.capacity and max(run.member_count, default=0) + -(-most // run.capacity[0]) + 1
            < total_quota.value and run.distribute_at_once(order, remaining, True)):
        return
    placed = run.by_process(order, remaining)
    for j, tasks in enumerate(placed):
        if tasks:
            run.process_tasks[j].update(tasks)
    if run.count_bound(placed) < total_quota.value:
        run.distribute(placed, True)
        return
    for j, t in zip(order.tolist(), remaining, strict=True):
        count = run.member_count[run.place_on_member(j, t, True)]
        if count == total_quota.value:
            total_quota.update(count)


def _ranked_previous_holders(
    run: _Run, index: TaskIndex, task_offsets: bool,
) -> tuple[dict[int, Sequence[int]], np.ndarray]:
    """Per task, the members that held it as standby (first) or reported offsets for it, highest offset sum
    first; a stable sort, so ties stay in member order. Without ``task_offsets`` (4.1-4.3: the coordinator
    passes none and the assignor reads none) the previous standbys in member order.

    Most entries carry no offset and rank by member order alone: those are grouped by task with one numpy
    sort; only the tasks that have an entry with an offset are sorted by (standby first, offset, member).
    Also, per task, its one candidate, -1 for none and -2 for several (``_standbys_to_previous_at_once``)."""
    tasks: list[int] = []
    holders: list[int] = []
    ranked: dict[int, list[tuple[int, int, int]]] = {}  # the entries with an offset, by task
    rank, base, partitions = index.rank, index.base, index.partitions
    where = index.where()
    add_task, add_holder = tasks.append, holders.append
    for i, member in enumerate(run.members):
        offsets = member.task_offsets if task_offsets else None
        for sid, standby in member.standby_tasks.items():
            at = where.get(sid)
            if at is None:
                continue  # a subtopology the topology does not have: never looked up
            first, limit = at
            reported = offsets.get(sid) if offsets else None
            if reported:
                for p in standby:
                    if p < limit:
                        if reported.get(p, 0):
                            ranked.setdefault(first + p, []).append((0, -reported[p], i))
                        else:
                            add_task(first + p)
                            add_holder(i)
            else:
                for p in standby:
                    if p < limit:
                        add_task(first + p)
                        add_holder(i)
        if not offsets:
            continue
        for sid, reported in offsets.items():
            r = rank.get(sid)
            if r is None:
                continue
            listed = member.standby_tasks.get(sid, ())
            held: Collection[int] = frozenset(listed) if len(listed) > 8 else listed  # membership tests below
            for p, offset in reported.items():
                if p < partitions[r] and p not in held:
                    ranked.setdefault(base[r] + p, []).append((1, -offset, i))
    result: dict[int, Sequence[int]] = {}
    single = np.full(index.count, -1, dtype=np.int64)
    if tasks:
        task = np.asarray(tasks, dtype=np.int64)
        order = np.argsort(task, kind="stable")  # member order kept within a task
        task = task[order]
        member = np.asarray(holders, dtype=np.int64)[order].tolist()
        starts = np.flatnonzero(np.diff(task, prepend=-1))
        if len(starts) == len(task):  # one holder per task: 1-tuples, made by zip
            result = dict(zip(task.tolist(), zip(member), strict=True))
            single[task] = member
        else:
            sizes = np.diff(np.append(starts, len(task)))
            single[task[starts]] = np.where(sizes == 1, np.asarray(member, dtype=np.int64)[starts], -2)
            flat = tuple(member)
            ends = [*starts[1:].tolist(), len(flat)]
            result = dict(zip(task[starts].tolist(), [flat[a:b] for a, b in zip(starts.tolist(), ends, strict=True)],
                              strict=True))
    for t, entries in ranked.items():
        entries += [(0, 0, i) for i in result.get(t, ())]
        result[t] = [i for _, _, i in sorted(entries)]
        single[t] = entries[0][2] if len(entries) == 1 else -2
    return result, single


def _assign_standbys(
    run: _Run, num_standby: int, prev_active: list[int], prev_standby: dict[int, Sequence[int]],
    single_holder: np.ndarray, total_quota: _Quota,
) -> None:
    """Standbys: previous active's process, then previous standby / offset holders, within the total quota,
    tasks by (partition, subtopology) descending; the rest to the least loaded process without the task, tasks
    by (subtopology, partition) descending (``StickyTaskAssignor#assignStandby``'s two sorts)."""
    member_count, member_process, process_count = run.member_count, run.member_process, run.process_count
    process_tasks, member_heap = run.process_tasks, run.member_heap
    standby_owner, standby_task, least_loaded_prev = run.standby_owner, run.standby_task, run.least_loaded_prev
    records: list[tuple[int, int]] = []
    stateful = run.index.stateful_tasks()
    if max(prev_active, default=-1) < 0 and not prev_standby:  # cold: every replica goes to the fill step
        records = [(t, num_standby) for t in stateful]
    else:
        def one(t: int) -> None:
            """``assignStandby``'s first loop for task ``t``."""
            if prev_active[t] < 0 and t not in prev_standby:  # nobody held it: every replica to the fill step
                records.append((t, num_standby))
                return
            for replica in range(num_standby):
                i = prev_active[t]
                if i < 0 or t in process_tasks[member_process[i]] or member_count[i] >= total_quota.value:
                    candidates = prev_standby.get(t)
                    if not candidates:
                        i = -1
                    elif len(candidates) == 1:  # least_loaded_prev of one: it, unless its process holds the task
                        i = candidates[0]
                        if t in process_tasks[member_process[i]]:
                            i = -1
                    else:
                        i = least_loaded_prev(candidates, t)
                    if i < 0 or member_count[i] >= total_quota.value:
                        records.append((t, num_standby - replica))
                        return
                member_count[i] = count = member_count[i] + 1  # a targeted placement, written out
                j = member_process[i]
                process_count[j] += 1
                process_tasks[j].add(t)
                member_heap[j] = None
                standby_owner.append(i)
                standby_task.append(t)
                if count == total_quota.value:
                    total_quota.update(count)

        tasks = run.index.partition_major(stateful_only=True)[::-1]  # (partition, subtopology) descending
        if num_standby == 1:
            _standbys_to_previous_at_once(run, tasks, prev_active, single_holder, total_quota, one, records)
        else:
            for t in tasks:
                one(t)
    records.sort(reverse=True)  # by task: (subtopology, partition) descending
    _fill_standbys(run, records, num_standby)


def _standbys_to_previous_at_once(
    run: _Run, order: list[int], prev_active: list[int], single_holder: np.ndarray, total_quota: _Quota,
    one: Callable[[int], None], records: list[tuple[int, int]],
) -> None:
    """``one(t)`` for every task of ``order`` with one standby replica, runs of tasks at once where no decision
    hangs on another: the only process holding a task is its active's, a task with one previous standby holder
    needs no ``least_loaded_prev`` between loads that move, and no member's count gets to the total quota (so
    every quota check passes and the quota does not change). A task with several holders goes through ``one``
    between two runs; a run that would take a member to the quota, and everything after it, too."""
    if not order:
        return
    tasks = np.asarray(order, dtype=np.int64)
    process = np.asarray(run.member_process, dtype=np.int64)
    holder = process[np.asarray(run.active_owner, dtype=np.int64)[tasks]]  # the process of each task's active
    previous = np.asarray(prev_active, dtype=np.int64)[tasks]
    first = (previous >= 0) & (process[np.maximum(previous, 0)] != holder)
    candidate = single_holder[tasks]
    second = ~first & (candidate >= 0) & (process[np.maximum(candidate, 0)] != holder)
    chosen = np.where(first, previous, np.where(second, candidate, -1))
    several = np.flatnonzero(~first & (candidate == -2)).tolist()
    begin = 0
    for stop in [*several, len(order)]:
        if begin < stop:
            run_chosen, run_tasks = chosen[begin:stop], tasks[begin:stop]
            placed = run_chosen >= 0
            members = run_chosen[placed]
            before = np.asarray(run.member_count, dtype=np.int64)
            counts = before + np.bincount(members, minlength=len(before))
            if not total_quota.reached_at_once(before, counts, members):
                for t in order[begin:]:
                    one(t)
                return
            _add_standbys(run, members, run_tasks[placed], counts)
            records += [(t, 1) for t in run_tasks[~placed].tolist()]
        if stop < len(order):
            one(order[stop])
        begin = stop + 1


def _add_standbys(run: _Run, members: np.ndarray, tasks: np.ndarray, counts: np.ndarray) -> None:
    """Targeted placements of standby ``tasks[k]`` on ``members[k]`` for every k, ``counts`` the members' new
    counts."""
    run.member_count[:] = counts.tolist()  # in place: the caller's loop holds these lists
    processes = np.asarray(run.member_process, dtype=np.int64)[members]
    added = np.bincount(processes, minlength=len(run.process_count))
    run.process_count[:] = (np.asarray(run.process_count, dtype=np.int64) + added).tolist()
    process_tasks = run.process_tasks
    for j, t in zip(processes.tolist(), tasks.tolist(), strict=True):
        process_tasks[j].add(t)
    for j in np.flatnonzero(added).tolist():
        run.member_heap[j] = None
    run.standby_chunks.append((members, tasks))


def _fill_standbys(run: _Run, records: list[tuple[int, int]], num_standby: int) -> None:
    """The rest to the least loaded process without the task. While the process queue is in a round, its next
    processes take the tasks one each at list speed until one already holds its task; that one goes the slow
    way (``_standby_on_least_loaded``). A process's set of tasks is read only for the task at hand, so a
    task's single replica joins it at the end (its next replica, if any, at once). The members take their
    process's tasks at the end too (nothing reads a member's count in between: the total quota is not read
    after this step)."""
    queue = run.process_queue()
    process_tasks, capacity = run.process_tasks, run.capacity
    counts = np.asarray(run.process_count, dtype=np.int64)  # nothing else reads them during this step
    processes: list[int] = []  # each placement's process and task
    tasks: list[int] = []
    if num_standby == 1:  # a task missing its one replica holds no standby: only its active's process holds it
        at, given_tasks = _fill_single_replicas(run, queue, [t for t, _ in records], counts)
        run.process_count[:] = counts.tolist()
        if not run.distribute_at_once(at, given_tasks, False, note_tasks=False):
            run.distribute(run.by_process(at, given_tasks), False)
        return
    given = tasks.append
    has_processes = bool(queue)  # polls below re-offer everything they take: the size never changes
    batch: list[int] = []
    key = 0.0
    taken = 0
    for t, missing in records:
        for _ in range(missing):
            if taken < len(batch):
                j = batch[taken]
                if t not in process_tasks[j]:
                    taken += 1
                    given(t)
                    if missing > 1:
                        process_tasks[j].add(t)
                    continue
            if taken:
                done = batch[:taken]
                counts[done] += 1  # a round polls each process once
                processes += done
                queue.skip(taken, key)
            if has_processes and t not in process_tasks[j := queue.peek_item()]:  # the least loaded lacks it
                counts[j] += 1
                process_tasks[j].add(t)
                processes.append(j)
                given(t)
                queue.replace_head(int(counts[j]) / capacity[j])
                found = True
            else:
                found = _standby_on_least_loaded(run, queue, t, counts, processes, tasks)
            batch, key = run.batch(queue, counts)
            taken = 0
            if not found:
                break  # every process holds the task: Kafka logs a warning and drops the rest
    if taken:
        done = batch[:taken]
        counts[done] += 1
        processes += done
        queue.skip(taken, key)
    run.process_count[:] = counts.tolist()
    if run.distribute_at_once(processes, tasks, False):
        return
    placed = run.by_process(processes, tasks)
    for j, got in enumerate(placed):
        if got:
            process_tasks[j].update(got)
    run.distribute(placed, False)


def _fill_single_replicas(
    run: _Run, queue: RoundsJavaPriorityQueue[int], order: list[int], counts: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``_fill_standbys`` with one standby replica: a task missing it holds no standby (so the one process
    holding it is its active's): a round's processes are matched with the tasks at once, up to the first
    process that holds its task, which goes the slow way. Each placement's process and task."""
    active = np.asarray(run.member_process, dtype=np.int64)[np.asarray(run.active_owner, dtype=np.int64)]
    tasks = np.asarray(order, dtype=np.int64)
    held_by = active[tasks].tolist() if len(tasks) else []  # the process holding each task
    held_by_array = np.asarray(held_by, dtype=np.int64)
    chosen = np.full(len(order), -1, dtype=np.int64)
    has_processes = bool(queue)
    capacity = run.capacity
    array, counts = counts, counts.tolist()  # a list here: one process at a time, mostly
    pos, total = 0, len(order)
    while pos < total:
        if not queue.in_round():  # Java's sifts, step by step, until a round starts again or a clash
            in_round, peek, replace_head = queue.in_round, queue.peek_item, queue.replace_head
            sifted: list[int] = []
            start = pos
            while pos < total and has_processes and held_by[pos] != (j := peek()):
                counts[j] += 1
                sifted.append(j)
                replace_head(int(counts[j]) / capacity[j])
                pos += 1
                if in_round():
                    break
            chosen[start:pos] = sifted
            if pos == total or queue.in_round():
                continue
        batch, key = run.batch(queue, counts) if queue.in_round() else ([], 0.0)
        if batch:
            batch = batch[:total - pos]
            at = np.asarray(batch, dtype=np.int64)
            clash = np.flatnonzero(held_by_array[pos:pos + len(batch)] == at)
            took = int(clash[0]) if len(clash) else len(batch)
            if took:
                for j in batch[:took]:
                    counts[j] += 1
                chosen[pos:pos + took] = at[:took]
                queue.skip(took, key)
                pos += took
                continue
        if has_processes and held_by[pos] != (j := queue.peek_item()):  # the least loaded lacks it
            counts[j] += 1
            chosen[pos] = j
            queue.replace_head(int(counts[j]) / run.capacity[j])
        else:
            placed: list[int] = []
            if _standby_on_least_loaded(run, queue, order[pos], counts, placed, []):
                chosen[pos] = placed[0]
        pos += 1
    array[:] = counts
    kept = chosen >= 0
    return chosen[kept], tasks[kept]


def _standby_on_least_loaded(
    run: _Run, queue: RoundsJavaPriorityQueue[int], task: int, counts: np.ndarray | list[int],
    processes: list[int], tasks: list[int],
) -> bool:
    """Poll processes by load until one lacks ``task``; it gets the standby. Re-offers happen as Kafka's
    recursion unwinds: the chosen process first, then the skipped ones in reverse."""
    held = run.process_tasks
    skipped: list[int] = []
    found = False
    while queue:
        j = queue.poll_item()
        if task in held[j]:
            skipped.append(j)
            continue
        counts[j] += 1
        held[j].add(task)
        processes.append(j)
        tasks.append(task)
        queue.offer(int(counts[j]) / run.capacity[j], j)
        found = True
        break
    for j in reversed(skipped):
        queue.offer(int(counts[j]) / run.capacity[j], j)
    return found
