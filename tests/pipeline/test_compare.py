"""A comparison run (``pipeline run --assignor A,B``) on the shipped example fleet: every application under each
assignor, the same as a single run with that assignor, the fleet comparison, needs-attention, progress counts."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from rich.console import Console

from taskassign.cli.pipeline import fleet_summary
from taskassign.pipeline.output import not_a_pipeline_output, read_manifest
from taskassign.pipeline.progress import ApplicationCounter
from taskassign.pipeline.run import PipelineOptions, PipelineResult, run_pipeline
from tests.pipeline.conftest import EXAMPLE_FLEET

pytestmark = pytest.mark.spark

ASSIGNORS = ("high_availability", "state_aware")


def rows(output: Path, name: str) -> list[dict[str, Any]]:
    return pq.read_table(output / name).to_pylist()


@pytest.fixture(scope="module")
def comparison(
    spark: Any, example_run: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory
) -> tuple[PipelineResult, ApplicationCounter]:
    """The comparison, run into a copy of a single run's output (which it replaces)."""
    output = tmp_path_factory.mktemp("compare") / "fleet-out"
    shutil.copytree(example_run[0], output)
    counter = ApplicationCounter(spark)
    result = run_pipeline(spark, PipelineOptions(EXAMPLE_FLEET, output, assignors=ASSIGNORS, attention=3),
                          counter=counter)
    return result, counter


def test_every_application_runs_under_each_assignor(comparison: tuple[PipelineResult, ApplicationCounter]) -> None:
    result, counter = comparison
    apps = rows(result.output_dir, "app_metrics")
    assert len(apps) == 40
    assert [(r["app_id"], r["assignor"]) for r in apps] == sorted((a, n) for a in {r["app_id"] for r in apps}
                                                                    for n in ASSIGNORS)
    assert counter.total == 40 and counter.done() == 40  # the progress bar's applications done out of total
    for name in ("client_assignments", "consumer_assignments", "errors", "fleet_metrics"):
        table = rows(result.output_dir, name)
        assert table and {r["assignor"] for r in table} == set(ASSIGNORS), name
        assert pq.read_schema(result.output_dir / name / "part-00000.parquet").names[-1] == "assignor"
    clients = rows(result.output_dir, "client_assignments")
    per = {n: sorted((r["app_id"], r["process_id"]) for r in clients if r["assignor"] == n) for n in ASSIGNORS}
    assert per["high_availability"] == per["state_aware"]  # the same clients, assigned twice


def test_each_assignors_rows_are_a_single_runs(
    spark: Any, comparison: tuple[PipelineResult, ApplicationCounter], tmp_path: Path
) -> None:
    result, _ = comparison
    single = run_pipeline(spark, PipelineOptions(EXAMPLE_FLEET, tmp_path / "single", assignor="state_aware"))
    drop = ("assignor",)
    for name in ("app_metrics", "client_assignments", "consumer_assignments"):
        expected = [{k: v for k, v in r.items() if k not in drop} for r in rows(single.output_dir, name)]
        compared = [{k: v for k, v in r.items() if k not in drop} for r in rows(result.output_dir, name)
                    if r["assignor"] == "state_aware"]
        assert compared == expected, name


def test_the_comparison_counts_wins_and_differences(comparison: tuple[PipelineResult, ApplicationCounter]) -> None:
    result, _ = comparison
    apps = [r for r in rows(result.output_dir, "app_metrics") if r["status"] != "REJECTED"]
    ha = {r["app_id"]: r["active_moves"] for r in apps if r["assignor"] == "high_availability"}
    sa = {r["app_id"]: r["active_moves"] for r in apps if r["assignor"] == "state_aware"}
    table = {(r["metric"], r["assignor"]): r for r in rows(result.output_dir, "assignor_comparison")}
    moves = table["active_moves", "state_aware"]
    assert moves["apps"] == len(ha) == 19 and moves["baseline"] == "high_availability"
    assert moves["wins"] == sum(sa[a] < ha[a] for a in ha)
    assert table["active_moves", "high_availability"]["wins"] == sum(ha[a] < sa[a] for a in ha)
    assert moves["ties"] == sum(ha[a] == sa[a] for a in ha)
    diffs = sorted(sa[a] - ha[a] for a in ha)
    assert moves["diff_p50"] == diffs[len(diffs) // 2]  # 19 values: the median is one of them
    assert table["active_moves", "high_availability"]["diff_p50"] is None


def test_needs_attention_lists_each_assignors_worst(comparison: tuple[PipelineResult, ApplicationCounter]) -> None:
    result, _ = comparison
    attention = rows(result.output_dir, "needs_attention")
    for assignor in ASSIGNORS:
        mine = [r for r in attention if r["assignor"] == assignor and r["metric"] == "records_to_restore"]
        assert [r["rank"] for r in mine] == [1, 2, 3]
        restore = sorted((r["records_to_restore"] for r in rows(result.output_dir, "app_metrics")
                          if r["assignor"] == assignor and r["records_to_restore"]), reverse=True)
        assert [r["value"] for r in mine] == restore[:3]


def test_the_manifest_accounts_for_every_pass(comparison: tuple[PipelineResult, ApplicationCounter]) -> None:
    result, _ = comparison
    manifest = read_manifest(result.output_dir)
    assert manifest["reconciled"] and manifest["options"]["assignors"] == list(ASSIGNORS)
    assert list(manifest["assignors"]) == list(ASSIGNORS)
    assert all(m["reconciled"] and m["applications"]["total"] == 20 for m in manifest["assignors"].values())
    assert manifest["outputs"]["assignor_comparison"]["rows"] == len(rows(result.output_dir, "assignor_comparison"))
    assert not_a_pipeline_output(result.output_dir) is None  # a later run may replace it


def test_the_summary_shows_the_comparison(comparison: tuple[PipelineResult, ApplicationCounter]) -> None:
    result, _ = comparison
    console = Console(record=True, width=200)
    console.print(fleet_summary(result.manifest, result.output_dir))
    text = console.export_text()
    for expected in ("assignor comparison (A = high_availability; B = state_aware;", "A wins", "B wins", "ties",
                     "B-A p50", "needs attention (the 3 worst per metric) under high_availability"):
        assert expected in text
    moves = next(line for line in text.splitlines() if line.strip().startswith("active_moves"))
    row = next(r for r in rows(result.output_dir, "assignor_comparison")
               if r["metric"] == "active_moves" and r["assignor"] == "state_aware")
    assert f" {row['wins']} " in moves
