"""``taskassign pipeline export``: a run's tables as CSV or JSON lines, without Spark."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from tests.fleet_outputs import write_fleet_output


@pytest.fixture()
def output(tmp_path: Path) -> Path:
    return write_fleet_output(tmp_path / "out", 6)


def _export(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["pipeline", "export", *args])
    return result.exit_code, result.output


def test_csv_has_the_tables_columns_and_rows_in_the_runs_order(output: Path, tmp_path: Path) -> None:
    code, printed = _export("--input", str(output), "--output", str(tmp_path / "csv"), "--format", "csv")
    assert code == 0, printed
    names = sorted(p.name for p in (tmp_path / "csv").iterdir())
    assert names == ["_taskassign_export.json", "app_metrics.csv", "client_assignments.csv",
                     "consumer_assignments.csv", "errors.csv", "fleet_metrics.csv", "needs_attention.csv"]
    table = pq.read_table(output / "client_assignments")
    with (tmp_path / "csv" / "client_assignments.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == table.column_names
    assert [r[0] for r in rows[1:]] == table.column("app_id").to_pylist()
    first = dict(zip(rows[0], rows[1], strict=True))
    assert json.loads(first["active_tasks"]) == ["0_0"] and first["followup_rebalance_deadline_ms"] == ""


def test_jsonl_of_one_table_round_trips_and_is_deterministic(output: Path, tmp_path: Path) -> None:
    for target in ("a", "b"):
        code, printed = _export("--input", str(output), "--output", str(tmp_path / target), "--format", "jsonl",
                                "--table", "app_metrics")
        assert code == 0, printed
    data = (tmp_path / "a" / "app_metrics.jsonl").read_bytes()
    assert data == (tmp_path / "b" / "app_metrics.jsonl").read_bytes()
    rows = [json.loads(line) for line in data.decode("utf-8").splitlines()]
    assert rows == pq.read_table(output / "app_metrics").to_pylist()
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["_taskassign_export.json", "app_metrics.jsonl"]


def test_a_file_it_did_not_write_is_refused_unless_forced(output: Path, tmp_path: Path) -> None:
    target = tmp_path / "export"
    target.mkdir()
    (target / "errors.csv").write_text("mine\n")
    code, printed = _export("--input", str(output), "--output", str(target), "--table", "errors")
    assert code == 2 and "was not written by taskassign pipeline export" in printed
    assert (target / "errors.csv").read_text() == "mine\n"
    code, printed = _export("--input", str(output), "--output", str(target), "--table", "errors", "--force")
    assert code == 0, printed
    assert (target / "errors.csv").read_text().startswith("table,app_id,effect,")
    # its own files it replaces without --force
    code, printed = _export("--input", str(output), "--output", str(target), "--table", "errors")
    assert code == 0, printed


def test_the_exported_output_itself_or_a_folder_inside_it_is_refused_even_with_force(output: Path) -> None:
    before = sorted(p.relative_to(output) for p in output.rglob("*"))
    for target in (output, output / "csv"):
        code, printed = _export("--input", str(output), "--output", str(target), "--force")
        assert code == 2, printed
        assert str(output) in " ".join(printed.split())
    assert sorted(p.relative_to(output) for p in output.rglob("*")) == before


def test_an_unknown_table_or_an_unfinished_output_exits_2(output: Path, tmp_path: Path) -> None:
    code, printed = _export("--input", str(output), "--output", str(tmp_path / "x"), "--table", "nope")
    assert code == 2 and "--table 'nope'" in printed and "app_metrics" in printed
    code, printed = _export("--input", str(tmp_path), "--output", str(tmp_path / "x"))
    assert code == 2 and "so not a complete pipeline output" in " ".join(printed.split())
    assert not (tmp_path / "x").exists()


def test_the_example_fleets_run_exports_and_draws(example_run: tuple[Path, str], tmp_path: Path) -> None:
    """The shipped example fleet through a real run: every table exports with the manifest's row count, and the
    fleet page shows every application and the flagged one with its reason."""
    from taskassign.pipeline.results import read_fleet_output
    from taskassign.report import build_fleet_report

    output, _ = example_run
    code, printed = _export("--input", str(output), "--output", str(tmp_path / "jsonl"), "--format", "jsonl")
    assert code == 0, printed
    manifest = read_fleet_output(output).manifest
    for name, entry in manifest["outputs"].items():
        lines = (tmp_path / "jsonl" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(lines) == entry["rows"], name
    html = build_fleet_report(output)
    for app_id in pq.read_table(output / "app_metrics").column("app_id").to_pylist():
        assert f'"{app_id}"' in html
    assert "users-router-00016" in html and "END_OFFSETS_UNKNOWN: a changelog partition has no end offset" in html


def test_export_knows_every_table_a_run_writes() -> None:
    from taskassign.pipeline.results import OUTPUT_TABLES
    from taskassign.pipeline.schemas import OUTPUT_SCHEMAS

    assert set(OUTPUT_TABLES) == {*OUTPUT_SCHEMAS, "assignor_comparison"}
