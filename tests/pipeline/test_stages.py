"""The Spark stages on hand-made inputs: gathering and the Python side (the per-application checks and
derivations are tested without Spark in tests/fleet, the output tables' assembly in test_assemble)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from taskassign.fleet import reasons as R
from taskassign.pipeline import stages
from taskassign.pipeline.ipc import from_ipc
from taskassign.pipeline.read import read_snapshot
from tests.pipeline.conftest import APP, PID_1, PID_2, base_rows, write_snapshot

pytestmark = pytest.mark.spark


def _decoded(processed: Any) -> dict[str, list[dict[str, Any]]]:
    """Every row the buckets returned, by kind (decoded from their IPC streams); timings under "bucket"."""
    found: dict[str, list[dict[str, Any]]] = {}
    for row in processed.collect():
        if row["kind"] == "bucket":
            found.setdefault("bucket", []).append(row.asDict())
            continue
        rows = from_ipc(row["payload"]).to_pylist()
        assert len(rows) == row["rows"] > 0
        found.setdefault(row["kind"], []).extend(rows)
    return found


def _by(rows: list[dict[str, Any]], *keys: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {tuple(r[k] for k in keys): r for r in rows}


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
    processed = stages.process_applications(stages.gather(tables, 2))
    found = _decoded(processed)
    assert {kind: len(rows) for kind, rows in found.items()} == {"app": 2, "client": 2, "consumer": 3, "error": 2,
                                                                "bucket": 2}
    assert all(b["python_seconds"] > 0 and b["check_seconds"] > 0 for b in found["bucket"])
    results = _by(found["app"], "app_id")
    assert results[APP,]["status"] == R.STATUS_ASSIGNED and results[APP,]["source_rows"]["member_tasks"] == 4
    assert (results["other",]["status"], results["other",]["reason_code"]) == (R.STATUS_REJECTED,
                                                                               R.UNKNOWN_ASSIGNOR)
    assert {r["process_id"] for r in found["client"]} == {PID_1, PID_2}
    # Every client's tasks over its consumers (a task being revoked elsewhere is withheld, not yet active).
    for client in found["client"]:
        consumers = [r for r in found["consumer"] if r["process_id"] == client["process_id"]]
        assert sorted(t for r in consumers for t in r["active_tasks"] + r["withheld_tasks"]) == client["active_tasks"]
        assert sorted(t for r in consumers for t in r["standby_tasks"]) == client["standby_tasks"]
    errors = _by(found["error"], "table", "app_id")
    assert errors["members", "ghost"]["reason_code"] == R.UNKNOWN_APPLICATION
    assert errors["applications", "other"]["effect"] == "rejected"


def test_buckets_stage_their_results_as_files_and_strays_are_removed(spark: Any, snapshot: Path,
                                                                    tmp_path: Path) -> None:
    from taskassign.pipeline.assemble import read_staged, rows_of_kind
    from taskassign.pipeline.run import PipelineOptions, open_snapshot, stage_results

    staged = tmp_path / "_processed"
    staged.mkdir()
    (staged / "part-00099-0.parquet").write_bytes(b"left by a failed attempt")
    opened = open_snapshot(spark, snapshot)
    assert opened.scatter is not None
    stage_results(spark, PipelineOptions(snapshot, tmp_path / "out"), opened, 2, staged)
    files = sorted(p.name for p in staged.iterdir())
    assert files and "part-00099-0.parquet" not in files and all(f.startswith("part-0") for f in files)
    apps = rows_of_kind(read_staged(staged), "app").to_pylist()
    expected = _decoded(stages.process_applications(
        stages.gather({name: t.df for name, t in read_snapshot(spark, snapshot).items()}, 2)))["app"]
    timings = ("build_seconds", "engine_seconds", "metrics_seconds")
    assert (sorted(({k: v for k, v in r.items() if k not in timings} for r in apps), key=repr)
            == sorted(({k: v for k, v in r.items() if k not in timings} for r in expected), key=repr))
