"""One SparkSession for every Spark test (local[2], UI off, 2 shuffle partitions), and snapshot builders."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="the pipeline tests need pyspark (pip install 'taskassign[spark]')")

from taskassign.fleet.snapshot_files import SnapshotWriter
from taskassign.fleet.tables import INPUT_TABLES
from tests.fleet.snapshots import APP, PID_1, PID_2, base_rows

__all__ = ("APP", "EXAMPLE_FLEET", "PID_1", "PID_2", "base_rows", "write_snapshot")



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


def write_snapshot(directory: Path, rows: Mapping[str, list[dict[str, Any]]], fmt: str = "parquet") -> Path:
    """Write ``rows`` (table name -> rows) as a snapshot directory; tables not given are written empty."""
    directory.mkdir(parents=True, exist_ok=True)
    with SnapshotWriter(directory, fmt) as writer:  # type: ignore[arg-type]
        for name in INPUT_TABLES:
            writer.write(name, rows.get(name, []))
    return directory
