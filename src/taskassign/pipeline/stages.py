"""The pipeline's Spark stages: plain DataFrame -> DataFrame functions, each with its own test.

1. ``gather``: every input table in one frame, shuffled once, by application: each partition (bucket)
   holds every row of its applications.
2. ``process_applications``: each bucket is one Python call (fleet.bucket.process_bucket, through Arrow)
   that checks every row, derives tasks, end-offset sums and lags [host-and-wire spec 1.3-1.6, 2.2-2.4],
   runs the engine and the metrics on each application and returns the rows of every output table (as
   Arrow IPC streams) and its timings.

Spark reads, types, shuffles and moves rows to Python, and stores what comes back; everything that is
per application runs in the bucket, where it costs no extra pass over the data. The driver then
assembles the output tables and the fleet's metrics from the stored results (pipeline.assemble).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from taskassign.pipeline import engine_udf
from taskassign.pipeline.schemas import PROCESSED

__all__ = ("gather", "process_applications")


# -- 1. one shuffle ---------------------------------------------------------------------------------------------

def gather(tables: Mapping[str, DataFrame], buckets: int | None) -> DataFrame:
    """Every row of every input table (``tables`` in INPUT_TABLES order), with ``_table`` (its table's
    position) and the union of their columns (null where a table has no such column), partitioned into
    ``buckets`` by application (None: not shuffled)."""
    union: DataFrame | None = None
    for number, df in enumerate(tables.values()):
        part = df.withColumn(engine_udf.TABLE, F.lit(number).cast("byte"))
        union = part if union is None else union.unionByName(part, allowMissingColumns=True)
    assert union is not None
    return union.repartition(buckets, "app_id") if buckets else union


# -- 2. the Python side -----------------------------------------------------------------------------------------

Processor = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]


def process_applications(
    gathered: DataFrame, assignor_override: str | None, kafka_compat: bool, allow_plugins: bool = False,
    wrap: Callable[[Processor], Processor] | None = None,
) -> DataFrame:
    """PROCESSED rows: every bucket (partition of ``gathered``) is one Python call over all its rows; its
    output tables' rows come back as Arrow IPC streams (pipeline.assemble reads them). ``wrap``: around
    each bucket's call (the progress count, pipeline.progress)."""
    processor = engine_udf.bucket_processor(PROCESSED, assignor_override, kafka_compat, allow_plugins)
    return gathered.mapInArrow(wrap(processor) if wrap is not None else processor, PROCESSED)
