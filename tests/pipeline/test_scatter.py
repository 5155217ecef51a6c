"""The Parquet path (pipeline.scatter): which snapshots take it, that it loses no row, that Spark's shuffle
puts each bucket in its own partition, and that it computes exactly what Spark's path computes, also when
a local session's driver splits the rows into bucket files (pipeline.local_scatter)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from taskassign.fleet.tables import INPUT_TABLES
from taskassign.pipeline import run as run_module
from taskassign.pipeline import stages
from taskassign.pipeline.ipc import from_ipc
from taskassign.pipeline.local_scatter import LocalScatter, bucket_file, read_bucket, write_bucket_files
from taskassign.pipeline.read import PIECE_READ_FAILED, read_snapshot
from taskassign.pipeline.run import PipelineOptions, run_pipeline
from taskassign.pipeline.scatter import bucket_numbers, plan_scatter, read_piece, split_by_bucket
from taskassign.pipeline.spark_hash import murmur3_int, partition_keys
from tests.pipeline.conftest import EXAMPLE_FLEET, base_rows, write_snapshot

pytestmark = pytest.mark.spark


def _located(directory: Path) -> dict[str, tuple[str | None, str | None]]:
    found: dict[str, tuple[str | None, str | None]] = {}
    for name in INPUT_TABLES:
        files = sorted(directory.glob(f"{name}.*"))
        found[name] = (str(files[0]), files[0].suffix.lstrip(".").replace("jsonl", "json")) if files else (None, None)
    return found


def test_murmur3_matches_known_spark_hashes() -> None:
    # SELECT hash(0), hash(1), hash(-1) in Spark SQL.
    assert [murmur3_int(v) for v in (0, 1)] == [933211791, -559580957]


def test_partition_keys_put_each_bucket_in_its_own_partition(spark: Any) -> None:
    from pyspark.sql import functions as F

    for buckets in (1, 3, 32):
        keys = partition_keys(buckets)
        frame = spark.createDataFrame([(k, b) for b, k in enumerate(keys)], "key int, bucket int")
        placed = frame.repartition(buckets, "key").select("bucket", F.spark_partition_id().alias("p")).collect()
        assert sorted((r["bucket"], r["p"]) for r in placed) == [(b, b) for b in range(buckets)]


def test_bucket_numbers_are_stable_and_put_missing_app_ids_in_bucket_zero() -> None:
    ids = pa.chunked_array([["a", None, "b"], ["a", "c"]])
    numbers = bucket_numbers(ids, 7).tolist()
    assert numbers[0] == numbers[3] and numbers[1] == 0 and all(0 <= n < 7 for n in numbers)
    assert bucket_numbers(pa.array(["c", "b"]), 7).tolist() == [numbers[4], numbers[2]]
    assert bucket_numbers(pa.chunked_array([], pa.string()), 7).tolist() == []


def test_split_by_bucket_keeps_every_row_once() -> None:
    table = pa.table({"app_id": [f"app-{i % 13}" if i % 5 else None for i in range(200)], "n": list(range(200))})
    parts = list(split_by_bucket(table, 4))
    assert sorted(n for _, part in parts for n in part["n"].to_pylist()) == list(range(200))
    for bucket, part in parts:
        assert set(bucket_numbers(part["app_id"], 4).tolist()) == {bucket}


def test_parquet_snapshots_are_planned_over_all_their_row_groups(tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "snap", base_rows())
    pq.write_table(pq.read_table(snapshot / "topic_partitions.parquet"), snapshot / "topic_partitions.parquet",
                   row_group_size=2)
    tasks = plan_scatter(_located(snapshot), 3)
    assert tasks is not None and 1 <= len(tasks) <= 3
    for name in INPUT_TABLES:
        groups = [g for task in tasks for piece in task if piece.table == name for g in piece.row_groups]
        expected = pq.read_metadata(snapshot / f"{name}.parquet").num_row_groups
        assert sorted(groups) == list(range(expected)), name
    read = [read_piece(piece) for task in tasks for piece in task if piece.table == "topic_partitions"]
    assert sum(t.num_rows for t in read) == len(base_rows()["topic_partitions"])


def test_snapshots_spark_must_convert_take_sparks_path(tmp_path: Path) -> None:
    csv = write_snapshot(tmp_path / "csv", base_rows(), fmt="csv")
    assert plan_scatter(_located(csv), 2) is None
    cast = write_snapshot(tmp_path / "cast", base_rows())
    members = pq.read_table(cast / "members.parquet")
    pq.write_table(members.set_column(0, "app_id", members["app_id"].cast(pa.large_string())), cast / "members.parquet")
    assert plan_scatter(_located(cast), 2) is None
    partitioned = write_snapshot(tmp_path / "partitioned", base_rows())
    (partitioned / "members").mkdir()
    (partitioned / "members" / "zone=a").mkdir()
    shutil.move(partitioned / "members.parquet", partitioned / "members" / "zone=a" / "part-0.parquet")
    located = _located(partitioned) | {"members": (str(partitioned / "members"), "parquet")}
    assert plan_scatter(located, 2) is None


def _results(processed: Any) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for row in processed.collect():
        if row["kind"] != "bucket":
            found.setdefault(row["kind"], []).extend(from_ipc(row["payload"]).to_pylist())
    for kind, rows in found.items():
        for r in rows:
            for timing in ("build_seconds", "engine_seconds", "metrics_seconds"):
                r.pop(timing, None)
        rows.sort(key=repr)
        found[kind] = rows
    return found


def test_the_parquet_path_computes_what_sparks_path_computes(spark: Any) -> None:
    tables = read_snapshot(spark, EXAMPLE_FLEET)
    tasks = plan_scatter({name: (t.path, t.format) for name, t in tables.items()}, 3)
    assert tasks is not None
    scattered = stages.process_scattered(stages.scatter(spark, tasks, 4))
    gathered = stages.process_applications(stages.gather({n: t.df for n, t in tables.items()}, 4))
    expected = _results(gathered)
    assert set(expected) == {"app", "client", "consumer", "error"} and len(expected["error"]) > 0
    assert _results(scattered) == expected
    timings = [r for r in scattered.collect() if r["kind"] == "bucket"]
    assert sum(r["read_seconds"] for r in timings) > 0


def test_bucket_files_compute_what_sparks_path_computes(spark: Any, tmp_path: Path) -> None:
    tables = read_snapshot(spark, EXAMPLE_FLEET)
    tasks = plan_scatter({name: (t.path, t.format) for name, t in tables.items()}, 3)
    assert tasks is not None
    write_bucket_files(tasks, 4, tmp_path / "buckets")
    assert sorted(p.name for p in (tmp_path / "buckets").iterdir()) == [bucket_file("", b).name for b in range(4)]
    filed = stages.process_bucket_files(spark, str(tmp_path / "buckets"), 4)
    gathered = stages.process_applications(stages.gather({n: t.df for n, t in tables.items()}, 4))
    assert _results(filed) == _results(gathered)


def test_bucket_files_hold_every_row_once_in_its_bucket(tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "snap", base_rows())
    tasks = plan_scatter(_located(snapshot), 2)
    assert tasks is not None
    write_bucket_files(tasks, 3, tmp_path / "buckets")
    for name in INPUT_TABLES:
        found = 0
        for bucket in range(3):
            streams = pa.ipc.open_stream(bucket_file(tmp_path / "buckets", bucket)).read_all()
            for payload in streams.filter(pa.compute.equal(streams["table"], name))["payload"]:
                part = from_ipc(payload.as_buffer())
                assert set(bucket_numbers(part["app_id"], 3).tolist()) <= {bucket}
                found += part.num_rows
        assert found == pq.read_metadata(snapshot / f"{name}.parquet").num_rows, name


def test_a_local_scatter_raises_its_error_in_wait(tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "snap", base_rows())
    tasks = plan_scatter(_located(snapshot), 2)
    assert tasks is not None
    (snapshot / "members.parquet").write_bytes(b"not parquet")
    scatter = LocalScatter(tasks, 2, tmp_path / "buckets")
    with pytest.raises(OSError, match=PIECE_READ_FAILED.replace("[", r"\[")):
        scatter.wait()


def test_a_local_run_reads_on_the_driver_and_leaves_no_bucket_file(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_scatter_stage(*args: Any) -> None:
        raise AssertionError("a local session's run needs no scatter stage")

    monkeypatch.setattr(stages, "scatter", no_scatter_stage)
    result = run_pipeline(spark, PipelineOptions(EXAMPLE_FLEET, tmp_path / "out"))
    timings = result.manifest["timings"]
    assert timings["read_seconds"] > 0 and timings["python_seconds"] > timings["read_seconds"]
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith("bucket-")]


def test_a_bucket_stops_waiting_when_the_reading_is_cancelled_or_its_directory_goes(tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "snap", base_rows())
    tasks = plan_scatter(_located(snapshot), 2)
    assert tasks is not None
    scatter = LocalScatter(tasks, 2, tmp_path / "buckets")
    scatter.cancel()
    if not bucket_file(tmp_path / "buckets", 0).exists():  # cancelled before the files were complete
        with pytest.raises(RuntimeError, match="could not read the snapshot for bucket 0"):
            read_bucket(tmp_path / "buckets", 0)
    with pytest.raises(RuntimeError, match="could not read the snapshot for bucket 1"):
        read_bucket(tmp_path / "gone", 1)


def test_a_bucket_warms_up_while_it_waits_for_its_file_and_only_then(tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "snap", base_rows())
    tasks = plan_scatter(_located(snapshot), 2)
    assert tasks is not None
    directory = tmp_path / "buckets"
    directory.mkdir()
    waited: list[bool] = []

    def while_waiting() -> None:  # the driver writes the files while the bucket waits
        waited.append(bucket_file(directory, 0).exists())
        write_bucket_files(tasks, 2, directory)

    first = read_bucket(directory, 0, while_waiting)
    assert waited == [False]
    again = read_bucket(directory, 0, lambda: waited.append(True))  # the file is there: no warm-up
    assert waited == [False] and again.equals(first) and first.num_rows > 0


def test_warm_up_imports_what_a_first_bucket_would() -> None:
    """In a fresh interpreter, as a worker starts: none of them before, all of them after."""
    wanted = ["pandas", "taskassign.assignors.high_availability", "ortools.graph.python.min_cost_flow"]
    code = ("import sys; from taskassign.pipeline.engine_udf import warm_up; "
            f"wanted = {wanted!r}; before = [m in sys.modules for m in wanted]; warm_up(); "
            "print(before, [m in sys.modules for m in wanted])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split("] [") == ["[False, False, False", "True, True, True]\n"]


def test_a_run_on_a_cluster_takes_the_scatter_stage_and_computes_what_a_local_run_computes(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Clusters and Spark Connect read a Parquet snapshot in a scatter stage; run it end to end here."""
    local = run_pipeline(spark, PipelineOptions(EXAMPLE_FLEET, tmp_path / "local"))
    stage_calls = []
    scatter_stage = stages.scatter

    def counted(*args: Any) -> Any:
        stage_calls.append(1)
        return scatter_stage(*args)

    monkeypatch.setattr(run_module, "is_local", lambda spark: False)
    monkeypatch.setattr(stages, "scatter", counted)
    cluster = run_pipeline(spark, PipelineOptions(EXAMPLE_FLEET, tmp_path / "cluster"))
    assert stage_calls
    assert cluster.manifest["rows"] == local.manifest["rows"] and cluster.manifest["reconciled"]
    for table in ("client_assignments", "consumer_assignments", "app_metrics", "fleet_metrics", "errors"):
        expected = sorted(map(repr, pq.read_table(local.output_dir / table).to_pylist()))
        assert sorted(map(repr, pq.read_table(cluster.output_dir / table).to_pylist())) == expected, table
