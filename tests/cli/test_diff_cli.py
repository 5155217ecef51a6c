"""``taskassign diff``: totals, per client changes, --scenario, --json, and what cannot be computed."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from taskassign.cli import app
from tests.helpers import EXAMPLES_DIR

runner = CliRunner()
EXAMPLE = str(EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json")


def _pair(tmp_path: Path, *extra: str) -> tuple[str, str]:
    before, after = tmp_path / "before.assignment.json", tmp_path / "after.assignment.json"
    assert runner.invoke(app, ["assign", EXAMPLE, "-a", "identity", "-o", str(before), *extra]).exit_code == 0
    assert runner.invoke(app, ["assign", EXAMPLE, "-o", str(after), *extra]).exit_code == 0
    return str(before), str(after)


def test_diff_without_the_application_says_what_it_cannot_compute(tmp_path: Path) -> None:
    before, after = _pair(tmp_path)
    result = runner.invoke(app, ["diff", before, after])
    assert result.exit_code == 0, result.output
    lines = [line.split() for line in result.stdout.splitlines()]
    assert ["replicas", "moved", "7", "(standby", "3)"] in lines and ["actives", "moved", "4"] in lines
    assert ["clients", "3", "->", "3"] in lines
    assert "not computed: data to move" in result.stdout and "not computed: metrics" in result.stdout
    # per client, short ids: 9e4a7b13 had nothing and gains three actives and two standbys
    assert ["9e4a7b13", "0", "->", "5", "1_0", "1_1", "1_2", "0_0", "0_3"] in lines


def test_diff_uses_the_files_own_metrics(tmp_path: Path) -> None:
    before, after = _pair(tmp_path, "--metrics")
    result = runner.invoke(app, ["diff", before, after])
    assert result.exit_code == 0, result.output
    assert "metrics that changed" in result.stdout and "not computed: metrics" not in result.stdout


def test_diff_with_the_scenario_prices_the_data_and_json_keeps_full_values(tmp_path: Path) -> None:
    before, after = _pair(tmp_path)
    text = runner.invoke(app, ["diff", before, after, "--scenario", EXAMPLE])
    assert "5.2 GB, 340 k records to restore" in text.stdout
    doc = json.loads(runner.invoke(app, ["diff", before, after, "--scenario", EXAMPLE, "--json"]).stdout)
    assert doc["format"] == "taskassign/assignment-diff/v1"
    assert doc["totals"]["data_bytes_to_move"] == 5_150_000_000 and doc["totals"]["records_to_restore"] == 340_000
    assert doc["clients"]["9e4a7b13-2f6c-4d8e-a1b5-6c3d2e1f0a44"]["active_gained"] == ["1_0", "1_1", "1_2"]
    assert doc["metrics"]["standby_replicas"] == {"before": 3, "after": 6}
    assert doc["unavailable"] == []


def test_diff_of_a_what_if(tmp_path: Path) -> None:
    before, after = tmp_path / "b.assignment.json", tmp_path / "a.assignment.json"
    runner.invoke(app, ["assign", EXAMPLE, "-o", str(before)])
    runner.invoke(app, ["assign", EXAMPLE, "-o", str(after), "--rack-down", "rack-a"])
    doc = json.loads(runner.invoke(app, ["diff", str(before), str(after), "--json"]).stdout)
    assert doc["clients"]["1b6f8a52-0c1e-4a43-9a34-3c2f1a0e9d11"]["status"] == "removed"
    assert doc["totals"]["clients_after"] == doc["totals"]["clients_before"] - 1


def test_a_scenario_of_another_application_is_an_input_error(tmp_path: Path) -> None:
    before, after = _pair(tmp_path)
    other = str(EXAMPLES_DIR / "scenarios" / "new-client-joins.scenario.json")
    result = runner.invoke(app, ["diff", before, after, "--scenario", other])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_a_what_if_assignment_keeps_its_own_metrics_beside_the_scenario(tmp_path: Path) -> None:
    before, after = tmp_path / "b.assignment.json", tmp_path / "a.assignment.json"
    runner.invoke(app, ["assign", EXAMPLE, "--metrics", "-o", str(before)])
    runner.invoke(app, ["assign", EXAMPLE, "--metrics", "-o", str(after), "--rack-down", "rack-a",
                        "--add-clients", "1"])
    result = runner.invoke(app, ["diff", str(before), str(after), "--scenario", EXAMPLE, "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert "clients" not in doc["metrics"]  # 3 -> 3 clients (one down, one added) is no change: left out
    assert doc["metrics"] and doc["unavailable"] == []
    added = [c for c in doc["clients"].values() if c["status"] == "added"]
    assert len(added) == 1 and added[0]["tasks_before"] == 0 and added[0]["tasks_after"] > 0
    # the new client restores whole changelogs: records to restore count them
    assert doc["totals"]["records_to_restore"] > 0
