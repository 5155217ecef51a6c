"""The pipeline's end-of-run summary and ``pipeline errors``, on a run's output written by hand (no Spark): human
units in every column, the reasons of rejected rows with the command that lists them, what to do next, 80
columns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskassign.cli import app

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

LONG_APP = "payments-fraud-scoring-enricher-with-a-long-name-00042"


def _output(tmp_path: Path) -> Path:
    out = tmp_path / "fleet-out"
    out.mkdir()
    manifest = {
        "input": {"directory": "/data/snapshot"},
        "options": {"attention": 10},
        "timings": {"total_seconds": 1.0, "engine_seconds": 0.5},
        "applications": {"total": 2, "by_status": {"ASSIGNED": 1, "REJECTED": 1}},
        "rows": {"applications": {"in": 2, "used": 1, "rejected": 1}},
        "errors": {"rejected": {"INVALID_CONFIG": 1}},
        "reconciled": True,
    }
    (out / "manifest.json").write_text(json.dumps(manifest))
    pq.write_table(pa.Table.from_pylist([
        {"metric": "state_load_max", "sum": None, "p50": 54_900_000.0, "p90": 790_130_294.4, "max": 1.5e9},
        {"metric": "state_load_imbalance", "sum": None, "p50": 1.1, "p90": 1.8341, "max": 2.17},
    ]), out / "fleet_metrics")
    pq.write_table(pa.Table.from_pylist([
        {"metric": "state_load_imbalance", "rank": 1, "app_id": LONG_APP, "status": "ASSIGNED", "value": 2.17},
    ]), out / "needs_attention")
    pq.write_table(pa.Table.from_pylist([
        {"table": "applications", "app_id": "orders-00017", "effect": "rejected", "reason_code": "INVALID_CONFIG",
         "reason": "config 'num.standby.replicas': must be >= 0, got -1", "source_row": "3"},
    ]), out / "errors")
    return out


def test_the_summary_is_human_gives_reasons_and_next_steps_in_80_columns(tmp_path: Path) -> None:
    from rich.console import Console

    from taskassign.cli.pipeline import fleet_summary

    out = _output(tmp_path)
    console = Console(width=80, record=True, color_system=None)
    console.print(fleet_summary(json.loads((out / "manifest.json").read_text()), out))
    text = console.export_text()
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80
    [line] = [line for line in text.splitlines() if line.strip().startswith("state_load_max")]
    assert line.split()[1:] == ["-", "54.9", "M", "790", "M", "1.5", "G"]  # no raw 790,130,294.40
    assert "1.834" in text  # small fractions keep three decimals
    assert "config 'num.standby.replicas': must be >= 0, got -1" in " ".join(text.split())
    assert f"taskassign pipeline errors {out}" in " ".join(text.split())
    assert LONG_APP in text.replace("\n", "").replace(" ", "")  # wrapped, never cut
    assert "…" not in text
    assert "next: taskassign pipeline errors" in text
    assert "export-scenario --input /data/snapshot --app" in " ".join(text.split())


def test_pipeline_errors_lists_every_row_with_its_reason(tmp_path: Path) -> None:
    out = _output(tmp_path)
    result = CliRunner().invoke(app, ["pipeline", "errors", str(out), "--effect", "rejected"],
                                env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "rejected INVALID_CONFIG  applications  orders-00017" in result.stdout
    assert "must be >= 0, got -1" in result.stdout
    none = CliRunner().invoke(app, ["pipeline", "errors", str(out), "--code", "BAD_VALUE"])
    assert "errors: 0 row(s)" in none.stdout
    missing = CliRunner().invoke(app, ["pipeline", "errors", str(tmp_path)])
    assert missing.exit_code == 2 and "no errors table" in " ".join(missing.output.split())
