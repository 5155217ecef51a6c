"""The state of one streams sticky assignor call (``streams_protocol.sticky``): members and processes as ints,
their counts, their member heaps, what each member got, and the quotas; the bulk placement helpers the fill
steps share (a round of the process queue, each process's tasks to its members in one plan)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from taskassign.internals.java_order import compute_if_absent_order, grown_capacity, hash_iteration_order
from taskassign.internals.java_rounds import RoundsJavaPriorityQueue
from taskassign.internals.string_hashes import java_string_hashes
from taskassign.streams_protocol._tasks import TaskIndex
from taskassign.streams_protocol.model import GroupMember, StreamsGroup

__all__ = ("Quota", "Run", "ceil_div")


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


def ceil_div(a: int, b: int) -> int:
    return 0 if b == 0 else -(-a // b)


class Quota:
    """A per-member quota that shrinks as members reach it: when a member's count hits the quota, that member
    and its tasks leave the pool and the quota is recomputed over the rest."""

    __slots__ = ("cap", "remaining", "value")

    def __init__(self, tasks: int, members: int) -> None:
        self.remaining = tasks
        self.cap = members
        self.value = ceil_div(tasks, members)

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
        if times > 1 and ceil_div(self.remaining - (times - 1) * value, self.cap - (times - 1)) != value:
            return False  # the value falls before the last update: later checks would read the new one
        remaining, cap = self.remaining - times * value, self.cap - times
        if ceil_div(remaining, cap) != value:  # it falls at the last update: that must be the last task
            last = np.full(len(after), -1, dtype=np.int64)
            np.maximum.at(last, members, np.arange(len(members), dtype=np.int64))
            if int(last[reached].max()) != len(members) - 1:
                return False
        self.remaining, self.cap, self.value = remaining, cap, ceil_div(remaining, cap)
        return True

    def update(self, new_count: int) -> None:
        if new_count == self.value:
            self.cap -= 1
            self.remaining -= new_count
            self.value = ceil_div(self.remaining, self.cap)


class Run:
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
