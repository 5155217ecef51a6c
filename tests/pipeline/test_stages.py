"""The Spark stages on hand-made inputs: gathering, the Python side, outputs (the per-application checks
and derivations are tested without Spark in tests/fleet)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from taskassign.fleet import reasons as R
from taskassign.pipeline import stages
from taskassign.pipeline.read import read_snapshot
from tests.pipeline.conftest import APP, PID_2, base_rows, write_snapshot

pytestmark = pytest.mark.spark


def _rows(df: Any, *keys: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {tuple(r[k] for k in keys): r.asDict(recursive=True) for r in df.collect()}


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = base_rows()
    rows["members"].append({"app_id": "ghost", "consumer_id": "g1", "process_id": PID_2})
    rows["applications"].append({**rows["applications"][0], "app_id": "other", "assignor": "no-such-assignor"})
    return write_snapshot(tmp_path_factory.mktemp("stages"), rows)


def test_gather_puts_every_row_of_an_application_in_one_partition(spark: Any, snapshot: Path) -> None:
    tables = {name: t.df for name, t in read_snapshot(spark, snapshot).items()}
    gathered = stages.gather(tables, 3)
    assert gathered.rdd.getNumPartitions() == 3
    placed = gathered.selectExpr("app_id", "_table", "spark_partition_id() as p").collect()
    assert len(placed) == sum(df.count() for df in tables.values())
    partitions: dict[str, set[int]] = {}
    for row in placed:
        partitions.setdefault(row["app_id"], set()).add(row["p"])
    assert all(len(p) == 1 for p in partitions.values())
    assert {r["_table"] for r in placed if r["app_id"] == APP} == set(range(6)) - {2}  # no repartition topics


def test_process_applications_returns_results_errors_and_timings(spark: Any, snapshot: Path) -> None:
    tables = {name: t.df for name, t in read_snapshot(spark, snapshot).items()}
    processed = stages.process_applications(stages.gather(tables, 2), None, False).cache()
    kinds = _rows(processed.groupBy("kind").count(), "kind")
    assert {k[0]: v["count"] for k, v in kinds.items()} == {"app": 2, "client": 2, "consumer": 3, "error": 2,
                                                            "bucket": 2}
    results = _rows(stages.app_rows(processed), "app_id")
    assert results[APP,]["status"] == R.STATUS_ASSIGNED and results[APP,]["source_rows"]["member_tasks"] == 4
    assert (results["other",]["status"], results["other",]["reason_code"]) == (R.STATUS_REJECTED,
                                                                               R.UNKNOWN_ASSIGNOR)
    errors = _rows(stages.errors(processed), "table", "app_id")
    assert errors["members", "ghost"]["reason_code"] == R.UNKNOWN_APPLICATION
    assert errors["applications", "other"]["effect"] == "rejected"
    processed.unpersist()


def test_output_tables_and_fleet_metrics(spark: Any) -> None:
    from pyspark.sql.types import DoubleType

    from taskassign.fleet.outputs import app_row, client_rows, consumer_rows
    from taskassign.pipeline.schemas import METRIC_COLUMNS, PROCESSED

    metrics = {name: 1.0 if isinstance(t, DoubleType) else 1 for name, t in METRIC_COLUMNS} | {"active_load_skew": 0.5}
    client = {"process_id": "P", "rack": "r", "num_threads": 2, "active_tasks": ["0_0"], "standby_tasks": [],
              "followup_rebalance_deadline_ms": None, "records_to_restore": 4, "state_load": 1, "active_moves_in": 0}
    base = {"reason_code": None, "reason": None, "assignor": "HighAvailabilityTaskAssignor", "error": "NONE",
            "probing_rebalance_needed": False, "end_offsets_known": True, "build_seconds": 0.0,
            "engine_seconds": 0.0, "metrics_seconds": 0.0, "source_rows": None}
    results: list[Any] = [
        {**base, "app_id": "a", "status": "ASSIGNED", "metrics": metrics, "clients": [client],
         "consumers": [{"process_id": "P", "consumer_id": "P-1", "active_tasks": ["0_0"], "standby_tasks": [],
                        "withheld_tasks": [], "followup_rebalance_deadline_ms": None}]},
        {**base, "app_id": "b", "status": "KEPT_PREVIOUS", "metrics": {**metrics, "tasks": 3}, "clients": [],
         "consumers": []},
        {**base, "app_id": "c", "status": "REJECTED", "reason_code": "INVALID_CONFIG", "reason": "bad",
         "metrics": None, "clients": [], "consumers": []},
    ]
    rows = [{"kind": "app", "app": app_row(r)} for r in results]
    rows += [{"kind": "client", "client": c} for r in results for c in client_rows(r)]
    rows += [{"kind": "consumer", "consumer": c} for r in results for c in consumer_rows(r)]
    processed = spark.createDataFrame(rows, PROCESSED)
    clients = [(r["app_id"], r["status"], r["num_active"], r["num_standby"], r["records_to_restore"])
               for r in stages.client_assignments(processed).collect()]
    assert clients == [("a", "ASSIGNED", 1, 0, 4)]
    assert [r["consumer_id"] for r in stages.consumer_assignments(processed).collect()] == ["P-1"]
    apps = _rows(stages.app_metrics(processed), "app_id")
    assert apps["c",]["status"] == "REJECTED" and apps["c",]["tasks"] is None
    assert apps["b",]["tasks"] == 3
    fleet = _rows(stages.fleet_metrics(stages.app_metrics(processed)), "metric")
    assert [k[0] for k in fleet] == [name for name, _ in METRIC_COLUMNS]
    assert fleet["tasks",]["apps"] == 2 and fleet["tasks",]["sum"] == 4.0 and fleet["tasks",]["max"] == 3.0
    assert fleet["active_load_skew",]["mean"] == 0.5
