"""The pipeline's Spark stages: plain DataFrame -> DataFrame functions, each with its own test.

1. ``gather``: every input table in one frame, shuffled once, by application: each partition (bucket)
   holds every row of its applications.
2. ``process_applications``: each bucket is one Python call (fleet.bucket.process_bucket, through Arrow)
   that checks every row, derives tasks, end-offset sums and lags as Kafka's leader does (fleet.derive),
   runs the engine and the metrics on each application and returns the rows of every output table (as
   Arrow IPC streams) and its timings.

Spark reads, types, shuffles and moves rows to Python, and stores what comes back; everything that is
per application runs in the bucket, where it costs no extra pass over the data. The driver then
assembles the output tables and the fleet's metrics from the stored results (pipeline.assemble).

A snapshot of Parquet tables that Spark would read as they are takes a shorter path (pipeline.scatter):
``scatter`` has Python tasks read the files and split their rows by bucket into Arrow streams, Spark
shuffles those streams to their buckets, and ``process_scattered`` runs the same bucket work on them. In
a local session the driver splits them into a file per bucket instead (pipeline.local_scatter), and
``process_bucket_files`` runs one task per bucket on those files (an RDD job: no plan, no Arrow in the JVM).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark import RDD
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from taskassign.pipeline import engine_udf
from taskassign.pipeline.engine_udf import DEFAULT_SETTINGS, EngineSettings
from taskassign.pipeline.scatter import SCATTERED_FIELDS, Piece, scatter_reader
from taskassign.pipeline.schemas import PROCESSED, STAGED_FILE
from taskassign.pipeline.spark_hash import partition_keys

__all__ = ("gather", "process_applications", "process_bucket_files", "process_scattered", "scatter")


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

def process_applications(gathered: DataFrame, settings: EngineSettings = DEFAULT_SETTINGS) -> DataFrame:
    """PROCESSED rows: every bucket (partition of ``gathered``) is one Python call over all its rows; its
    output tables' rows come back as Arrow IPC streams (pipeline.assemble reads them). With ``staged``
    (a directory), each bucket writes its rows there as a Parquet file and returns a STAGED_FILE row.
    ``on_rows``: sees each bucket's PROCESSED rows (the progress count, pipeline.progress)."""
    processor = engine_udf.bucket_processor(PROCESSED, settings)
    return gathered.mapInArrow(processor, PROCESSED if settings.staged is None else STAGED_FILE)


# -- the Parquet path: Python reads, Spark shuffles Arrow streams ------------------------------------------------

def scatter(spark: Any, tasks: Sequence[tuple[Piece, ...]], buckets: int) -> DataFrame:
    """The snapshot's rows as Arrow streams per (bucket, table) (pipeline.scatter), one Spark task per
    scatter task, shuffled so that bucket ``b``'s streams make partition ``b``."""
    schema = from_arrow_schema(pa.schema(SCATTERED_FIELDS))
    reader = scatter_reader(tasks, partition_keys(buckets))
    scattered: DataFrame = spark.range(0, len(tasks), 1, max(1, len(tasks))).mapInArrow(reader, schema)
    return scattered.repartition(buckets, "key")


def process_scattered(scattered: DataFrame, settings: EngineSettings = DEFAULT_SETTINGS) -> DataFrame:
    """As process_applications, from the buckets' scattered streams."""
    processor = engine_udf.scattered_processor(PROCESSED, settings)
    return scattered.mapInArrow(processor, PROCESSED if settings.staged is None else STAGED_FILE)


def process_bucket_files(
    spark: Any, directory: str, buckets: int, settings: EngineSettings = DEFAULT_SETTINGS
) -> RDD[dict[str, Any]]:
    """As process_scattered, for buckets the driver wrote to files in ``directory`` (pipeline.local_scatter):
    one task per bucket, no scatter stage and no shuffle; its rows come back as dicts. An RDD of the bucket
    numbers, not a DataFrame: nothing for Spark SQL to plan nor for the JVM to convert to Arrow, whose
    first use in a fresh session held the first bucket back (docs/pipeline.md, Performance)."""
    processor = engine_udf.bucket_file_processor(PROCESSED, directory, settings)
    numbers: RDD[int] = spark.sparkContext.parallelize(range(buckets), buckets)
    return numbers.mapPartitions(engine_udf.over_bucket_numbers(processor))
