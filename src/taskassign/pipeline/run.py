"""A pipeline run: read the snapshot, check and derive (validate + stages), assign, write, commit.

This module only wires; the work is in ``validate`` (row checks), ``stages`` (derivations, the engine,
outputs) and ``output`` (staging and commit). ``plan`` builds the lazy DataFrames; ``run_pipeline``
executes them in steps, reporting each to ``progress``, and commits the output with its manifest.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from taskassign.fleet import reasons
from taskassign.fleet.tables import APPLICATIONS, INPUT_TABLES
from taskassign.pipeline import stages
from taskassign.pipeline.manifest import build_manifest
from taskassign.pipeline.output import OutputDirectory
from taskassign.pipeline.read import SnapshotTable, read_snapshot, source_row
from taskassign.pipeline.schemas import ERRORS
from taskassign.pipeline.session import BUCKETS_CONF
from taskassign.pipeline.validate import (
    CODE,
    REASON,
    app_status,
    check_applications,
    check_member_references,
    check_member_tasks,
    check_members,
    check_partition_references,
    check_repartition_topics,
    check_subtopologies,
    check_topic_partitions,
    mark_rejected_applications,
    rejected,
    usable,
    with_rules,
)

__all__ = (
    "PipelineOptions",
    "PipelineResult",
    "Plan",
    "buckets_for",
    "count_rows",
    "plan",
    "release",
    "run_pipeline",
)

#: The engine's raw per-application results, kept in the staging directory until the commit.
RESULTS = "_results"
#: Applications per engine call (bucket) before the run uses more buckets.
APPS_PER_BUCKET = 16
STEPS = ("read snapshot", "check and derive", "assign applications", "write errors",
         "write assignments and metrics", "commit")


@dataclass(frozen=True)
class PipelineOptions:
    input_dir: Path
    output_dir: Path
    #: Overrides every application's assignor (None: each application's own, else the default).
    assignor: str | None = None
    #: Sets taskassign.kafka.compat for every application.
    kafka_compat: bool = False
    #: Buckets (partitions of applications, one engine call each); None: the session's default.
    buckets: int | None = None


@dataclass
class Plan:
    """The checked and derived DataFrames of one run (materialised, with short lineage)."""

    tables: Mapping[str, SnapshotTable]
    #: Every input table, each row marked with the reason it is rejected (or not), before the engine ran.
    checked: dict[str, DataFrame]
    #: Applications rejected before the engine (row checks, topology): app_id, code, reason.
    rejected_apps: DataFrame
    #: One nested record per usable application: the engine's input.
    inputs: DataFrame
    #: Tables checkpointed for the run (release() drops them).
    checkpoints: list[DataFrame] = field(default_factory=list)


@dataclass(frozen=True)
class PipelineResult:
    output_dir: Path
    manifest: dict[str, Any]


def _materialise(df: DataFrame) -> DataFrame:
    """Compute ``df`` now and keep it (executor memory, spilling to disk), cutting its lineage: every
    later DataFrame is analysed against a leaf instead of the whole plan behind it, which would otherwise
    cost more driver time than the work itself on a small fleet. Checked tables feed both the engine and
    the errors table, so each is computed once."""
    return df.localCheckpoint(eager=True, storageLevel=StorageLevel.MEMORY_AND_DISK)


def plan(spark: Any, options: PipelineOptions, tables: Mapping[str, SnapshotTable] | None = None) -> Plan:
    """Check every row and derive everything the engine needs (stages 1-6 of ``stages``)."""
    tables = tables if tables is not None else read_snapshot(spark, options.input_dir)
    buckets = options.buckets or int(spark.conf.get(BUCKETS_CONF, "8") or 8)
    spark.conf.set("spark.sql.shuffle.partitions", str(buckets))
    # The one shuffle of each table: by application. Every later join, aggregation and window is keyed by
    # app_id first, so it runs inside these partitions, and each partition becomes one engine call.
    raw = {name: t.df.repartition(buckets, "app_id") for name, t in tables.items()}
    keep: list[DataFrame] = []

    def materialise(df: DataFrame) -> DataFrame:
        keep.append(_materialise(df))
        return keep[-1]

    apps = materialise(check_applications(stages.check_configs(raw["applications"], options.assignor,
                                                               options.kafka_compat)))
    status = materialise(app_status(apps))
    subs = check_subtopologies(raw["subtopologies"], status)
    partitions = materialise(check_topic_partitions(raw["topic_partitions"], status))
    repartition = check_repartition_topics(raw["repartition_topics"], status, subs)
    counts = materialise(stages.topic_partition_counts(partitions))
    resolved = materialise(stages.resolve_topologies(subs, counts, repartition, apps))
    topology_rejects = resolved.where(F.col("error_code").isNotNull()).select(
        "app_id", F.col("error_code").alias("code"), F.col("error_reason").alias("reason"))
    mark = mark_rejected_applications(topology_rejects)
    subs = materialise(subs.transform(mark))
    repartition = materialise(repartition.transform(mark))
    blocks = stages.derive_tasks(resolved, subs)
    partitions = materialise(check_partition_references(partitions.transform(mark),
                                                        stages.partition_references(blocks)))
    blocks = materialise(stages.with_unknown_end_offsets(stages.task_end_offsets(blocks, partitions, counts)))
    decoded = stages.decode_subscriptions(raw["members"], "subscription_info" in tables["members"].columns)
    members = materialise(check_members(decoded, status).transform(mark))
    reports = stages.subscription_reports(members, raw["member_tasks"])
    member_tasks = materialise(check_member_references(
        check_member_tasks(reports, status).transform(mark), members, stages.task_summaries(blocks)))
    apps = _with_application_rejects(apps, topology_rejects)
    checked = {"applications": apps, "subtopologies": subs, "repartition_topics": repartition,
               "topic_partitions": partitions, "members": members, "member_tasks": member_tasks}
    rejected_apps = (rejected(apps).where(F.col("app_id").isNotNull()).groupBy("app_id")
                     .agg(F.min(F.struct(F.col(CODE).alias("code"), F.col(REASON).alias("reason"))).alias("r"))
                     .select("app_id", "r.code", "r.reason"))
    lags = stages.client_task_lags(member_tasks, blocks)
    inputs = stages.application_inputs(apps, blocks, lags, members, checked)
    return Plan(tables, checked, rejected_apps, inputs, keep)


def release(the_plan: Plan) -> None:
    """Drop the run's checkpointed tables now (a long-lived session runs many plans). Spark Connect
    releases a checkpoint with its DataFrame; classic Spark keeps its blocks until the RDD is unpersisted."""
    for df in the_plan.checkpoints:
        jdf = getattr(df, "_jdf", None)
        if jdf is not None:
            jdf.queryExecution().logical().rdd().unpersist(False)


def _with_application_rejects(apps: DataFrame, rejects: DataFrame) -> DataFrame:
    """Applications rejected as a whole (topology, engine): their applications row carries the reason."""
    joined = apps.join(rejects.select("app_id", F.col("code").alias("_app_code"),
                                      F.col("reason").alias("_app_reason")), "app_id", "left")
    return with_rules(joined, [(F.col("_app_code").isNotNull(), F.col("_app_code"), F.col("_app_reason"))]).drop(
        "_app_code", "_app_reason")


def errors(checked: Mapping[str, DataFrame], results: DataFrame) -> DataFrame:
    """Every rejected input row (applications rejected by the engine cascade to their rows) and every
    flagged application (assignor failed, invalid assignment, unknown end offsets)."""
    engine_rejects = results.where(F.col("status") == reasons.STATUS_REJECTED).select(
        "app_id", F.col("reason_code").alias("code"), "reason")
    parts = []
    for name, df in checked.items():
        final = (_with_application_rejects(df, engine_rejects) if name == "applications"
                 else df.transform(mark_rejected_applications(engine_rejects)))
        bad = rejected(final)
        if name == "member_tasks":
            # A report decoded from a member's subscription_info is not an input row: it is flagged on the
            # member (the members row itself was used).
            decoded = bad.where(F.col("_from_subscription"))
            bad = bad.where(~F.col("_from_subscription"))
            parts.append(decoded.select(
                F.lit("members").alias("table"), "app_id", F.lit(reasons.EFFECT_FLAGGED).alias("effect"),
                F.col(CODE).alias("reason_code"),
                F.concat(F.lit("subscription_info of consumer "), F.col("consumer_id"), F.lit(" reports task "),
                         F.col("task_id"), F.lit(": "), F.col(REASON)).alias("reason"),
                source_row(INPUT_TABLES[name]).alias("source_row")))
        parts.append(bad.select(F.lit(name).alias("table"), "app_id", F.lit(reasons.EFFECT_REJECTED).alias("effect"),
                                F.col(CODE).alias("reason_code"), F.col(REASON).alias("reason"),
                                source_row(INPUT_TABLES[name]).alias("source_row")))
    ran = results.where(F.col("status") != reasons.STATUS_REJECTED)
    flags = ran.where(F.col("status").isin(reasons.STATUS_KEPT_PREVIOUS, reasons.STATUS_INVALID_ASSIGNMENT)).select(
        "app_id", "reason_code", "reason").unionByName(
        ran.where(~F.col("end_offsets_known")).select(
            "app_id", F.lit(reasons.END_OFFSETS_UNKNOWN).alias("reason_code"),
            F.lit("a changelog partition has no end offset: every lag is -3 and Kafka's default assignor falls "
                  "back to keeping previous actives (spec 2.4)").alias("reason")))
    app_rows = usable(checked["applications"]).select("app_id", source_row(APPLICATIONS).alias("source_row"))
    parts.append(flags.join(app_rows, "app_id").select(
        F.lit("applications").alias("table"), "app_id", F.lit(reasons.EFFECT_FLAGGED).alias("effect"),
        "reason_code", "reason", "source_row"))
    union = parts[0]
    for part in parts[1:]:
        union = union.unionByName(part)
    return union.select(*[f.name for f in ERRORS.fields])


def count_rows(tables: Mapping[str, SnapshotTable]) -> dict[str, int]:
    """Rows of every input table as read, in one Spark job."""
    counts: DataFrame | None = None
    for name, t in tables.items():
        part = t.df.select(F.lit(name).alias("table"))
        counts = part if counts is None else counts.unionByName(part)
    assert counts is not None
    found = {row["table"]: row["count"] for row in counts.groupBy("table").count().collect()}
    return {name: int(found.get(name, 0)) for name in tables}


def buckets_for(spark: Any, options: PipelineOptions, applications: int) -> int:
    """Engine calls: one per ``APPS_PER_BUCKET`` applications, at most the session's default (4 per core
    locally), so a small fleet is not spread over many near-empty tasks."""
    if options.buckets:
        return options.buckets
    most = int(spark.conf.get(BUCKETS_CONF, "8") or 8)
    return max(1, min(most, -(-applications // APPS_PER_BUCKET)))


def _write(df: DataFrame, path: str, *order: str) -> None:
    """One sorted Parquet file: same input, same rows in the same order (no ``order``: ``df`` is ordered)."""
    single = df.repartition(1).sortWithinPartitions(*order) if order else df.coalesce(1)
    single.write.mode("overwrite").parquet(path)


def run_pipeline(
    spark: Any, options: PipelineOptions, progress: Callable[[str], None] | None = None
) -> PipelineResult:
    """Run the pipeline and commit its output; the output is replaced only when the run completes."""
    started = time.perf_counter()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    output = OutputDirectory.prepare(options.output_dir)
    timings: dict[str, float] = {}
    current: list[tuple[str, float]] = []

    def step(name: str | None) -> None:
        now = time.perf_counter()
        if current:
            last, since = current.pop()
            timings[last] = round(now - since, 3)
        if name is not None:
            current.append((name, now))
            if progress is not None:
                progress(name)

    the_plan: Plan | None = None
    try:
        step(STEPS[0])
        tables = read_snapshot(spark, options.input_dir)
        rows_in = count_rows(tables)
        buckets = buckets_for(spark, options, rows_in["applications"])
        step(STEPS[1])
        the_plan = plan(spark, replace(options, buckets=buckets), tables)
        step(STEPS[2])
        stages.assign_applications(the_plan.inputs, options.assignor, options.kafka_compat).write.mode(
            "overwrite").parquet(output.table(RESULTS))
        results = spark.read.parquet(output.table(RESULTS))
        step(STEPS[3])
        _write(errors(the_plan.checked, results), output.table("errors"), "table", "app_id", "reason_code",
               "source_row")
        step(STEPS[4])
        metrics = stages.app_metrics(results, the_plan.rejected_apps)
        _write(stages.client_assignments(results), output.table("client_assignments"), "app_id", "process_id")
        _write(stages.consumer_assignments(results), output.table("consumer_assignments"), "app_id", "process_id",
               "consumer_id")
        _write(metrics, output.table("app_metrics"), "app_id")
        _write(stages.fleet_metrics(metrics), output.table("fleet_metrics"))
        step(STEPS[5])
        header = {
            "spark_version": spark.version,
            "started_at": started_at,
            "input": {
                "directory": str(Path(options.input_dir).absolute()),
                "tables": {n: {"path": t.path, "format": t.format} for n, t in tables.items()},
            },
            "options": {"assignor": options.assignor, "kafka_compat": options.kafka_compat, "buckets": buckets},
        }
        manifest = build_manifest(output.staging, RESULTS, rows_in, header)
        shutil.rmtree(output.table(RESULTS), ignore_errors=True)
        step(None)
        manifest["timings"]["steps"] = timings
        manifest["timings"]["total_seconds"] = round(time.perf_counter() - started, 3)
        final, committed = output.commit(manifest)
        return PipelineResult(final, committed)
    except BaseException:
        output.abandon()
        raise
    finally:
        if the_plan is not None:
            release(the_plan)
