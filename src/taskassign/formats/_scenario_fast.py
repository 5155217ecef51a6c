"""Fast paths for reading the large parts of a scenario: tasks, their partitions, clients' task lists.

A 10^5-task scenario holds ~150,000 partitions and ~340,000 task-id strings. Read through ``JsonObject``
(a getter call, a seen-key set and a path string per value) they took longer than the assignors
(docs/performance.md).
These functions accept exactly the well-formed values and return None for anything else; the caller
then runs the general reader on that item, which raises the same error, naming the same JSON path, as
before. Equal values are shared (rack sets, store sets), which is safe: they are immutable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from taskassign.errors import TaskIdFormatError
from taskassign.ids import TaskId
from taskassign.model import UNKNOWN_OFFSET_SUM, SortedFrozenSet, TaskInfo, TaskTopicPartition

__all__ = ("FastReader",)

INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1
_TASK_KEYS = frozenset({"id", "stores", "changelog_end_offset_sum", "state_bytes", "partitions"})
_PARTITION_KEYS = frozenset({"topic", "partition", "source", "changelog", "racks"})


def _is_int(value: Any) -> bool:
    return type(value) is int  # JSON integers only: bool is a subclass of int, floats are not ints


class FastReader:
    """Per-file caches: interned string sets and every task id by the text the file spells it with."""

    __slots__ = ("_sets", "task_by_text")

    def __init__(self) -> None:
        self._sets: dict[tuple[str, ...], SortedFrozenSet[str]] = {}
        #: Task ids as spelt in ``$.tasks[*].id``: a later spelling that matches is that task.
        self.task_by_text: dict[str, TaskId] = {}

    def _string_set(self, items: Any) -> SortedFrozenSet[str] | None:
        """A list of distinct strings as a shared SortedFrozenSet, else None."""
        if type(items) is not list:
            return None
        key = tuple(items)
        try:
            found = self._sets.get(key)
        except TypeError:  # an unhashable item (a list or an object): not a list of strings
            return None
        if found is not None:
            return found
        if not all(type(s) is str for s in key) or len(set(key)) != len(key):
            return None
        found = self._sets[key] = SortedFrozenSet(key)
        return found

    def task(self, item: Any) -> TaskInfo | None:
        """A well-formed task object as TaskInfo (duplicates and id styles are the caller's checks)."""
        if type(item) is not dict or not item.keys() <= _TASK_KEYS:
            return None
        text = item.get("id")
        if type(text) is not str:
            return None
        sub, underscore, part = text.partition("_")
        if underscore and 0 < len(sub) < 10 and 0 < len(part) < 10 and sub.isascii() and part.isascii() \
                and sub.isdigit() and part.isdigit():  # "<sub>_<part>" below 2^31: what the pattern accepts
            tid = TaskId(int(sub), int(part))
        else:
            try:
                tid = TaskId.parse(text)
            except TaskIdFormatError:
                return None
        stores = self._string_set(item.get("stores", []))
        end_sum = item.get("changelog_end_offset_sum", 0)
        state_bytes = item.get("state_bytes")
        if (stores is None or not _is_int(end_sum) or not (0 <= end_sum <= LONG_MAX or end_sum == UNKNOWN_OFFSET_SUM)
                or (state_bytes is not None and (not _is_int(state_bytes) or not 0 <= state_bytes <= LONG_MAX))):
            return None
        partitions = self._partitions(item.get("partitions", []))
        if partitions is None:
            return None
        info = TaskInfo(tid, stores, partitions, end_sum, state_bytes)
        if end_sum != 0 and not info.has_changelog:
            return None
        self.task_by_text.setdefault(text, tid)
        return info

    def _partitions(self, items: Any) -> tuple[TaskTopicPartition, ...] | None:
        if type(items) is not list:
            return None
        result = []
        seen = set()
        for item in items:
            if type(item) is not dict or not item.keys() <= _PARTITION_KEYS:
                return None
            topic: Any = item.get("topic")
            partition: Any = item.get("partition")
            is_source, is_changelog = item.get("source", False), item.get("changelog", False)
            if (type(topic) is not str or not topic or not _is_int(partition) or not 0 <= partition <= INT_MAX
                    or type(is_source) is not bool or type(is_changelog) is not bool
                    or not (is_source or is_changelog) or (topic, partition) in seen):
                return None
            racks = item.get("racks")
            rack_ids = None
            if racks is not None:
                rack_ids = self._string_set(racks)
                if rack_ids is None:
                    return None
            seen.add((topic, partition))
            result.append(TaskTopicPartition(topic, partition, is_source, is_changelog, rack_ids))
        return tuple(result)

    def task_list(self, items: Any, tasks: Mapping[TaskId, TaskInfo]) -> set[TaskId] | None:
        """A list of distinct known task ids, else None."""
        if type(items) is not list:
            return None
        by_text = self.task_by_text
        result = set()
        for text in items:
            tid = by_text.get(text) if type(text) is str else None
            if tid is None or tid not in tasks:
                return None
            result.add(tid)
        return result if len(result) == len(items) else None

    def offset_sums(self, raw: Any, tasks: Mapping[TaskId, TaskInfo]) -> dict[TaskId, int] | None:
        """A client's ``task_offset_sums`` when every key is a known task with a changelog and every
        value a valid offset sum, else None."""
        if type(raw) is not dict:
            return None
        by_text = self.task_by_text
        offsets = {}
        for text, value in raw.items():
            tid = by_text.get(text)
            if (tid is None or not _is_int(value) or not (0 <= value <= LONG_MAX or value in (-2, UNKNOWN_OFFSET_SUM))
                    or not tasks[tid].has_changelog):
                return None
            offsets[tid] = value
        return offsets
