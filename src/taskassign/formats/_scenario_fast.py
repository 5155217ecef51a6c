"""Fast paths for reading the large parts of a scenario: tasks, their partitions, clients' task lists.

A 10^5-task scenario holds ~150,000 partitions and ~340,000 task-id strings. Read through ``JsonObject``
(a getter call, a seen-key set and a path string per value) they took longer than the assignors
(docs/performance.md).
These functions accept exactly the well-formed values and return None for anything else; the caller
then runs the general reader on that item, which raises the same error, naming the same JSON path, as
before. Equal values are shared (rack sets, store sets), which is safe: they are immutable.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from taskassign.errors import TaskIdFormatError
from taskassign.formats._scenario_columns import read_task_columns
from taskassign.formats._scenario_fields import PARTITION_FIELDS, TASK_FIELDS, Field
from taskassign.ids import TaskId
from taskassign.model import (
    UNKNOWN_OFFSET_SUM,
    SortedFrozenSet,
    TaskInfo,
    TaskTopicPartition,
    new_task_info,
    task_builders,
)

__all__ = ("FastReader",)

LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)
_TASK_KEYS = frozenset(f.key for f in TASK_FIELDS)
_PARTITION_KEYS = frozenset(f.key for f in PARTITION_FIELDS)
#: What a field's check returns for a value the general reader must look at.
_BAD: Any = object()

#: A field as the fast reader runs it: key, default, check (the value, or _BAD).
_Compiled = tuple[str, Any, Callable[[Any], Any]]


def _int_check(f: Field) -> Callable[[Any], Any]:
    low = LONG_MIN if f.minimum is None else f.minimum
    high, allowed, nullable = f.maximum, f.allowed, f.nullable

    def check(value: Any) -> Any:
        if type(value) is int and (low <= value <= high or value in allowed):
            return value
        return None if value is None and nullable else _BAD
    return check


def _bool_check(value: Any) -> Any:
    return value if type(value) is bool else _BAD


def _string_check(value: Any) -> Any:
    return value if type(value) is str and value else _BAD


def _task_id_check(text: Any) -> Any:
    if type(text) is not str:
        return _BAD
    sub, underscore, part = text.partition("_")
    if underscore and 0 < len(sub) < 10 and 0 < len(part) < 10 and sub.isascii() and part.isascii() \
            and sub.isdigit() and part.isdigit():  # "<sub>_<part>" below 2^31: what the pattern accepts
        return TaskId(int(sub), int(part))
    try:
        return TaskId.parse(text)
    except TaskIdFormatError:
        return _BAD


def _partition_order(p: TaskTopicPartition) -> tuple[str, int]:
    return (p.topic, p.partition)


class FastReader:
    """Per-file caches: interned string sets and every task id by the text the file spells it with."""

    __slots__ = ("_new_partition", "_new_task", "_partition_fields", "_sets", "_task_fields", "task_by_text")

    def __init__(self) -> None:
        self._sets: dict[tuple[str, ...], SortedFrozenSet[str]] = {}
        #: Task ids as spelt in ``$.tasks[*].id``: a later spelling that matches is that task.
        self.task_by_text: dict[str, TaskId] = {}
        self._task_fields = self._compile(TASK_FIELDS, new_task_info)
        self._partition_fields = self._compile(PARTITION_FIELDS, TaskTopicPartition)
        # The values are checked and in their final form here: build without the dataclasses' __init__.
        self._new_partition, self._new_task = task_builders()

    def _compile(self, fields: tuple[Field, ...], build: Callable[..., Any]) -> tuple[_Compiled, ...]:
        """The fields in the order of ``build``'s parameters (the values are passed positionally)."""
        params = list(inspect.signature(build).parameters)
        order = sorted(fields, key=lambda f: params.index(f.arg))
        assert [f.arg for f in order] == params[:len(order)], f"{build.__name__}: fields {params[:len(order)]}"
        checks: dict[str, Callable[[Field], Callable[[Any], Any]]] = {
            "task_id": lambda f: _task_id_check,
            "string": lambda f: _string_check,
            "int": _int_check,
            "bool": lambda f: _bool_check,
            "string_set": self._string_set_check,
            "partitions": lambda f: self._partitions,
        }
        return tuple((f.key, f.default, checks[f.kind](f)) for f in order)

    def _string_set_check(self, f: Field) -> Callable[[Any], Any]:
        nullable, string_set = f.nullable, self._string_set

        def check(value: Any) -> Any:
            if value is None and nullable:
                return None
            found = string_set(value)
            return _BAD if found is None else found
        return check

    @staticmethod
    def _values(item: Any, keys: frozenset[str], fields: tuple[_Compiled, ...]) -> list[Any] | None:
        """The object's fields as positional arguments when every one is well formed, else None."""
        if type(item) is not dict or not item.keys() <= keys:
            return None
        values = []
        get = item.get
        for key, default, check in fields:
            value = check(get(key, default))  # REQUIRED fails every check
            if value is _BAD:
                return None
            values.append(value)
        return values

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

    def tasks(self, items: Any) -> dict[TaskId, TaskInfo] | None:
        """A whole well-formed tasks array at once (``_scenario_columns``), else None (read it task by task)."""
        found = read_task_columns(items, self._string_set, _task_id_check, _BAD)
        if found is None:
            return None
        tasks, by_text = found
        self.task_by_text.update(by_text)
        return tasks

    def task(self, item: Any) -> TaskInfo | None:
        """A well-formed task object as TaskInfo (duplicates and id styles are the caller's checks)."""
        values = self._values(item, _TASK_KEYS, self._task_fields)
        if values is None:
            return None
        task_id, stores, parts, end_offset_sum, state_bytes = values  # new_task_info's order (_compile)
        if len(parts) > 1:
            parts = tuple(sorted(parts, key=_partition_order))
        sources = tuple([p for p in parts if p.is_source])
        changelogs = tuple([p for p in parts if p.is_changelog])
        if end_offset_sum != 0 and not changelogs:  # the general reader names the field
            return None
        info = self._new_task(task_id, stores, parts, sources, changelogs, end_offset_sum, state_bytes)
        self.task_by_text.setdefault(item["id"], task_id)
        return info

    def _partitions(self, items: Any) -> Any:
        if type(items) is not list:
            return _BAD
        result = []
        seen = set()
        keys, fields, new_partition = _PARTITION_KEYS, self._partition_fields, self._new_partition
        for item in items:
            values = self._values(item, keys, fields)
            if values is None:
                return _BAD
            part = new_partition(*values)
            topic_partition = (part.topic, part.partition)
            if not (part.is_source or part.is_changelog) or topic_partition in seen:
                return _BAD
            seen.add(topic_partition)
            result.append(part)
        return tuple(result)

    def task_list(self, items: Any, tasks: Mapping[TaskId, TaskInfo]) -> set[TaskId] | None:
        """A list of distinct known task ids, else None."""
        if type(items) is not list:
            return None
        try:  # ``task_by_text`` holds the file's own spellings of its tasks' ids only: a hit is a known task
            ids: list[Any] = list(map(self.task_by_text.get, items))
        except TypeError:  # an unhashable item (a list or an object)
            return None
        if None in ids:
            return None
        result = set(ids)
        return result if len(result) == len(items) and result <= tasks.keys() else None

    def offset_sums(self, raw: Any, tasks: Mapping[TaskId, TaskInfo]) -> dict[TaskId, int] | None:
        """A client's ``task_offset_sums`` when every key is a known task with a changelog and every
        value a valid offset sum, else None."""
        if type(raw) is not dict:
            return None
        ids: list[Any] = list(map(self.task_by_text.get, raw))  # JSON object keys: always strings
        if None in ids or not all(tasks[t].has_changelog for t in ids):
            return None
        values = list(raw.values())
        if not all(type(v) is int and (0 <= v <= LONG_MAX or v in (-2, UNKNOWN_OFFSET_SUM)) for v in values):
            return None
        return dict(zip(ids, values, strict=True))
