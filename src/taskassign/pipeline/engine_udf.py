"""The Python side of the pipeline: one call per bucket inside Spark's Arrow workers.

``gathered`` rows (pipeline.stages.gather: every input table in one frame, a ``_table`` number per row,
partitioned by application) arrive as Arrow record batches. ``bucket_processor`` collects its
partition's batches, splits them back into the input tables and runs ``fleet.bucket.process_bucket``:
row checks, derivations, the engine and the errors rows, for every application of the bucket in one
Python call. What comes back is one row per result, per errors row and per bucket (its timing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from taskassign.fleet.bucket import BucketResult, process_bucket
from taskassign.fleet.checks import MALFORMED, SOURCE_ROW
from taskassign.fleet.tables import INPUT_TABLES

__all__ = ("KIND_BUCKET", "KIND_ERROR", "KIND_RESULT", "TABLE", "bucket_processor", "split_tables")

ArrowBatches = Iterator[pa.RecordBatch]

#: The column of gathered rows that says which input table a row is from (its position in INPUT_TABLES).
TABLE = "_table"
KIND_RESULT, KIND_ERROR, KIND_BUCKET = "result", "error", "bucket"
#: Results per output record batch (an application's result holds all its task ids).
RESULTS_PER_BATCH = 32


def split_tables(gathered: pa.Table) -> dict[str, pa.Table]:
    """The input tables of gathered rows, each with its spec's columns and the bookkeeping columns."""
    tables = {}
    numbers = gathered.column(TABLE)
    for number, (name, spec) in enumerate(INPUT_TABLES.items()):
        rows = gathered.filter(pc.equal(numbers, number))
        tables[name] = rows.select([*spec.column_names, SOURCE_ROW, MALFORMED])
    return tables


def _records(result: BucketResult) -> Iterator[list[dict[str, Any]]]:
    chunk: list[dict[str, Any]] = []
    for app in result.results:
        chunk.append({"kind": KIND_RESULT, "app_id": app["app_id"], "result": app})
        if len(chunk) >= RESULTS_PER_BATCH:
            yield chunk
            chunk = []
    chunk += [{"kind": KIND_ERROR, "app_id": e["app_id"], "error": e} for e in result.errors]
    chunk.append({"kind": KIND_BUCKET, "check_seconds": result.check_seconds})
    yield chunk


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
        tables: Mapping[str, pa.Table] = split_tables(pa.Table.from_batches(collected))
        del collected
        result = process_bucket(tables, assignor_override=assignor_override, kafka_compat=kafka_compat)
        for chunk in _records(result):
            yield pa.RecordBatch.from_pylist(chunk, schema=arrow_schema)

    return process
