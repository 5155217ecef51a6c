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

from collections.abc import Callable, Mapping

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from taskassign.fleet import reasons
from taskassign.fleet.tables import INPUT_TABLES, OWNERSHIP_ACTIVE, OWNERSHIP_STANDBY
from taskassign.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM
from taskassign.pipeline import engine_udf
from taskassign.pipeline.read import MALFORMED, SOURCE_ROW
from taskassign.pipeline.schemas import APP_INPUT, APP_RESULT, METRIC_COLUMNS
from taskassign.pipeline.validate import usable

__all__ = (
    "app_metrics",
    "application_inputs",
    "assign_applications",
    "check_configs",
    "client_assignments",
    "client_task_lags",
    "consumer_assignments",
    "decode_subscriptions",
    "derive_tasks",
    "fleet_metrics",
    "partition_references",
    "resolve_topologies",
    "subscription_reports",
    "task_end_offsets",
    "topic_partition_counts",
)

LONG_MAX = 2**63 - 1
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


SUBSCRIPTION_COLUMNS = (
    StructField("_sub_error", StringType()), StructField("_sub_process_id", StringType()),
    StructField("_sub_host", StringType()), StructField("_sub_tags", MapType(StringType(), StringType())),
    StructField("_sub_offsets", ArrayType(StructType([StructField("task_id", StringType()),
                                                      StructField("offset_sum", LongType())]))),
)


def decode_subscriptions(members: DataFrame, present: bool = True) -> DataFrame:
    """Members with what their ``subscription_info`` says (``_sub_*`` columns), and their process id,
    host and client tags taken from it where the row leaves them null. ``present``: whether the table
    has the column at all (if not, nothing is decoded)."""
    if present:
        schema = StructType([*members.schema.fields, *SUBSCRIPTION_COLUMNS])
        members = members.mapInArrow(engine_udf.subscription_decoder(schema), schema)
    else:
        members = members.select("*", *[F.lit(None).cast(f.dataType).alias(f.name) for f in SUBSCRIPTION_COLUMNS])
    return members.select(
        *[c for c in members.columns if c not in ("process_id", "host", "client_tags")],
        F.coalesce("process_id", "_sub_process_id").alias("process_id"),
        F.coalesce("host", "_sub_host").alias("host"),
        F.coalesce("client_tags", "_sub_tags").alias("client_tags"),
        F.col("process_id").alias("_row_process_id"), F.col("host").alias("_row_host"),
        F.col("client_tags").alias("_row_tags"))


def subscription_reports(members: DataFrame, member_tasks: DataFrame) -> DataFrame:
    """The member_tasks table plus one report per task offset sum in a usable member's subscription_info
    (``_from_subscription``; ownership follows from the offset sum, as in Kafka's leader)."""
    table_rows = member_tasks.withColumn("_from_subscription", F.lit(False))
    decoded = (usable(members).where(F.col("_sub_offsets").isNotNull())
               .select("app_id", "consumer_id", F.explode("_sub_offsets").alias("r"))
               .select("app_id", "consumer_id", F.col("r.task_id").alias("task_id"),
                       F.lit(None).cast("string").alias("ownership"), F.col("r.offset_sum").alias("offset_sum"),
                       F.lit(None).cast("string").alias(SOURCE_ROW), F.lit(None).cast("string").alias(MALFORMED),
                       F.lit(True).alias("_from_subscription")))
    return table_rows.unionByName(decoded)


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
    """Kafka's partition grouper, one row per subtopology (its tasks are partitions 0..num_tasks-1).

    ``topics`` lists every topic its tasks touch, by name: a source topic gives task p its partition p
    while the topic has one (``num_partitions``); a changelog topic gives every task its partition p. A
    source-changelog topic (a changelog that is also a source) is one partition with both flags while
    the topic has partition p, a changelog-only partition beyond.
    """
    subs = usable(subtopologies).select(
        "app_id", "subtopology",
        F.coalesce("stores", F.array().cast("array<string>")).alias("stores"),
        F.coalesce("changelog_topics", F.array().cast("array<string>")).alias("changelog_topics"))
    blocks = resolved.where(F.col("error_code").isNull()).join(subs, ["app_id", "subtopology"])
    changelogs, counts = F.col("changelog_topics"), F.col("source_counts")
    sources = F.transform(F.map_entries(counts), lambda e: F.struct(
        e["key"].alias("topic"), F.lit(True).alias("is_source"),
        F.array_contains(changelogs, e["key"]).alias("is_changelog"), e["value"].alias("num_partitions")))
    changelog_only = F.transform(F.filter(changelogs, lambda t: ~F.map_contains_key(counts, t)), lambda t: F.struct(
        t.alias("topic"), F.lit(False).alias("is_source"), F.lit(True).alias("is_changelog"),
        F.col("num_tasks").alias("num_partitions")))
    return blocks.select("app_id", "subtopology", "num_tasks", "stores",
                         F.array_sort(F.concat(sources, changelog_only)).alias("topics"))


# -- 4. partitions and end offsets ------------------------------------------------------------------------------

def partition_references(blocks: DataFrame) -> DataFrame:
    """(app_id, topic, limit, needs_end_offset): tasks read or restore from partitions 0..limit-1 of the
    topic; ``needs_end_offset`` for changelog topics that are not source-changelog topics (their end is
    the log end offset; a source-changelog topic's is the committed offset)."""
    topic = F.col("t")
    limit = F.when(topic["is_changelog"], F.col("num_tasks")).otherwise(topic["num_partitions"])
    return (blocks.select("app_id", "num_tasks", F.explode("topics").alias("t"))
            .groupBy("app_id", F.col("t.topic").alias("topic"))
            .agg(F.max(limit).alias("limit"),
                 F.max(topic["is_changelog"] & ~topic["is_source"]).alias("needs_end_offset")))


def task_end_offsets(blocks: DataFrame, partitions: DataFrame, counts: DataFrame) -> DataFrame:
    """Subtopology blocks with, per task (array index = partition): ``end_offset_sums`` (changelog end
    offsets summed; committed offsets for source-changelog topics; 0 for a changelog topic absent from
    the metadata, i.e. created by this rebalance; Long.MAX_VALUE on overflow), ``state_bytes`` (the
    changelog partitions' sizes, when all are known) and per topic ``racks``; ``end_offset_missing``
    when a changelog partition of an existing topic has no usable end offset.

    ``partitions`` are the checked topic partitions (usable rows only are read); ``counts`` the topics
    present in the metadata.
    """
    rows = usable(partitions).select("app_id", "topic", F.struct(
        "partition", "replica_racks", "end_offset", "committed_offset", "size_bytes").alias("e"))
    meta = (rows.groupBy("app_id", "topic")
            .agg(F.array_sort(F.collect_list("e")).alias("entries"))
            .withColumn("dense", F.size("entries") == F.try_element_at("entries", F.lit(-1))["partition"] + 1))
    existing = counts.select("app_id", "topic", F.lit(True).alias("exists"))
    per_topic = (blocks.select("app_id", "subtopology", "num_tasks", F.posexplode("topics").alias("pos", "t"))
                 .withColumn("topic", F.col("t.topic"))
                 .join(meta.hint("shuffle_hash"), ["app_id", "topic"], "left")
                 .join(F.broadcast(existing), ["app_id", "topic"], "left"))

    def entry(p: Column) -> Column:
        dense = F.try_element_at("entries", p + 1)
        scattered = F.try_element_at(F.filter("entries", lambda e: e["partition"] == p), F.lit(1))
        return F.when(F.col("entries").isNull(), F.lit(None)).when(F.col("dense"), dense).otherwise(scattered)

    seq = F.sequence(F.lit(0), F.col("num_tasks") - 1)
    t = F.col("t")
    per_topic = per_topic.select(
        "app_id", "subtopology", "num_tasks", "pos",
        F.struct(t["topic"].alias("topic"), t["is_source"].alias("is_source"), t["is_changelog"].alias("is_changelog"),
                 t["num_partitions"].alias("num_partitions"),
                 F.transform(seq, lambda p: entry(p)["replica_racks"]).alias("racks"),
                 F.when(t["is_changelog"], F.transform(seq, lambda p: _end_contribution(entry(p), t)))
                 .alias("ends"),
                 F.when(t["is_changelog"], F.transform(seq, lambda p: entry(p)["size_bytes"])).alias("sizes"),
                 ).alias("topic"))
    grouped = per_topic.groupBy("app_id", "subtopology").agg(
        F.transform(F.array_sort(F.collect_list(F.struct("pos", "topic"))), lambda x: x["topic"]).alias("topics"))
    # Intermediate arrays are columns of their own: Spark re-evaluates an array expression used inside a
    # lambda once per element, which would make these sums quadratic in the number of tasks.
    with_logged = blocks.select("app_id", "subtopology", "num_tasks", "stores").join(
        grouped, ["app_id", "subtopology"]).withColumn(
        "_logged", F.filter("topics", lambda x: x["is_changelog"]))
    logged = F.col("_logged")
    # Most subtopologies have one changelog topic: its arrays are the tasks' (Spark evaluates lambdas
    # without code generation, so the general per-task sums are kept for the rest).
    single = F.size(logged) == 1
    first = F.try_element_at(logged, F.lit(1))
    summed = F.transform(seq, lambda p: _saturating_sum(logged, lambda x: F.coalesce(_at(x["ends"], p), F.lit(0))))
    sized = F.transform(seq, lambda p: F.when(
        F.forall(logged, lambda x: _at(x["sizes"], p).isNotNull()),
        _saturating_sum(logged, lambda x: _at(x["sizes"], p))))
    return with_logged.select(
        "app_id", "subtopology", "num_tasks", "stores", "topics",
        F.when(single, F.transform(first["ends"], lambda v: F.coalesce(v, F.lit(0).cast("long"))))
        .otherwise(summed).alias("end_offset_sums"),
        F.when(F.size(logged) == 0, F.lit(None)).when(single, first["sizes"]).otherwise(sized).alias("state_bytes"),
        F.exists(logged, lambda x: F.exists(x["ends"], lambda v: v.isNull())).alias("end_offset_missing"))


def _at(array: Column, p: Column) -> Column:
    """Element p (0-based) of an array, null past its end."""
    return F.try_element_at(array, p + 1)


def _saturating_sum(values: Column, value: Callable[[Column], Column]) -> Column:
    """Sum of non-negative longs pinned at Long.MAX_VALUE, as Kafka's leader pins an overflowing sum."""
    return F.aggregate(values, F.lit(0).cast("long"),
                       lambda acc, x: F.coalesce(F.try_add(acc, value(x)), F.lit(LONG_MAX).cast("long")))


def _end_contribution(entry: Column, topic: Column) -> Column:
    """One changelog partition's part of its task's end-offset sum (null: missing)."""
    return (F.when(topic["is_source"], F.coalesce(entry["committed_offset"], F.lit(0)))
            .when(F.col("exists").isNull(), F.lit(0))
            .otherwise(entry["end_offset"]))


def with_unknown_end_offsets(blocks: DataFrame) -> DataFrame:
    """Kafka's fallback when end offsets cannot be fetched (spec 2.4): if any changelog partition of an
    application lacks its end offset, every task with a changelog of that application gets end -3.
    Adds ``end_offsets_known`` (the application's) to every block."""
    known = ~F.max("end_offset_missing").over(Window.partitionBy("app_id"))
    logged = F.exists("topics", lambda x: x["is_changelog"])
    return (blocks.withColumn("end_offsets_known", known)
            .withColumn("end_offset_sums", F.when(
                logged & ~F.col("end_offsets_known"),
                F.transform("end_offset_sums", lambda _: F.lit(UNKNOWN_OFFSET_SUM).cast("long")),
            ).otherwise(F.col("end_offset_sums"))))


def task_summaries(blocks: DataFrame) -> DataFrame:
    """(app_id, subtopology, num_tasks, logged, end_offset_sums): what row checks and lags need of the
    tasks, small enough to broadcast (one row per subtopology)."""
    return blocks.select("app_id", "subtopology", "num_tasks",
                         F.exists("topics", lambda x: x["is_changelog"]).alias("logged"), "end_offset_sums")


# -- 5. clients and lags ----------------------------------------------------------------------------------------

def lag(end_offset_sum: Column, offset_sum: Column) -> Column:
    """Kafka's per-client lag (spec 2.3): -2 and -3 stay; ahead of the changelog: the end offset sum."""
    return (F.when(offset_sum.isNull(), F.lit(None))
            .when(offset_sum.isin(LATEST_OFFSET, UNKNOWN_OFFSET_SUM), offset_sum)
            .when(end_offset_sum < offset_sum, end_offset_sum)
            .otherwise(end_offset_sum - offset_sum))


def client_task_lags(member_tasks: DataFrame, blocks: DataFrame) -> DataFrame:
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
    ends = F.broadcast(task_summaries(blocks).select("app_id", "subtopology", "end_offset_sums"))
    end = F.try_element_at("end_offset_sums", F.col("partition") + 1)
    return (merged.join(ends, ["app_id", "subtopology"])
            .select("app_id", "process_id", "subtopology", "partition", "ownership", "offset_sum", "consumers",
                    end.alias("end_offset_sum"))
            .withColumn("lag", lag(F.col("end_offset_sum"), F.col("offset_sum"))))


# -- 6. application records -------------------------------------------------------------------------------------

def _source_row_counts(tables: Mapping[str, DataFrame]) -> DataFrame:
    """(app_id, ``_rows_<table>`` per input table): usable rows per application, in one aggregation."""
    names = [n for n in INPUT_TABLES if n != "applications"]
    union: DataFrame | None = None
    for name in names:
        rows = usable(tables[name])
        if "_from_subscription" in rows.columns:  # reports decoded from subscription_info are not input rows
            rows = rows.where(~F.col("_from_subscription"))
        part = rows.select("app_id", F.lit(name).alias("_table"))
        union = part if union is None else union.unionByName(part)
    assert union is not None
    return union.groupBy("app_id").agg(*[
        F.count(F.when(F.col("_table") == name, True)).alias(f"_rows_{name}") for name in names])


def application_inputs(
    apps: DataFrame, blocks: DataFrame, client_tasks: DataFrame, members: DataFrame,
    checked: Mapping[str, DataFrame],
) -> DataFrame:
    """One APP_INPUT record per usable application. Its ``bucket`` is the partition it lives in: the
    tables are partitioned by application, and each partition (bucket) is one engine call."""
    subtopologies = (blocks.groupBy("app_id").agg(F.collect_list(F.struct(
        "subtopology", "num_tasks", "stores",
        F.transform("topics", lambda x: F.struct(x["topic"].alias("topic"), x["is_source"].alias("is_source"),
                                                 x["is_changelog"].alias("is_changelog"),
                                                 x["num_partitions"].alias("num_partitions"),
                                                 x["racks"].alias("racks"))).alias("topics"),
        "end_offset_sums", "state_bytes")).alias("subtopologies"),
        F.min("end_offsets_known").alias("end_offsets_known")))
    reported = (client_tasks.groupBy("app_id", "process_id").agg(F.collect_list(F.struct(
        "subtopology", "partition", "ownership", "offset_sum", "lag", "consumers")).alias("tasks")))
    first = F.min_by(F.struct("rack", "client_tags", "host"), "consumer_id")
    clients = (usable(members).groupBy("app_id", "process_id")
               .agg(F.array_sort(F.collect_list("consumer_id")).alias("consumers"), first.alias("_first"))
               .join(reported, ["app_id", "process_id"], "left")
               .groupBy("app_id").agg(F.collect_list(F.struct(
                   "process_id", F.col("_first.rack").alias("rack"), F.col("_first.client_tags").alias("tags"),
                   F.col("_first.host").alias("host"), "consumers", "tasks")).alias("clients")))
    counts = _source_row_counts(checked)
    source_rows = F.struct(F.lit(1).cast("long").alias("applications"),
                           *[F.coalesce(F.col(f"_rows_{n}"), F.lit(0)).cast("long").alias(n)
                             for n in INPUT_TABLES if n != "applications"])
    records = (usable(apps).select("app_id", "assignor", "configs", "now_ms", "leader_process_id")
               .join(subtopologies, "app_id", "left").join(clients, "app_id", "left").join(counts, "app_id", "left")
               .withColumn("source_rows", source_rows)
               .withColumn("end_offsets_known", F.coalesce("end_offsets_known", F.lit(True)))
               .withColumn("bucket", F.spark_partition_id()))
    return records.select(*[f.name for f in APP_INPUT.fields])


# -- 7. the engine ----------------------------------------------------------------------------------------------

def assign_applications(inputs: DataFrame, assignor_override: str | None, kafka_compat: bool) -> DataFrame:
    """APP_RESULT per application: every bucket (partition of applications) is one Python call that
    streams its applications through the engine as Arrow record batches."""
    assigner = engine_udf.application_assigner(APP_RESULT, assignor_override, kafka_compat)
    return inputs.mapInArrow(assigner, APP_RESULT)


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


def app_metrics(results: DataFrame, rejected_before_engine: DataFrame) -> DataFrame:
    """One row per application id: status, outcome and metrics; applications rejected before reaching
    the engine are there too (status REJECTED, metrics null)."""
    metric_columns = [F.col("metrics")[name].alias(name) for name, _ in METRIC_COLUMNS]
    engine = results.select("app_id", "status", "reason_code", "reason", "assignor", "error",
                            "probing_rebalance_needed", "end_offsets_known", *metric_columns)
    earlier = rejected_before_engine.select(
        "app_id", F.lit(reasons.STATUS_REJECTED).alias("status"), F.col("code").alias("reason_code"), "reason",
        *[F.lit(None).cast(t).alias(n) for n, t in (("assignor", "string"), ("error", "string"),
                                                     ("probing_rebalance_needed", "boolean"),
                                                     ("end_offsets_known", "boolean"))],
        *[F.lit(None).cast(dtype).alias(name) for name, dtype in METRIC_COLUMNS])
    return engine.unionByName(earlier)


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
