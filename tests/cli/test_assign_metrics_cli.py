from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from taskassign.analysis.metrics import metric_fields
from taskassign.cli import app
from tests.helpers import EXAMPLES_DIR

runner = CliRunner()
EXAMPLE = EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json"


def test_metrics_are_printed_by_section_with_per_client_loads() -> None:
    result = runner.invoke(app, ["assign", str(EXAMPLE), "-a", "identity", "--metrics"])
    assert result.exit_code == 0, result.output
    for text in ("balance (per thread)", "cross_rack_partitions", "state_load_imbalance", "per client",
                 "app-1b6f"):
        assert text in result.output
    # identity on this example: one cross-rack active read and one cross-rack standby read
    # piped output: plain columns, no box drawing; state in bytes, short process ids
    assert any(line.split() == ["cross_rack_partitions", "2"] for line in result.output.splitlines())
    assert any(line.split() == ["state_load_max", "8.3", "GB"] for line in result.output.splitlines())
    assert not set("│┃━╇") & set(result.output)
    assert "1b6f8a52-0c1e" not in result.output


def test_metrics_go_into_the_json_document(tmp_path: Path) -> None:
    out = tmp_path / "a.assignment.json"
    result = runner.invoke(app, ["assign", str(EXAMPLE), "-a", "identity", "--metrics", "--json", "-o", str(out)])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert list(printed["metrics"]) == [f.name for f in metric_fields()]
    assert printed["metrics"]["standby_shortfall_tasks"] == 1
    assert json.loads(out.read_text()) == printed


def test_without_the_flag_there_are_no_metrics() -> None:
    result = runner.invoke(app, ["assign", str(EXAMPLE), "-a", "identity", "--json"])
    assert "metrics" not in json.loads(result.stdout)


def test_directory_mode_writes_metrics_into_every_file(tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    result = runner.invoke(app, ["assign", str(EXAMPLES_DIR / "scenarios"), "--out-dir", str(out_dir),
                                 "-a", "identity", "--metrics"])
    assert result.exit_code == 0, result.output
    files = sorted(out_dir.glob("*.assignment.json"))
    assert files and all("metrics" in json.loads(f.read_text()) for f in files)
