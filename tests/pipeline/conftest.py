"""One SparkSession for every Spark test (local[2], UI off, 2 shuffle partitions), and snapshot builders."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="the pipeline tests need pyspark (pip install 'taskassign[spark]')")

from taskassign.fleet.snapshot_files import SnapshotWriter
from taskassign.fleet.tables import INPUT_TABLES

APP = "orders-app"
PID_1 = "00000000-0000-0000-0000-000000000001"
PID_2 = "00000000-0000-0000-0000-000000000002"


EXAMPLE_FLEET = Path(__file__).resolve().parents[2] / "examples" / "fleet"


@pytest.fixture(scope="session")
def example_run(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The shipped example fleet through ``taskassign pipeline run`` (the quickstart's command) on the
    test session: (output directory, what the command printed)."""
    from typer.testing import CliRunner

    from taskassign.cli import app

    output = tmp_path_factory.mktemp("example-run") / "fleet-out"
    result = CliRunner().invoke(app, ["pipeline", "run", "--input", str(EXAMPLE_FLEET), "--output", str(output)])
    assert result.exit_code == 0, result.output
    return output, result.stdout


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from taskassign.pipeline.session import build_session

    session = build_session("local[2]", app_name="taskassign-tests", conf={"spark.sql.shuffle.partitions": "2"},
                            driver_memory="2g")
    yield session
    session.stop()


def base_rows() -> dict[str, list[dict[str, Any]]]:
    """One small, valid application: a stateful subtopology (2 tasks) and a stateless one (1 task),
    two clients (the first with two threads), a previous assignment with a standby."""
    changelog = f"{APP}-counts-changelog"
    return copy.deepcopy({
        "applications": [{"app_id": APP, "assignor": None, "configs": {"num.standby.replicas": "1"},
                          "now_ms": 1_000, "leader_process_id": None}],
        "subtopologies": [
            {"app_id": APP, "subtopology": 0, "source_topics": ["orders"], "sink_topics": [], "stores": ["counts"],
             "changelog_topics": [changelog], "copartition_groups": []},
            {"app_id": APP, "subtopology": 1, "source_topics": ["clicks"], "sink_topics": [], "stores": [],
             "changelog_topics": [], "copartition_groups": []},
        ],
        "repartition_topics": [],
        "topic_partitions": [
            *[{"app_id": APP, "topic": "orders", "partition": p, "replica_racks": ["r1", "r2"], "end_offset": 10,
               "committed_offset": None, "size_bytes": None} for p in (0, 1)],
            {"app_id": APP, "topic": "clicks", "partition": 0, "replica_racks": None, "end_offset": 5,
             "committed_offset": None, "size_bytes": None},
            *[{"app_id": APP, "topic": changelog, "partition": p, "replica_racks": ["r2"], "end_offset": 100 * (p + 1),
               "committed_offset": None, "size_bytes": 1_000} for p in (0, 1)],
        ],
        "members": [
            {"app_id": APP, "consumer_id": "c1-1", "process_id": PID_1, "rack": "r1", "client_tags": {},
             "host": "a:1"},
            {"app_id": APP, "consumer_id": "c1-2", "process_id": PID_1, "rack": "r1", "client_tags": {},
             "host": "a:1"},
            {"app_id": APP, "consumer_id": "c2-1", "process_id": PID_2, "rack": "r2", "client_tags": {},
             "host": None},
        ],
        "member_tasks": [
            {"app_id": APP, "consumer_id": "c1-1", "task_id": "0_0", "ownership": "active", "offset_sum": -2},
            {"app_id": APP, "consumer_id": "c1-2", "task_id": "1_0", "ownership": "active", "offset_sum": None},
            {"app_id": APP, "consumer_id": "c2-1", "task_id": "0_1", "ownership": None, "offset_sum": -2},
            {"app_id": APP, "consumer_id": "c2-1", "task_id": "0_0", "ownership": "standby", "offset_sum": 70},
        ],
    })


def write_snapshot(directory: Path, rows: Mapping[str, list[dict[str, Any]]], fmt: str = "parquet") -> Path:
    """Write ``rows`` (table name -> rows) as a snapshot directory; tables not given are written empty."""
    directory.mkdir(parents=True, exist_ok=True)
    with SnapshotWriter(directory, fmt) as writer:  # type: ignore[arg-type]
        for name in INPUT_TABLES:
            writer.write(name, rows.get(name, []))
    return directory
