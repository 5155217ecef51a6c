"""Row checks of one bucket of a fleet snapshot: each table's rows marked with the first reason they
cannot be used (fleet.marks), in a fixed order: how the row reads (malformed, missing values), what
it says of itself (values, formats), its application, its key (duplicates). Checks of what a row
refers to (tasks, members) need the derived topology and live in fleet.derive.

Every function takes the table as an Arrow table with its ``TableSpec``'s columns plus ``_source_row`` and
``_malformed`` (pipeline.read). The two large tables (topic_partitions, member_tasks: about one row per
task) are checked column-wise: pyarrow compute, and their text keys as integer codes (fleet.codes: a
value's checks run once per distinct value, duplicates are found on numbers); the small ones row by row.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from taskassign.assignors.registry import ResolvedAssignor
from taskassign.fleet import reasons as R
from taskassign.fleet.application import check_application
from taskassign.fleet.codes import Codes, TableCodes
from taskassign.fleet.marks import Marks, Mask, Reason, Row, duplicate_counts
from taskassign.fleet.subscriptions import decode_subscriptions
from taskassign.fleet.tables import (
    APPLICATIONS,
    MEMBER_TASKS,
    MEMBERS,
    OWNERSHIP_ACTIVE,
    OWNERSHIP_STANDBY,
    REPARTITION_TOPICS,
    SUBTOPOLOGIES,
    TOPIC_PARTITIONS,
    TableSpec,
)
from taskassign.model import MAX_PARTITIONS

__all__ = (
    "MALFORMED",
    "SOURCE_ROW",
    "AppStatus",
    "CheckedMembers",
    "CheckedRows",
    "app_rules",
    "check_applications",
    "check_member_tasks",
    "check_members",
    "check_repartition_topics",
    "check_subtopologies",
    "check_topic_partitions",
    "reject_applications",
)

SOURCE_ROW = "_source_row"
MALFORMED = "_malformed"
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
TASK_ID = r"^([0-9]+)_([0-9]+)$"
HOST = re.compile(r"(.+):([0-9]+)")
MAX_CLIENT_TAGS, MAX_TAG_KEY, MAX_TAG_VALUE = 5, 20, 30
INT_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class AppStatus:
    """An application id of the bucket: usable (its only applications row passed every check) or not."""

    ok: bool
    required_tags: tuple[str, ...] = ()
    kafka_compat: bool = False


def _np(mask: pa.ChunkedArray | pa.Array) -> Mask:
    """A boolean Arrow result as a numpy mask (null: false)."""
    return np.asarray(pc.fill_null(mask, False).to_numpy(zero_copy_only=False), dtype=np.bool_)


def _blank(values: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """Empty or only spaces (null: null). Only a value starting with a space can be blank without being
    empty: the others are never trimmed (a bucket's ~10^5 rack names have none)."""
    empty = pc.equal(pc.binary_length(values), 0)
    spaced = pc.starts_with(values, " ")
    if not pc.any(spaced).as_py():
        return empty
    return pc.or_(empty, pc.and_(spaced, pc.equal(pc.utf8_trim(values, " "), "")))


def basic_rules(marks: Marks, table: pa.Table, spec: TableSpec, codes: TableCodes | None = None) -> None:
    """Malformed rows, then every required column that is null or empty (``codes``: text columns tested
    once per distinct value)."""
    marks.reject(_np(pc.is_valid(table.column(MALFORMED))), R.MALFORMED_ROW, lambda i, r: str(r[MALFORMED]))
    for column in spec.columns:
        if not column.required:
            continue
        if codes is not None and column.type == "string":
            encoded = codes[column.name]
            marks.reject(~encoded.valid | encoded.where_all(_blank), R.MISSING_VALUE,
                         _fixed(f"column {column.name} is missing"))
            continue
        values = table.column(column.name)
        missing = _np(pc.is_null(values))
        if column.type == "string":
            missing |= _np(_blank(values))
        elif column.is_complex:
            missing |= _np(pc.equal(pc.list_value_length(values), 0))
        marks.reject(missing, R.MISSING_VALUE, _fixed(f"column {column.name} is missing"))


def app_rules(marks: Marks, app_ids: pa.ChunkedArray | Codes, status: Mapping[str, AppStatus]) -> None:
    """Rows of an application that is not in the applications table, or whose row was rejected."""
    if isinstance(app_ids, Codes):
        marks.reject(~app_ids.where(status.__contains__), R.UNKNOWN_APPLICATION,
                     lambda i, r: f"application {r['app_id']} is not in the applications table")
        marks.reject(~app_ids.where(lambda a: status[a].ok if a in status else False), R.APPLICATION_REJECTED,
                     _rejected_app)
        return
    known = pa.array(sorted(status), pa.string())
    usable = pa.array(sorted(a for a, s in status.items() if s.ok), pa.string())
    marks.reject(~_np(pc.is_in(app_ids, value_set=known)), R.UNKNOWN_APPLICATION,
                 lambda i, r: f"application {r['app_id']} is not in the applications table")
    marks.reject(~_np(pc.is_in(app_ids, value_set=usable)), R.APPLICATION_REJECTED, _rejected_app)


def _rejected_app(index: int, row: Row) -> str:
    return f"application {row['app_id']} was rejected (see its applications row)"


def reject_applications(marks: Marks, app_ids: pa.ChunkedArray | Codes, rejected: Sequence[str]) -> None:
    """Rows of applications rejected as a whole later on (topology, engine)."""
    if rejected and isinstance(app_ids, Codes):
        marks.reject(app_ids.where(set(rejected).__contains__), R.APPLICATION_REJECTED, _rejected_app)
    elif rejected:
        marks.reject(_np(pc.is_in(app_ids, value_set=pa.array(sorted(rejected), pa.string()))),
                     R.APPLICATION_REJECTED, _rejected_app)


def _negative(marks: Marks, table: pa.Table, *names: str) -> None:
    for name in names:
        marks.reject(_np(pc.less(table.column(name), 0)), R.BAD_VALUE, _negative_reason(name))


def _fixed(text: str) -> Reason:
    return lambda index, row: text


def _negative_reason(name: str) -> Reason:
    return lambda index, row: f"{name} is negative: {row[name]}"


def _duplicates(
    marks: Marks, table: pa.Table, key: Sequence[str], codes: TableCodes | None = None,
    columns: Mapping[str, Sequence[Any]] | None = None,
) -> None:
    counts = duplicate_counts(table, key, codes, columns)
    what = key[0] if len(key) == 1 else f"({', '.join(key)})"
    marks.reject(counts > 1, R.DUPLICATE_KEY, lambda i, r: f"{counts[i]} rows share this {what}; all are rejected")


def _has_blank(values: Sequence[str | None] | None) -> bool:
    return values is not None and any(v is None or v.strip(" ") == "" for v in values)


@dataclass
class CheckedRows:
    """A small table's rows as Python values (as the checks read them) with their marks."""

    rows: list[dict[str, Any]]
    marks: Marks


# -- applications -----------------------------------------------------------------------------------------------

def check_applications(
    table: pa.Table, assignor_override: ResolvedAssignor | str | None, kafka_compat: bool, allow_plugins: bool = False,
    *,
    kafka_version: str | None = None,
) -> tuple[CheckedRows, dict[str, AppStatus]]:
    """The applications rows (configs and assignor checked by the engine's own validation; a plug-in
    assignor refused unless ``allow_plugins``) and the status of every application id they name."""
    rows = table.to_pylist()
    marks = Marks(len(rows))
    basic_rules(marks, table, APPLICATIONS)
    _duplicates(marks, table, ["app_id"])
    _negative(marks, table, "now_ms")
    leaders = [r["leader_process_id"] for r in rows]
    marks.reject([p is not None and not UUID.fullmatch(p) for p in leaders], R.BAD_PROCESS_ID,
                 lambda i, r: f"leader_process_id is not a UUID: {r['leader_process_id']}")
    checks = [check_application(dict(r["configs"] or ()), r["assignor"], assignor_override=assignor_override,
                                kafka_compat=kafka_compat, allow_plugins=allow_plugins,
                                kafka_version=kafka_version) for r in rows]
    marks.reject([c.code is not None for c in checks], [c.code for c in checks], lambda i, r: str(checks[i].reason))
    late = [None if c.configs is None or r["now_ms"] is None else c.configs.now_ms_problem(r["now_ms"])
            for c, r in zip(checks, rows, strict=True)]
    marks.reject([p is not None for p in late], R.BAD_VALUE, lambda i, r: f"now_ms {late[i]}")
    rows_per_app: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        if r["app_id"] is not None:
            rows_per_app.setdefault(r["app_id"], []).append(i)
    usable = marks.usable
    status = {}
    for app_id, indices in rows_per_app.items():
        single = len(indices) == 1 and bool(usable[indices[0]])
        check = checks[indices[0]]
        status[app_id] = AppStatus(single, check.required_tags, check.kafka_compat) if single else AppStatus(False)
    return CheckedRows(rows, marks), status


# -- subtopologies and repartition topics -----------------------------------------------------------------------

def check_subtopologies(table: pa.Table, status: Mapping[str, AppStatus]) -> CheckedRows:
    rows = table.to_pylist()
    marks = Marks(len(rows))
    basic_rules(marks, table, SUBTOPOLOGIES)
    app_rules(marks, table.column("app_id"), status)
    _negative(marks, table, "subtopology")
    for name in ("source_topics", "sink_topics", "stores", "changelog_topics"):
        marks.reject([_has_blank(r[name]) for r in rows], R.BAD_VALUE,
                     _fixed(f"{name} has a null or empty topic/store name"))

    def bad_groups(row: Row) -> bool:
        sources = set(row["source_topics"] or ())
        return any(g is None or _has_blank(g) or any(t not in sources for t in g)
                   for g in row["copartition_groups"] or ())

    marks.reject([bad_groups(r) for r in rows], R.BAD_VALUE,
                 lambda i, r: "copartition_groups must list this subtopology's own source topics")
    marks.reject([bool(r["changelog_topics"]) and not r["stores"] for r in rows], R.BAD_VALUE,
                 lambda i, r: "changelog_topics without stores: changelogs back state stores")
    _duplicates(marks, table, ["app_id", "subtopology"])
    return CheckedRows(rows, marks)


def check_repartition_topics(
    table: pa.Table, status: Mapping[str, AppStatus], read_topics: Mapping[str, frozenset[str]]
) -> Marks:
    """``read_topics``: per application, the source topics of its usable subtopologies."""
    marks = Marks(table.num_rows)
    basic_rules(marks, table, REPARTITION_TOPICS)
    app_rules(marks, table.column("app_id"), status)
    marks.reject(_np(pc.less_equal(table.column("num_partitions"), 0)), R.BAD_VALUE,
                 lambda i, r: f"num_partitions must be positive: {r['num_partitions']}")
    marks.reject(_np(pc.greater(table.column("num_partitions"), MAX_PARTITIONS)), R.BAD_VALUE,
                 lambda i, r: f"num_partitions must be at most {MAX_PARTITIONS}: {r['num_partitions']}")
    _duplicates(marks, table, ["app_id", "topic"])
    apps, topics = table.column("app_id").to_pylist(), table.column("topic").to_pylist()
    marks.reject([t not in read_topics.get(a, ()) for a, t in zip(apps, topics, strict=True)], R.UNREFERENCED_TOPIC,
                 lambda i, r: f"no subtopology of application {r['app_id']} reads repartition topic {r['topic']}")
    return marks


# -- topic partitions -------------------------------------------------------------------------------------------

def check_topic_partitions(
    table: pa.Table, status: Mapping[str, AppStatus], codes: TableCodes | None = None
) -> Marks:
    """The checks that need nothing but the row and its application (references to tasks come later);
    ``codes``: the table's columns encoded (fleet.codes), shared with the derivations."""
    codes = codes if codes is not None else TableCodes(table)
    marks = Marks(table.num_rows)
    basic_rules(marks, table, TOPIC_PARTITIONS, codes)
    app_rules(marks, codes["app_id"], status)
    _negative(marks, table, "partition", "end_offset", "committed_offset", "size_bytes")
    marks.reject(_np(pc.greater_equal(table.column("partition"), MAX_PARTITIONS)), R.BAD_VALUE,
                 lambda i, r: f"partition must be below {MAX_PARTITIONS} (a topic has at most {MAX_PARTITIONS} "
                              f"partitions here): {r['partition']}")
    blank = np.zeros(table.num_rows, dtype=np.bool_)
    if table.num_rows:  # each distinct rack name tested once
        items, parents = codes.flat("replica_racks")
        blank[parents[~items.valid | items.where_all(_blank)]] = True
    marks.reject(blank, R.BAD_VALUE, lambda i, r: "replica_racks has a null or empty rack")
    _duplicates(marks, table, ["app_id", "topic", "partition"], codes)
    return marks


# -- members ----------------------------------------------------------------------------------------------------

@dataclass
class CheckedMembers:
    """Members with what their subscription_info says, column-wise (``columns``: the table's columns as lists,
    process id, host and tags taken from subscription_info where the row leaves them null, the row's own in
    ``_row_process_id``, ``_row_host``, ``_row_tags``, and ``_has_subscription``); ``reports`` are the usable
    members' task offset sums, column-wise (app_id, consumer_id, task_id, offset_sum: one array each, a value
    per report)."""

    columns: dict[str, list[Any]]
    marks: Marks
    reports: dict[str, Any] = field(default_factory=dict)

    def rows_at(self, indices: Sequence[int]) -> list[dict[str, Any]]:
        """The members at ``indices`` as rows (one dict each, made when asked: most members are only read
        column-wise)."""
        names, columns = list(self.columns), list(self.columns.values())
        return [dict(zip(names, [c[i] for c in columns], strict=True)) for i in indices]


def _entries(tags: Any) -> list[tuple[str, str]]:
    return sorted(tags.items() if isinstance(tags, Mapping) else tags)


def check_members(table: pa.Table, status: Mapping[str, AppStatus]) -> CheckedMembers:
    """Column-wise: a rule that reads subscription_info's values looks at the members that sent one, and the
    tag rules at the members with tags."""
    columns = {name: table.column(name).to_pylist() for name in table.column_names}
    subscriptions = decode_subscriptions(columns["subscription_info"])
    decoded = subscriptions.members
    sent = [i for i, data in enumerate(columns["subscription_info"]) if data is not None]
    row_pids, row_hosts, row_tags = columns["process_id"], columns["host"], columns["client_tags"]
    pids, hosts, tag_values = list(row_pids), list(row_hosts), list(row_tags)
    for i in sent:
        d = decoded[i]
        if pids[i] is None:
            pids[i] = d["_sub_process_id"]
        if hosts[i] is None:
            hosts[i] = d["_sub_host"]
        if tag_values[i] is None:
            tag_values[i] = d["_sub_tags"]
    has_subscription = [data is not None for data in columns["subscription_info"]]
    columns.update({"process_id": pids, "host": hosts, "client_tags": tag_values, "_row_process_id": row_pids,
                    "_row_host": row_hosts, "_row_tags": row_tags, "_has_subscription": has_subscription})
    size = table.num_rows
    marks = Marks(size)
    basic_rules(marks, table, MEMBERS)
    marks.reject(_at_rows(size, [i for i in sent if decoded[i]["_sub_error"] is not None]), R.MALFORMED_ROW,
                 lambda i, r: decoded[i]["_sub_error"])
    blank = {p: p.strip(" ") == "" for p in set(pids) if p is not None}
    marks.reject([p is None or blank[p] for p in pids], R.MISSING_VALUE,
                 lambda i, r: "column process_id is missing (give it, or subscription_info)")
    app_rules(marks, table.column("app_id"), status)
    sent_pids = {i: decoded[i]["_sub_process_id"] for i in sent}
    marks.reject(_at_rows(size, [i for i, p in sent_pids.items() if row_pids[i] is not None and p is not None
                                 and row_pids[i].lower() != p]),
                 R.BAD_VALUE, lambda i, r: f"process_id {r['_row_process_id']} differs from its subscription_info's "
                                           f"{decoded[i]['_sub_process_id']}")
    marks.reject(_at_rows(size, [i for i in sent if row_hosts[i] is not None and decoded[i]["_sub_host"] is not None
                                 and row_hosts[i] != decoded[i]["_sub_host"]]),
                 R.BAD_VALUE, lambda i, r: f"host {r['_row_host']} differs from its subscription_info's "
                                           f"{decoded[i]['_sub_host']}")
    marks.reject(_at_rows(size, [i for i in sent if row_tags[i] is not None and decoded[i]["_sub_tags"] is not None
                                 and _entries(row_tags[i]) != _entries(decoded[i]["_sub_tags"])]),
                 R.BAD_VALUE, lambda i, r: "client_tags differ from its subscription_info's")
    # A process's consumers share its id and host: each distinct value is checked once.
    process_ids = [p or "" for p in pids]
    is_uuid = {p: UUID.fullmatch(p) is not None for p in set(process_ids)}
    marks.reject([not is_uuid[p] for p in process_ids], R.BAD_PROCESS_ID,
                 lambda i, r: f"process_id is not a UUID: {r['process_id']}")
    bad_host = {h: not _valid_host(h) for h in set(hosts) if h is not None}
    marks.reject([h is not None and bad_host[h] for h in hosts], R.BAD_VALUE,
                 lambda i, r: f"host must be host:port (application.server), got {r['host']}")
    # Tag rules: only members with tags can fail them (no tags: none too many, none missing unless required).
    tags = {i: _entries(t) for i, t in enumerate(tag_values) if t}
    marks.reject(_at_rows(size, [i for i, t in tags.items() if len(t) > MAX_CLIENT_TAGS]), R.BAD_VALUE,
                 lambda i, r: f"at most {MAX_CLIENT_TAGS} client tags are allowed")
    marks.reject(_at_rows(size, [i for i, t in tags.items() if any(not 0 < len(k) <= MAX_TAG_KEY for k, _ in t)]),
                 R.BAD_VALUE, lambda i, r: f"client tag keys must have 1 to {MAX_TAG_KEY} characters")
    marks.reject(_at_rows(size, [i for i, t in tags.items()
                                 if any(v is None or len(v) > MAX_TAG_VALUE for _, v in t)]),
                 R.BAD_VALUE,
                 lambda i, r: f"client tag values must be non-null with at most {MAX_TAG_VALUE} characters")
    required = {a: tuple(dict.fromkeys(s.required_tags)) for a, s in status.items() if s.required_tags}
    missing: dict[int, list[str]] = {}
    if required:
        for i, app_id in enumerate(columns["app_id"]):
            needed = _missing_tags(required.get(app_id or "", ()), tags.get(i, []))
            if needed:
                missing[i] = needed
    marks.reject(_at_rows(size, list(missing)), R.MISSING_CLIENT_TAG,
                 lambda i, r: f"rack.aware.assignment.tags needs tag(s) {', '.join(missing[i])} on every member")
    _duplicates(marks, table, ["app_id", "consumer_id"], columns=columns)
    # The usable members' reports, column-wise: their rows' app and consumer ids taken per report.
    kept = marks.usable[subscriptions.member]
    member = pa.array(subscriptions.member[kept])
    reports: dict[str, Any] = {
        "app_id": table.column("app_id").take(member), "consumer_id": table.column("consumer_id").take(member),
        "task_id": subscriptions.task_ids.filter(pa.array(kept)), "offset_sum": subscriptions.offset_sums[kept]}
    return CheckedMembers(columns, marks, reports)


def _at_rows(size: int, indices: Sequence[int]) -> Mask:
    """A mask of ``size`` rows holding at ``indices``."""
    mask: Mask = np.zeros(size, dtype=np.bool_)
    mask[list(indices)] = True
    return mask


def _valid_host(host: str) -> bool:
    found = HOST.fullmatch(host)
    return found is not None and len(found.group(2)) <= 10 and int(found.group(2)) <= 65535


def _missing_tags(required: tuple[str, ...], tags: list[tuple[str, str]]) -> list[str]:
    """The ``required`` tag keys (rack.aware.assignment.tags, without repeats) that ``tags`` lacks."""
    if not required:
        return []
    have = {k for k, _ in tags}
    return [t for t in required if t not in have]


# -- member tasks -----------------------------------------------------------------------------------------------

def check_member_tasks(table: pa.Table, status: Mapping[str, AppStatus]) -> tuple[pa.Table, Marks, TableCodes]:
    """The row's own checks; returns the table with the parsed ``subtopology`` and ``partition`` of
    ``task_id`` added (null where it does not parse), and its columns' codes (fleet.codes) for the
    derivations. ``table`` has ``_from_subscription``: reports decoded from a member's subscription_info,
    checked like rows but not input rows themselves."""
    # Task ids repeat (every application has a 0_0): parsed once per distinct id.
    task_ids = Codes.of(table.column("task_id"))
    parts = pc.extract_regex(pa.array(task_ids.values, pa.string()), r"^(?P<s>[0-9]{1,10})_(?P<p>[0-9]{1,10})$")
    subs = pc.cast(pc.struct_field(parts, "s"), pa.int64())
    partitions = pc.cast(pc.struct_field(parts, "p"), pa.int64())
    fits = pc.and_(pc.less_equal(subs, INT_MAX), pc.less_equal(partitions, INT_MAX))
    rows = pa.array(task_ids.codes, pa.int64(), mask=~task_ids.valid)
    subs = pc.take(pc.if_else(fits, subs, None).cast(pa.int32()), rows)
    partitions = pc.take(pc.if_else(fits, partitions, None).cast(pa.int32()), rows)
    table = table.append_column("subtopology", subs).append_column("partition", partitions)
    codes = TableCodes(table, {"task_id": task_ids})
    marks = Marks(table.num_rows)
    basic_rules(marks, table, MEMBER_TASKS, codes)
    app_rules(marks, codes["app_id"], status)
    marks.reject(_np(pc.or_kleene(pc.is_null(subs), pc.is_null(partitions))), R.BAD_TASK_ID,
                 lambda i, r: f"task id {r['task_id']} does not parse: expected '<subtopology>_<partition>' "
                              "(non-negative 32-bit integers)")
    ownership, offset = table.column("ownership"), table.column("offset_sum")
    known = pc.is_in(ownership, value_set=pa.array([OWNERSHIP_ACTIVE, OWNERSHIP_STANDBY]))
    marks.reject(_np(pc.and_(pc.is_valid(ownership), pc.invert(known))), R.BAD_VALUE,
                 lambda i, r: f"ownership must be 'active', 'standby' or null, got {r['ownership']}")
    marks.reject(_np(pc.or_(pc.less(offset, -3), pc.equal(offset, -1))), R.BAD_VALUE,
                 lambda i, r: f"offset_sum must be -2 (running active), -3 (unknown) or >= 0, got {r['offset_sum']}")
    marks.reject(_np(pc.and_(pc.is_null(ownership), pc.is_null(offset))), R.MISSING_VALUE,
                 lambda i, r: "the row reports neither ownership nor an offset sum")
    marks.reject(_np(pc.and_(pc.equal(ownership, OWNERSHIP_STANDBY), pc.equal(offset, -2))), R.INCONSISTENT_REPORT,
                 lambda i, r: "ownership 'standby' with offset_sum -2, which means a running active task")
    counts = duplicate_counts(table, ["app_id", "consumer_id", "subtopology", "partition"], codes)
    marks.reject(counts > 1, R.DUPLICATE_KEY,
                 lambda i, r: f"{counts[i]} rows share this (app_id, consumer_id, task); all are rejected")
    return table, marks, codes
