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

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from taskassign.analysis.attention import DEFAULT_ATTENTION
from taskassign.errors import UserInputError
from taskassign.pipeline import stages
from taskassign.pipeline.assemble import assemble_outputs
from taskassign.pipeline.compare import assemble_comparison
from taskassign.pipeline.manifest import build_comparison_manifest, build_manifest
from taskassign.pipeline.output import OutputDirectory
from taskassign.pipeline.progress import ApplicationCounter
from taskassign.pipeline.read import SnapshotTable, parquet_rows, read_snapshot, unreadable_file
from taskassign.pipeline.session import BUCKETS_CONF

__all__ = (
    "PipelineOptions",
    "PipelineResult",
    "buckets_for",
    "count_rows",
    "processed",
    "run_pipeline",
)

#: What the Python side returned (results, errors rows, timings), kept in the staging directory until the
#: outputs are assembled from it, so the engine runs once.
PROCESSED = "_processed"
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


def processed(
    spark: Any, options: PipelineOptions, tables: Mapping[str, SnapshotTable], buckets: int,
    counter: ApplicationCounter | None = None,
) -> DataFrame:
    """Every application of the snapshot checked, derived and assigned (schemas.PROCESSED), lazily."""
    gathered = stages.gather({name: t.df for name, t in tables.items()}, buckets)
    return stages.process_applications(gathered, options.assignor, options.kafka_compat, options.allow_plugins,
                                       counter.counting if counter is not None else None)


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

    try:
        step(STEPS[0])
        tables = read_snapshot(spark, options.input_dir)
        try:
            rows_in = count_rows(tables)
            buckets = buckets_for(spark, options, rows_in["applications"])
            if counter is not None:
                counter.total = rows_in["applications"] * len(passes)
            step(STEPS[1])
            staged: list[tuple[str | None, Path]] = []
            for position, assignor in enumerate(passes):
                target = Path(output.table(PROCESSED if len(passes) == 1 else f"{PROCESSED}-{position}"))
                processed(spark, replace(options, assignor=assignor, assignors=()), tables, buckets,
                          counter).write.mode("overwrite").parquet(str(target))
                staged.append((assignor, target))
        except Exception as exc:
            unreadable = unreadable_file(exc, tables)
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
                "tables": {n: {"path": t.path, "format": t.format} for n, t in tables.items()},
            },
            "options": {"assignor": options.assignor, "kafka_compat": options.kafka_compat, "buckets": buckets,
                        "allow_plugins": options.allow_plugins, "attention": options.attention,
                        **({"assignors": list(options.assignors)} if options.assignors else {})},
        }
        if options.assignors:
            manifest = build_comparison_manifest(comparison.passes, comparison.written, rows_in, header)
        else:
            manifest = build_manifest(assembled, rows_in, header)
        for _, path in staged:
            shutil.rmtree(path, ignore_errors=True)
        step(None)
        manifest["timings"]["steps"] = timings
        manifest["timings"]["total_seconds"] = round(time.perf_counter() - started, 3)
        final, committed = output.commit(manifest)
        return PipelineResult(final, committed)
    except BaseException:
        output.abandon()
        raise
