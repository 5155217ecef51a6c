"""The whole ``$.tasks`` array of a well-formed scenario read a field at a time, not a task at a time.

Object by object (``_scenario_fast.FastReader.task``), a 10^5-task file costs a Python call per value,
~14 us a task: a fifth of ``taskassign assign`` on it (docs/performance.md). Here each field of every task
(and of every partition) is gathered into one list and checked by one comprehension, and the objects are
built a field at a time without their dataclasses' ``__init__`` (``model.partitions_from_columns``,
``model.task_column_builders``). Anything this path is not sure of
(a malformed value, a key it does not know, a duplicate id, a partition two tasks name) makes it give up on
the whole array: the caller then reads it object by object, which names the problem as before.
The fields, their kinds and bounds come from ``_scenario_fields``, like both other readers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from taskassign.formats._scenario_fields import PARTITION_FIELDS, TASK_FIELDS, Field
from taskassign.ids import TaskId
from taskassign.model import (
    SortedFrozenSet,
    TaskInfo,
    TaskTopicPartition,
    partitions_from_columns,
    task_column_builders,
)

__all__ = ("read_task_columns",)

#: A column's values, checked and in their final form; None when one of them is not well formed.
_ColumnCheck = Callable[[list[Any]], list[Any] | None]
_StringSet = Callable[[Any], SortedFrozenSet[str] | None]
_TaskId = Callable[[Any], Any]

_TASK_INFOS = task_column_builders()[1]
_TASK_KEYS = frozenset(f.key for f in TASK_FIELDS)
_PARTITION_KEYS = frozenset(f.key for f in PARTITION_FIELDS)
_TASK_ORDER = ("task_id", "stores", "partitions", "changelog_end_offset_sum", "state_bytes")  # new_task_info's
_PARTITION_ORDER = ("topic", "partition", "is_source", "is_changelog", "rack_ids")  # TaskTopicPartition's
assert {f.arg for f in TASK_FIELDS} == set(_TASK_ORDER), "a new task field: add it to _TASK_ORDER and the builder"
assert {f.arg for f in PARTITION_FIELDS} == set(_PARTITION_ORDER), "a new partition field: add it here too"


def _column_check(f: Field, string_set: _StringSet, task_id: _TaskId, bad: Any) -> _ColumnCheck:
    """One field's check over a whole column (the same rules as ``_scenario_fast``'s per-value checks)."""
    kind, nullable = f.kind, f.nullable
    if kind == "task_id":
        def task_ids(values: list[Any]) -> list[Any] | None:
            ids = [task_id(v) for v in values]
            return None if any(i is bad for i in ids) else ids
        return task_ids
    if kind == "string":
        return lambda values: values if all(type(v) is str and v != "" for v in values) else None
    if kind == "bool":
        return lambda values: values if all(type(v) is bool for v in values) else None
    if kind == "int":
        low = -(2**63) if f.minimum is None else f.minimum
        high, allowed = f.maximum, f.allowed

        def ints(values: list[Any]) -> list[Any] | None:
            ok = all((type(v) is int and (low <= v <= high or v in allowed)) or (v is None and nullable)
                     for v in values)
            return values if ok else None
        return ints
    if kind == "string_set":
        def string_sets(values: list[Any]) -> list[Any] | None:
            sets = [string_set(v) for v in values]
            return sets if all(s is not None for s in sets) else None

        def nullable_string_sets(values: list[Any]) -> list[Any] | None:
            sets = [None if v is None else string_set(v) for v in values]
            return sets if all(s is not None or v is None for s, v in zip(sets, values, strict=True)) else None
        return nullable_string_sets if nullable else string_sets
    if kind == "partitions":  # the lists only: their objects are read as columns of their own
        return lambda values: values if all(type(v) is list for v in values) else None
    raise AssertionError(f"field {f.key!r}: unknown kind {kind!r}")


def _columns(objects: list[Any], keys: frozenset[str], fields: tuple[tuple[Field, _ColumnCheck], ...],
             ) -> dict[str, list[Any]] | None:
    """Every field of ``objects`` as a checked column, by its ``arg``; None if anything is off."""
    if not all(type(o) is dict and o.keys() <= keys for o in objects):
        return None
    columns: dict[str, list[Any]] = {}
    for f, check in fields:
        key, default = f.key, f.default
        column = check([o.get(key, default) for o in objects])  # REQUIRED fails every check
        if column is None:
            return None
        columns[f.arg] = column
    return columns


def _partition_order(p: TaskTopicPartition) -> tuple[str, int]:
    return (p.topic, p.partition)


_Partitions = tuple[TaskTopicPartition, ...]


def _both(own: _Partitions, first: bool, second: bool) -> _Partitions:
    """Those of a task's two partitions ``own`` that are of a kind (the flags say which are)."""
    return own if first and second else own[:1] if first else own[1:] if second else ()


def _split(made: list[TaskTopicPartition], at: int, count: int) -> tuple[_Partitions, _Partitions, _Partitions]:
    """A task's partitions ``made[at:at + count]`` in (topic, partition) order, then its source and its
    changelog partitions in that order (a task has one or two partitions almost always: those without a sort)."""
    if count == 1:
        p = made[at]
        own: _Partitions = (p,)
        return own, own if p.is_source else (), own if p.is_changelog else ()
    if count == 2:
        p, q = made[at], made[at + 1]
        if (q.topic, q.partition) < (p.topic, p.partition):
            p, q = q, p
        own = (p, q)
        return own, _both(own, p.is_source, q.is_source), _both(own, p.is_changelog, q.is_changelog)
    own = tuple(sorted(made[at:at + count], key=_partition_order))
    return own, tuple([p for p in own if p.is_source]), tuple([p for p in own if p.is_changelog])


def read_task_columns(
    items: Any, string_set: _StringSet, task_id: _TaskId, bad: Any,
) -> tuple[dict[TaskId, TaskInfo], dict[str, TaskId]] | None:
    """``(tasks by id in file order, task id by its spelling in the file)`` for a well-formed tasks array,
    else None. ``string_set``, ``task_id`` and ``bad`` are ``FastReader``'s value checks (shared sets)."""
    if type(items) is not list:
        return None
    task_fields = tuple((f, _column_check(f, string_set, task_id, bad)) for f in TASK_FIELDS)
    partition_fields = tuple((f, _column_check(f, string_set, task_id, bad)) for f in PARTITION_FIELDS)
    tasks = _columns(items, _TASK_KEYS, task_fields)
    if tasks is None:
        return None
    ids: list[TaskId] = tasks["task_id"]
    if len(set(ids)) != len(ids) or len({tid.topology_name is None for tid in ids}) > 1:
        return None  # a duplicate id, or named and plain ids mixed
    lists: list[list[Any]] = tasks["partitions"]
    flat = [p for parts in lists for p in parts]
    found = _columns(flat, _PARTITION_KEYS, partition_fields)
    if found is None:
        return None
    topics, numbers, sources, changelogs = (found[a] for a in _PARTITION_ORDER[:4])
    if not all(s or c for s, c in zip(sources, changelogs, strict=True)):
        return None  # a partition neither source nor changelog
    if len(set(zip(topics, numbers, strict=True))) != len(flat):
        return None  # a partition listed twice, in one task or in two
    made = partitions_from_columns(*(found[a] for a in _PARTITION_ORDER))
    owns, task_sources, task_changelogs = [], [], []
    at = 0
    for parts, end_offset_sum in zip(lists, tasks["changelog_end_offset_sum"], strict=True):
        own, sources_here, changelogs_here = _split(made, at, len(parts))
        at += len(parts)
        if end_offset_sum != 0 and not changelogs_here:
            return None  # an end offset sum without a changelog partition
        owns.append(own)
        task_sources.append(sources_here)
        task_changelogs.append(changelogs_here)
    source_tps = [tuple([(p.topic, p.partition) for p in here]) for here in task_sources]
    infos = _TASK_INFOS(ids, tasks["stores"], owns, task_sources, task_changelogs, tasks["changelog_end_offset_sum"],
                        tasks["state_bytes"], source_tps)
    result: dict[TaskId, TaskInfo] = dict(zip(ids, infos, strict=True))
    by_text = dict(zip([item["id"] for item in items], ids, strict=True))
    return result, by_text

