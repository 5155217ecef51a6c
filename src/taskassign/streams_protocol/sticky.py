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

from collections.abc import Callable, Collection, Iterable, Sequence

import numpy as np

from taskassign.internals.gc_pause import gc_paused
from taskassign.internals.java_order import java_string_key
from taskassign.streams_protocol._sticky_fill import fill_actives, fill_standbys
from taskassign.streams_protocol._sticky_run import Quota, Run
from taskassign.streams_protocol._tasks import TaskIndex
from taskassign.streams_protocol.configs import sticky_num_standby
from taskassign.streams_protocol.lines import DEFAULT_STREAMS_LINE, StickyRevision, sticky_revision
from taskassign.streams_protocol.model import (
    MemberAssignment,
    StreamsGroup,
    StreamsGroupAssignment,
)

__all__ = ("assign_sticky",)


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
    run = Run(group, index, revision.compute_if_absent)
    n = len(run.members)
    total_active = index.count
    stateful = index.stateful_tasks()
    active_quota = Quota(total_active, n)
    total_quota = Quota(total_active + num_standby * len(stateful), n)

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
    # its member counts moved) and the quotas' checks are written out in ``take_previous``: it visits every task
    member_count, member_process, process_count = run.member_count, run.member_process, run.process_count
    process_tasks, member_heap, active_owner = run.process_tasks, run.member_heap, run.active_owner

    def take_previous(tasks: Iterable[int], holder: Callable[[int], int], left: list[int]) -> None:
        """Each task to the member ``holder`` names (-1: none) while it is under the active quota, else onto
        ``left``, in order."""
        for t in tasks:
            i = holder(t)
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
                left.append(t)

    def least_loaded_standby(t: int) -> int:
        candidates = prev_standby.get(t)
        return run.least_loaded_prev(candidates, -1) if candidates else -1

    unplaced: list[int] = []
    cold = max(prev_active, default=-1) < 0 and not prev_standby
    if cold:  # nobody owned anything: every task goes to the fill step
        pass
    elif max(prev_active, default=-1) < 0:
        unplaced = index.partition_major()
    else:
        take_previous(index.partition_major(), prev_active.__getitem__, unplaced)
    remaining: list[int] = []
    if cold:
        remaining = list(range(index.count))  # already in the fill step's order
    elif not prev_standby:
        remaining = sorted(unplaced)
    else:
        take_previous(unplaced, least_loaded_standby, remaining)
        remaining.sort()
    # the rest to the least loaded process, no quota check (the active quota is not read after this step, so
    # only the total quota's updates are run)
    fill_actives(run, remaining, total_quota)

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


def _ranked_previous_holders(
    run: Run, index: TaskIndex, task_offsets: bool,
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
    run: Run, num_standby: int, prev_active: list[int], prev_standby: dict[int, Sequence[int]],
    single_holder: np.ndarray, total_quota: Quota,
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
    fill_standbys(run, records, num_standby)


def _standbys_to_previous_at_once(
    run: Run, order: list[int], prev_active: list[int], single_holder: np.ndarray, total_quota: Quota,
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


def _add_standbys(run: Run, members: np.ndarray, tasks: np.ndarray, counts: np.ndarray) -> None:
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


