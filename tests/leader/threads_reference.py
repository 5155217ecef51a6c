"""The thread-level distribution step by step as Kafka's ``StreamsPartitionAssignor#assignTasksToThreads`` does it: the
reference for ``threads.py``.

A literal port: one Java ``PriorityQueue`` per call (``JavaPriorityQueue`` with the natural order,
every removal a linear scan), the leftovers read from its array. ``threads.py`` gets the same answers
without walking the queue; ``tests/test_threads.py`` compares the two on random clients.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence

from taskassign.errors import TaskAssignmentException
from taskassign.ids import TaskId
from taskassign.internals.java_order import JavaPriorityQueue

_NO_TASKS: tuple[TaskId, ...] = ()


def reference_assign_tasks_to_threads(
    tasks: Sequence[TaskId],
    consumers: Sequence[str],
    thread_load: dict[str, int],
    prev_tasks_by_lag: Mapping[str, Sequence[TaskId]] | None = None,
) -> dict[str, list[TaskId]]:
    """``assignTasksToThreads`` with ``tasks`` in Java collection order; updates ``thread_load``."""
    result: dict[str, list[TaskId]] = {c: [] for c in consumers}
    if not tasks:
        return result
    min_per = (len(tasks) + sum(thread_load.values())) // len(consumers)
    pending: JavaPriorityQueue[TaskId] = JavaPriorityQueue(lambda t: t, tasks)
    fill: deque[str] = deque()
    skipped: dict[TaskId, str] = {}
    for c in consumers:
        mine = result[c]
        target = min_per - thread_load.get(c, 0)
        if prev_tasks_by_lag is not None:
            for t in prev_tasks_by_lag.get(c, _NO_TASKS):
                if t in pending:
                    if len(mine) < target:
                        mine.append(t)
                        pending.remove(t)
                    else:
                        skipped[t] = c
        if len(mine) < target:
            fill.append(c)
    while fill:
        smallest = pending.poll()
        if smallest is None:
            raise TaskAssignmentException("ran out of unassigned tasks")
        c = fill.popleft()
        result[c].append(smallest)
        if len(result[c]) + thread_load.get(c, 0) < min_per:
            fill.append(c)
    if pending:
        at_min = [c for c in consumers if len(result[c]) + thread_load.get(c, 0) == min_per]
        for t in sorted(skipped):
            c = skipped[t]
            if c in at_min and t in pending:
                result[c].append(t)
                pending.remove(t)
                at_min.remove(c)
        takers = deque(at_min)
        for t in pending.array():
            if not takers:
                raise TaskAssignmentException("more leftover tasks than threads at the minimum load")
            result[takers.popleft()].append(t)
    for c in consumers:
        thread_load[c] = thread_load.get(c, 0) + len(result[c])
    return result
