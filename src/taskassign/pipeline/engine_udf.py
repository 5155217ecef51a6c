"""The Python side of the pipeline: one call per bucket inside Spark's Arrow workers.

``gathered`` rows (pipeline.stages.gather: every input table in one frame, a ``_table`` number per row,
partitioned by application) arrive as Arrow record batches. ``bucket_processor`` collects its
partition's batches, splits them back into the input tables and runs ``fleet.bucket.process_bucket``:
row checks, derivations, the engine and the errors rows, for every application of the bucket in one
Python call. What comes back is one row per row of every output table (app_metrics, client and consumer
assignments, errors) and one per bucket (its timings).
"""

from __future__ import annotations

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

__all__ = ("KIND_APP", "KIND_BUCKET", "KIND_CLIENT", "KIND_CONSUMER", "KIND_ERROR", "TABLE", "bucket_processor",
           "split_tables")

ArrowBatches = Iterator[pa.RecordBatch]

#: The column of gathered rows that says which input table a row is from (its position in INPUT_TABLES).
TABLE = "_table"
KIND_APP, KIND_CLIENT, KIND_CONSUMER, KIND_ERROR, KIND_BUCKET = "app", "client", "consumer", "error", "bucket"
#: Applications per output record batch (their client rows hold all their task ids).
APPS_PER_BATCH = 32


def split_tables(gathered: pa.Table) -> dict[str, pa.Table]:
    """The input tables of gathered rows, each with its spec's columns and the bookkeeping columns."""
    tables = {}
    numbers = gathered.column(TABLE)
    for number, (name, spec) in enumerate(INPUT_TABLES.items()):
        rows = gathered.filter(pc.equal(numbers, number))
        tables[name] = rows.select([*spec.column_names, SOURCE_ROW, MALFORMED])
    return tables


def _records(result: BucketResult) -> Iterator[list[dict[str, Any]]]:
    """The bucket's output rows, a few applications' rows per record batch."""
    chunk: list[dict[str, Any]] = []
    for n, app in enumerate(result.results, 1):
        chunk.append({"kind": KIND_APP, "app": app_row(app)})
        chunk += [{"kind": KIND_CLIENT, "client": row} for row in client_rows(app)]
        chunk += [{"kind": KIND_CONSUMER, "consumer": row} for row in consumer_rows(app)]
        if n % APPS_PER_BATCH == 0:
            yield chunk
            chunk = []
    yield chunk + [{"kind": KIND_ERROR, "error": e} for e in result.errors]


def bucket_processor(
    schema: StructType, assignor_override: str | None, kafka_compat: bool
) -> Callable[[ArrowBatches], ArrowBatches]:
    """Gathered rows of one bucket in, its results, errors rows and timing out (``schema``:
    pipeline.schemas.PROCESSED)."""
    arrow_schema = to_arrow_schema(schema)

    def process(batches: ArrowBatches) -> ArrowBatches:
        collected = list(batches)
        if not collected:
            return
        # The worker's own time (excluding waits for Spark to send or take batches): the Python side of
        # the run's time split (docs/pipeline.md, Performance).
        started = time.perf_counter()
        tables: Mapping[str, pa.Table] = split_tables(pa.Table.from_batches(collected))
        del collected
        result = process_bucket(tables, assignor_override=assignor_override, kafka_compat=kafka_compat)
        spent = time.perf_counter() - started
        for chunk in _records(result):
            converting = time.perf_counter()
            batch = pa.RecordBatch.from_pylist(chunk, schema=arrow_schema)
            spent += time.perf_counter() - converting
            yield batch
        yield pa.RecordBatch.from_pylist([{"kind": KIND_BUCKET, "check_seconds": result.check_seconds,
                                           "python_seconds": spent}], schema=arrow_schema)

    return process
