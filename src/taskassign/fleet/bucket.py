"""One bucket of a fleet: every input row of some applications in; their results and errors out.

The pipeline shuffles the snapshot once, by application, and hands each partition (bucket) to
``process_bucket`` inside a Python worker. Every check and derivation is per application, so a bucket
needs nothing from outside itself. In order:

1. row checks of every table (fleet.checks), after rows holding invalid UTF-8 are made malformed
   (fleet.text);
2. topologies resolved; an application whose topology fails is rejected with its rows;
3. tasks, partition references, end offsets and racks (fleet.derive);
4. members' reports checked against members and tasks, merged per client, with lags;
5. each usable application through the engine (fleet.application.assign_application);
6. the errors rows: every rejected input row (rows of an application the engine rejected cascade),
   and every flagged application (assignor failed, invalid assignment, unknown end offsets).

Nothing here depends on row order: inputs arrive in whatever order the shuffle delivers them, and
every grouping is sorted. It imports no pyspark (tests run it on plain Arrow tables), but needs pyarrow,
which comes with taskassign[spark].
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np
import pyarrow as pa

from taskassign.assignors.registry import ResolvedAssignor, resolve
from taskassign.errors import AssignorNotFoundError
from taskassign.fleet import reasons as R
from taskassign.fleet.application import AppResult, assign_application
from taskassign.fleet.build import AppInput, ClientInput
from taskassign.fleet.checks import (
    MALFORMED,
    SOURCE_ROW,
    AppStatus,
    check_applications,
    check_member_tasks,
    check_members,
    check_repartition_topics,
    check_subtopologies,
    check_topic_partitions,
    reject_applications,
)
from taskassign.fleet.codes import TableCodes
from taskassign.fleet.derive import (
    MEMBER_COLUMNS,
    Block,
    MemberInfo,
    TaskMetadata,
    check_member_references,
    check_partition_references,
    client_inputs,
    partition_references,
    resolve_topologies,
    subtopology_blocks,
    task_metadata,
    topic_counts,
)
from taskassign.fleet.marks import Marks, Row, row_json
from taskassign.fleet.snapshot_files import arrow_schema
from taskassign.fleet.tables import INPUT_TABLES, MEMBER_TASKS, MEMBERS, TableSpec
from taskassign.fleet.text import quarantine_invalid_text

__all__ = ("FROM_SUBSCRIPTION", "BucketResult", "ErrorRow", "bucket_table", "process_bucket")

FROM_SUBSCRIPTION = "_from_subscription"
END_OFFSETS_REASON = ("a changelog partition has no end offset: every lag is -3 and Kafka's default assignor falls "
                      "back to keeping previous actives (FallbackPriorTaskAssignor)")


class ErrorRow(TypedDict):
    table: str
    app_id: str | None
    effect: str
    reason_code: str
    reason: str
    source_row: str | None


@dataclass
class _Checked:
    """A table of the bucket with its marks, and its rows as Python values when they were needed."""

    spec: TableSpec
    table: pa.Table
    marks: Marks
    rows: list[dict[str, Any]] | None = None
    #: The table's columns as codes (fleet.codes), for the large tables.
    codes: TableCodes | None = None
    #: Rows by position, for a table checked column-wise whose rows are made only when asked (members).
    rows_of: Callable[[Sequence[int]], list[dict[str, Any]]] | None = None

    def rows_at(self, indices: Sequence[int]) -> list[dict[str, Any]]:
        if self.rows is not None:
            return [self.rows[i] for i in indices]
        if self.rows_of is not None:
            return self.rows_of(indices)
        taken: list[dict[str, Any]] = self.table.take(pa.array(indices, pa.int64())).to_pylist()
        return taken

    def usable_rows(self) -> list[dict[str, Any]]:
        return self.rows_at([int(i) for i in self.marks.usable_indices()])


@dataclass
class BucketResult:
    """``results``: one per application id of the applications table (without the engine: only those
    rejected before it); ``inputs``: the engine's record per application; ``check_seconds``: steps 1-4."""

    results: list[AppResult]
    errors: list[ErrorRow]
    inputs: dict[str, AppInput]
    check_seconds: float
    checked: Mapping[str, _Checked]

    def outcomes(self, table: str) -> list[dict[str, Any]]:
        """Every row of an input table as checked (members with what their subscription_info says,
        member_tasks followed by the reports decoded from it), with ``reject_code`` and ``reject_reason``
        (None: the row was used)."""
        t = self.checked[table]
        rows = [dict(r) for r in (t.rows if t.rows is not None else t.rows_of(range(t.table.num_rows))
                                  if t.rows_of is not None else t.table.to_pylist())]
        for row in rows:
            row["reject_code"] = row["reject_reason"] = None
        for rejection in t.marks.rejections(lambda indices: [rows[i] for i in indices]):
            rows[rejection.index]["reject_code"] = rejection.code
            rows[rejection.index]["reject_reason"] = rejection.reason
        return rows


def bucket_table(spec: TableSpec, rows: Sequence[Mapping[str, Any]] = ()) -> pa.Table:
    """A table as the pipeline hands it to ``process_bucket``: its ``TableSpec``'s columns (absent values null)
    and the bookkeeping columns, from rows of Python values."""
    schema = arrow_schema(spec).append(pa.field(SOURCE_ROW, pa.string())).append(pa.field(MALFORMED, pa.string()))
    return pa.Table.from_pylist([{c: r.get(c) for c in schema.names} for r in rows], schema=schema)


def process_bucket(
    tables: Mapping[str, pa.Table], *, assignor_override: str | None = None, kafka_compat: bool = False,
    run_engine: bool = True, allow_plugins: bool = False, kafka_version: str | None = None,
) -> BucketResult:
    """Check, derive and assign every application of the bucket (``run_engine=False``: stop before the
    engine, for exporting scenarios). ``allow_plugins``: the applications' own assignors may be plug-ins
    (code named by the snapshot: see assignors.registry); otherwise such an application is rejected."""
    started = time.perf_counter()
    tables = {name: quarantine_invalid_text(t, INPUT_TABLES[name]) for name, t in tables.items()}
    override = _resolved_override(assignor_override)
    apps, status = check_applications(tables["applications"], override, kafka_compat, allow_plugins,
                                      kafka_version=kafka_version)
    checked = {"applications": _Checked(INPUT_TABLES["applications"], tables["applications"], apps.marks,
                                        apps.rows)}
    metadata, blocks, rejected = _topologies(tables, status, checked)
    clients = _clients(tables, status, checked, blocks, metadata, rejected)
    inputs = _inputs(checked, metadata, clients)
    check_seconds = time.perf_counter() - started
    results = _assign(inputs, checked, override, kafka_compat, allow_plugins,
                      kafka_version) if run_engine else []
    results += _rejected_before_engine(checked["applications"], status, set(inputs))
    results.sort(key=lambda r: r["app_id"])
    return BucketResult(results, _errors(checked, results), inputs, check_seconds, checked)


def _topologies(
    tables: Mapping[str, pa.Table], status: Mapping[str, AppStatus], checked: dict[str, _Checked]
) -> tuple[dict[str, TaskMetadata], dict[str, list[Block]], list[str]]:
    """Steps 1-3 for the topology tables: subtopologies, repartition topics and topic partitions checked,
    topologies resolved (applications whose topology fails are rejected with their rows), tasks and their
    partitions' metadata. Returns the metadata and blocks per application, and the rejected ids."""
    subs_table = tables["subtopologies"]
    checked_subs = check_subtopologies(subs_table, status)
    subs = _Checked(INPUT_TABLES["subtopologies"], subs_table, checked_subs.marks, checked_subs.rows)
    usable_subs = subs.usable_rows()
    read: dict[str, set[str]] = {}
    for r in usable_subs:
        read.setdefault(r["app_id"], set()).update(r["source_topics"])
    repartition_table = tables["repartition_topics"]
    repartition = _Checked(INPUT_TABLES["repartition_topics"], repartition_table, check_repartition_topics(
        repartition_table, status, {a: frozenset(t) for a, t in read.items()}))
    partitions_table = tables["topic_partitions"]
    partition_codes = TableCodes(partitions_table)
    partitions = _Checked(INPUT_TABLES["topic_partitions"], partitions_table,
                          check_topic_partitions(partitions_table, status, partition_codes), codes=partition_codes)
    counts = topic_counts(partitions_table, partitions.marks.usable, partition_codes)
    incomplete = _shared_changelogs(usable_subs) | _incomplete_topologies((subs, repartition, partitions), status)
    resolved, topology_errors = resolve_topologies([r for r in usable_subs if r["app_id"] not in incomplete], counts,
                                                   repartition.usable_rows(), status)
    topology_errors.update(incomplete)
    _reject_whole(checked["applications"], topology_errors)
    rejected = sorted(topology_errors)
    for t in (subs, repartition):
        reject_applications(t.marks, t.table.column("app_id"), rejected)
    reject_applications(partitions.marks, partition_codes["app_id"], rejected)
    subs_by_app: dict[str, list[Row]] = {}
    for r in usable_subs:
        subs_by_app.setdefault(r["app_id"], []).append(r)
    blocks = {a: subtopology_blocks(t, subs_by_app[a]) for a, t in resolved.items()}
    check_partition_references(partitions_table, partitions.marks, partition_references(blocks), partition_codes)
    metadata = task_metadata(partitions_table, blocks, counts, partition_codes, partitions.marks.usable)
    checked.update({"subtopologies": subs, "repartition_topics": repartition, "topic_partitions": partitions})
    return metadata, blocks, rejected


#: Codes a topology or metadata row gets for what it is (not for its application, nor for not being used by
#: any task): such a row makes its application's topology incomplete.
_NOT_OWN_CONTENT = frozenset({R.APPLICATION_REJECTED, R.UNKNOWN_APPLICATION, R.UNREFERENCED_TOPIC})
_KEYS = {"subtopologies": ("subtopology",), "repartition_topics": ("topic",),
         "topic_partitions": ("topic", "partition")}


def _incomplete_topologies(
    tables: Sequence[_Checked], status: Mapping[str, AppStatus]
) -> dict[str, tuple[str, str]]:
    """Usable applications with a subtopologies, repartition_topics or topic_partitions row that cannot be
    used: assigning them on the rest would silently leave out tasks (a subtopology, or the partitions its
    rejected rows would have counted), so they are rejected as INCOMPLETE_TOPOLOGY, naming the row (the first
    in table and key order, so the reason does not depend on the order rows arrive in)."""
    found: dict[str, tuple[tuple[int, str], str]] = {}
    for order, t in enumerate(tables):
        for rejection in t.marks.rejections(t.rows_at):
            app_id = rejection.row["app_id"]
            if rejection.code in _NOT_OWN_CONTENT or app_id is None or not status.get(app_id, AppStatus(False)).ok:
                continue
            key = ", ".join(f"{k} {'(unreadable)' if rejection.row[k] is None else rejection.row[k]}"
                            for k in _KEYS[t.spec.name])
            rank = (order, key)
            reason = (f"its {t.spec.name} row ({key}) cannot be used ({rejection.code}: {rejection.reason}); an "
                      "application runs on its whole topology or not at all")
            if app_id not in found or rank < found[app_id][0]:
                found[app_id] = (rank, reason)
    return {app_id: (R.INCOMPLETE_TOPOLOGY, reason) for app_id, (_, reason) in found.items()}


def _shared_changelogs(subtopologies: Sequence[Row]) -> dict[str, tuple[str, str]]:
    """Applications with a changelog topic that is also another subtopology's (changelog or source) topic:
    its partitions would belong to two tasks, which no Kafka Streams topology has (INVALID_TOPOLOGY)."""
    errors: dict[str, tuple[str, str]] = {}
    owners: dict[tuple[str, str], set[int]] = {}
    for r in subtopologies:
        for t in {*r["source_topics"], *(r["changelog_topics"] or ())}:
            owners.setdefault((r["app_id"], t), set()).add(r["subtopology"])
    for r in sorted(subtopologies, key=lambda r: (r["app_id"], r["subtopology"])):
        for t in sorted(r["changelog_topics"] or ()):
            shared = sorted(owners[(r["app_id"], t)])
            if len(shared) > 1 and r["app_id"] not in errors:
                errors[r["app_id"]] = (R.INVALID_TOPOLOGY, f"changelog topic {t} is a topic of subtopologies "
                                                           f"{', '.join(map(str, shared))}; a changelog topic belongs "
                                                           "to the subtopology of its store only")
    return errors


def _clients(
    tables: Mapping[str, pa.Table], status: Mapping[str, AppStatus], checked: dict[str, _Checked],
    blocks: Mapping[str, Sequence[Block]], metadata: Mapping[str, TaskMetadata], rejected: Sequence[str],
) -> dict[str, list[ClientInput]]:
    """Steps 1 and 4 for members and their reports: checked, merged per client, with lags."""
    members = check_members(tables["members"], status)
    reject_applications(members.marks, tables["members"].column("app_id"), rejected)
    checked_members = _Checked(MEMBERS, tables["members"], members.marks, rows_of=members.rows_at)
    reports_table = _with_reports(tables["member_tasks"], members.reports)
    reports_table, report_marks, report_codes = check_member_tasks(reports_table, status)
    reject_applications(report_marks, report_codes["app_id"], rejected)
    usable = members.marks.usable_indices().tolist()
    usable_members = {name: [members.columns[name][i] for i in usable] for name in MEMBER_COLUMNS}
    member_info = dict(zip(zip(usable_members["app_id"], usable_members["consumer_id"], strict=True),
                           map(MemberInfo, usable_members["process_id"], usable_members["_has_subscription"]),
                           strict=True))
    process_ids = check_member_references(reports_table, report_marks, member_info, blocks, report_codes)
    ends = {a: m.end_offset_arrays for a, m in metadata.items()}
    checked.update({"members": checked_members,
                    "member_tasks": _Checked(MEMBER_TASKS, reports_table, report_marks, codes=report_codes)})
    return client_inputs(usable_members, reports_table, process_ids, ends, report_codes, report_marks.usable)


def _resolved_override(spec: str | None) -> ResolvedAssignor | str | None:
    """The run's ``--assignor`` (the user's choice), resolved once for the whole bucket; a name that does not
    resolve stays text, for each application's check to report (UNKNOWN_ASSIGNOR) as before."""
    if spec is None:
        return None
    try:
        return resolve(spec)
    except AssignorNotFoundError:
        return spec


def _assign(
    inputs: Mapping[str, AppInput], checked: Mapping[str, _Checked], assignor_override: ResolvedAssignor | str | None,
    kafka_compat: bool, allow_plugins: bool, kafka_version: str | None = None,
) -> list[AppResult]:
    """Step 5: every application through the engine; the rows of those it rejects are rejected too."""
    # Assignors log Kafka's warnings (e.g. too few clients for the standbys); over a fleet they would
    # flood the output. What matters per application is in its result.
    logging.getLogger("taskassign").setLevel(logging.ERROR)
    results = [assign_application(inputs[a], assignor_override=assignor_override, kafka_compat=kafka_compat,
                                  allow_plugins=allow_plugins, kafka_version=kafka_version)
               for a in sorted(inputs)]
    engine_rejects = {r["app_id"]: (r["reason_code"] or R.INVALID_STATE, r["reason"] or "")
                      for r in results if r["status"] == R.STATUS_REJECTED}
    _reject_whole(checked["applications"], engine_rejects)
    for name, t in checked.items():
        if name != "applications":
            reject_applications(t.marks, t.table.column("app_id"), sorted(engine_rejects))
    return results


def _reject_whole(apps: _Checked, rejections: Mapping[str, tuple[str, str]]) -> None:
    """The applications rows of applications rejected as a whole carry the reason."""
    assert apps.rows is not None
    hit = [r["app_id"] in rejections for r in apps.rows]
    codes = [rejections[r["app_id"]][0] if h else None for r, h in zip(apps.rows, hit, strict=True)]
    apps.marks.reject(hit, codes, lambda i, r: rejections[r["app_id"]][1])


def _with_reports(member_tasks: pa.Table, decoded: Mapping[str, Any]) -> pa.Table:
    """The member_tasks table plus the reports decoded from members' subscription_info (column-wise: the
    columns they give; every other column null)."""
    table = member_tasks.append_column(FROM_SUBSCRIPTION, pa.array(np.zeros(member_tasks.num_rows, np.bool_)))
    size = len(decoded.get("app_id", ()))
    if not size:
        return table
    columns = [_as_arrow(decoded[f.name], f.type) if f.name in decoded else pa.nulls(size, f.type)
               for f in table.schema if f.name != FROM_SUBSCRIPTION]
    extra = pa.Table.from_arrays([*columns, pa.array(np.ones(size, np.bool_))], schema=table.schema)
    return pa.concat_tables([table, extra])


def _as_arrow(values: Any, type_: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """A decoded column as Arrow, of the member_tasks column's type."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values if values.type == type_ else values.cast(type_)
    return pa.array(values, type_)


def _inputs(
    checked: Mapping[str, _Checked], metadata: Mapping[str, TaskMetadata], clients: Mapping[str, list[ClientInput]],
) -> dict[str, AppInput]:
    """The engine's record of every application whose applications row is usable."""
    used: dict[str, Counter[str]] = {}
    for name, t in checked.items():
        if name == "applications":
            continue
        rows = np.asarray(t.marks.usable)
        if FROM_SUBSCRIPTION in t.table.column_names:
            rows = rows & ~np.asarray(t.table.column(FROM_SUBSCRIPTION).to_numpy(zero_copy_only=False), np.bool_)
        if t.codes is not None:  # counted on the application ids' codes
            app_ids = t.codes["app_id"]
            per_app = np.bincount(app_ids.codes[rows & app_ids.valid], minlength=len(app_ids.values))
            for index in np.flatnonzero(per_app).tolist():
                used.setdefault(app_ids.values[index], Counter())[name] = int(per_app[index])
            continue
        ids = t.table.column("app_id").filter(pa.array(rows)).value_counts()
        for entry in ids.to_pylist():
            used.setdefault(entry["values"], Counter())[name] = entry["counts"]
    apps = checked["applications"]
    inputs: dict[str, AppInput] = {}
    for row in apps.usable_rows():
        app_id = row["app_id"]
        meta = metadata.get(app_id)
        counts = used.get(app_id, Counter())
        inputs[app_id] = AppInput(
            app_id=app_id, assignor=row["assignor"], configs=list(row["configs"] or ()), now_ms=row["now_ms"],
            leader_process_id=row["leader_process_id"],
            end_offsets_known=meta.end_offsets_known if meta is not None else True,
            subtopologies=meta.subtopologies if meta is not None else [], clients=clients.get(app_id, []),
            source_rows={"applications": 1, **{n: counts.get(n, 0) for n in INPUT_TABLES if n != "applications"}},
        )
    return inputs


def _rejected_before_engine(apps: _Checked, status: Mapping[str, AppStatus], ran: set[str]) -> list[AppResult]:
    """A REJECTED result for every application id whose applications row(s) never reached the engine:
    the first (code, reason) of its rows."""
    assert apps.rows is not None
    found: dict[str, tuple[str, str]] = {}
    for rejection in apps.marks.rejections(apps.rows_at):
        app_id = rejection.row["app_id"]
        if app_id is None or app_id in ran:
            continue
        pair = (rejection.code, rejection.reason)
        found[app_id] = min(found.get(app_id, pair), pair)
    return [AppResult(app_id=a, status=R.STATUS_REJECTED, reason_code=c, reason=t, assignor=None, error=None,
                      probing_rebalance_needed=None, end_offsets_known=None, build_seconds=0.0, engine_seconds=0.0,
                      metrics_seconds=0.0, source_rows=None, metrics=None, clients=[], consumers=[])
            for a, (c, t) in sorted(found.items()) if a in status]


def _source_row(row: Row, spec: TableSpec) -> str:
    text = row.get(SOURCE_ROW)
    return text if text is not None else row_json(row, spec)


def _errors(checked: Mapping[str, _Checked], results: Sequence[AppResult]) -> list[ErrorRow]:
    errors: list[ErrorRow] = []
    for name, t in checked.items():
        for rejection in t.marks.rejections(t.rows_at):
            row = rejection.row
            if row.get(FROM_SUBSCRIPTION):
                # A report decoded from a member's subscription_info is not an input row: it is flagged on
                # the member (whose own row was used), unless the member's application was rejected anyway.
                if rejection.code != R.APPLICATION_REJECTED:
                    errors.append(ErrorRow(
                        table="members", app_id=row["app_id"], effect=R.EFFECT_FLAGGED, reason_code=rejection.code,
                        reason=f"subscription_info of consumer {row['consumer_id']} reports task {row['task_id']}: "
                               f"{rejection.reason}", source_row=_source_row(row, t.spec)))
                continue
            errors.append(ErrorRow(table=name, app_id=row["app_id"], effect=R.EFFECT_REJECTED,
                                   reason_code=rejection.code, reason=rejection.reason,
                                   source_row=_source_row(row, t.spec)))
    apps = checked["applications"]
    assert apps.rows is not None
    app_rows = {apps.rows[i]["app_id"]: apps.rows[i] for i in apps.marks.usable_indices()}
    for result in results:
        flags = []
        if result["status"] in (R.STATUS_KEPT_PREVIOUS, R.STATUS_INVALID_ASSIGNMENT):
            flags.append((result["reason_code"] or "", result["reason"] or ""))
        if result["status"] != R.STATUS_REJECTED and result["end_offsets_known"] is False:
            flags.append((R.END_OFFSETS_UNKNOWN, END_OFFSETS_REASON))
        for code, reason in flags:
            errors.append(ErrorRow(table="applications", app_id=result["app_id"], effect=R.EFFECT_FLAGGED,
                                   reason_code=code, reason=reason,
                                   source_row=_source_row(app_rows[result["app_id"]], apps.spec)))
    return errors

