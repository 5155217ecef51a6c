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

import gc
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from taskassign.fleet.bucket import BucketResult, process_bucket
from taskassign.fleet.checks import MALFORMED, SOURCE_ROW
from taskassign.fleet.outputs import app_row, client_rows, consumer_rows
from taskassign.fleet.tables import INPUT_TABLES
from taskassign.internals.gc_pause import gc_paused
from taskassign.pipeline.ipc import to_ipc
from taskassign.pipeline.schemas import KIND_APP, KIND_BUCKET, KIND_CLIENT, KIND_CONSUMER, KIND_ERROR, KIND_SCHEMAS

__all__ = ("TABLE", "bucket_processor", "split_tables")

ArrowBatches = Iterator[pa.RecordBatch]

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


def bucket_processor(
    schema: StructType, assignor_override: str | None, kafka_compat: bool, allow_plugins: bool = False
) -> Callable[[ArrowBatches], ArrowBatches]:
    """Gathered rows of one bucket in; its results and errors rows (as IPC streams) and its timings out
    (``schema``: pipeline.schemas.PROCESSED)."""
    arrow_schema = to_arrow_schema(schema)
    kind_schemas = {kind: to_arrow_schema(struct) for kind, struct in KIND_SCHEMAS.items()}

    def process(batches: ArrowBatches) -> ArrowBatches:
        collected = list(batches)
        if not collected:
            return
        # The worker's own time (excluding waits for Spark to send or take batches): the Python side of
        # the run's time split (docs/pipeline.md, Performance).
        started = time.perf_counter()
        with gc_paused():  # rows, records, scenarios and assignments: much allocated, little garbage
            tables: Mapping[str, pa.Table] = split_tables(pa.Table.from_batches(collected))
            del collected
            result = process_bucket(tables, assignor_override=assignor_override, kafka_compat=kafka_compat,
                                    allow_plugins=allow_plugins)
        spent = time.perf_counter() - started
        for chunk in _chunks(result):
            converting = time.perf_counter()
            streams = [{"kind": kind, "rows": len(rows),
                        "payload": to_ipc(pa.Table.from_pylist(rows, schema=kind_schemas[kind]))}
                       for kind, rows in chunk.items() if rows]
            batch = pa.RecordBatch.from_pylist(streams, schema=arrow_schema)
            spent += time.perf_counter() - converting
            yield batch
        yield pa.RecordBatch.from_pylist([{"kind": KIND_BUCKET, "check_seconds": result.check_seconds,
                                           "python_seconds": spent}], schema=arrow_schema)
        del result
        gc.unfreeze()  # what the pause froze is collectable again (internals.gc_pause)

    return process
