"""The pipeline's stages: plain DataFrame -> DataFrame functions, each with its own test.

1. ``gather``: every input table in one frame, shuffled once, by application: each partition (bucket)
   holds every row of its applications.
2. ``process_applications``: each bucket is one Python call (fleet.bucket.process_bucket, through Arrow)
   that checks every row, derives tasks, end-offset sums and lags [host-and-wire spec 1.3-1.6, 2.2-2.4],
   runs the engine on each application and returns the rows of every output table and its timings.
3. ``app_metrics``, ``client_assignments``, ``consumer_assignments``, ``errors``: the processed rows by
   kind (the Python side returns them flat); ``fleet_metrics``: every metric summarised over the fleet.

Spark reads, shuffles, moves rows to and from Python as Arrow, aggregates the fleet metrics and writes;
everything that is per application runs in the bucket, where it costs no extra pass over the data.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from taskassign.fleet import reasons
from taskassign.pipeline import engine_udf
from taskassign.pipeline.schemas import (
    APP_METRICS,
    APP_ROW,
    CLIENT_ASSIGNMENTS,
    CONSUMER_ASSIGNMENTS,
    ERRORS,
    METRIC_COLUMNS,
    PROCESSED,
)

__all__ = (
    "app_metrics",
    "app_rows",
    "client_assignments",
    "consumer_assignments",
    "errors",
    "fleet_metrics",
    "gather",
    "process_applications",
)


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

def process_applications(gathered: DataFrame, assignor_override: str | None, kafka_compat: bool) -> DataFrame:
    """PROCESSED rows: every bucket (partition of ``gathered``) is one Python call over all its rows."""
    processor = engine_udf.bucket_processor(PROCESSED, assignor_override, kafka_compat)
    return gathered.mapInArrow(processor, PROCESSED)


# -- 3. outputs -------------------------------------------------------------------------------------------------

def _of_kind(processed: DataFrame, kind: str, schema: StructType) -> DataFrame:
    return processed.where(F.col("kind") == kind).select(*[F.col(kind)[f.name].alias(f.name) for f in schema.fields])


def app_rows(processed: DataFrame) -> DataFrame:
    """APP_ROW per application id of the applications table: app_metrics plus source rows and timings."""
    return _of_kind(processed, engine_udf.KIND_APP, APP_ROW)


def app_metrics(processed: DataFrame) -> DataFrame:
    """One row per application id: status, outcome and metrics (null for an application the engine did
    not assign)."""
    return _of_kind(processed, engine_udf.KIND_APP, APP_METRICS)


def client_assignments(processed: DataFrame) -> DataFrame:
    """One row per client of every application the engine ran (KEPT_PREVIOUS and INVALID_ASSIGNMENT too)."""
    return _of_kind(processed, engine_udf.KIND_CLIENT, CLIENT_ASSIGNMENTS)


def consumer_assignments(processed: DataFrame) -> DataFrame:
    """One row per consumer (thread), when the leader distributed each client's tasks over its threads."""
    return _of_kind(processed, engine_udf.KIND_CONSUMER, CONSUMER_ASSIGNMENTS)


def errors(processed: DataFrame) -> DataFrame:
    """Every rejected input row and every flagged application."""
    return _of_kind(processed, engine_udf.KIND_ERROR, ERRORS)


def fleet_metrics(metrics: DataFrame) -> DataFrame:
    """Each metric summarised over the applications the engine assigned: count, sum, mean, min,
    median, 95th percentile and max, in one partition (one row per application in, a few dozen out: a
    shuffle and a range-partitioned sort would cost more than the work, so one task does it all)."""
    names = [name for name, _ in METRIC_COLUMNS]
    ran = metrics.where(F.col("status") != reasons.STATUS_REJECTED).select(
        "app_id", *[F.col(name).cast("double").alias(name) for name in names])
    long = ran.unpivot("app_id", tuple(names), "metric", "value").coalesce(1)
    order = {name: i for i, name in enumerate(names)}
    position = F.create_map(*[x for name, i in order.items() for x in (F.lit(name), F.lit(i))])
    return (long.groupBy("metric").agg(
        F.count("value").alias("apps"), F.sum("value").alias("sum"), F.avg("value").alias("mean"),
        F.min("value").alias("min"), F.percentile("value", 0.5).alias("p50"),
        F.percentile("value", 0.95).alias("p95"), F.max("value").alias("max"))
        .sortWithinPartitions(position[F.col("metric")]))
