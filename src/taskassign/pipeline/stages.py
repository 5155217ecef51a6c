"""The pipeline's stages: plain DataFrame -> DataFrame functions, each with its own test.

In order (host-and-wire spec sections in brackets):

1. ``check_configs``: each application's configs and assignor, in the engine's own validation.
2. ``topic_partition_counts`` and ``resolve_topologies``: each application's repartition topics sized,
   co-partitioning enforced, subtopologies' task counts [1.3].
3. ``derive_tasks``: subtopology x partition with each task's source and changelog partitions [1.4, 1.5].
4. ``partition_references`` and ``task_end_offsets``: partition metadata joined to tasks; each task's
   changelog end-offset sum (committed offsets for source-changelog topics, 0 for changelogs not yet
   created, Long.MAX_VALUE on overflow) and state size; unknown ends make every lag -3 [2.2, 2.4].
5. ``client_task_lags``: members' reports merged per client, and each reported task's lag [1.6, 2.3].
6. ``application_inputs``: one nested record per application, bucketed by size for the engine.
7. ``assign_applications``: the engine per application, many applications per Python call.
8. ``client_assignments``, ``consumer_assignments``, ``app_metrics``, ``fleet_metrics``: the outputs.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    IntegerType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from taskassign.fleet import reasons
from taskassign.fleet.app_metrics import METRIC_COLUMNS
from taskassign.fleet.tables import INPUT_TABLES, OWNERSHIP_ACTIVE, OWNERSHIP_STANDBY
from taskassign.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM
from taskassign.pipeline import engine_udf
from taskassign.pipeline.schemas import APP_INPUT, APP_RESULT
from taskassign.pipeline.validate import usable

__all__ = (
    "app_metrics",
    "application_inputs",
    "assign_applications",
    "check_configs",
    "client_assignments",
    "client_task_lags",
    "consumer_assignments",
    "derive_tasks",
    "fleet_metrics",
    "partition_references",
    "resolve_topologies",
    "task_end_offsets",
    "topic_partition_counts",
)

LONG_MAX = 2**63 - 1
_DECIMAL = "decimal(38,0)"
_RESOLVED = StructType([
    StructField("app_id", StringType()), StructField("subtopology", IntegerType()),
    StructField("num_tasks", IntegerType()), StructField("source_counts", MapType(StringType(), IntegerType())),
    StructField("error_code", StringType()), StructField("error_reason", StringType()),
])


# -- 1. configs -------------------------------------------------------------------------------------------------

def check_configs(apps: DataFrame, assignor_override: str | None, kafka_compat: bool) -> DataFrame:
    """Adds ``_config_code``/``_config_reason`` (INVALID_CONFIG, UNKNOWN_ASSIGNOR), ``_required_tags``
    (rack.aware.assignment.tags) and ``_kafka_compat`` to every applications row."""
    schema = StructType([
        *apps.schema.fields, StructField("_config_code", StringType()), StructField("_config_reason", StringType()),
        StructField("_required_tags", ArrayType(StringType())), StructField("_kafka_compat", BooleanType()),
    ])
    return apps.mapInArrow(engine_udf.config_checker(schema, assignor_override, kafka_compat), schema)


# -- 2. topology ------------------------------------------------------------------------------------------------

def topic_partition_counts(partitions: DataFrame) -> DataFrame:
    """(app_id, topic, num_partitions): a topic present in the metadata has its highest partition + 1."""
    return (usable(partitions).groupBy("app_id", "topic")
            .agg((F.max("partition") + 1).cast("int").alias("num_partitions")))


def resolve_topologies(
    subtopologies: DataFrame, counts: DataFrame, repartition_topics: DataFrame, apps: DataFrame
) -> DataFrame:
    """One row per subtopology of every application whose topology resolves (``num_tasks`` and each
    source topic's partition count), or one row per application that does not (``error_code``)."""
    subs = (usable(subtopologies).groupBy("app_id")
            .agg(F.collect_list(F.struct("subtopology", "source_topics", "sink_topics", "copartition_groups"))
                 .alias("subtopologies")))
    topics = (counts.groupBy("app_id")
              .agg(F.map_from_entries(F.collect_list(F.struct("topic", "num_partitions"))).alias("topic_counts")))
    repartition = (usable(repartition_topics).groupBy("app_id")
                   .agg(F.map_from_entries(F.collect_list(F.struct("topic", "num_partitions"))).alias("repartition")))
    compat = usable(apps).select("app_id", F.col("_kafka_compat").alias("kafka_compat"))
    nested = subs.join(compat, "app_id").join(topics, "app_id", "left").join(repartition, "app_id", "left")
    return nested.mapInArrow(engine_udf.topology_resolver(_RESOLVED), _RESOLVED)


# -- 3. tasks ---------------------------------------------------------------------------------------------------

def derive_tasks(resolved: DataFrame, subtopologies: DataFrame) -> DataFrame:
    """Kafka's partition grouper: task p of a subtopology reads partition p of each source topic that has
    it and owns partition p of each changelog topic. A changelog topic that is also a source topic
    (source-changelog) is one partition with both flags while the topic has partition p."""
    subs = usable(subtopologies).select(
        "app_id", "subtopology", "source_topics",
        F.coalesce("stores", F.array().cast("array<string>")).alias("stores"),
        F.coalesce("changelog_topics", F.array().cast("array<string>")).alias("changelog_topics"))
    tasks = (resolved.where(F.col("error_code").isNull())
             .select("app_id", "subtopology", "source_counts",
                     F.explode(F.sequence(F.lit(0), F.col("num_tasks") - 1)).alias("partition"))
             .join(subs, ["app_id", "subtopology"]))
    p = F.col("partition")
    present = F.filter(F.map_entries("source_counts"), lambda e: e["value"] > p)
    present_topics = F.transform(present, lambda e: e["key"])
    sources = F.transform(
        present_topics, lambda t: F.struct(t.alias("topic"), p.alias("partition"), F.lit(True).alias("is_source"),
                                           F.array_contains("changelog_topics", t).alias("is_changelog")))
    changelog_only = F.transform(
        F.filter("changelog_topics", lambda t: ~F.array_contains(present_topics, t)),
        lambda t: F.struct(t.alias("topic"), p.alias("partition"), F.lit(False).alias("is_source"),
                           F.lit(True).alias("is_changelog")))
    return tasks.select("app_id", "subtopology", "partition", "source_topics", "stores", "changelog_topics",
                        F.concat(sources, changelog_only).alias("partitions"))


# -- 4. partitions and end offsets ------------------------------------------------------------------------------

def _task_partitions(tasks: DataFrame) -> DataFrame:
    """One row per (task, partition) with ``needs_end_offset``: a changelog partition whose end comes from
    the log end offset (not a source-changelog topic, whose end is the committed offset)."""
    return (tasks.select("app_id", "subtopology", F.col("partition").alias("task_partition"), "source_topics",
                         F.explode("partitions").alias("p"))
            .select("app_id", "subtopology", "task_partition", "p.topic", "p.partition", "p.is_source",
                    "p.is_changelog",
                    (F.col("p.is_changelog") & ~F.array_contains("source_topics", F.col("p.topic")))
                    .alias("needs_end_offset")))


def partition_references(tasks: DataFrame) -> DataFrame:
    """(app_id, topic, partition, needs_end_offset): every partition some task reads or restores from."""
    return (_task_partitions(tasks).groupBy("app_id", "topic", "partition")
            .agg(F.max("needs_end_offset").alias("needs_end_offset")))


def task_end_offsets(tasks: DataFrame, partitions: DataFrame, counts: DataFrame) -> DataFrame:
    """Tasks with racks on their partitions, ``end_offset_sum``, ``state_bytes`` and ``end_offset_missing``.

    ``partitions`` are the checked topic partitions (only usable rows are read); ``counts`` says which
    topics exist (a changelog topic absent from the metadata is created by this rebalance: ends at 0).
    """
    metadata = usable(partitions).select("app_id", "topic", "partition", "replica_racks", "end_offset",
                                         "committed_offset", "size_bytes")
    existing = counts.select("app_id", "topic", F.lit(True).alias("_exists"))
    parts = (_task_partitions(tasks).join(metadata, ["app_id", "topic", "partition"], "left")
             .join(existing, ["app_id", "topic"], "left"))
    changelog = F.col("is_changelog")
    end = (F.when(~changelog, F.lit(None))
           .when(~F.col("needs_end_offset"), F.coalesce("committed_offset", F.lit(0)))
           .when(F.col("_exists").isNull(), F.lit(0))
           .otherwise(F.col("end_offset")))
    parts = parts.withColumn("_end", end.cast("long")).withColumn(
        "_end_missing", changelog & F.col("_exists").isNotNull() & F.col("needs_end_offset")
        & F.col("end_offset").isNull())
    total = F.sum(F.col("_end").cast(_DECIMAL))
    size_known = F.sum(F.when(changelog & F.col("size_bytes").isNull(), 1).otherwise(0)) == 0
    grouped = parts.groupBy("app_id", "subtopology", F.col("task_partition").alias("partition")).agg(
        F.collect_list(F.struct("topic", "partition", "is_source", "is_changelog",
                                F.col("replica_racks").alias("racks"))).alias("partitions"),
        F.least(F.coalesce(total, F.lit(0).cast(_DECIMAL)), F.lit(LONG_MAX).cast(_DECIMAL)).cast("long")
        .alias("end_offset_sum"),
        F.when(size_known & (F.sum(changelog.cast("int")) > 0),
               F.least(F.sum(F.when(changelog, F.col("size_bytes")).cast(_DECIMAL)),
                       F.lit(LONG_MAX).cast(_DECIMAL)).cast("long")).alias("state_bytes"),
        F.max("_end_missing").alias("end_offset_missing"))
    return tasks.select("app_id", "subtopology", "partition", "stores", "changelog_topics").join(
        grouped, ["app_id", "subtopology", "partition"])


def with_unknown_end_offsets(tasks: DataFrame) -> DataFrame:
    """Kafka's fallback when end offsets cannot be fetched (spec 2.4): if any changelog partition of an
    application lacks its end offset, every task with a changelog of that application gets end -3.
    Adds ``end_offsets_known`` per task (the application's)."""
    known = ~F.max("end_offset_missing").over(Window.partitionBy("app_id"))
    logged = F.size("changelog_topics") > 0
    return (tasks.withColumn("end_offsets_known", known)
            .withColumn("end_offset_sum", F.when(logged & ~F.col("end_offsets_known"), F.lit(UNKNOWN_OFFSET_SUM))
                        .otherwise(F.col("end_offset_sum"))))


# -- 5. clients and lags ----------------------------------------------------------------------------------------

def lag(end_offset_sum: Column, offset_sum: Column) -> Column:
    """Kafka's per-client lag (spec 2.3): -2 and -3 stay; ahead of the changelog: the end offset sum."""
    return (F.when(offset_sum.isNull(), F.lit(None))
            .when(offset_sum.isin(LATEST_OFFSET, UNKNOWN_OFFSET_SUM), offset_sum)
            .when(end_offset_sum < offset_sum, end_offset_sum)
            .otherwise(end_offset_sum - offset_sum))


def client_task_lags(member_tasks: DataFrame, tasks: DataFrame) -> DataFrame:
    """One row per (client, task) the client's members reported: the merged report and its lag.

    Merging follows Kafka's leader: the offset sum of the client's last consumer (in consumer-id order)
    that reported one wins; a task is a previous active if a member owned it as active or reported -2
    (running), else a previous standby. ``consumers`` lists the members that reported it.
    """
    ownership = F.coalesce(F.col("ownership"), F.when(F.col("offset_sum") == LATEST_OFFSET, F.lit(OWNERSHIP_ACTIVE))
                           .otherwise(F.lit(OWNERSHIP_STANDBY)))
    merged = (usable(member_tasks).withColumn("_ownership", ownership)
              .groupBy("app_id", "process_id", "subtopology", "partition")
              .agg(F.when(F.max(F.col("_ownership") == OWNERSHIP_ACTIVE), F.lit(OWNERSHIP_ACTIVE))
                   .otherwise(F.lit(OWNERSHIP_STANDBY)).alias("ownership"),
                   F.max_by("offset_sum", F.when(F.col("offset_sum").isNotNull(), F.col("consumer_id")))
                   .alias("offset_sum"),
                   F.array_sort(F.collect_list("consumer_id")).alias("consumers")))
    ends = tasks.select("app_id", "subtopology", "partition", "end_offset_sum")
    return (merged.join(ends, ["app_id", "subtopology", "partition"])
            .withColumn("lag", lag(F.col("end_offset_sum"), F.col("offset_sum"))))


# -- 6. application records -------------------------------------------------------------------------------------

def _source_row_counts(tables: Mapping[str, DataFrame]) -> DataFrame:
    """(app_id, one count per input table): usable rows per application."""
    counts: DataFrame | None = None
    for name in INPUT_TABLES:
        if name == "applications":
            continue
        per_app = usable(tables[name]).groupBy("app_id").agg(F.count(F.lit(1)).alias(name))
        counts = per_app if counts is None else counts.join(per_app, "app_id", "full")
    assert counts is not None
    return counts


def application_inputs(
    apps: DataFrame, tasks: DataFrame, client_tasks: DataFrame, members: DataFrame,
    checked: Mapping[str, DataFrame], buckets: int,
) -> DataFrame:
    """One APP_INPUT record per usable application, with ``bucket`` (0..buckets-1) assigned round-robin
    over the applications sorted by estimated cost, so every bucket gets a similar share of the work."""
    task_rows = (tasks.groupBy("app_id").agg(F.collect_list(F.struct(
        "subtopology", "partition", "stores", "end_offset_sum", "state_bytes", "partitions")).alias("tasks"),
        F.first("end_offsets_known").alias("end_offsets_known")))
    reported = (client_tasks.groupBy("app_id", "process_id").agg(F.collect_list(F.struct(
        "subtopology", "partition", "ownership", "offset_sum", "lag", "consumers")).alias("tasks")))
    member_rows = usable(members)
    first = F.min_by(F.struct("rack", "client_tags", "host"), "consumer_id")
    clients = (member_rows.groupBy("app_id", "process_id")
               .agg(F.array_sort(F.collect_list("consumer_id")).alias("consumers"), first.alias("_first"))
               .join(reported, ["app_id", "process_id"], "left")
               .groupBy("app_id").agg(F.collect_list(F.struct(
                   "process_id", F.col("_first.rack").alias("rack"), F.col("_first.client_tags").alias("tags"),
                   F.col("_first.host").alias("host"), "consumers", "tasks")).alias("clients")))
    counts = _source_row_counts(checked)
    source_rows = F.struct(F.lit(1).cast("long").alias("applications"),
                           *[F.coalesce(F.col(n), F.lit(0)).cast("long").alias(n)
                             for n in INPUT_TABLES if n != "applications"])
    records = (usable(apps).select("app_id", "assignor", "configs", "now_ms", "leader_process_id")
               .join(task_rows, "app_id", "left").join(clients, "app_id", "left").join(counts, "app_id", "left")
               .withColumn("source_rows", source_rows)
               .withColumn("end_offsets_known", F.coalesce("end_offsets_known", F.lit(True))))
    standbys = F.coalesce(F.col("configs")["num.standby.replicas"].try_cast("int"), F.lit(0))
    cost = (F.coalesce(F.size("tasks"), F.lit(0)) * (F.greatest(standbys, F.lit(0)) + 1)
            + F.coalesce(F.size("clients"), F.lit(0)))
    order = Window.orderBy(F.col("_cost").desc(), F.col("app_id"))
    bucket_of = (records.select("app_id", cost.alias("_cost"))
                 .select("app_id", ((F.row_number().over(order) - 1) % F.lit(buckets)).cast("int").alias("bucket")))
    return records.join(F.broadcast(bucket_of), "app_id").select(*[f.name for f in APP_INPUT.fields])


# -- 7. the engine ----------------------------------------------------------------------------------------------

def assign_applications(inputs: DataFrame, assignor_override: str | None, kafka_compat: bool) -> DataFrame:
    """APP_RESULT per application: every bucket is one Python call that streams its applications."""
    assigner = engine_udf.application_assigner(APP_RESULT, assignor_override, kafka_compat)
    return inputs.groupBy("bucket").applyInArrow(assigner, APP_RESULT)


# -- 8. outputs -------------------------------------------------------------------------------------------------

def client_assignments(results: DataFrame) -> DataFrame:
    """One row per client of every assigned application (KEPT_PREVIOUS and INVALID_ASSIGNMENT too)."""
    c = F.col("c")
    return (results.select("app_id", "status", F.explode("clients").alias("c"))
            .select("app_id", c["process_id"].alias("process_id"), "status", c["rack"].alias("rack"),
                    c["num_threads"].alias("num_threads"), F.size(c["active_tasks"]).alias("num_active"),
                    F.size(c["standby_tasks"]).alias("num_standby"), c["active_tasks"].alias("active_tasks"),
                    c["standby_tasks"].alias("standby_tasks"),
                    c["followup_rebalance_deadline_ms"].alias("followup_rebalance_deadline_ms"),
                    c["records_to_restore"].alias("records_to_restore"),
                    c["unknown_lag_tasks"].alias("unknown_lag_tasks")))


def consumer_assignments(results: DataFrame) -> DataFrame:
    """One row per consumer (thread), when the leader distributed each client's tasks over its threads."""
    c = F.col("c")
    return (results.select("app_id", F.explode("consumers").alias("c"))
            .select("app_id", c["process_id"].alias("process_id"), c["consumer_id"].alias("consumer_id"),
                    c["active_tasks"].alias("active_tasks"), c["standby_tasks"].alias("standby_tasks")))


def app_metrics(results: DataFrame, rejected_before_engine: DataFrame) -> DataFrame:
    """One row per application id: status, outcome and metrics; applications rejected before reaching
    the engine are there too (status REJECTED, metrics null)."""
    metric_columns = [F.col("metrics")[m.name].alias(m.name) for m in METRIC_COLUMNS]
    engine = results.select("app_id", "status", "reason_code", "reason", "assignor", "error",
                            "probing_rebalance_needed", "end_offsets_known", *metric_columns)
    earlier = rejected_before_engine.select(
        "app_id", F.lit(reasons.STATUS_REJECTED).alias("status"), F.col("code").alias("reason_code"), "reason",
        *[F.lit(None).cast(t).alias(n) for n, t in (("assignor", "string"), ("error", "string"),
                                                     ("probing_rebalance_needed", "boolean"),
                                                     ("end_offsets_known", "boolean"))],
        *[F.lit(None).cast(m.type).alias(m.name) for m in METRIC_COLUMNS])
    return engine.unionByName(earlier)


def fleet_metrics(metrics: DataFrame) -> DataFrame:
    """Each metric summarised over the applications the engine assigned: count, sum, mean, min,
    median, 95th percentile and max."""
    ran = metrics.where(F.col("status") != reasons.STATUS_REJECTED).select(
        "app_id", *[F.col(m.name).cast("double").alias(m.name) for m in METRIC_COLUMNS])
    long = ran.unpivot("app_id", [m.name for m in METRIC_COLUMNS], "metric", "value")
    order = {m.name: i for i, m in enumerate(METRIC_COLUMNS)}
    position = F.create_map(*[x for name, i in order.items() for x in (F.lit(name), F.lit(i))])
    return (long.groupBy("metric").agg(
        F.count("value").alias("apps"), F.sum("value").alias("sum"), F.avg("value").alias("mean"),
        F.min("value").alias("min"), F.percentile("value", 0.5).alias("p50"),
        F.percentile("value", 0.95).alias("p95"), F.max("value").alias("max"))
        .orderBy(position[F.col("metric")]))
