"""The topology's tasks as small ints, for the assignors' inner loops.

Task ``t`` is the ``t``-th task in ``(subtopology id, partition)`` order, subtopology ids in Java string
order; so sorting ints sorts tasks as Kafka's ``TaskId.compareTo`` does, and a task's subtopology rank and
partition are two list lookups. Tasks of a previous assignment that the topology does not have map to None:
the assignors collect them but never look them up.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from types import MappingProxyType

from taskassign.internals.java_order import java_string_key
from taskassign.streams_protocol.model import Subtopology, TaskMap, task_name

__all__ = ("TaskIndex",)


class TaskIndex:
    """Every task of a topology as an int, and back."""

    __slots__ = ("base", "count", "ids", "partitions", "rank", "stateful", "task_partition", "task_rank")

    def __init__(self, subtopologies: Iterable[Subtopology]) -> None:
        ordered = sorted(subtopologies, key=lambda s: java_string_key(s.id))
        self.ids: tuple[str, ...] = tuple(s.id for s in ordered)
        self.rank: dict[str, int] = {sid: r for r, sid in enumerate(self.ids)}
        self.partitions: tuple[int, ...] = tuple(s.partitions for s in ordered)
        self.stateful: tuple[bool, ...] = tuple(s.stateful for s in ordered)
        base: list[int] = []
        task_rank: list[int] = []
        task_partition: list[int] = []
        for r, n in enumerate(self.partitions):
            base.append(len(task_rank))
            task_rank.extend([r] * n)
            task_partition.extend(range(n))
        self.base: tuple[int, ...] = tuple(base)
        self.task_rank: list[int] = task_rank
        self.task_partition: list[int] = task_partition
        self.count = len(task_rank)

    def task(self, subtopology: str, partition: int) -> int | None:
        """The int of a task, or None when the topology has no such task."""
        r = self.rank.get(subtopology)
        if r is None or partition >= self.partitions[r]:
            return None
        return self.base[r] + partition

    def tasks_of(self, tasks: TaskMap) -> Iterator[int]:
        """The ints of the tasks of ``tasks`` that the topology has."""
        rank, partitions, base = self.rank, self.partitions, self.base
        for sid, parts in tasks.items():
            r = rank.get(sid)
            if r is None:
                continue
            limit, first = partitions[r], base[r]
            for p in parts:
                if p < limit:
                    yield first + p

    def name(self, task: int) -> str:
        return task_name(self.ids[self.task_rank[task]], self.task_partition[task])

    def partition_major(self, stateful_only: bool = False) -> list[int]:
        """Every task (``stateful_only``: of stateful subtopologies) sorted by (partition, subtopology id), made
        in that order rather than sorted."""
        order: list[int] = []
        ranks = [(first, n) for first, n, stateful in zip(self.base, self.partitions, self.stateful, strict=True)
                 if stateful or not stateful_only]
        for p in range(max((n for _, n in ranks), default=0)):
            order.extend([first + p for first, n in ranks if p < n])
        return order

    def stateful_tasks(self) -> list[int]:
        """The tasks of stateful subtopologies, ascending."""
        result: list[int] = []
        for r, n in enumerate(self.partitions):
            if self.stateful[r]:
                result.extend(range(self.base[r], self.base[r] + n))
        return result

    def task_map(self, tasks: Iterable[int]) -> TaskMap:
        """A TaskMap of ints (any order): sorted ints come grouped by subtopology. One loop, no groupby: an
        assignor's answer is one call per member and kind, a few tasks each (an eighth of the sticky assignor's
        time at 10^3 members through groupby)."""
        ids, ranks, partitions = self.ids, self.task_rank, self.task_partition
        grouped: dict[str, list[int]] = {}
        last = -1
        current: list[int] = []
        for t in sorted(tasks):
            r = ranks[t]
            if r != last:
                last = r
                current = grouped[ids[r]] = []
            current.append(partitions[t])
        return MappingProxyType({sid: tuple(parts) for sid, parts in grouped.items()})
