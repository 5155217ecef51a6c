"""One application's rows, as the pipeline nests them, turned into the engine's Scenario.

The pipeline's buckets check, derive and merge the snapshot tables (fleet.bucket and fleet.derive: tasks
from the topology, end-offset sums, per-client merged reports and lags) and hand each application to
the engine as one nested record, ``AppInput`` below (plain dicts and lists). ``build_scenario`` turns that
record into the Scenario that ``taskassign assign`` would read from the application's exported scenario
file: ``parse_scenario(scenario_to_dict(built)) == built`` (tested), so the pipeline and the CLI run the
same engine call on the same input. It is written for speed (10^6 tasks per run): no JSON validation,
interned rack sets, task ids built from integers; anything still wrong raises UserInputError.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, repeat
from types import MappingProxyType
from typing import Any, NotRequired, TypedDict, TypeVar, cast

from taskassign.configs import KAFKA_COMPAT, KAFKA_VERSION, AssignmentConfigs
from taskassign.errors import ProcessIdFormatError, TaskassignError, UserInputError
from taskassign.fleet.tables import OWNERSHIP_ACTIVE, OWNERSHIP_STANDBY
from taskassign.formats.scenario import Scenario
from taskassign.ids import ProcessId, TaskId
from taskassign.internals.java_order import hash_iteration_order, leader_subtopology_walk
from taskassign.internals.string_hashes import java_string_hashes
from taskassign.model import (
    LATEST_OFFSET,
    UNKNOWN_OFFSET_SUM,
    ApplicationState,
    KafkaStreamsState,
    SortedFrozenSet,
    TaskInfo,
    TaskTopicPartition,
    compute_lag,
    new_client_state,
    task_builders,
    task_column_builders,
)

__all__ = (
    "AppInput",
    "BuiltApplication",
    "ClientInput",
    "ClientTaskColumns",
    "ClientTaskInput",
    "SubtopologyInput",
    "TopicInput",
    "build_scenario",
)


class TopicInput(TypedDict):
    """A topic the tasks of a subtopology read (source) or restore from (changelog), or both."""

    topic: str
    is_source: bool
    is_changelog: bool
    #: The topic's partition count as a source (a task p >= it does not read it); changelog-only: num_tasks.
    num_partitions: int
    #: Replica racks of partition p (index p < num_tasks), as a list or as the set the pipeline made once per
    #: distinct list (fleet.derive); None: unknown. The list itself may be None.
    racks: list[list[str] | SortedFrozenSet[str] | None] | None


class SubtopologyInput(TypedDict):
    """A subtopology's tasks 0..num_tasks-1, described column-wise (index = partition = task)."""

    subtopology: int
    num_tasks: int
    stores: list[str]
    topics: list[TopicInput]
    end_offset_sums: list[int] | None
    state_bytes: list[int | None] | None


class ClientTaskInput(TypedDict):
    subtopology: int
    partition: int
    #: 'active' or 'standby': what the client owned (merged over its consumers).
    ownership: str
    offset_sum: int | None
    lag: int | None
    consumers: list[str]


class ClientTaskColumns(TypedDict):
    """A client's reported tasks column-wise (index i = its i-th task, in TaskId order): what the pipeline's
    buckets hand over, one list per field instead of a dict per task (a fleet run reports 10^6 tasks)."""

    subtopologies: list[int]
    partitions: list[int]
    ownerships: list[str]
    offset_sums: list[int | None]
    lags: list[int | None]
    consumers: list[list[str]]


class ClientInput(TypedDict):
    process_id: str
    rack: str | None
    tags: list[tuple[str, str]] | None
    host: str | None
    consumers: list[str]
    #: The reported tasks one dict each (records written by hand); ``task_columns``, when given, wins.
    tasks: list[ClientTaskInput] | None
    task_columns: NotRequired[ClientTaskColumns | None]


class AppInput(TypedDict, total=False):
    app_id: str
    assignor: str | None
    configs: list[tuple[str, str]] | None
    now_ms: int | None
    leader_process_id: str | None
    end_offsets_known: bool
    subtopologies: list[SubtopologyInput]
    clients: list[ClientInput]
    source_rows: dict[str, int]


@dataclass(frozen=True, slots=True)
class BuiltApplication:
    """The Scenario of one application (room for more of what the pipeline knows about it)."""

    scenario: Scenario


def _arrival(rows: Sequence[ClientInput], clients: Mapping[ProcessId, object]) -> tuple[ProcessId, ...]:
    """The order the leader meets the clients: its subscriptions are a HashMap of member ids (put in the JoinGroup
    order, which a snapshot does not keep: sorted here, which differs only for member ids sharing a bucket)."""
    # (``clients`` was built from ``rows`` in order, one client per row: its keys are the rows' parsed ids)
    client_of = {m: pid for row, pid in zip(rows, clients, strict=True) for m in row["consumers"]}
    members = sorted(client_of)
    hashes = dict(zip(members, java_string_hashes(members), strict=True))  # (all at once: String.hashCode)
    met = dict.fromkeys(c for m in hash_iteration_order(members, hash_of=hashes.__getitem__)
                        if (c := client_of[m]) in clients)
    return (*met, *sorted(c for c in clients if c not in met))


def build_scenario(app: AppInput, *, kafka_compat: bool = False, kafka_version: str | None = None) -> BuiltApplication:
    """The Scenario of one nested application record; UserInputError when it cannot be one."""
    app_id = app["app_id"]
    if not app_id:
        raise UserInputError("application id is empty")
    props = dict(app.get("configs") or ())
    if kafka_compat:
        props[KAFKA_COMPAT] = "true"
    if kafka_version is not None:  # pipeline run --kafka-version: over the application's own kafka.version
        props[KAFKA_VERSION] = kafka_version
    configs = _configs(props)
    blocks = app.get("subtopologies") or ()
    tasks, index = _tasks(blocks)
    if not tasks:
        raise UserInputError(f"application {app_id!r} has no tasks (no usable subtopology)")
    if not app.get("clients"):
        raise UserInputError(f"application {app_id!r} has no members: a rebalance needs at least one")
    clients = _clients(app["clients"], tasks, index, configs)
    leader = None
    leader_text = app.get("leader_process_id")
    if leader_text is not None:
        leader = _pid(leader_text)
        if leader not in clients:
            raise UserInputError(f"leader_process_id {leader} is not a client of application {app_id!r}")
    # a fleet application is a real one: its leader walks the subtopologies in its own order (docs/kafka-versions.md)
    # (the tasks' subtopologies, read off the blocks they were made from: no pass over 10^3-10^5 tasks)
    walk = leader_subtopology_walk(sorted({(None, b["subtopology"]) for b in blocks if b["num_tasks"] > 0}))
    # (the tasks are in TaskId order already, and the end offset sums are the blocks': not sorted or derived again)
    end_sums = dict(chain.from_iterable(
        zip(ids, ends, strict=True) for ids, ends in index.values() if ends is not None))
    state = ApplicationState.of_ordered_tasks(
        tasks, end_sums, clients.values(), configs, app.get("now_ms") or 0, walk, _arrival(app["clients"], clients),
        clients_owned=True)  # (``_clients`` made them for this state alone)
    scenario = Scenario(
        name=app_id, state=state, raw_configs=MappingProxyType(configs.to_properties()), leader=leader
    )
    return BuiltApplication(scenario)


def _configs(props: dict[str, Any]) -> AssignmentConfigs:
    """``AssignmentConfigs.from_properties(props, coerce_strings=True)``, shared by the applications with the same
    text properties (a fleet's 10^3 applications have a few dozen distinct sets; the value is immutable)."""
    items = tuple(props.items())
    if all(type(k) is str and type(v) is str for k, v in items):  # (text only: 1, 1.0 and True are equal keys)
        return _shared_configs(items)
    return AssignmentConfigs.from_properties(props, coerce_strings=True)


@lru_cache(maxsize=256)
def _shared_configs(items: tuple[tuple[str, Any], ...]) -> AssignmentConfigs:
    return AssignmentConfigs.from_properties(dict(items), coerce_strings=True)


def _pid(text: str) -> ProcessId:
    try:
        return ProcessId(text)
    except ProcessIdFormatError as exc:
        raise UserInputError(str(exc)) from None


#: Per subtopology: its tasks' ids in partition order, and their changelog end offset sums when it has a
#: changelog (then every task of it has one), else None.
_Index = dict[int, tuple[list[TaskId], Sequence[int] | None]]
_NO_BLOCK: tuple[list[TaskId], None] = ([], None)
_PARTITION, _TASK_INFO = task_builders()
_RACK_TYPES = frozenset((SortedFrozenSet, type(None)))
_PARTITIONS, _TASK_INFOS = task_column_builders()
_T = TypeVar("_T")


def _tasks(blocks: Sequence[SubtopologyInput]) -> tuple[dict[TaskId, TaskInfo], _Index]:
    """Every task of every subtopology, and their index by subtopology: task p reads partition p of each source
    topic that has one and owns partition p of each changelog topic (Kafka's partition grouper and
    ``ChangelogTopics``).

    Built column-wise per subtopology: its topics sorted once (a task's partitions share its number, so
    topic order is (topic, partition) order), each topic's rack sets interned once, and the values made
    straight into their final form (``model.task_builders``)."""
    racks_cache: dict[tuple[str, ...], SortedFrozenSet[str]] = {}

    def rack_set(racks: list[str] | SortedFrozenSet[str] | None) -> SortedFrozenSet[str] | None:
        if racks is None or isinstance(racks, SortedFrozenSet):
            return racks
        key = tuple(racks)
        found = racks_cache.get(key)
        if found is None:
            found = racks_cache[key] = SortedFrozenSet(key)
        return found

    partition, task_info = _PARTITION, _TASK_INFO
    tasks: dict[TaskId, TaskInfo] = {}
    index: _Index = {}
    for block in sorted(blocks, key=lambda b: b["subtopology"]):
        sub, count = block["subtopology"], block["num_tasks"]
        stores: SortedFrozenSet[str] = SortedFrozenSet(block["stores"] or ())
        topics = sorted(block["topics"], key=lambda t: t["topic"])
        logged = any(t["is_changelog"] for t in topics)
        ends = block["end_offset_sums"] or ()
        sizes = block["state_bytes"] or ()
        if logged and len(ends) != count:
            raise UserInputError(f"subtopology {sub}: {len(ends)} end offset sums for {count} tasks")
        columns = []
        for t in topics:
            racks = t["racks"]
            given = racks[:count] if racks is not None else []
            # (the pipeline's are sets or None already: taken as they are)
            # (by exact type: isinstance of an abc.Set subclass runs Python code for every partition)
            column = cast(list[SortedFrozenSet[str] | None], given) if _RACK_TYPES.issuperset(
                map(type, given)) else [rack_set(r) for r in given]
            column += [None] * (count - len(column))
            columns.append((t["topic"], t["is_source"], t["is_changelog"], t["num_partitions"], column))
        if count and TaskId(sub, 0) in tasks:  # blocks in subtopology order: a repeated one collides at 0
            raise UserInputError(f"task {TaskId(sub, 0)} is listed twice")
        ids = _task_ids(sub, count)
        if count or sub not in index:  # (a repeated empty block makes no tasks: it leaves the index as it is)
            index[sub] = (ids, ends if logged else None)
        if all(not is_source or limit >= count for _, is_source, _, limit, _ in columns):
            _uniform_block(tasks, ids, stores, columns, ends if logged else None, sizes)
            continue
        for p in range(count):
            tid = ids[p]
            parts = []
            sources = []
            changelogs = []
            for topic, is_source, is_changelog, limit, column in columns:
                if is_source and p < limit:
                    made = partition(topic, p, True, is_changelog, column[p])
                    sources.append(made)
                    if is_changelog:
                        changelogs.append(made)
                elif is_changelog:
                    made = partition(topic, p, False, True, column[p])
                    changelogs.append(made)
                else:
                    continue
                parts.append(made)
            end = ends[p] if logged else 0
            if end != 0 and not changelogs:  # new_task_info's check (unreachable: a changelog topic is every task's)
                raise ValueError(f"task {tid} has a changelog end offset sum ({end}) but no changelog partition")
            tasks[tid] = task_info(tid, stores, tuple(parts), tuple(sources), tuple(changelogs), end,
                                   sizes[p] if p < len(sizes) else None)
    return tasks, index


_Column = tuple[str, bool, bool, int, list[SortedFrozenSet[str] | None]]


def _uniform_block(
    tasks: dict[TaskId, TaskInfo], ids: list[TaskId], stores: SortedFrozenSet[str], columns: Sequence[_Column],
    ends: Sequence[int] | None, sizes: Sequence[int | None],
) -> None:
    """The tasks of a subtopology whose source topics all have a partition per task (the usual case): every
    task then reads the same topics, so each topic's partitions are made in one pass and zipped into the
    tasks' tuples (the same values, in the same order, as the per-task loop of ``_tasks``), and the values are
    made a field at a time (``model.task_column_builders``)."""
    parts: list[list[TaskTopicPartition]] = []
    sources: list[list[TaskTopicPartition]] = []
    changelogs: list[list[TaskTopicPartition]] = []
    source_tps: list[Iterable[tuple[str, int]]] = []
    count = len(ids)
    for topic, is_source, is_changelog, _, column in columns:
        if not is_source and not is_changelog:
            continue
        made = _PARTITIONS(topic, 0, count, is_source, is_changelog, column)
        parts.append(made)
        if is_source:
            sources.append(made)
            source_tps.append(zip(repeat(topic, count), range(count), strict=True))
        if is_changelog:
            changelogs.append(made)
    sized = list(sizes[:count]) + [None] * (count - len(sizes))
    # a task's sources or changelogs are all its partitions when every topic is one: the same tuples, made once
    rows = _rows(parts, count)
    infos = _TASK_INFOS(ids, stores, rows, rows if len(sources) == len(parts) else _rows(sources, count),
                        rows if len(changelogs) == len(parts) else _rows(changelogs, count),
                        ends if ends is not None else [0] * count, sized, _rows(source_tps, count))
    tasks.update(zip(ids, infos, strict=True))


def _rows(columns: Sequence[Iterable[_T]], count: int) -> list[tuple[_T, ...]]:
    """Row p: the p-th item of each column, as a tuple (``count`` empty tuples without columns)."""
    return list(zip(*columns, strict=True)) if columns else [()] * count


#: TaskIds of subtopology s, partitions 0..n-1, made once per process and shared by every application (a
#: fleet's applications number their tasks alike); emptied past _IDS_LIMIT ids in all.
_IDS: dict[int, list[TaskId]] = {}
_IDS_LIMIT = 1 << 21


def _task_ids(sub: int, count: int) -> list[TaskId]:
    """``[TaskId(sub, p) for p in range(count)]``, from the shared ids (a list never changed once handed out:
    a subtopology's index holds it, and reads its length as its number of tasks)."""
    known = _IDS.get(sub) or []
    if len(known) < count:
        if sum(map(len, _IDS.values())) + count > _IDS_LIMIT:
            _IDS.clear()
            known = []
        # a new list: the ids made so far, then only the missing ones
        known = _IDS[sub] = known + [TaskId(sub, p) for p in range(len(known), count)]
    return known if len(known) == count else known[:count]


def _clients(
    rows: Sequence[ClientInput], tasks: Mapping[TaskId, TaskInfo], index: _Index, configs: AssignmentConfigs
) -> dict[ProcessId, KafkaStreamsState]:
    """Every client with its merged reports. The lag the pipeline's lag stage computed for each reported
    task must be the engine's own (``compute_lag``): a difference is a bug, never an input error."""
    clients: dict[ProcessId, KafkaStreamsState] = {}
    for row in rows:
        pid = _pid(row["process_id"])
        if pid in clients:
            raise UserInputError(f"client {pid} is listed twice")
        consumers = tuple(row["consumers"])
        if not consumers:
            raise UserInputError(f"client {pid} has no consumers")
        tags = dict(row["tags"] or ())
        for key in configs.rack_aware_assignment_tags:
            if key not in tags:
                raise UserInputError(f"client {pid} has no tag {key!r} (rack.aware.assignment.tags)")
        active: list[TaskId] = []
        standby: list[TaskId] = []
        offsets: dict[TaskId, int] = {}
        by_consumer: dict[str, list[TaskId]] = {}
        # The pipeline's records list a client's tasks in TaskId order, once each: then the sets and maps
        # below are built in order, not sorted again (a tenth of building a scenario).
        ordered, last = True, None
        columns = row.get("task_columns") or _columns(row["tasks"] or ())
        for sub, part, ownership, offset, lag, reporters in zip(
                columns["subtopologies"], columns["partitions"], columns["ownerships"], columns["offset_sums"],
                columns["lags"], columns["consumers"], strict=True):
            # the task by its subtopology's ids (no tuple made and hashed per report)
            ids, ends = index.get(sub, _NO_BLOCK)
            try:
                tid = ids[part] if part >= 0 else None
            except IndexError:
                tid = None
            except TypeError:  # a partition that is no int: as the task map's key would take it
                info = tasks.get((None, sub, part))  # type: ignore[call-overload]  # a TaskId's tuple
                tid = None if info is None else info.id
                part = part if tid is None else tid.partition
            if tid is None:
                raise UserInputError(f"client {pid} reports unknown task {TaskId(sub, part)}")
            if ordered:
                ordered, last = last is None or last < tid, tid
            if ownership == OWNERSHIP_ACTIVE:
                active.append(tid)
            elif ownership == OWNERSHIP_STANDBY and offset != LATEST_OFFSET:
                standby.append(tid)
            else:
                raise UserInputError(f"client {pid}: task {tid} has ownership {ownership!r} "
                                     f"and offset sum {offset}")
            if offset is not None:
                if ends is None:
                    raise UserInputError(f"client {pid} reports an offset sum for task {tid}, which has no changelog")
                if offset < 0 and offset not in (LATEST_OFFSET, UNKNOWN_OFFSET_SUM):
                    raise UserInputError(f"client {pid}: offset sum {offset} of task {tid} is invalid")
                offsets[tid] = offset
                expected = compute_lag(ends[part], offset)
                if lag != expected:
                    raise TaskassignError(f"client {pid}, task {tid}: the pipeline's lag {lag} differs from "
                                          f"the engine's {expected}")
            for consumer in reporters:
                held = by_consumer.get(consumer)
                if held is None:
                    by_consumer[consumer] = [tid]
                else:
                    held.append(tid)
        unknown = sorted(set(by_consumer) - set(consumers))
        if unknown:
            raise UserInputError(f"client {pid}: tasks reported by {unknown[0]!r}, which is not one of its consumers")
        # every field in its final form (sorted, read-only), as KafkaStreamsState's __post_init__ would leave it
        clients[pid] = new_client_state(
            pid, tuple(sorted(consumers)), _task_set(active, ordered), _task_set(standby, ordered),
            MappingProxyType(offsets if ordered else dict(sorted(offsets.items()))), row["host"],
            MappingProxyType(dict(sorted(tags.items()))), row["rack"],
            MappingProxyType({c: _task_set(ts, ordered) for c, ts in sorted(by_consumer.items())}))
    return clients


def _columns(tasks: Iterable[ClientTaskInput]) -> ClientTaskColumns:
    """Reported tasks given one dict each, as columns."""
    listed = list(tasks)
    return ClientTaskColumns(
        subtopologies=[t["subtopology"] for t in listed], partitions=[t["partition"] for t in listed],
        ownerships=[t["ownership"] for t in listed], offset_sums=[t["offset_sum"] for t in listed],
        lags=[t["lag"] for t in listed], consumers=[t["consumers"] for t in listed])


def _task_set(tasks: list[TaskId], ordered: bool) -> SortedFrozenSet[TaskId]:
    """``tasks`` as a set; ``ordered``: they are already in order and distinct (not sorted again)."""
    return SortedFrozenSet.from_sorted_unique(tuple(tasks)) if ordered else SortedFrozenSet(tasks)
