"""The streams sticky assignor's fill steps (``streams_protocol.sticky``): the tasks left after the previous
owners, each to the least loaded process (a standby: the least loaded without the task), then to that
process's least loaded member. A round of the process queue goes at once; the members take their process's
tasks at the end of a step."""

from __future__ import annotations

import numpy as np

from taskassign.errors import TaskAssignorException
from taskassign.internals.java_rounds import RoundsJavaPriorityQueue
from taskassign.streams_protocol._sticky_run import Quota, Run

__all__ = ("fill_actives", "fill_standbys")


def fill_actives(run: Run, remaining: list[int], total_quota: Quota) -> None:
    """Step 3 of ``assignActive``: each task to the least loaded process (polled, given it, offered again). The
    process queue's rounds go at once (``Run.batch``); the members take their process's tasks afterwards
    (``Run.distribute``) unless a member's count could reach the total quota, whose updates hang on the
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


def fill_standbys(run: Run, records: list[tuple[int, int]], num_standby: int) -> None:
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
    run: Run, queue: RoundsJavaPriorityQueue[int], order: list[int], counts: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``fill_standbys`` with one standby replica: a task missing it holds no standby (so the one process
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
    run: Run, queue: RoundsJavaPriorityQueue[int], task: int, counts: np.ndarray | list[int],
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
