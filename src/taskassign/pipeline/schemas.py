"""Spark schemas of every table the pipeline reads, gets back from its Python side, and writes.

Input schemas come from the engine-side table specs (taskassign.fleet.tables), so the generator, the
readers and docs/pipeline.md share one definition. ``PROCESSED`` is what the Python side returns: the
rows of every output table, already flat (taskassign.fleet.outputs), as Arrow IPC streams; ``KIND_SCHEMAS``
says which schema each stream has.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from taskassign.analysis.metrics import metric_fields
from taskassign.fleet.tables import INPUT_TABLES, TableSpec

__all__ = (
    "APP_METRICS",
    "APP_ROW",
    "ASSIGNOR_COLUMN",
    "ASSIGNOR_COMPARISON",
    "CLIENT_ASSIGNMENTS",
    "CONSUMER_ASSIGNMENTS",
    "ERRORS",
    "FLEET_METRICS",
    "INPUT_SCHEMAS",
    "KIND_APP",
    "KIND_BUCKET",
    "KIND_CLIENT",
    "KIND_CONSUMER",
    "KIND_ERROR",
    "KIND_SCHEMAS",
    "METRIC_COLUMNS",
    "NEEDS_ATTENTION",
    "OUTPUT_SCHEMAS",
    "PROCESSED",
    "SOURCE_ROWS",
    "STAGED_FILE",
    "spark_type",
    "table_schema",
)

_ARRAY = re.compile(r"^array<(.+)>$")
_MAP = re.compile(r"^map<([a-z]+),(.+)>$")
_SIMPLE: Mapping[str, DataType] = {
    "string": StringType(), "int": IntegerType(), "long": LongType(), "boolean": BooleanType(),
    "double": DoubleType(), "binary": BinaryType(),
}


def spark_type(ddl: str) -> DataType:
    """The Spark type of a DDL type string of the table specs (no SparkContext needed)."""
    if ddl in _SIMPLE:
        return _SIMPLE[ddl]
    if m := _ARRAY.match(ddl):
        return ArrayType(spark_type(m.group(1)))
    if m := _MAP.match(ddl):
        return MapType(spark_type(m.group(1)), spark_type(m.group(2)))
    raise ValueError(f"unsupported column type {ddl!r}")


def table_schema(spec: TableSpec) -> StructType:
    return StructType([StructField(c.name, spark_type(c.type), True) for c in spec.columns])


def _struct(*fields: tuple[str, DataType]) -> StructType:
    return StructType([StructField(name, dtype, True) for name, dtype in fields])


_STRINGS = ArrayType(StringType())

#: Every input table's schema, by table name.
INPUT_SCHEMAS: Mapping[str, StructType] = MappingProxyType({
    name: table_schema(spec) for name, spec in INPUT_TABLES.items()
})

#: How many input rows of each table went into one application (the manifest's "used" counts).
SOURCE_ROWS = _struct(*((name, LongType()) for name in INPUT_TABLES))

#: taskassign.analysis.metrics' summary metrics, one column each (int -> long, float -> double).
METRIC_COLUMNS: tuple[tuple[str, DataType], ...] = tuple(
    (m.name, DoubleType() if m.type is float else LongType()) for m in metric_fields())

CLIENT_ASSIGNMENTS = _struct(
    ("app_id", StringType()), ("process_id", StringType()), ("status", StringType()), ("rack", StringType()),
    ("num_threads", IntegerType()), ("num_active", IntegerType()), ("num_standby", IntegerType()),
    ("active_tasks", _STRINGS), ("standby_tasks", _STRINGS), ("followup_rebalance_deadline_ms", LongType()),
    ("records_to_restore", LongType()), ("state_load", LongType()), ("active_moves_in", IntegerType()),
)
CONSUMER_ASSIGNMENTS = _struct(
    ("app_id", StringType()), ("process_id", StringType()), ("consumer_id", StringType()),
    ("active_tasks", _STRINGS), ("standby_tasks", _STRINGS), ("withheld_tasks", _STRINGS),
    ("followup_rebalance_deadline_ms", LongType()),
)
APP_METRICS = _struct(
    ("app_id", StringType()), ("status", StringType()), ("reason_code", StringType()), ("reason", StringType()),
    ("assignor", StringType()), ("error", StringType()), ("probing_rebalance_needed", BooleanType()),
    ("end_offsets_known", BooleanType()), *METRIC_COLUMNS,
)
FLEET_METRICS = _struct(
    ("metric", StringType()), ("apps", LongType()), ("sum", DoubleType()), ("mean", DoubleType()),
    ("min", DoubleType()), ("p50", DoubleType()), ("p90", DoubleType()), ("p95", DoubleType()), ("max", DoubleType()),
)
NEEDS_ATTENTION = _struct(
    ("metric", StringType()), ("rank", IntegerType()), ("app_id", StringType()), ("assignor", StringType()),
    ("status", StringType()), ("value", DoubleType()),
)
#: A comparison run's (``--assignor A,B``) fleet comparison: analysis.fleet_comparison.MetricComparison rows.
ASSIGNOR_COMPARISON = _struct(
    ("metric", StringType()), ("assignor", StringType()), ("baseline", StringType()), ("apps", LongType()),
    ("wins", LongType()), ("ties", LongType()), ("diff_p10", DoubleType()), ("diff_p50", DoubleType()),
    ("diff_p90", DoubleType()),
)
#: The column a comparison run adds to the tables that have no ``assignor`` column of their own.
ASSIGNOR_COLUMN = "assignor"
ERRORS = _struct(
    ("table", StringType()), ("app_id", StringType()), ("effect", StringType()), ("reason_code", StringType()),
    ("reason", StringType()), ("source_row", StringType()),
)

#: An app_metrics row plus what the manifest reads per application: input rows used and timings.
APP_ROW = _struct(*[(f.name, f.dataType) for f in APP_METRICS.fields], ("source_rows", SOURCE_ROWS),
                  ("build_seconds", DoubleType()), ("engine_seconds", DoubleType()),
                  ("metrics_seconds", DoubleType()))

KIND_APP, KIND_CLIENT, KIND_CONSUMER, KIND_ERROR, KIND_BUCKET = "app", "client", "consumer", "error", "bucket"
#: The rows a bucket returns, by kind: per application (APP_ROW), client, consumer, and errors rows.
KIND_SCHEMAS: Mapping[str, StructType] = MappingProxyType({
    KIND_APP: APP_ROW, KIND_CLIENT: CLIENT_ASSIGNMENTS, KIND_CONSUMER: CONSUMER_ASSIGNMENTS, KIND_ERROR: ERRORS,
})

#: What the pipeline's Python side returns (pipeline.engine_udf). Each row holds ``rows`` rows of one kind
#: (KIND_SCHEMAS) as an Arrow IPC stream in ``payload``, a few applications' rows per stream: Spark moves and
#: stores them as bytes, never value by value. One ``bucket`` row per bucket carries its timings
#: (``check_seconds``: row checks and derivations; ``python_seconds``: all of its time in taskassign's code,
#: Arrow conversions included; ``read_seconds``: the part of it the scatter tasks spent reading and
#: bucketing its rows, pipeline.scatter, 0 when Spark did that).
PROCESSED = _struct(("kind", StringType()), ("rows", LongType()), ("payload", BinaryType()),
                    ("check_seconds", DoubleType()), ("python_seconds", DoubleType()),
                    ("read_seconds", DoubleType()))

#: What a bucket returns when it writes its PROCESSED rows into the staging directory itself
#: (pipeline.engine_udf.stage_file): the file's name and its rows.
STAGED_FILE = _struct(("file", StringType()), ("rows", LongType()))

#: Every output table's schema, by table (directory) name.
OUTPUT_SCHEMAS: Mapping[str, StructType] = MappingProxyType({
    "client_assignments": CLIENT_ASSIGNMENTS,
    "consumer_assignments": CONSUMER_ASSIGNMENTS,
    "app_metrics": APP_METRICS,
    "fleet_metrics": FLEET_METRICS,
    "errors": ERRORS,
    "needs_attention": NEEDS_ATTENTION,
})
