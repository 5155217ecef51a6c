"""A pipeline run: read the snapshot, process every application (one shuffle, one Python pass), write, commit.

This module only wires; the work is in ``stages`` (the DataFrame stages), ``fleet.bucket`` (everything
per application, inside the Python workers), ``assemble`` (the output tables from the results Spark
staged) and ``output`` (staging and commit). ``run_pipeline`` executes the steps, reporting each to
``progress``, and commits the output with its manifest.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pyspark import RDD
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from taskassign.analysis.attention import DEFAULT_ATTENTION
from taskassign.assignors.plugin_process import DEFAULT_PLUGIN_LIMITS, PluginLimits
from taskassign.errors import UserInputError
from taskassign.pipeline import stages
from taskassign.pipeline.assemble import assemble_outputs
from taskassign.pipeline.compare import assemble_comparison
from taskassign.pipeline.engine_udf import EngineSettings
from taskassign.pipeline.local_scatter import LocalScatter
from taskassign.pipeline.manifest import build_comparison_manifest, build_manifest
from taskassign.pipeline.output import OutputDirectory
from taskassign.pipeline.progress import ApplicationCounter
from taskassign.pipeline.read import (
    SnapshotTable,
    locate_snapshot,
    parquet_rows,
    read_snapshot,
    unreadable_file,
)
from taskassign.pipeline.scatter import Piece, plan_scatter
from taskassign.pipeline.session import BUCKETS_CONF, is_local

__all__ = (
    "PipelineOptions",
    "PipelineResult",
    "Snapshot",
    "buckets_for",
    "count_rows",
    "open_snapshot",
    "processed",
    "run_pipeline",
    "scatter_tasks",
    "stage_results",
)

#: What the Python side returned (results, errors rows, timings), kept in the staging directory until the
#: outputs are assembled from it, so the engine runs once.
PROCESSED = "_processed"
#: The snapshot's rows split by bucket on the driver of a local session (pipeline.local_scatter), in the
#: staging directory until the buckets have run.
SCATTERED = "_scattered"
#: Applications per bucket (one Python call) before the run uses more buckets.
APPS_PER_BUCKET = 16
STEPS = ("read snapshot", "check, derive and assign", "write outputs", "commit")


@dataclass(frozen=True)
class PipelineOptions:
    input_dir: Path
    output_dir: Path
    #: Overrides every application's assignor (None: each application's own, else the default).
    assignor: str | None = None
    #: Sets taskassign.kafka.compat for every application.
    kafka_compat: bool = False
    #: Buckets (partitions of applications, one Python call each); None: from the fleet's size.
    buckets: int | None = None
    #: Let the snapshot's ``applications.assignor`` name plug-ins (module:Class, file.py:Class): code the
    #: workers import and run. Off: such an application is rejected (PLUGIN_NOT_ALLOWED), nothing imported.
    allow_plugins: bool = False
    #: A comparison run: every application through each of these assignors (two or more, the first the
    #: baseline), in place of ``assignor``; outputs in pipeline.compare's layout.
    assignors: tuple[str, ...] = ()
    #: Applications per metric in the needs_attention table (analysis.attention).
    attention: int = DEFAULT_ATTENTION
    #: ``--kafka-version``: the Kafka release line of every application (None: each one's kafka.version, else 4.4).
    kafka_version: str | None = None
    #: ``--plugin-timeout``, ``--plugin-memory``: what a plug-in assignor may take in each worker.
    plugin_limits: PluginLimits = DEFAULT_PLUGIN_LIMITS

    def passes(self) -> tuple[str | None, ...]:
        """The assignor override of each pass over the fleet: one, or each assignor compared."""
        if not self.assignors:
            return (self.assignor,)
        if len(self.assignors) < 2 or self.assignor is not None:
            raise UserInputError("a comparison run takes two or more assignors, in place of a single assignor")
        if len(set(self.assignors)) < len(self.assignors):
            raise UserInputError(f"--assignor names an assignor twice: {','.join(self.assignors)}")
        return self.assignors


@dataclass(frozen=True)
class PipelineResult:
    output_dir: Path
    manifest: dict[str, Any]


@dataclass(frozen=True)
class Snapshot:
    """The input as the run takes it: each table's ``(path, format)`` (None, None: absent), its rows as
    read, and how its rows reach the buckets: ``scatter`` tasks (pipeline.scatter) or Spark's ``tables``."""

    sources: Mapping[str, tuple[str | None, str | None]]
    rows_in: Mapping[str, int]
    scatter: list[tuple[Piece, ...]] | None
    tables: Mapping[str, SnapshotTable] | None


def open_snapshot(spark: Any, input_dir: Path) -> Snapshot:
    """The snapshot in ``input_dir``: Parquet that Spark would read as it is goes to scatter tasks, without
    a Spark reader; anything else through Spark's (pipeline.read)."""
    sources = {name: (str(found[0]), found[1]) if found else (None, None)
               for name, found in locate_snapshot(input_dir).items()}
    tasks = plan_scatter(sources, scatter_tasks(spark))
    if tasks is not None:
        return Snapshot(sources, {name: parquet_rows(path) if path else 0 for name, (path, _) in sources.items()},
                        tasks, None)
    tables = read_snapshot(spark, input_dir)
    return Snapshot({name: (t.path, t.format) for name, t in tables.items()}, count_rows(tables), None, tables)


def processed(
    spark: Any, options: PipelineOptions, snapshot: Snapshot, buckets: int, staged: str | None = None,
    counter: ApplicationCounter | None = None, local: LocalScatter | None = None,
) -> DataFrame | RDD[dict[str, Any]]:
    """Every application of the snapshot checked, derived and assigned (schemas.PROCESSED), lazily; with
    ``staged``, the buckets write those rows there and return the files' names (schemas.STAGED_FILE);
    with ``local``, the buckets read the files it writes, waiting for them."""
    settings = EngineSettings(assignor_override=options.assignor, kafka_compat=options.kafka_compat,
                              kafka_version=options.kafka_version, allow_plugins=options.allow_plugins,
                              plugin_limits=options.plugin_limits,
                              staged=staged, on_rows=counter.row_counter() if counter is not None else None)
    if local is not None:
        return stages.process_bucket_files(spark, str(local.directory), buckets, settings)
    if snapshot.scatter is not None:
        return stages.process_scattered(stages.scatter(spark, snapshot.scatter, buckets), settings)
    assert snapshot.tables is not None
    gathered = stages.gather({name: t.df for name, t in snapshot.tables.items()}, buckets)
    return stages.process_applications(gathered, settings)


def stage_results(spark: Any, options: PipelineOptions, snapshot: Snapshot, buckets: int, staged: Path,
                  counter: ApplicationCounter | None = None, local: LocalScatter | None = None) -> None:
    """Run the buckets, which write their results into ``staged``; keep only the files of the attempts
    Spark reports as successful (a failed or duplicate attempt's file is removed). ``local``: the driver's
    bucket files, which the buckets wait for (pipeline.local_scatter)."""
    staged.mkdir(parents=True, exist_ok=True)
    try:
        kept = {row["file"] for row in processed(spark, options, snapshot, buckets, str(staged), counter,
                                                 local).collect()}
    except Exception:
        if local is not None:
            local.wait()  # the driver's own error, when its reading failed the buckets
        raise
    for path in staged.iterdir():
        if path.name not in kept:
            path.unlink()


def scatter_tasks(spark: Any) -> int:
    """Scatter tasks: twice Spark's default parallelism (four per core locally). Row groups differ widely
    in reading cost (docs/performance.md): smaller tasks even out the cores' share of the reading before
    the buckets can start."""
    return 2 * int(spark.conf.get("spark.default.parallelism", "4") or 4)


def count_rows(tables: Mapping[str, SnapshotTable]) -> dict[str, int]:
    """Rows of every input table as read: Parquet tables from their files' footers (no Spark job), the
    others counted by Spark, in one job."""
    found: dict[str, int] = {}
    counted: DataFrame | None = None
    for name, t in tables.items():
        if t.path is None:
            found[name] = 0
        elif t.format == "parquet":
            found[name] = parquet_rows(t.path)
        else:
            part = t.df.select(F.lit(name).alias("table"))
            counted = part if counted is None else counted.unionByName(part)
    if counted is not None:
        found.update({row["table"]: int(row["count"]) for row in counted.groupBy("table").count().collect()})
    return {name: found.get(name, 0) for name in tables}


def buckets_for(spark: Any, options: PipelineOptions, applications: int) -> int:
    """Buckets: one per ``APPS_PER_BUCKET`` applications, at most the session's default (16 per core
    locally), so a small fleet is not spread over many near-empty tasks."""
    if options.buckets:
        return options.buckets
    most = int(spark.conf.get(BUCKETS_CONF, "8") or 8)
    return max(1, min(most, -(-applications // APPS_PER_BUCKET)))


def run_pipeline(
    spark: Any, options: PipelineOptions, progress: Callable[[str], None] | None = None,
    counter: ApplicationCounter | None = None,
) -> PipelineResult:
    """Run the pipeline and commit its output; the output is replaced only when the run completes.
    ``counter``: applications done, for a progress bar (its ``total`` is set once the run knows it)."""
    passes = options.passes()
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

    local: LocalScatter | None = None
    try:
        step(STEPS[0])
        snapshot = open_snapshot(spark, options.input_dir)
        try:
            rows_in = snapshot.rows_in
            buckets = buckets_for(spark, options, rows_in["applications"])
            if counter is not None:
                counter.total = rows_in["applications"] * len(passes)
            if snapshot.scatter is not None and is_local(spark):  # read while Spark plans (pipeline.local_scatter)
                local = LocalScatter(snapshot.scatter, buckets, Path(output.table(SCATTERED)))
            step(STEPS[1])
            staged: list[tuple[str | None, Path]] = []
            for position, assignor in enumerate(passes):
                target = Path(output.table(PROCESSED if len(passes) == 1 else f"{PROCESSED}-{position}"))
                stage_results(spark, replace(options, assignor=assignor, assignors=()), snapshot, buckets, target,
                              counter, local)
                staged.append((assignor, target))
            read_seconds = local.wait() if local is not None else 0.0
        except Exception as exc:
            unreadable = unreadable_file(exc, snapshot.sources)
            if unreadable is not None:
                raise unreadable from None
            raise
        step(STEPS[2])
        if options.assignors:
            comparison = assemble_comparison({str(a): p for a, p in staged}, output.staging, options.attention)
        else:
            assembled = assemble_outputs(staged[0][1], output.staging, options.attention)
        step(STEPS[3])
        header = {
            "spark_version": spark.version,
            "started_at": started_at,
            "input": {
                "directory": str(Path(options.input_dir).absolute()),
                "tables": {n: {"path": path, "format": fmt} for n, (path, fmt) in snapshot.sources.items()},
            },
            "options": {"assignor": options.assignor, "kafka_compat": options.kafka_compat,
                        "kafka_version": options.kafka_version, "buckets": buckets,
                        "allow_plugins": options.allow_plugins, "attention": options.attention,
                        "plugin_timeout_s": options.plugin_limits.timeout_s,
                        "plugin_memory_mib": options.plugin_limits.memory_mib,
                        **({"assignors": list(options.assignors)} if options.assignors else {})},
        }
        if options.assignors:
            manifest = build_comparison_manifest(comparison.passes, comparison.written, rows_in, header)
        else:
            manifest = build_manifest(assembled, rows_in, header)
        for _, path in staged:
            shutil.rmtree(path, ignore_errors=True)
        if local is not None:
            shutil.rmtree(local.directory, ignore_errors=True)
            for key in ("read_seconds", "python_seconds"):  # the driver's reading, once for every pass
                manifest["timings"][key] = round(manifest["timings"][key] + read_seconds, 3)
        step(None)
        manifest["timings"]["steps"] = timings
        manifest["timings"]["total_seconds"] = round(time.perf_counter() - started, 3)
        final, committed = output.commit(manifest)
        return PipelineResult(final, committed)
    except BaseException:
        if local is not None:
            local.cancel()  # its files are in the staging directory, which goes
        output.abandon()
        raise
