"""From one bucket's checked rows to what the engine needs, per application (the Kafka step each follows in brackets):

* ``topic_counts``, ``resolve_topologies``: the topics in the metadata, repartition topics sized,
  co-partitioning enforced, each subtopology's task count [``RepartitionTopics#setup``];
* ``subtopology_blocks``: Kafka's partition grouper, the topics each subtopology's tasks read or restore
  from [``PartitionGrouper``, ``ChangelogTopics``]; ``partition_references`` and ``check_partition_references`` (unused
  partitions, changelog partitions without an end offset);
* ``task_metadata``: per task, replica racks per topic, the changelog end-offset sum (committed offsets
  for source-changelog topics, 0 for a changelog not yet created, Long.MAX_VALUE on overflow) and state
  size; an unknown end makes every end of the application -3 [the leader's end-offset fetch and its failure path];
* ``check_member_references`` and ``client_inputs``: members' reports merged per client, as Kafka's
  leader merges them, with each reported task's lag [``ClientState#initializePrevTasks``, ``#computeTaskLags``].

The large tables stay columnar (pyarrow, numpy); Python objects are built once, in the shapes
fleet.build reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from taskassign.fleet import reasons as R
from taskassign.fleet.build import ClientInput, ClientTaskColumns, SubtopologyInput, TopicInput
from taskassign.fleet.checks import AppStatus
from taskassign.fleet.codes import Codes, TableCodes, dense_ids, first_rows, group_ids, pair_keys, sort_order
from taskassign.fleet.marks import Marks, Row
from taskassign.fleet.tables import OWNERSHIP_ACTIVE, OWNERSHIP_STANDBY
from taskassign.internals.lags import compute_lags
from taskassign.leader.partition_grouper import ResolvedTopology, SubtopologySpec, TopologyError, resolve_topology
from taskassign.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM, SortedFrozenSet

__all__ = (
    "MEMBER_COLUMNS",
    "Block",
    "TaskMetadata",
    "check_member_references",
    "check_partition_references",
    "client_inputs",
    "partition_references",
    "resolve_topologies",
    "subtopology_blocks",
    "task_metadata",
    "topic_counts",
)

LONG_MAX = 2**63 - 1
_SEP = "\x1f"
IntArray = npt.NDArray[np.int64]


def _encoded(key: pa.ChunkedArray) -> tuple[npt.NDArray[np.int64], list[Any]]:
    """Dictionary codes of a column (-1 for null) and its distinct values."""
    encoded = pc.dictionary_encode(key.combine_chunks() if isinstance(key, pa.ChunkedArray) else key)
    codes = np.asarray(pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
    return codes, encoded.dictionary.to_pylist()


# -- topology ---------------------------------------------------------------------------------------------------

def topic_counts(
    partitions: pa.Table, usable: npt.NDArray[np.bool_], codes: TableCodes | None = None
) -> dict[str, dict[str, int]]:
    """Per application, each topic present in the metadata with its highest partition + 1 (in the order
    the topics first appear). ``usable`` rows have their app_id, topic and partition."""
    codes = codes if codes is not None else TableCodes(partitions)
    every, keys = codes.pairs("app_id", "topic")
    ids = every[usable]
    partition, _ = codes.integers("partition")
    tops = np.full(len(keys), -1, dtype=np.int64)
    known = ids[ids >= 0]
    np.maximum.at(tops, known, partition[usable][ids >= 0])
    first = np.full(len(keys), -1, dtype=np.int64)  # each pair's first usable row (-1: none)
    first[known[::-1]] = np.arange(len(known) - 1, -1, -1, dtype=np.int64)
    present = np.flatnonzero(first >= 0)
    counts: dict[str, dict[str, int]] = {}
    for pair in present[np.argsort(first[present], kind="stable")].tolist():
        app, topic = keys[pair]
        counts.setdefault(app, {})[topic] = int(tops[pair]) + 1
    return counts


def resolve_topologies(
    subtopologies: Sequence[Row], counts: Mapping[str, Mapping[str, int]],
    repartition: Sequence[Row], status: Mapping[str, AppStatus],
) -> tuple[dict[str, ResolvedTopology], dict[str, tuple[str, str]]]:
    """Every application with usable subtopologies resolved, or its error (code, reason).
    ``subtopologies`` and ``repartition`` are the usable rows."""
    subs: dict[str, list[SubtopologySpec]] = {}
    for r in subtopologies:
        subs.setdefault(r["app_id"], []).append(SubtopologySpec(
            r["subtopology"], tuple(r["source_topics"]), tuple(r["sink_topics"] or ()),
            tuple(tuple(g) for g in r["copartition_groups"] or ())))
    topics: dict[str, dict[str, int | None]] = {}
    for r in repartition:
        topics.setdefault(r["app_id"], {})[r["topic"]] = r["num_partitions"]
    resolved, errors = {}, {}
    for app_id in sorted(subs):
        try:
            resolved[app_id] = resolve_topology(subs[app_id], counts.get(app_id, {}), topics.get(app_id, {}),
                                                kafka_compat=status[app_id].kafka_compat)
        except TopologyError as exc:
            errors[app_id] = (exc.code, str(exc))
    return resolved, errors


@dataclass(frozen=True, slots=True)
class Block:
    """A subtopology's tasks 0..num_tasks-1 and every topic they read (source) or restore from
    (changelog): (topic, is_source, is_changelog, num_partitions), sorted by topic."""

    subtopology: int
    num_tasks: int
    stores: tuple[str, ...]
    topics: tuple[tuple[str, bool, bool, int], ...]

    @property
    def logged(self) -> bool:
        return any(t[2] for t in self.topics)


def subtopology_blocks(resolved: ResolvedTopology, subtopologies: Sequence[Row]) -> list[Block]:
    """Kafka's partition grouper: a source topic gives task p its partition p while the topic has one; a
    changelog topic gives every task its partition p. A source-changelog topic is one entry with both
    flags; ``subtopologies`` are the application's usable rows."""
    rows = {r["subtopology"]: r for r in subtopologies}
    blocks = []
    for sub in resolved.subtopologies:
        row = rows[sub.id]
        changelogs = list(dict.fromkeys(row["changelog_topics"] or ()))
        counts = sub.source_partition_counts
        topics = [(t, True, t in changelogs, n) for t, n in counts.items()]
        topics += [(t, False, True, sub.num_tasks) for t in changelogs if t not in counts]
        blocks.append(Block(sub.id, sub.num_tasks, tuple(row["stores"] or ()), tuple(sorted(topics))))
    return blocks


# -- partitions and end offsets ---------------------------------------------------------------------------------

def partition_references(blocks: Mapping[str, Sequence[Block]]) -> dict[tuple[str, str], tuple[int, bool]]:
    """(app_id, topic) -> (limit, needs_end_offset): tasks use partitions below ``limit``; changelog topics
    that are not source-changelog topics need an end offset (a source-changelog's is the committed one)."""
    refs: dict[tuple[str, str], tuple[int, bool]] = {}
    for app_id, app_blocks in blocks.items():
        for block in app_blocks:
            for topic, is_source, is_changelog, partitions in block.topics:
                limit = block.num_tasks if is_changelog else partitions
                before = refs.get((app_id, topic), (0, False))
                refs[app_id, topic] = (max(before[0], limit), before[1] or (is_changelog and not is_source))
    return refs


def check_partition_references(
    partitions: pa.Table, marks: Marks, refs: Mapping[tuple[str, str], tuple[int, bool]],
    table_codes: TableCodes | None = None,
) -> None:
    """Partitions no task reads or restores from are unused; a changelog partition without its end offset
    cannot be used (its application's lags become unknown, as when Kafka's leader cannot fetch them)."""
    table_codes = table_codes if table_codes is not None else TableCodes(partitions)
    codes, keys = table_codes.pairs("app_id", "topic")
    per_key = [refs.get(k, (-1, False)) for k in keys]
    limits = np.array([r[0] for r in per_key] + [-1], dtype=np.int64)[codes]
    needs = np.array([r[1] for r in per_key] + [False], dtype=np.bool_)[codes]
    partition, valid = table_codes.integers("partition")
    marks.reject((limits < 0) | (partition >= limits) | ~valid, R.UNREFERENCED_TOPIC,
                 lambda i, r: f"no task of application {r['app_id']} reads or restores from {r['topic']}-"
                              f"{r['partition']}")
    _, has_end = table_codes.integers("end_offset")
    marks.reject(needs & ~has_end, R.MISSING_END_OFFSET,
                 lambda i, r: f"changelog partition {r['topic']}-{r['partition']} has no end_offset; every lag of "
                              f"application {r['app_id']} becomes unknown (-3)")


@dataclass(frozen=True)
class TaskMetadata:
    """An application's subtopologies as fleet.build reads them, and whether every end offset is known;
    ``end_offset_arrays``: each subtopology's ``end_offset_sums`` as an array (what lags are computed from)."""

    subtopologies: list[SubtopologyInput]
    end_offsets_known: bool
    end_offset_arrays: dict[int, IntArray] = field(default_factory=dict)


class _PartitionIndex:
    """The usable partition rows (``rows`` of ``partitions``, None: all; they have their app_id, topic and
    partition) laid out per (app, topic) by partition: one slot per partition below the topic's highest, the
    row's position in it (-1: no row). No sort: each row goes straight to its slot."""

    def __init__(self, partitions: pa.Table, codes: TableCodes, rows: npt.NDArray[np.bool_] | None) -> None:
        at = np.flatnonzero(rows) if rows is not None else np.arange(partitions.num_rows)
        partition, _ = codes.integers("partition")
        every, keys = codes.pairs("app_id", "topic")  # pairs without a row here get no slots
        pairs = every[at]
        parts = partition[at]
        placed = (pairs >= 0) & (parts >= 0)
        pairs, parts, at = pairs[placed], parts[placed], at[placed]
        widths = np.zeros(len(keys), dtype=np.int64)
        np.maximum.at(widths, pairs, parts + 1)
        starts = np.cumsum(widths) - widths
        self.slots = np.full(int(widths.sum()), -1, dtype=np.int64)
        self.slots[starts[pairs] + parts] = at
        self.slices = dict(zip(keys, zip(starts.tolist(), widths.tolist(), strict=True), strict=True))
        self.end, self.has_end = codes.integers("end_offset")
        self.committed = codes.integers("committed_offset")[0]
        self.size, self.has_size = codes.integers("size_bytes")
        # One set per distinct rack set of the bucket (fleet.build takes them as they are), None for no row.
        self.rack_code, self.rack_values = _rack_sets(partitions.column("replica_racks"), codes)

    def positions(self, entries: Sequence[tuple[str, str, int]]) -> tuple[IntArray, IntArray]:
        """For every (app_id, topic, num_tasks) entry, the row of partition p of the topic for each of its tasks p
        (-1: no row), all entries' tasks in one array (entry after entry), and where each entry starts in it."""
        counts = np.array([e[2] for e in entries], dtype=np.int64)
        spans = [self.slices.get((a, t), (0, 0)) for a, t, _ in entries]
        starts = np.array([s[0] for s in spans], dtype=np.int64)
        limits = np.minimum(np.array([s[1] for s in spans], dtype=np.int64), counts)
        offsets = np.cumsum(counts) - counts
        owner = np.repeat(np.arange(len(entries)), counts)
        task = np.arange(int(counts.sum()), dtype=np.int64) - offsets[owner]
        found = np.full(len(task), -1, dtype=np.int64)
        present = task < limits[owner]
        found[present] = self.slots[starts[owner[present]] + task[present]]
        return found, offsets

    def racks(self, positions: IntArray) -> list[list[str] | SortedFrozenSet[str] | None]:
        codes = _at(self.rack_code, positions, -1)
        return list(map(self.rack_values.__getitem__, codes.tolist()))  # -1 (no rack list): the None at the end


#: Rack sets are bit masks of the bucket's rack names while there are at most this many.
_RACK_BITS = 62


def _rack_sets(racks: pa.ChunkedArray, codes: TableCodes) -> tuple[IntArray, list[SortedFrozenSet[str] | None]]:
    """Each row's replica racks as a position in a list of the distinct rack sets, whose last entry is None
    (no list): from the items' codes (``TableCodes.flat``), each row's set a bit mask of them, each distinct
    mask made into a set once. Rows with a null or empty rack name (rejected rows: never looked up) and more
    than ``_RACK_BITS`` names take ``_joined_rack_sets``."""
    items, parents = codes.flat("replica_racks")
    names = items.values
    if len(names) > _RACK_BITS or not items.valid.all() or any(not n or _SEP in n for n in names):
        return _joined_rack_sets(racks)
    masks = np.zeros(len(racks), dtype=np.int64)
    if len(parents):
        starts = np.flatnonzero(np.append(True, parents[1:] != parents[:-1]))
        masks[parents[starts]] = np.bitwise_or.reduceat(np.left_shift(np.int64(1), items.codes), starts)
    ids, distinct = dense_ids(masks, 1 << len(names))
    ids[np.asarray(pc.is_null(racks).to_numpy(zero_copy_only=False), dtype=np.bool_)] = -1
    values: list[SortedFrozenSet[str] | None] = [
        SortedFrozenSet.from_sorted_unique(tuple(n for j, n in enumerate(names) if mask >> j & 1))
        for mask in distinct.tolist()]
    return ids, [*values, None]


def _joined_rack_sets(racks: pa.ChunkedArray) -> tuple[IntArray, list[SortedFrozenSet[str] | None]]:
    """``_rack_sets`` by each row's rack names joined into one text (any names)."""
    rack_codes, rack_texts = _encoded(pc.binary_join(racks, _SEP))
    values: list[SortedFrozenSet[str] | None] = [SortedFrozenSet(text.split(_SEP) if text else ())
                                                 for text in rack_texts]
    return rack_codes, [*values, None]


def _at(values: npt.NDArray[Any], positions: npt.NDArray[np.int64], fill: Any) -> npt.NDArray[Any]:
    """``values[p]`` for every position, ``fill`` where the position is -1."""
    found = np.full(len(positions), fill, dtype=values.dtype)
    present = positions >= 0
    found[present] = values[positions[present]]
    return found


def _saturating_add(total: IntArray, values: IntArray) -> IntArray:
    over = total > LONG_MAX - values
    return np.where(over, LONG_MAX, total + np.where(over, 0, values))


def task_metadata(
    partitions: pa.Table, blocks: Mapping[str, Sequence[Block]], counts: Mapping[str, Mapping[str, int]],
    codes: TableCodes | None = None, rows: npt.NDArray[np.bool_] | None = None,
) -> dict[str, TaskMetadata]:
    """Per application, each subtopology's tasks with racks, end-offset sums and state sizes.
    ``partitions`` (their ``rows``, None: all) are the usable rows; ``counts`` the topics present in the
    metadata (before the reference checks: a topic that exists ends where its metadata says, else at 0).
    Every topic of every subtopology of the bucket is looked up at once (one array of all their tasks'
    partition rows, one list of all their racks), then cut per topic."""
    index = _PartitionIndex(partitions, codes if codes is not None else TableCodes(partitions), rows)
    entries = [(app_id, topic, block.num_tasks) for app_id, app_blocks in blocks.items() for block in app_blocks
               for topic, *_ in block.topics]
    at, offsets_array = index.positions(entries)
    offsets = offsets_array.tolist()
    racks = index.racks(at)
    committed, end, has_end = _at(index.committed, at, 0), _at(index.end, at, 0), _at(index.has_end, at, False)
    size, has_size = _at(index.size, at, 0), _at(index.has_size, at, False)
    result = {}
    entry = 0
    for app_id, app_blocks in blocks.items():
        subtopologies: list[SubtopologyInput] = []
        arrays: dict[int, IntArray] = {}
        known = True
        existing = counts.get(app_id, {})
        for block in app_blocks:
            n = block.num_tasks
            topics: list[TopicInput] = []
            ends = np.zeros(n, dtype=np.int64)
            sizes: IntArray | None = None
            sized = np.ones(n, dtype=np.bool_)
            for topic, is_source, is_changelog, num_partitions in block.topics:
                first = offsets[entry]
                entry += 1
                tasks = slice(first, first + n)
                topics.append(TopicInput(topic=topic, is_source=is_source, is_changelog=is_changelog,
                                         num_partitions=num_partitions, racks=racks[tasks]))
                if not is_changelog:
                    continue
                if is_source:
                    part = committed[tasks]
                elif topic not in existing:
                    part = np.zeros(n, dtype=np.int64)
                else:
                    known = known and bool(has_end[tasks].all())
                    part = end[tasks]
                ends = _saturating_add(ends, part)
                sizes = size[tasks] if sizes is None else _saturating_add(sizes, size[tasks])
                sized &= has_size[tasks]
            state: list[int | None] | None = None
            if sizes is not None:
                values = sizes.astype(object)
                values[~sized] = None
                state = values.tolist()
            subtopologies.append(SubtopologyInput(subtopology=block.subtopology, num_tasks=n,
                                                  stores=list(block.stores), topics=topics,
                                                  end_offset_sums=ends.tolist(), state_bytes=state))
            arrays[block.subtopology] = ends
        if not known:
            for sub, block in zip(subtopologies, app_blocks, strict=True):
                if block.logged:
                    sub["end_offset_sums"] = [UNKNOWN_OFFSET_SUM] * block.num_tasks
                    arrays[block.subtopology] = np.full(block.num_tasks, UNKNOWN_OFFSET_SUM, dtype=np.int64)
        result[app_id] = TaskMetadata(subtopologies, known, arrays)
    return result


# -- members' reports -------------------------------------------------------------------------------------------

class MemberInfo(NamedTuple):
    """A usable member as its reports need it (a tuple: one per member of the bucket, made fast)."""

    process_id: str
    has_subscription: bool


def check_member_references(
    reports: pa.Table, marks: Marks, members: Mapping[tuple[str, str], MemberInfo],
    blocks: Mapping[str, Sequence[Block]], table_codes: TableCodes | None = None,
) -> npt.NDArray[np.object_]:
    """Reports must name a usable member and a task of the application; offset sums only for tasks with a
    changelog, and only from subscription_info when the member sent it. Returns each row's member's
    process id (None: no usable member)."""
    table_codes = table_codes if table_codes is not None else TableCodes(reports)
    codes, keys = pair_keys(table_codes["app_id"], table_codes["consumer_id"])
    found = [members.get(k) for k in keys]
    known = np.array([m is not None for m in found] + [False], dtype=np.bool_)[codes]
    process_ids = np.array([m.process_id if m is not None else None for m in found] + [None], dtype=object)[codes]
    has_subscription = np.array([m is not None and m.has_subscription for m in found] + [False])[codes]
    tasks = {(a, b.subtopology): (b.num_tasks, b.logged) for a, bs in blocks.items() for b in bs}
    sub_codes, sub_keys = pair_keys(table_codes["app_id"], table_codes["subtopology"])
    per_sub = [tasks.get(k, (-1, False)) for k in sub_keys]
    num_tasks = np.array([t[0] for t in per_sub] + [-1], dtype=np.int64)[sub_codes]
    logged = np.array([t[1] for t in per_sub] + [False], dtype=np.bool_)[sub_codes]
    partition, _ = table_codes.integers("partition", -1)
    _, has_offset = table_codes.integers("offset_sum")
    from_subscription = np.asarray(reports.column("_from_subscription").to_numpy(zero_copy_only=False), np.bool_)
    marks.reject(~known, R.UNKNOWN_MEMBER,
                 lambda i, r: f"consumer {r['consumer_id']} is not a usable member of application {r['app_id']}")
    marks.reject((num_tasks < 0) | (partition >= num_tasks), R.UNKNOWN_TASK,
                 lambda i, r: f"application {r['app_id']} has no task {r['task_id']}")
    marks.reject(has_offset & ~logged, R.BAD_VALUE,
                 lambda i, r: f"task {r['task_id']} has no changelog, so it has no offset sum")
    marks.reject(has_offset & has_subscription & ~from_subscription, R.BAD_VALUE,
                 lambda i, r: f"consumer {r['consumer_id']} reports its offset sums in subscription_info; its "
                              "member_tasks rows may only give ownership")
    return process_ids


#: The usable members' columns the bucket hands ``client_inputs`` (one list per column, a value per member;
#: ``_has_subscription`` is for ``check_member_references``' MemberInfo).
MEMBER_COLUMNS = ("app_id", "consumer_id", "process_id", "rack", "client_tags", "host", "_has_subscription")


def client_inputs(
    members: Mapping[str, Sequence[Any]], reports: pa.Table, process_ids: npt.NDArray[np.object_],
    ends: Mapping[str, Mapping[int, Sequence[int] | IntArray]], table_codes: TableCodes | None = None,
    rows: npt.NDArray[np.bool_] | None = None,
) -> dict[str, list[ClientInput]]:
    """Per application, its clients (usable ``members``, column-wise, grouped by process id; rack, tags and
    host of the first member by consumer id) with their merged reports. Merging follows Kafka's leader: a task is a
    previous active if a member owned it as active or reported -2 (running), else a previous standby; the
    offset sum of the client's last consumer (in consumer-id order) that reported one wins. ``reports``
    (their ``rows``, None: all) are the usable rows with their members' ``process_ids`` (one per row of
    ``reports``: check_member_references), ``ends`` each subtopology's end-offset sums per application."""
    table_codes = table_codes if table_codes is not None else TableCodes(reports)
    at = np.flatnonzero(rows) if rows is not None else np.arange(reports.num_rows)
    app_all, consumer_all = table_codes["app_id"].codes[at], table_codes["consumer_id"].codes[at]
    app_values, consumers = table_codes["app_id"].values, table_codes["consumer_id"].take(at)
    # A row's process id is its member's: encoded once per (app_id, consumer_id), not per row.
    member = group_ids(app_all, consumer_all)
    first_row = first_rows(member, int(member.max()) + 1 if len(member) else 0)
    member_pids = Codes.of(pa.array(process_ids[at[first_row]], pa.string()))
    pid_all = member_pids.codes[member]
    sub_all = table_codes.integers("subtopology", -1)[0][at]
    part_all = table_codes.integers("partition", -1)[0][at]
    # Sorted by (app_id, process_id, subtopology, partition, consumer_id), on codes.
    order = sort_order(app_all, pid_all, sub_all, part_all, consumer_all)
    app_codes, pid_codes = app_all[order], pid_all[order]
    sub, part = sub_all[order], part_all[order]
    taken = at[order]
    offset_all, has_offset_all = table_codes.integers("offset_sum")
    offset, has_offset = offset_all[taken], has_offset_all[taken]
    ownership = reports.column("ownership")
    active = np.asarray(pc.fill_null(pc.equal(ownership, OWNERSHIP_ACTIVE), False).to_numpy(zero_copy_only=False),
                        dtype=np.bool_)[taken]
    active |= np.asarray(pc.is_null(ownership).to_numpy(zero_copy_only=False), np.bool_)[taken] & has_offset & (
        offset == LATEST_OFFSET)
    n = len(order)
    reported: dict[tuple[str, str], ClientTaskColumns] = {}
    if n:
        new_client = np.ones(n, dtype=np.bool_)
        new_client[1:] = (app_codes[1:] != app_codes[:-1]) | (pid_codes[1:] != pid_codes[:-1])
        changed = new_client.copy()
        changed[1:] |= (sub[1:] != sub[:-1]) | (part[1:] != part[:-1])
        starts = np.flatnonzero(changed)
        stops = np.append(starts[1:], n)
        group_active = np.maximum.reduceat(active.astype(np.int8), starts).astype(bool)
        last_offset = np.maximum.reduceat(np.where(has_offset, np.arange(n), -1), starts)
        # Column-wise, one list per field for the whole bucket, cut per client below: no dict per reported
        # task (they were a quarter of a bucket's checks, and reading them back a third of building).
        task_has = last_offset >= 0
        task_offset = offset[np.where(task_has, last_offset, 0)]
        task_offsets = np.where(task_has, task_offset, 0).astype(object)
        task_offsets[~task_has] = None
        task_offsets_list = task_offsets.tolist()
        task_subs, task_parts = sub[starts].tolist(), part[starts].tolist()
        ownerships = np.array([OWNERSHIP_STANDBY, OWNERSHIP_ACTIVE], dtype=object)[group_active.astype(np.int8)]
        ownerships = ownerships.tolist()
        reporters = _reporters(consumers, order, starts, stops)
        lags = _lags(ends, app_values, app_codes[starts], sub[starts], part[starts], task_offset, task_has)
        client_starts = np.flatnonzero(new_client[starts])
        client_stops = np.append(client_starts[1:], len(starts))
        firsts = starts[client_starts]
        for a, p, s, e in zip(app_codes[firsts].tolist(), pid_codes[firsts].tolist(), client_starts.tolist(),
                              client_stops.tolist(), strict=True):
            # (dict displays: a TypedDict's call costs twice as much, once per client)
            reported[(app_values[a], member_pids.values[p])] = {
                "subtopologies": task_subs[s:e], "partitions": task_parts[s:e], "ownerships": ownerships[s:e],
                "offset_sums": task_offsets_list[s:e], "lags": lags[s:e], "consumers": reporters[s:e]}
    # One sort by (app, process, consumer): clients come in (app, process) order, each one's members by consumer.
    by_client: dict[tuple[str, str], tuple[int, list[str]]] = {}  # (first member, consumers)
    for app_id, pid, consumer, index in sorted(zip(members["app_id"], members["process_id"], members["consumer_id"],
                                                   range(len(members["app_id"])), strict=True)):
        client = by_client.get((app_id, pid))
        if client is None:
            by_client[(app_id, pid)] = (index, [consumer])
        else:
            client[1].append(consumer)
    racks, all_tags, hosts = members["rack"], members["client_tags"], members["host"]
    clients: dict[str, list[ClientInput]] = {}
    for (app_id, pid), (first, consumers_of) in by_client.items():
        tags = all_tags[first]
        if tags is not None:
            tags = list(tags) if isinstance(tags, list) else list(tags.items() if isinstance(tags, Mapping) else tags)
        client_input: ClientInput = {
            "process_id": pid, "rack": racks[first], "tags": tags, "host": hosts[first], "consumers": consumers_of,
            "tasks": None, "task_columns": reported.get((app_id, pid)) or _no_tasks()}
        clients.setdefault(app_id, []).append(client_input)
    return clients


def _reporters(consumers: Codes, order: IntArray, starts: IntArray, stops: IntArray) -> list[list[str]]:
    """Each reported task's consumers (rows ``starts[i]:stops[i]`` of ``order``). Most tasks have one: those
    of the same consumer share one list (read only, as fleet.build reads them)."""
    codes = consumers.codes[order]
    alone: list[list[str]] = [[v] for v in consumers.values]
    found: list[list[str]] = list(map(alone.__getitem__, codes[starts].tolist()))
    for i in np.flatnonzero(stops - starts > 1).tolist():
        found[i] = [consumers.values[c] for c in codes[starts[i]:stops[i]].tolist()]
    return found


def _lags(
    ends: Mapping[str, Mapping[int, Sequence[int] | IntArray]], app_values: Sequence[str], apps: IntArray,
    subs: IntArray, parts: IntArray, offsets: IntArray, has_offset: npt.NDArray[np.bool_],
) -> list[int | None]:
    """``compute_lag`` of every reported task with an offset sum (None without), on whole columns: each
    task's end-offset sum looked up in one array of the bucket's ends."""
    width = int(subs.max()) + 1 if len(subs) else 1
    inverse, pairs = dense_ids((apps * width + subs)[has_offset], (int(apps.max()) + 1 if len(apps) else 1) * width)
    bases = np.zeros(len(pairs), dtype=np.int64)
    flat: list[IntArray] = []
    size = 0
    for i, (a, su) in enumerate(zip((pairs // width).tolist(), (pairs % width).tolist(), strict=True)):
        bases[i] = size
        flat.append(np.asarray(ends[app_values[a]][su], dtype=np.int64))
        size += len(flat[-1])
    end = np.zeros(len(offsets), dtype=np.int64)
    if size:
        end[has_offset] = np.concatenate(flat)[bases[inverse] + parts[has_offset]]
    found = compute_lags(end, offsets).astype(object)
    found[~has_offset] = None
    result: list[int | None] = found.tolist()
    return result


def _no_tasks() -> ClientTaskColumns:
    return {"subtopologies": [], "partitions": [], "ownerships": [], "offset_sums": [], "lags": [], "consumers": []}
