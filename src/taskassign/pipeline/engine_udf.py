"""The Python side of the pipeline: one call per bucket inside Spark's Arrow workers.

``gathered`` rows (pipeline.stages.gather: every input table in one frame, a ``_table`` number per row,
partitioned by application) arrive as Arrow record batches. ``bucket_processor`` collects its
partition's batches, splits them back into the input tables and runs ``fleet.bucket.process_bucket``:
row checks, derivations, the engine and the errors rows, for every application of the bucket in one
Python call. What comes back (pipeline.schemas.PROCESSED) is the rows of every output table as Arrow IPC
streams, a few applications per stream and kind (per application, client, consumer, errors), and one
row per bucket with its timings.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from taskassign.assignors.plugin_process import DEFAULT_PLUGIN_LIMITS, PluginLimits, set_plugin_limits
from taskassign.assignors.registry import DEFAULT_ASSIGNOR, resolve
from taskassign.fleet.bucket import BucketResult, process_bucket
from taskassign.fleet.checks import MALFORMED, SOURCE_ROW
from taskassign.fleet.outputs import app_row, client_rows, consumer_rows
from taskassign.fleet.snapshot_files import arrow_schema
from taskassign.fleet.tables import INPUT_TABLES
from taskassign.internals.gc_pause import gc_paused_task
from taskassign.pipeline.ipc import from_ipc, to_ipc
from taskassign.pipeline.local_scatter import read_bucket
from taskassign.pipeline.schemas import (
    KIND_APP,
    KIND_BUCKET,
    KIND_CLIENT,
    KIND_CONSUMER,
    KIND_ERROR,
    KIND_SCHEMAS,
    STAGED_FILE,
)

__all__ = ("DEFAULT_SETTINGS", "TABLE", "EngineSettings", "bucket_file_processor", "bucket_processor",
           "over_bucket_numbers", "scattered_processor", "scattered_tables", "split_tables", "stage_file",
           "warm_up")

ArrowBatches = Iterator[pa.RecordBatch]
Row = dict[str, Any]
#: A pass-through over a bucket's PROCESSED rows (the run's progress count, pipeline.progress).
RowsHook = Callable[[ArrowBatches], ArrowBatches]


@dataclass(frozen=True)
class EngineSettings:
    """What every bucket's Python call runs with, as one value (the stage functions and processors pass it on
    to ``process_bucket``; sent to the workers with the function, so picklable: no slots)."""

    #: The run's --assignor for every application (the user's choice), else None: each application's own.
    assignor_override: str | None = None
    kafka_compat: bool = False
    #: The run's --kafka-version for every application, else None: each application's own kafka.version.
    kafka_version: str | None = None
    #: The applications' own assignors may be plug-ins (--allow-plugins).
    allow_plugins: bool = False
    #: What a plug-in may take (--plugin-timeout, --plugin-memory): set in each worker before its bucket runs.
    plugin_limits: PluginLimits = DEFAULT_PLUGIN_LIMITS
    #: A directory the buckets write their PROCESSED rows to as Parquet files (returning STAGED_FILE rows).
    staged: str | None = None
    #: Sees each bucket's PROCESSED rows, before any staging (the progress count, pipeline.progress).
    on_rows: RowsHook | None = None


#: Each application's own assignor, no Kafka bugs, no plug-ins from data, rows returned.
DEFAULT_SETTINGS = EngineSettings()
#: The column of gathered rows that says which input table a row is from (its position in INPUT_TABLES).
TABLE = "_table"
#: Applications per IPC stream of each kind (their client rows hold all their task ids): bounds a stream's
#: size, which Spark holds in memory as one value.
APPS_PER_BATCH = 32


def split_tables(gathered: pa.Table) -> dict[str, pa.Table]:
    """The input tables of gathered rows, each with its spec's columns and the bookkeeping columns."""
    tables = {}
    numbers = gathered.column(TABLE)
    for number, (name, spec) in enumerate(INPUT_TABLES.items()):
        rows = gathered.filter(pc.equal(numbers, number))
        tables[name] = rows.select([*spec.column_names, SOURCE_ROW, MALFORMED])
    return tables


def _chunks(result: BucketResult) -> Iterator[dict[str, list[dict[str, Any]]]]:
    """The bucket's output rows by kind, a few applications' rows at a time (errors rows with the last)."""
    chunk: dict[str, list[dict[str, Any]]] = {KIND_APP: [], KIND_CLIENT: [], KIND_CONSUMER: []}
    for n, app in enumerate(result.results, 1):
        chunk[KIND_APP].append(app_row(app))
        chunk[KIND_CLIENT] += client_rows(app)
        chunk[KIND_CONSUMER] += consumer_rows(app)
        if n % APPS_PER_BATCH == 0:
            yield chunk
            chunk = {KIND_APP: [], KIND_CLIENT: [], KIND_CONSUMER: []}
    yield chunk | {KIND_ERROR: [dict(error) for error in result.errors]}


def bucket_processor(schema: StructType, settings: EngineSettings) -> Callable[[ArrowBatches], ArrowBatches]:
    """Gathered rows of one bucket in; its results and errors rows (as IPC streams) and its timings out
    (``schema``: pipeline.schemas.PROCESSED); with ``staged``, written there instead (``stage_file``)."""
    return _processor(lambda gathered: (split_tables(gathered), 0.0), _bucket_runner(schema, settings))


def _processor(
    split: Callable[[pa.Table], tuple[Mapping[str, pa.Table], float]],
    run: Callable[[Mapping[str, pa.Table], float, float], ArrowBatches],
) -> Callable[[ArrowBatches], ArrowBatches]:
    """A bucket's Python call: its partition's batches collected, ``split`` into the input tables (and the
    time already spent reading them elsewhere), then ``run``."""

    def process(batches: ArrowBatches) -> ArrowBatches:
        # Rows, records, scenarios and assignments: much allocated, little garbage; the worker's collection
        # after the task scans only what the task left (internals.gc_pause).
        with gc_paused_task():
            collected = list(batches)
            if not collected:
                return
            # The worker's own time (excluding waits for Spark to send or take batches): the Python side of
            # the run's time split (docs/pipeline.md, Performance).
            started = time.perf_counter()
            tables, read_seconds = split(pa.Table.from_batches(collected))
            del collected
            yield from run(tables, time.perf_counter() - started, read_seconds)

    return process


def scattered_tables(scattered: pa.Table) -> tuple[dict[str, pa.Table], float]:
    """The input tables of a bucket's scattered streams (pipeline.scatter), with the bookkeeping columns
    (null: Parquet rows read as they are), and the scatter tasks' time the rows carry."""
    tables = {}
    names = scattered.column("table")
    for name, spec in INPUT_TABLES.items():
        rows = scattered.filter(pc.fill_null(pc.equal(names, name), False))
        parts = [from_ipc(payload.as_buffer()) for payload in rows.column("payload")]
        table = pa.concat_tables(parts) if parts else arrow_schema(spec).empty_table()
        nulls = pa.nulls(table.num_rows, pa.string())
        tables[name] = table.append_column(SOURCE_ROW, nulls).append_column(MALFORMED, nulls)
    read_seconds = float(pc.sum(scattered.column("read_seconds")).as_py() or 0.0)
    return tables, read_seconds


def scattered_processor(schema: StructType, settings: EngineSettings) -> Callable[[ArrowBatches], ArrowBatches]:
    """``bucket_processor`` for a bucket's scattered streams (pipeline.scatter) instead of gathered rows."""
    return _processor(scattered_tables, _bucket_runner(schema, settings))


def bucket_file_processor(
    schema: StructType, directory: str, settings: EngineSettings
) -> Callable[[ArrowBatches], ArrowBatches]:
    """``scattered_processor`` for buckets the driver wrote to files in ``directory`` (pipeline.local_scatter):
    its partition's rows name the buckets (``id``) whose files it reads."""

    def read(ids: pa.Table) -> tuple[dict[str, pa.Table], float]:
        parts = [read_bucket(directory, bucket, warm_up) for bucket in ids.column("id").to_pylist()]
        return scattered_tables(pa.concat_tables(parts))

    return _processor(read, _bucket_runner(schema, settings))


def warm_up() -> None:
    """Import what a worker's first bucket would import on the way, while it waits for the driver's files
    (pipeline.local_scatter): pandas, which pyarrow imports at its first conversion of Python values (made
    here the same way), the default assignor's modules and OR-Tools' min-cost flow (rack-aware assignment).
    A few tenths of a second of each worker's start that otherwise came after the files."""
    pa.scalar(0)
    resolve(DEFAULT_ASSIGNOR)
    from ortools.graph.python import min_cost_flow  # noqa: F401


def over_bucket_numbers(process: Callable[[ArrowBatches], ArrowBatches]) -> Callable[[Iterable[int]], Iterator[Row]]:
    """``process`` (a processor over rows of bucket numbers, ``id``) as the function of an RDD partition of
    bucket numbers: its rows as dicts."""

    def run(numbers: Iterable[int]) -> Iterator[Row]:
        ids = list(numbers)
        if ids:
            for batch in process(iter([pa.RecordBatch.from_pydict({"id": pa.array(ids, pa.int64())})])):
                yield from batch.to_pylist()

    return run


def stage_file(batches: ArrowBatches, directory: str, schema: pa.Schema) -> ArrowBatches:
    """Write ``batches`` as one Parquet file into ``directory`` and yield one STAGED_FILE row naming it.

    Spark's writer converted the results value by value into its rows and then into Parquet: JVM work
    (and its code's compilation) for bytes that only the driver reads back. The file appears under its
    final name (``part-<partition>-<attempt>``) only once complete; the driver reads the files of the
    attempts Spark reports as successful and removes any other."""
    from pyspark import TaskContext

    context = TaskContext.get()
    name = f"part-{context.partitionId():05d}-{context.attemptNumber()}.parquet" if context else "part-local.parquet"
    target = Path(directory) / name
    partial = target.with_name(f".{name}.partial")
    rows = 0
    with pq.ParquetWriter(partial, schema) as writer:
        for batch in batches:
            writer.write_batch(batch)
            rows += batch.num_rows
    partial.replace(target)
    yield pa.RecordBatch.from_pylist([{"file": name, "rows": rows}], schema=to_arrow_schema(STAGED_FILE))


def _bucket_runner(
    schema: StructType, settings: EngineSettings
) -> Callable[[Mapping[str, pa.Table], float, float], ArrowBatches]:
    """The bucket's work once its input tables are split out: process_bucket, then its output rows as IPC
    streams, then one row with its timings (``spent``: the worker's time so far; ``read_seconds``: the
    scatter tasks' time for these rows); with ``staged``, those rows go to a file there (stage_file); ``on_rows``
    sees those rows first (before any staging)."""
    arrow_schema_ = to_arrow_schema(schema)
    kind_schemas = {kind: to_arrow_schema(struct) for kind, struct in KIND_SCHEMAS.items()}
    staged, on_rows = settings.staged, settings.on_rows

    def run(tables: Mapping[str, pa.Table], spent: float, read_seconds: float) -> ArrowBatches:
        rows = results(tables, spent, read_seconds)
        if on_rows is not None:  # the PROCESSED rows, before any staging (the progress count reads them)
            rows = on_rows(rows)
        return rows if staged is None else stage_file(rows, staged, arrow_schema_)

    def results(tables: Mapping[str, pa.Table], spent: float, read_seconds: float) -> ArrowBatches:
        started = time.perf_counter()
        set_plugin_limits(settings.plugin_limits)  # a worker is a process of its own: the driver's do not reach it
        result = process_bucket(tables, assignor_override=settings.assignor_override,
                                kafka_compat=settings.kafka_compat, allow_plugins=settings.allow_plugins,
                                kafka_version=settings.kafka_version)
        spent += time.perf_counter() - started
        for chunk in _chunks(result):
            converting = time.perf_counter()
            streams = [{"kind": kind, "rows": len(rows),
                        "payload": to_ipc(pa.Table.from_pylist(rows, schema=kind_schemas[kind]))}
                       for kind, rows in chunk.items() if rows]
            batch = pa.RecordBatch.from_pylist(streams, schema=arrow_schema_)
            spent += time.perf_counter() - converting
            yield batch
        yield pa.RecordBatch.from_pylist([{"kind": KIND_BUCKET, "check_seconds": result.check_seconds,
                                           "python_seconds": spent + read_seconds,
                                           "read_seconds": read_seconds}], schema=arrow_schema_)
        del result

    return run
