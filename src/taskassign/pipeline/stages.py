"""The pipeline's stages: plain DataFrame -> DataFrame functions, each with its own test.

1. ``gather``: every input table in one frame, shuffled once, by application: each partition (bucket)
   holds every row of its applications.
2. ``process_applications``: each bucket is one Python call (fleet.bucket.process_bucket, through Arrow)
   that checks every row, derives tasks, end-offset sums and lags [host-and-wire spec 1.3-1.6, 2.2-2.4],
   runs the engine on each application and returns results, errors rows and its timing.
3. ``results``, ``errors``: the processed rows by kind.
4. ``client_assignments``, ``consumer_assignments``, ``app_metrics``, ``fleet_metrics``: the outputs.

Spark reads, shuffles, moves rows to and from Python as Arrow, aggregates the fleet metrics and writes;
everything that is per application runs in the bucket, where it costs no extra pass over the data.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from taskassign.fleet import reasons
from taskassign.pipeline import engine_udf
from taskassign.pipeline.schemas import ERRORS, METRIC_COLUMNS, PROCESSED

__all__ = (
    "app_metrics",
    "client_assignments",
    "consumer_assignments",
    "errors",
    "fleet_metrics",
    "gather",
    "process_applications",
    "results",
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


# -- 3. by kind -------------------------------------------------------------------------------------------------

def results(processed: DataFrame) -> DataFrame:
    """APP_RESULT per application id of the applications table."""
    return processed.where(F.col("kind") == engine_udf.KIND_RESULT).select("result.*")


def errors(processed: DataFrame) -> DataFrame:
    """ERRORS: every rejected input row and every flagged application."""
    return processed.where(F.col("kind") == engine_udf.KIND_ERROR).select(
        *[F.col("error")[f.name].alias(f.name) for f in ERRORS.fields])


# -- 4. outputs -------------------------------------------------------------------------------------------------

def client_assignments(results: DataFrame) -> DataFrame:
    """One row per client of every assigned application (KEPT_PREVIOUS and INVALID_ASSIGNMENT too)."""
    c = F.col("c")
    return (results.select("app_id", "status", F.explode("clients").alias("c"))
            .select("app_id", c["process_id"].alias("process_id"), "status", c["rack"].alias("rack"),
                    c["num_threads"].alias("num_threads"), F.size(c["active_tasks"]).alias("num_active"),
                    F.size(c["standby_tasks"]).alias("num_standby"), c["active_tasks"].alias("active_tasks"),
                    c["standby_tasks"].alias("standby_tasks"),
                    c["followup_rebalance_deadline_ms"].alias("followup_rebalance_deadline_ms"),
                    c["records_to_restore"].alias("records_to_restore"), c["state_load"].alias("state_load"),
                    c["active_moves_in"].alias("active_moves_in")))


def consumer_assignments(results: DataFrame) -> DataFrame:
    """One row per consumer (thread), when the leader distributed each client's tasks over its threads."""
    c = F.col("c")
    return (results.select("app_id", F.explode("consumers").alias("c"))
            .select("app_id", c["process_id"].alias("process_id"), c["consumer_id"].alias("consumer_id"),
                    c["active_tasks"].alias("active_tasks"), c["standby_tasks"].alias("standby_tasks"),
                    c["withheld_tasks"].alias("withheld_tasks"),
                    c["followup_rebalance_deadline_ms"].alias("followup_rebalance_deadline_ms")))


def app_metrics(results: DataFrame) -> DataFrame:
    """One row per application id: status, outcome and metrics (null for an application the engine did
    not assign)."""
    metric_columns = [F.col("metrics")[name].alias(name) for name, _ in METRIC_COLUMNS]
    return results.select("app_id", "status", "reason_code", "reason", "assignor", "error",
                          "probing_rebalance_needed", "end_offsets_known", *metric_columns)


def fleet_metrics(metrics: DataFrame) -> DataFrame:
    """Each metric summarised over the applications the engine assigned: count, sum, mean, min,
    median, 95th percentile and max."""
    names = [name for name, _ in METRIC_COLUMNS]
    ran = metrics.where(F.col("status") != reasons.STATUS_REJECTED).select(
        "app_id", *[F.col(name).cast("double").alias(name) for name in names])
    long = ran.unpivot("app_id", tuple(names), "metric", "value")
    order = {name: i for i, name in enumerate(names)}
    position = F.create_map(*[x for name, i in order.items() for x in (F.lit(name), F.lit(i))])
    return (long.groupBy("metric").agg(
        F.count("value").alias("apps"), F.sum("value").alias("sum"), F.avg("value").alias("mean"),
        F.min("value").alias("min"), F.percentile("value", 0.5).alias("p50"),
        F.percentile("value", 0.95).alias("p95"), F.max("value").alias("max"))
        .orderBy(position[F.col("metric")]))
