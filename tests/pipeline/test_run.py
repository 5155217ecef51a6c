"""The whole pipeline on the shipped example fleet: outputs, reconciliation, parity with ``taskassign assign``,
idempotent re-runs, crash safety."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from taskassign.errors import UserInputError
from taskassign.fleet import reasons as R
from taskassign.formats.scenario import parse_scenario, read_scenario, scenario_to_dict
from taskassign.leader.assign import assign_scenario, result_to_document
from taskassign.pipeline import assemble as assemble_module
from taskassign.pipeline.export import export_scenarios
from taskassign.pipeline.output import MANIFEST_FILE, read_manifest
from taskassign.pipeline.run import PipelineOptions, run_pipeline
from taskassign.pipeline.schemas import OUTPUT_SCHEMAS
from tests.fleet.assignors import spec
from tests.pipeline.conftest import EXAMPLE_FLEET, base_rows, write_snapshot

pytestmark = pytest.mark.spark

FLEET = EXAMPLE_FLEET
TABLES = ("client_assignments", "consumer_assignments", "app_metrics", "fleet_metrics", "needs_attention", "errors")
runner = CliRunner()


def table(output: Path, name: str) -> list[dict[str, Any]]:
    rows = pq.read_table(output / name).to_pylist()
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


@pytest.fixture(scope="module")
def fleet_output(example_run: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A private copy of the example run's output (some tests re-run into it)."""
    output, stdout = example_run
    copy = tmp_path_factory.mktemp("run") / "fleet-out"
    shutil.copytree(output, copy)
    return copy, stdout


def test_cli_prints_a_fleet_summary(fleet_output: tuple[Path, str]) -> None:
    _, stdout = fleet_output
    for text in ("20 applications", "ASSIGNED", "REJECTED", "fleet metrics", "input rows", "errors table",
                 "needs attention (the 10 worst per metric)", "rows in = used + rejected for every table"):
        assert text in stdout


def test_the_fleet_summary_sums_counts_only_and_lists_what_needs_attention(fleet_output: tuple[Path, str]) -> None:
    output, stdout = fleet_output
    fleet = {r["metric"]: r for r in table(output, "fleet_metrics")}
    assert fleet["state_load_imbalance"]["sum"] is None and fleet["active_load_skew"]["sum"] is None
    assert fleet["records_to_restore"]["sum"] == sum(r["records_to_restore"] or 0 for r in table(output, "app_metrics"))
    # the summary's tables are plain columns when the output is not a terminal: metric, sum, p50, p90, max
    section = stdout[stdout.index("fleet metrics (over assigned applications"):stdout.index("needs attention")]
    [imbalance_line] = [line for line in section.splitlines() if line.strip().startswith("state_load_imbalance ")]
    assert imbalance_line.split()[1] == "-"  # no sum printed
    attention = table(output, "needs_attention")
    worst = max((r for r in table(output, "app_metrics") if r["state_load_imbalance"] is not None),
                key=lambda r: r["state_load_imbalance"])
    first = next(r for r in attention if r["metric"] == "state_load_imbalance" and r["rank"] == 1)
    assert first["app_id"] == worst["app_id"] and first["app_id"] in stdout
    assert max(r["rank"] for r in attention) <= 10


def test_manifest_reconciles_every_table(fleet_output: tuple[Path, str]) -> None:
    output, _ = fleet_output
    manifest = read_manifest(output)
    assert manifest["reconciled"]
    for name, counts in manifest["rows"].items():
        assert counts["in"] == counts["used"] + counts["rejected"], name
        assert counts["in"] == pq.read_table(FLEET / f"{name}.parquet").num_rows
    errors = table(output, "errors")
    for name, counts in manifest["rows"].items():
        assert counts["rejected"] == sum(1 for e in errors if e["table"] == name and e["effect"] == "rejected")
    assert manifest["applications"]["by_status"] == {"ASSIGNED": 19, "REJECTED": 1}
    assert {n: manifest["outputs"][n]["rows"] for n in TABLES} == {n: len(table(output, n)) for n in TABLES}


def test_spark_reads_every_output_with_its_documented_schema(spark: Any, fleet_output: tuple[Path, str]) -> None:
    output, _ = fleet_output
    for name, schema in OUTPUT_SCHEMAS.items():
        df = spark.read.parquet(str(output / name))
        assert [(f.name, f.dataType) for f in df.schema.fields] == [(f.name, f.dataType) for f in schema.fields]
        assert df.count() == len(table(output, name)), name


def test_planted_bad_records_are_in_the_errors_table(fleet_output: tuple[Path, str]) -> None:
    output, _ = fleet_output
    errors = table(output, "errors")
    by_code: dict[str, list[dict[str, Any]]] = {}
    for e in errors:
        by_code.setdefault(e["reason_code"], []).append(e)
    (bad_task,) = by_code[R.BAD_TASK_ID]
    assert json.loads(bad_task["source_row"])["task_id"].startswith("x")
    (orphan,) = by_code[R.UNKNOWN_APPLICATION]
    assert orphan["table"] == "members" and orphan["app_id"].endswith("-decommissioned")
    (no_end,) = by_code[R.MISSING_END_OFFSET]
    (flag,) = by_code[R.END_OFFSETS_UNKNOWN]
    assert flag["effect"] == "flagged" and flag["app_id"] == no_end["app_id"]
    (config,) = by_code[R.INVALID_CONFIG]
    assert "num.standby.replicas" in config["reason"]
    cascaded = by_code[R.APPLICATION_REJECTED]
    assert cascaded and {e["app_id"] for e in cascaded} == {config["app_id"]}
    metrics = {r["app_id"]: r for r in table(output, "app_metrics")}
    assert metrics[config["app_id"]]["status"] == "REJECTED"
    assert metrics[no_end["app_id"]]["end_offsets_known"] is False


def test_every_assignment_equals_taskassign_assign_on_the_exported_scenario(
    spark: Any, fleet_output: tuple[Path, str], tmp_path: Path,
) -> None:
    output, _ = fleet_output
    clients = table(output, "client_assignments")
    consumers = table(output, "consumer_assignments")
    metrics = {r["app_id"]: r for r in table(output, "app_metrics")}
    exported = export_scenarios(spark, FLEET)
    assigned = [a for a, r in metrics.items() if r["status"] == "ASSIGNED"]
    assert sorted(a for a, e in exported.items() if e.scenario is not None) == sorted(assigned)
    for app_id in assigned:
        scenario = exported[app_id].scenario
        assert scenario is not None
        from_file = parse_scenario(json.loads(json.dumps(scenario_to_dict(scenario))))
        doc = result_to_document(assign_scenario(from_file))
        assert doc["assignor"] == metrics[app_id]["assignor"]
        assert doc["error"] == metrics[app_id]["error"]
        assert doc["probing_rebalance_needed"] == metrics[app_id]["probing_rebalance_needed"]
        rows = {r["process_id"]: r for r in clients if r["app_id"] == app_id}
        assert set(rows) == set(doc["clients"])
        for pid, expected in doc["clients"].items():
            assert rows[pid]["active_tasks"] == expected["active"], (app_id, pid)
            assert rows[pid]["standby_tasks"] == expected["standby"], (app_id, pid)
            assert rows[pid]["followup_rebalance_deadline_ms"] == expected["followup_rebalance_deadline_ms"]
            threads = {r["consumer_id"]: r for r in consumers if r["app_id"] == app_id and r["process_id"] == pid}
            assert {c: t["active_tasks"] for c, t in threads.items()} == {
                c: v["active"] for c, v in expected["consumers"].items()}
    rejected = next(a for a, r in metrics.items() if r["status"] == "REJECTED")
    assert exported[rejected].scenario is None and "INVALID_CONFIG" in (exported[rejected].rejection or "")


@pytest.mark.slow
def test_export_scenario_command_writes_a_file_assign_reads(fleet_output: tuple[Path, str], tmp_path: Path) -> None:
    output, _ = fleet_output
    app_id = sorted(r["app_id"] for r in table(output, "app_metrics") if r["status"] == "ASSIGNED")[0]
    target = tmp_path / "one.scenario.json"
    result = runner.invoke(app, ["pipeline", "export-scenario", "--input", str(FLEET), "--app", app_id,
                                 "--out", str(target)])
    assert result.exit_code == 0, result.output
    scenario = read_scenario(target)
    assert scenario.name == app_id
    assigned = runner.invoke(app, ["assign", str(target), "--json"])
    assert assigned.exit_code == 0, assigned.output
    doc = json.loads(assigned.stdout)
    rows = {r["process_id"]: r for r in table(output, "client_assignments") if r["app_id"] == app_id}
    assert {pid: c["active"] for pid, c in doc["clients"].items()} == {p: r["active_tasks"] for p, r in rows.items()}
    missing = runner.invoke(app, ["pipeline", "export-scenario", "--input", str(FLEET), "--app", "nope"])
    assert missing.exit_code == 2 and "not in the applications table" in missing.output


def test_rerunning_into_the_same_output_is_idempotent(spark: Any, fleet_output: tuple[Path, str]) -> None:
    output, _ = fleet_output
    before = {name: table(output, name) for name in TABLES}
    manifest = read_manifest(output)
    again = run_pipeline(spark, PipelineOptions(FLEET, output))
    assert {name: table(output, name) for name in TABLES} == before
    volatile = ("started_at", "timings")
    assert {k: v for k, v in again.manifest.items() if k not in volatile} == {
        k: v for k, v in manifest.items() if k not in volatile}
    assert not list(output.parent.glob(f".{output.name}.*"))


def test_a_run_that_dies_leaves_the_previous_output_untouched(
    spark: Any, fleet_output: tuple[Path, str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    output, _ = fleet_output
    before = {name: table(output, name) for name in TABLES}
    manifest = (output / MANIFEST_FILE).read_text()

    def dies(metrics: Any) -> Any:
        raise RuntimeError("worker lost")

    monkeypatch.setattr(assemble_module, "fleet_metrics", dies)
    with pytest.raises(RuntimeError, match="worker lost"):
        run_pipeline(spark, PipelineOptions(FLEET, output))
    assert (output / MANIFEST_FILE).read_text() == manifest
    assert {name: table(output, name) for name in TABLES} == before
    assert not list(output.parent.glob(f".{output.name}.*"))


def test_a_directory_that_is_not_an_output_is_never_replaced(spark: Any, tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.txt").write_text("do not delete")
    with pytest.raises(UserInputError, match="refusing to replace it"):
        run_pipeline(spark, PipelineOptions(FLEET, precious))
    assert (precious / "thesis.txt").read_text() == "do not delete"


def test_an_assignor_that_raises_keeps_the_previous_assignment_and_is_flagged(spark: Any, tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "snap", base_rows())
    result = run_pipeline(spark, PipelineOptions(snapshot, tmp_path / "out", assignor=spec("Crashes")))
    assert result.manifest["applications"]["by_status"] == {"KEPT_PREVIOUS": 1}
    (flag,) = table(result.output_dir, "errors")
    assert (flag["effect"], flag["reason_code"]) == ("flagged", R.ASSIGNOR_FAILED)
    assert "ZeroDivisionError" in flag["reason"]
    clients = {r["process_id"]: r for r in table(result.output_dir, "client_assignments")}
    assert [r["active_tasks"] for r in clients.values()] == [["0_0", "1_0"], ["0_1"]]
    assert {r["followup_rebalance_deadline_ms"] for r in clients.values()} == {0}
    assert all(r["status"] == "KEPT_PREVIOUS" for r in clients.values())
