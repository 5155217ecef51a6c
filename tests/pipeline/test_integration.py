"""The pipeline against real Spark services: a standalone master and worker (``--master``) and a Spark
Connect server (``--remote``), each started from the installed pyspark on 127.0.0.1. The command runs in
its own process (one SparkContext per JVM), and its outputs must equal the local run's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from taskassign.pipeline.output import read_manifest
from tests.pipeline.cluster import connect_server, standalone_cluster
from tests.pipeline.conftest import EXAMPLE_FLEET

pytestmark = [pytest.mark.spark, pytest.mark.slow]

TABLES = ("client_assignments", "consumer_assignments", "app_metrics", "fleet_metrics", "errors")


def rows(output: Path, name: str) -> list[dict[str, Any]]:
    return sorted(pq.read_table(output / name).to_pylist(), key=lambda r: json.dumps(r, sort_keys=True))


def run_command(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="160")
    return subprocess.run([sys.executable, "-m", "taskassign", "pipeline", "run", *args], env=env,
                          capture_output=True, text=True, timeout=900, check=False)


def assert_same_outputs(output: Path, local: Path) -> None:
    manifest, expected = read_manifest(output), read_manifest(local)
    assert manifest["reconciled"]
    assert manifest["rows"] == expected["rows"]
    assert manifest["applications"] == expected["applications"]
    for name in TABLES:
        assert rows(output, name) == rows(local, name), name


@pytest.mark.parametrize(("service", "option"), [(standalone_cluster, "--master"), (connect_server, "--remote")],
                         ids=["standalone-master-and-worker", "spark-connect"])
def test_the_pipeline_on_a_real_spark_service(
    tmp_path: Path, example_run: tuple[Path, str], service: Any, option: str,
) -> None:
    with service(tmp_path) as url:
        result = run_command("--input", str(EXAMPLE_FLEET), "--output", str(tmp_path / "out"), option, url)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "20 applications" in result.stdout
    assert_same_outputs(tmp_path / "out", example_run[0])
