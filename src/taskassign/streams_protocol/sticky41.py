"""Kafka 4.1's broker-side ``StickyTaskAssignor`` (KAFKA-17125 as first released), step by step.

4.1's assignor predates the heaps of 4.2 (KAFKA-19478): it walks ``HashSet``s and streams, and keeps every
pair of tasks placed on one process (``TaskPairs``), so it is quadratic in the tasks (Kafka's run of 6,000
tasks on 2 members did not finish in 240 s). Its decisions hang on these orders:

* tasks are visited in the iteration order of a ``HashSet<TaskId>`` (``TaskId`` is a record: hash
  ``31 * subtopologyId.hashCode() + partition``), not sorted;
* processes in a default-sized ``HashMap<processId, ProcessState>``, each process's members in a default
  ``HashMap<memberId, count>``; a process's least-loaded member is the first with the fewest tasks there;
* the least-loaded process is the first minimum of a ``Stream`` over a ``HashSet<Member>``. ``Member`` has no
  ``hashCode``: the set's order comes from *identity hash codes*, and the fill steps build a set of fresh
  ``Member`` objects for every task. So Kafka 4.1 breaks ties between equally loaded processes by the JVM's
  identity hashes: HotSpot draws them from a per-thread xor-shift generator (``-XX:hashCode=5``, the default),
  so the same input gives one answer in a fresh JVM and other answers later in the same JVM (a broker's
  coordinator thread is anywhere in its stream). ``IdentityHashes`` emulates that generator; the default
  starts where a JDK 17 main thread's does (its first ``os::random()``), ``skip`` draws later.

Other quirks kept: the active quota is updated with the *process's* active count; the standby candidates
of a task are pruned for good (``removeIf``) when their process already has it; a previous active's process
gets the standby only when it is "load balanced" (below one task per member, or no process less loaded)
and gives a new task pair; the fill steps check no quota.
"""

from __future__ import annotations

from collections.abc import Callable

from taskassign.errors import TaskAssignorException
from taskassign.ids import java_string_hash, to_int32
from taskassign.internals.java_order import grown_capacity, hash_iteration_order, java_hash, java_string_key
from taskassign.streams_protocol._tasks import TaskIndex
from taskassign.streams_protocol.configs import sticky_num_standby
from taskassign.streams_protocol.model import MemberAssignment, StreamsGroup, StreamsGroupAssignment

__all__ = ("JDK17_MAIN_THREAD_SEED", "IdentityHashes", "assign_sticky_41")

#: HotSpot's first ``os::random()`` (Park-Miller from 1234567): the xor-shift seed of a JVM's main thread.
JDK17_MAIN_THREAD_SEED = 1422014746
_MASK32 = 0xFFFFFFFF


class IdentityHashes:
    """HotSpot's identity hash codes of one thread (``-XX:hashCode=5``: Marsaglia's xor-shift, 31 bits, 0
    replaced by 0xBAD), starting from ``seed`` (the thread's ``_hashStateX``) after ``skip`` draws."""

    __slots__ = ("_w", "_x", "_y", "_z")

    def __init__(self, seed: int = JDK17_MAIN_THREAD_SEED, skip: int = 0) -> None:
        self._x, self._y, self._z, self._w = seed & _MASK32, 842502087, 0x8767, 273326509
        for _ in range(skip):
            self.next()

    def next(self) -> int:
        t = self._x
        t ^= (t << 11) & _MASK32
        v = self._w
        v = (v ^ (v >> 19)) ^ (t ^ (t >> 8))
        self._x, self._y, self._z, self._w = self._y, self._z, self._w, v
        return (v & 0x7FFFFFFF) or 0xBAD


def _spread(h: int) -> int:
    return h ^ (h >> 16)


def _set_order(hashes: list[int]) -> list[int]:
    """Positions of ``hashes`` (added in this order to a default ``HashSet``) in its iteration order."""
    mask = grown_capacity(len(hashes)) - 1
    return sorted(range(len(hashes)), key=lambda i: _spread(hashes[i]) & mask)


class _State:
    """One ``assign`` call. Members and processes are ints: members in the coordinator's map order,
    processes in ``processIdToState``'s."""

    def __init__(self, group: StreamsGroup, hashes: IdentityHashes, tasks: int) -> None:
        self.ids = hashes
        self.tasks = tasks
        by_id = {m.member_id: m for m in group.members}
        self.members = [by_id[i] for i in hash_iteration_order(by_id)]
        self.member_ids = [m.member_id for m in self.members]
        pids = hash_iteration_order(dict.fromkeys(m.process_id for m in self.members))
        index = {pid: j for j, pid in enumerate(pids)}
        self.process_ids = pids
        self.process_of = [index[m.process_id] for m in self.members]
        position = {mid: i for i, mid in enumerate(self.member_ids)}
        grouped: list[list[str]] = [[] for _ in pids]
        for i, mid in enumerate(self.member_ids):
            grouped[self.process_of[i]].append(mid)
        #: each process's members in its memberToTaskCounts order
        self.process_members = [[position[mid] for mid in hash_iteration_order(ids)] for ids in grouped]
        self.capacity = [len(ids) for ids in grouped]
        self.count = [0] * len(self.members)
        self.process_tasks: list[set[int]] = [set() for _ in pids]
        self.process_active = [0] * len(pids)
        self.active: list[list[int]] = [[] for _ in self.members]
        self.standby: list[list[int]] = [[] for _ in self.members]
        #: TaskPairs: ``a * tasks + b`` for each pair ``a < b`` (ints sort as ``TaskId.compareTo``)
        self.pairs: set[int] = set()
        self.max_pairs = 0

    def load(self, j: int) -> float:
        return len(self.process_tasks[j]) / self.capacity[j]

    def add(self, i: int, task: int, active: bool) -> None:
        """``ProcessState.addTask`` then ``updateHelpers``' pairs."""
        j = self.process_of[i]
        self.count[i] += 1
        tasks = self.process_tasks[j]
        tasks.add(task)
        (self.active if active else self.standby)[i].append(task)
        if active:
            self.process_active[j] += 1
        n = self.tasks
        self.pairs.update(other * n + task if other < task else task * n + other for other in tasks if other != task)

    def has_new_pair(self, task: int, j: int) -> bool:
        """``TaskPairs.hasNewPair(task, process j's tasks)``."""
        if len(self.pairs) == self.max_pairs:
            return False
        tasks = self.process_tasks[j]
        if not tasks:
            return True
        n, pairs = self.tasks, self.pairs
        return any((other * n + task if other < task else task * n + other) not in pairs for other in tasks)

    def least_loaded_member(self, j: int) -> int:
        """``memberWithLeastLoad``: the first member with the fewest tasks in the process's count map."""
        best = -1
        for i in self.process_members[j]:
            if best < 0 or self.count[i] < self.count[best]:
                best = i
        return best

    def fresh_members(self, processes: list[int]) -> tuple[list[int], list[int]]:
        """A ``HashSet`` of new ``Member`` objects for every member of ``processes`` (in this order): the
        members in the set's iteration order, and their identity hashes (drawn as they are added)."""
        members = [i for j in processes for i in self.process_members[j]]
        hashes = [self.ids.next() for _ in members]
        order = _set_order(hashes)
        return [members[k] for k in order], [hashes[k] for k in order]

    def least_loaded(self, members: list[int], hashes: list[int], task: int) -> int:
        """``findMemberWithLeastLoad``'s process: among ``members`` (a HashSet's iteration order, with their
        identity hashes) those whose process gives a new pair (all, if none does), rebuilt as a new HashSet;
        the first of them on a least-loaded process. -1 for none."""
        if not members:
            return -1
        new_pair: dict[int, bool] = {}
        kept = []
        for k, i in enumerate(members):
            j = self.process_of[i]
            ok = new_pair.get(j)
            if ok is None:
                ok = new_pair[j] = self.has_new_pair(task, j)
            if ok:
                kept.append(k)
        if kept:
            order = _set_order([hashes[k] for k in kept])
            candidates = [members[kept[k]] for k in order]
        else:
            candidates = members
        best = -1
        best_load = 0.0
        for i in candidates:
            load = self.load(self.process_of[i])
            if best < 0 or load < best_load:
                best, best_load = i, load
        return best


def _task_hash(task: tuple[str, int]) -> int:
    """``TaskId.hashCode`` (a record): ``31 * subtopologyId.hashCode() + partition``."""
    return to_int32(31 * java_string_hash(task[0]) + task[1])


def _task_set(index: TaskIndex, tasks: list[tuple[str, int]]) -> list[int]:
    """A default ``HashSet<TaskId>`` filled in this order, in its iteration order."""
    ordered = hash_iteration_order(tasks, hash_of=_task_hash)
    return [index.base[index.rank[sid]] + p for sid, p in ordered]


def _record_name(index: TaskIndex, task: int) -> str:
    return f"TaskId[subtopologyId={index.ids[index.task_rank[task]]}, partition={index.task_partition[task]}]"


def assign_sticky_41(group: StreamsGroup, hashes: IdentityHashes | None = None) -> StreamsGroupAssignment:
    """Kafka 4.1's sticky assignor on ``group``, its identity-hash ties drawn from ``hashes`` (default: a fresh
    JDK 17 main thread's)."""
    index = TaskIndex(group.subtopologies)
    state = _State(group, hashes or IdentityHashes(), index.count)
    all_tasks = [(s.id, p) for s in group.subtopologies for p in range(s.partitions)]
    total = len(all_tasks)
    product = to_int32(total * (total - 1))
    state.max_pairs = int(product / 2)  # Java int division: towards zero
    cap = len(state.members)
    quota = [total, cap, -(-total // cap) if cap else 0]  # tasks left, members left, tasks per member

    def update_quota(process_active: int) -> None:
        if process_active == quota[2]:
            quota[1] -= 1
            quota[0] -= process_active
            quota[2] = -(-quota[0] // quota[1]) if quota[1] else 0

    # prev active: the last writer in member order wins; prev standby: a HashSet<Member> per task, whose
    # members get their identity hash when first added to any of these sets
    prev_active: dict[tuple[str, int], int] = {}
    prev_standby: dict[tuple[str, int], list[int]] = {}
    member_hash: dict[int, int] = {}
    for i, member in enumerate(state.members):
        for sid, parts in member.active_tasks.items():
            for p in parts:
                prev_active[(sid, p)] = i
        for sid, parts in member.standby_tasks.items():
            for p in parts:
                if i not in member_hash:
                    member_hash[i] = state.ids.next()
                holders = prev_standby.setdefault((sid, p), [])
                if i not in holders:
                    holders.append(i)
    by_int = {index.task(sid, p): (sid, p) for sid, p in all_tasks}
    prev_active_of = [prev_active.get(by_int[t], -1) for t in range(total)]
    standby_sets: dict[int, list[int]] = {}
    for (sid, p), holders in prev_standby.items():
        t = index.task(sid, p)
        if t is not None:  # the others are never looked up
            standby_sets[t] = [holders[k] for k in _set_order([member_hash[i] for i in holders])]

    def prev_least_loaded(task: int) -> int:
        """``findMemberWithLeastLoad(standbyTaskToPrevMember.get(task), task, true)``."""
        holders = standby_sets.get(task)
        if not holders:
            return -1
        i = state.least_loaded(holders, [member_hash[i] for i in holders], task)
        if i < 0:
            return -1
        j = state.process_of[i]
        return next(h for h in holders if state.process_of[h] == j)  # the same former member, first in the set

    remaining: list[int] = []
    for task in _task_set(index, all_tasks):
        i = prev_active_of[task]
        if i >= 0 and state.count[i] < quota[2]:
            state.add(i, task, True)
            update_quota(state.process_active[state.process_of[i]])
        else:
            remaining.append(task)
    unplaced: list[int] = []
    for task in remaining:
        i = prev_least_loaded(task)
        if i >= 0 and state.count[i] < quota[2]:
            state.add(i, task, True)
            update_quota(state.process_active[state.process_of[i]])
        else:
            unplaced.append(task)
    every_process = list(range(len(state.process_ids)))
    for task in unplaced:
        members, member_hashes = state.fresh_members(every_process)
        i = state.least_loaded(members, member_hashes, task)
        if i < 0:
            raise TaskAssignorException(f"No member available to assign active task {{}}.{_record_name(index, task)}")
        i = state.least_loaded_member(state.process_of[i])
        state.add(i, task, True)
        update_quota(state.process_active[state.process_of[i]])

    num_standby = sticky_num_standby(group.configs)
    if num_standby > 0:
        stateful = [(s.id, p) for s in group.subtopologies if s.stateful for p in range(s.partitions)]
        for task in _task_set(index, stateful):
            _assign_standbys(state, task, num_standby, prev_active_of, standby_sets, prev_least_loaded)

    result = {
        state.member_ids[i]: MemberAssignment(index.task_map(state.active[i]), index.task_map(state.standby[i]))
        for i in range(len(state.members))
    }
    return StreamsGroupAssignment(dict(sorted(result.items(), key=lambda item: java_string_key(item[0]))))


def _assign_standbys(
    state: _State, task: int, num_standby: int, prev_active: list[int], standby_sets: dict[int, list[int]],
    prev_least_loaded: Callable[[int], int],
) -> None:
    """``assignStandby``'s loop body for one task: each replica to the previous active's process, else a
    previous standby's, else the least-loaded process without the task."""
    for _ in range(num_standby):
        available = [j for j in range(len(state.process_ids)) if task not in state.process_tasks[j]]
        if not available:
            return  # Kafka logs a warning
        free = set(available)
        standby = -1
        i = prev_active[task]
        if i >= 0:
            j = state.process_of[i]
            if j in free and _load_balanced(state, j) and state.has_new_pair(task, j):
                standby = i
        if standby < 0:
            holders = standby_sets.get(task)
            if holders:
                holders[:] = [h for h in holders if state.process_of[h] in free]  # removeIf: for good
                i = prev_least_loaded(task)
                if i >= 0 and _load_balanced(state, state.process_of[i]):
                    standby = i
        if standby < 0:
            # others: a HashSet<String> of the free processes' ids, then fresh Members of their members
            ordered = hash_iteration_order([state.process_ids[j] for j in available], hash_of=java_hash)
            position = {pid: j for j, pid in enumerate(state.process_ids)}
            members, hashes = state.fresh_members([position[pid] for pid in ordered])
            i = state.least_loaded(members, hashes, task)
            if i < 0:
                return
            standby = state.least_loaded_member(state.process_of[i])
        state.add(standby, task, False)


def _load_balanced(state: _State, j: int) -> bool:
    """``isLoadBalanced``: fewer tasks than members, or no process less loaded."""
    if len(state.process_tasks[j]) < state.capacity[j]:
        return True
    load = state.load(j)
    return all(state.load(k) >= load for k in range(len(state.process_ids)))
