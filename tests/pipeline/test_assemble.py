"""The output tables assembled from staged bucket results (no Spark, but pyspark's schemas), and the fleet
metrics against Spark's own aggregates."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import DoubleType

from taskassign.analysis.fleet_statistics import is_additive
from taskassign.fleet.outputs import app_row, client_rows, consumer_rows
from taskassign.pipeline import assemble
from taskassign.pipeline.assemble import OUTPUT_FILE, assemble_outputs, fleet_metrics, read_staged, rows_of_kind
from taskassign.pipeline.ipc import to_ipc
from taskassign.pipeline.schemas import APP_METRICS, KIND_SCHEMAS, METRIC_COLUMNS, OUTPUT_SCHEMAS, PROCESSED

METRICS = {name: 1.0 if isinstance(t, DoubleType) else 1 for name, t in METRIC_COLUMNS} | {"active_load_skew": 0.5}
BASE = {"reason_code": None, "reason": None, "assignor": "HighAvailabilityTaskAssignor", "error": "NONE",
        "probing_rebalance_needed": False, "end_offsets_known": True, "build_seconds": 0.25,
        "engine_seconds": 0.5, "metrics_seconds": 0.0, "source_rows": None}


def _client(process_id: str, tasks: list[str]) -> dict[str, Any]:
    return {"process_id": process_id, "rack": "r", "num_threads": 2, "active_tasks": tasks, "standby_tasks": [],
            "followup_rebalance_deadline_ms": None, "records_to_restore": 4, "state_load": 1, "active_moves_in": 0}


def _consumer(process_id: str, consumer_id: str, tasks: list[str]) -> dict[str, Any]:
    return {"process_id": process_id, "consumer_id": consumer_id, "active_tasks": tasks, "standby_tasks": [],
            "withheld_tasks": [], "followup_rebalance_deadline_ms": None}


RESULTS: list[Any] = [
    {**BASE, "app_id": "b", "status": "KEPT_PREVIOUS", "metrics": {**METRICS, "tasks": 3},
     "clients": [_client("P2", ["0_1"]), _client("P1", ["0_0"])],
     "consumers": [_consumer("P2", "P2-1", ["0_1"]), _consumer("P1", "P1-2", []), _consumer("P1", "P1-1", ["0_0"])]},
    {**BASE, "app_id": "a", "status": "ASSIGNED", "metrics": METRICS, "clients": [_client("P", ["0_0"])],
     "consumers": [_consumer("P", "P-1", ["0_0"])]},
    {**BASE, "app_id": "c", "status": "REJECTED", "reason_code": "INVALID_CONFIG", "reason": "bad",
     "metrics": None, "clients": [], "consumers": []},
]
ERRORS = [
    {"table": "members", "app_id": "ghost", "effect": "rejected", "reason_code": "UNKNOWN_APPLICATION",
     "reason": "no such application", "source_row": "{}"},
    {"table": "applications", "app_id": "c", "effect": "rejected", "reason_code": "INVALID_CONFIG",
     "reason": "bad", "source_row": "{}"},
    {"table": "members", "app_id": None, "effect": "rejected", "reason_code": "MISSING_FIELD",
     "reason": "app_id is null", "source_row": "{}"},
]


def _stream(kind: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    table = pa.Table.from_pylist(rows, schema=to_arrow_schema(KIND_SCHEMAS[kind]))
    return {"kind": kind, "rows": len(rows), "payload": to_ipc(table)}


def _stage(directory: Path, buckets: list[list[dict[str, Any]]]) -> Path:
    """Bucket results as Spark stages them: one Parquet file of PROCESSED rows per bucket."""
    directory.mkdir()
    for number, rows in enumerate(buckets):
        pq.write_table(pa.Table.from_pylist(rows, schema=to_arrow_schema(PROCESSED)),
                       directory / f"part-{number:05d}.parquet")
    return directory


@pytest.fixture
def staged(tmp_path: Path) -> Path:
    first, second = RESULTS[:1], RESULTS[1:]
    return _stage(tmp_path / "_processed", [
        [_stream("app", [app_row(r) for r in first]),
         _stream("client", [c for r in first for c in client_rows(r)]),
         _stream("consumer", [c for r in first for c in consumer_rows(r)]),
         _stream("error", ERRORS[:1]),
         {"kind": "bucket", "check_seconds": 0.5, "python_seconds": 1.25}],
        [_stream("app", [app_row(r) for r in second]),
         _stream("client", [c for r in second for c in client_rows(r)]),
         _stream("consumer", [c for r in second for c in consumer_rows(r)]),
         _stream("error", ERRORS[1:]),
         {"kind": "bucket", "check_seconds": 0.25, "python_seconds": 2.0, "read_seconds": 0.125}],
    ])


def _written(staging: Path, name: str) -> pa.Table:
    assert sorted(p.name for p in (staging / name).iterdir()) == [OUTPUT_FILE]
    return pq.read_table(staging / name)


def test_every_output_table_is_written_sorted_with_its_schema(staged: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assembled = assemble_outputs(staged, out)
    for name, schema in OUTPUT_SCHEMAS.items():
        assert _written(out, name).schema.names == to_arrow_schema(schema).names, name
    clients = _written(out, "client_assignments").to_pylist()
    assert [(r["app_id"], r["process_id"], r["num_active"]) for r in clients] == [("a", "P", 1), ("b", "P1", 1),
                                                                                 ("b", "P2", 1)]
    consumers = _written(out, "consumer_assignments").to_pylist()
    assert [r["consumer_id"] for r in consumers] == ["P-1", "P1-1", "P1-2", "P2-1"]
    apps = _written(out, "app_metrics").to_pylist()
    assert [(r["app_id"], r["status"], r["tasks"]) for r in apps] == [("a", "ASSIGNED", 1),
                                                                      ("b", "KEPT_PREVIOUS", 3),
                                                                      ("c", "REJECTED", None)]
    errors = _written(out, "errors").to_pylist()
    assert [(r["table"], r["app_id"]) for r in errors] == [("applications", "c"), ("members", None),
                                                           ("members", "ghost")]
    # needs_attention: a and b over the thresholds of records_to_restore and missing_standby_replicas (1 > 0)
    attention = _written(out, "needs_attention").to_pylist()
    assert [(r["metric"], r["rank"], r["app_id"]) for r in attention] == [
        ("missing_standby_replicas", 1, "a"), ("missing_standby_replicas", 2, "b"),
        ("records_to_restore", 1, "a"), ("records_to_restore", 2, "b")]
    assert dict(assembled.rows) == {"client_assignments": 3, "consumer_assignments": 4, "app_metrics": 3,
                                    "fleet_metrics": len(METRIC_COLUMNS), "errors": 3, "needs_attention": 4}
    # What the manifest reads: every application's row with its timings, and the errors.
    assert assembled.apps.column("engine_seconds").to_pylist() == [0.5, 0.5, 0.5]
    assert assembled.errors.num_rows == 3
    assert dict(assembled.timings) == {"python_seconds": 3.25, "check_seconds": 0.75, "read_seconds": 0.125}


def test_a_kind_no_bucket_returned_is_an_empty_table_with_its_schema(tmp_path: Path) -> None:
    staged = _stage(tmp_path / "_processed", [[{"kind": "bucket", "check_seconds": 0.0, "python_seconds": 0.0}]])
    out = tmp_path / "out"
    assembled = assemble_outputs(staged, out)
    assert set(assembled.rows.values()) == {0}
    assert _written(out, "errors").schema.names == to_arrow_schema(OUTPUT_SCHEMAS["errors"]).names


def test_a_stream_with_another_schema_is_refused(tmp_path: Path) -> None:
    wrong = {"kind": "client", "rows": 1, "payload": to_ipc(pa.table({"app_id": ["a"]}))}
    staged = _stage(tmp_path / "_processed", [[wrong]])
    with pytest.raises(ValueError, match="staged client rows have schema"):
        rows_of_kind(read_staged(staged), "client")


def _app_metrics(rows: list[dict[str, Any]]) -> pa.Table:
    schema = to_arrow_schema(APP_METRICS)
    return pa.Table.from_pylist([{name: row.get(name) for name in schema.names} for row in rows], schema=schema)


def test_fleet_metrics_count_known_values_of_applications_the_engine_ran() -> None:
    values = [4, 1, None, 3, 2]
    apps = [{"app_id": str(i), "status": "ASSIGNED", "tasks": v, "active_load_skew": 0.5} for i, v in enumerate(values)]
    apps.append({"app_id": "x", "status": "REJECTED", "tasks": 1000})
    fleet = {r["metric"]: r for r in fleet_metrics(_app_metrics(apps)).to_pylist()}
    assert list(fleet) == [name for name, _ in METRIC_COLUMNS]
    # 1, 2, 3, 4: the median and 95th percentile interpolate linearly between neighbours, as Spark's percentile.
    assert fleet["tasks"] == {"metric": "tasks", "apps": 4, "sum": 10.0, "mean": 2.5, "min": 1.0, "p50": 2.5,
                              "p90": pytest.approx(3.7), "p95": pytest.approx(3.85), "max": 4.0}
    assert fleet["active_load_skew"]["apps"] == 5 and fleet["active_load_skew"]["p95"] == 0.5
    assert fleet["clients"] == {"metric": "clients", "apps": 0, "sum": None, "mean": None, "min": None,
                                "p50": None, "p90": None, "p95": None, "max": None}


def test_fleet_metrics_never_sum_a_skew_an_imbalance_or_an_extreme() -> None:
    apps = [{"app_id": str(i), "status": "ASSIGNED", "active_load_skew": 0.5 * i, "state_load_imbalance": 1.0 + i,
             "state_load_max": 10 * i, "records_to_restore": 100 * i} for i in range(1, 5)]
    fleet = {r["metric"]: r for r in fleet_metrics(_app_metrics(apps)).to_pylist()}
    for name in ("active_load_skew", "state_load_imbalance", "state_load_max", "state_load_min",
                 "subtopology_skew_max"):
        assert fleet[name]["sum"] is None, name
    assert fleet["state_load_imbalance"]["p50"] == 3.5 and fleet["state_load_imbalance"]["max"] == 5.0
    assert fleet["records_to_restore"]["sum"] == 1000.0


def test_no_fleet_metrics_when_no_application_ran() -> None:
    assert fleet_metrics(_app_metrics([{"app_id": "x", "status": "REJECTED"}])).num_rows == 0


@pytest.mark.slow  # an oracle check: Spark aggregates every metric of 301 applications (tens of seconds); the tests
# above hold fleet_metrics to hand-computed values without Spark
@pytest.mark.spark
def test_fleet_metrics_agree_with_sparks_aggregates(spark: Any) -> None:
    from pyspark.sql import functions as F

    rng = random.Random(11)
    apps = [{"app_id": f"app-{i}", "status": rng.choice(["ASSIGNED", "ASSIGNED", "KEPT_PREVIOUS", "REJECTED"]),
             **{name: (None if rng.random() < 0.1 else
                       (rng.uniform(0, 50) if isinstance(t, DoubleType) else rng.randrange(0, 10_000)))
                for name, t in METRIC_COLUMNS}} for i in range(301)]
    table = _app_metrics(apps)
    ours = {r["metric"]: r for r in assemble.fleet_metrics(table).to_pylist()}
    names = [name for name, _ in METRIC_COLUMNS]
    ran = spark.createDataFrame(table).where(F.col("status") != "REJECTED").select(
        "app_id", *[F.col(name).cast("double").alias(name) for name in names])
    theirs = {r["metric"]: r.asDict() for r in ran.unpivot("app_id", names, "metric", "value").groupBy("metric").agg(
        F.count("value").alias("apps"), F.sum("value").alias("sum"), F.avg("value").alias("mean"),
        F.min("value").alias("min"), F.percentile("value", 0.5).alias("p50"), F.percentile("value", 0.9).alias("p90"),
        F.percentile("value", 0.95).alias("p95"), F.max("value").alias("max")).collect()}
    assert set(ours) == set(theirs)
    for name in names:
        assert ours[name]["apps"] == theirs[name]["apps"], name
        for key in ("sum", "mean", "min", "p50", "p90", "p95", "max"):
            if key == "sum" and not is_additive(name):
                assert ours[name]["sum"] is None, name  # a skew or imbalance summed means nothing
                continue
            assert ours[name][key] == pytest.approx(theirs[name][key], rel=1e-12), (name, key)
