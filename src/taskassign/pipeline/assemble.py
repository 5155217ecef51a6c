"""The output tables, assembled by the driver from what the buckets returned.

Spark persists the buckets' results (schemas.PROCESSED: each output table's rows as Arrow IPC streams)
in the staging directory; here the driver reads them back with pyarrow, one output table at a time, sorts
each and writes it as one Parquet file, and summarises the fleet's metrics. The outputs are small next
to the input (a row per client, consumer and application), but their rows hold every task id: written by
five Spark jobs, converting every task id into Spark's rows and back into Parquet, they took several
times longer than reading them back here (docs/pipeline.md, Performance).

The staged results are read once; the tables are decoded from them without copies, and one sorted table
is built at a time. Memory: about the outputs' size plus the largest table (for 1,000 applications of
1,000 tasks the largest, consumer_assignments, is 52,865 rows with 1.5 M task ids, 20 MB).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql.pandas.types import to_arrow_schema

from taskassign.analysis.attention import DEFAULT_ATTENTION, needs_attention
from taskassign.analysis.fleet_statistics import is_additive
from taskassign.fleet import reasons
from taskassign.pipeline.ipc import from_ipc
from taskassign.pipeline.schemas import (
    APP_METRICS,
    FLEET_METRICS,
    KIND_APP,
    KIND_BUCKET,
    KIND_CLIENT,
    KIND_CONSUMER,
    KIND_ERROR,
    KIND_SCHEMAS,
    METRIC_COLUMNS,
    NEEDS_ATTENTION,
    OUTPUT_SCHEMAS,
    PROCESSED,
)

__all__ = ("OUTPUT_FILE", "SORT_KEYS", "Assembled", "assemble_outputs", "attention_table", "bucket_timings",
           "fleet_metrics", "read_staged", "rows_of_kind", "sorted_table", "write_table")

#: Each output table is a directory holding this one Parquet file.
OUTPUT_FILE = "part-00000.parquet"
#: Every table's rows in a fixed order (nulls first), so the same input gives the same files.
SORT_KEYS: Mapping[str, tuple[str, ...]] = {
    "app_metrics": ("app_id",),
    "client_assignments": ("app_id", "process_id"),
    "consumer_assignments": ("app_id", "process_id", "consumer_id"),
    "errors": ("table", "app_id", "effect", "reason_code", "source_row", "reason"),
}
_KIND_OF = {"app_metrics": KIND_APP, "client_assignments": KIND_CLIENT, "consumer_assignments": KIND_CONSUMER,
            "errors": KIND_ERROR}
#: Threads writing the output tables (assemble_outputs).
_WRITERS = 2
_FLEET_STATISTICS = ("apps", "sum", "mean", "min", "p50", "p90", "p95", "max")


@dataclass(frozen=True)
class Assembled:
    """What the manifest needs from a run's results: every application's row (schemas.APP_ROW, with the
    input rows it used and its timings), the errors table, the rows written per output table, and the
    buckets' timings summed (bucket_timings)."""

    apps: pa.Table
    errors: pa.Table
    rows: Mapping[str, int]
    timings: Mapping[str, float]


def read_staged(processed: Path) -> pa.Table:
    """The staged results (schemas.PROCESSED rows), as Spark wrote them."""
    return pq.read_table(processed, columns=to_arrow_schema(PROCESSED).names)


def rows_of_kind(staged: pa.Table, kind: str) -> pa.Table:
    """Every row of one kind (schemas.KIND_SCHEMAS) the buckets returned, from the staged results."""
    schema = to_arrow_schema(KIND_SCHEMAS[kind])
    payloads = staged.column("payload")
    tables = [from_ipc(payloads[int(i)].as_buffer())
              for i in pc.indices_nonzero(pc.fill_null(pc.equal(staged["kind"], kind), False)).to_numpy()]
    if not tables:
        return schema.empty_table()
    found = pa.concat_tables(tables)
    if not found.schema.equals(schema):
        raise ValueError(f"staged {kind} rows have schema {found.schema}, expected {schema}")
    return found


def bucket_timings(staged: pa.Table) -> dict[str, float]:
    """The buckets' timings summed over the run (python_seconds, check_seconds, read_seconds)."""
    rows = staged.filter(pc.equal(staged["kind"], KIND_BUCKET))
    return {name: round(float(pc.sum(rows[name]).as_py() or 0.0), 3)
            for name in ("python_seconds", "check_seconds", "read_seconds")}


def sorted_table(table: pa.Table, keys: tuple[str, ...]) -> pa.Table:
    """``table``'s rows ordered by ``keys`` (nulls first)."""
    return table.sort_by([(key, "ascending", "at_start") for key in keys])


def fleet_metrics(app_metrics: pa.Table) -> pa.Table:
    """Each metric summarised over the applications the engine ran (every status but REJECTED): count of
    known values, exact sum (additive metrics only: a skew or imbalance summed over applications means
    nothing, analysis.fleet_statistics), mean, min, median, 90th and 95th percentiles (linear interpolation)
    and max; a row per metric, none when no application ran."""
    schema = to_arrow_schema(FLEET_METRICS)
    ran = app_metrics.filter(pc.not_equal(app_metrics["status"], reasons.STATUS_REJECTED))
    if ran.num_rows == 0:
        return schema.empty_table()
    rows = []
    for name, _ in METRIC_COLUMNS:
        values = np.sort(ran[name].drop_null().cast(pa.float64()).to_numpy())
        if len(values) == 0:
            rows.append({"metric": name, "apps": 0})
            continue
        total = math.fsum(values.tolist())
        statistics = (len(values), total if is_additive(name) else None, total / len(values), values[0],
                      np.percentile(values, 50), np.percentile(values, 90), np.percentile(values, 95), values[-1])
        rows.append({"metric": name} | {key: value.item() if isinstance(value, np.generic) else value
                                        for key, value in zip(_FLEET_STATISTICS, statistics, strict=True)})
    return pa.Table.from_pylist(rows, schema=schema)


def attention_table(app_metrics: pa.Table, limit: int = DEFAULT_ATTENTION) -> pa.Table:
    """The needs-attention view (analysis.attention) of the applications the engine ran."""
    ran = app_metrics.filter(pc.not_equal(app_metrics["status"], reasons.STATUS_REJECTED))
    rows = [row.to_dict() for row in needs_attention(ran.to_pylist(), limit)]
    return pa.Table.from_pylist(rows, schema=to_arrow_schema(NEEDS_ATTENTION))


def write_table(table: pa.Table, directory: Path) -> int:
    """Write ``table`` as the one Parquet file of its output directory; returns its rows."""
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, directory / OUTPUT_FILE)
    return int(table.num_rows)


def assemble_outputs(processed: Path, staging: Path, attention: int = DEFAULT_ATTENTION) -> Assembled:
    """Write every output table (OUTPUT_SCHEMAS) into ``staging`` from the results staged in ``processed``
    (``attention``: applications per metric in needs_attention)."""
    staged = read_staged(processed)
    # Each table is written by a thread while the next one is built (Parquet's encoding and compression
    # release the GIL): the writing was half of this step, which runs after the last bucket on an idle core.
    with ThreadPoolExecutor(_WRITERS, thread_name_prefix="taskassign-write") as pool:
        writing: dict[str, Future[int]] = {}

        def write(name: str, table: pa.Table) -> None:
            writing[name] = pool.submit(write_table, table, staging / name)

        apps = sorted_table(rows_of_kind(staged, KIND_APP), SORT_KEYS["app_metrics"])
        app_metrics = apps.select(to_arrow_schema(APP_METRICS).names)
        write("app_metrics", app_metrics)
        write("fleet_metrics", fleet_metrics(app_metrics))
        write("needs_attention", attention_table(app_metrics, attention))
        for name in ("client_assignments", "consumer_assignments"):
            write(name, sorted_table(rows_of_kind(staged, _KIND_OF[name]), SORT_KEYS[name]))
        errors = sorted_table(rows_of_kind(staged, KIND_ERROR), SORT_KEYS["errors"])
        write("errors", errors)
        written = {name: done.result() for name, done in writing.items()}
    return Assembled(apps, errors, {name: written[name] for name in OUTPUT_SCHEMAS}, bucket_timings(staged))
